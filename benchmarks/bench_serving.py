"""The LLM serving simulator (engine.llm_serving): 100,000 requests with the Azure 2023
conversation trace's prompt and reply laws at 80 % of ``max_rate_per_s`` on the
Splitwise A100 TP 8 Llama-2-70B preset (budget 8,192, 256 sequences, its KV cache),
against the plainly written scheduler the tests check it with
(tests/llm_serving/reference.py) on the first 2,000 requests of the same run.

Goals: ≤ 1 s for the 100,000 requests; ≥ 100× the plain scheduler's requests per s.
Steps (scheduler events) per second are printed beside.
"""
import numpy as np

from benchmarks.harness import Row, best_time
from engine.llm_serving import Scheduler, load_serving_preset, max_rate_per_s, simulate_serving
from engine.presets import token_law_presets

N = 100_000
N_PLAIN = 2_000


def _workload():
    laws = token_law_presets()
    prompt, reply = laws["azure_2023_conv_prompt"].law(), laws["azure_2023_conv_output"].law()
    preset = load_serving_preset("splitwise_a100_llama2_70b_tp8")
    scheduler = Scheduler(max_num_seqs=256, max_num_batched_tokens=8192,
                          kv_cache_tokens=preset.kv_cache_tokens)
    rate = 0.8 * max_rate_per_s(preset.cost, scheduler, prompt, reply)
    rng = np.random.default_rng(1)
    l = np.maximum(1, np.ceil(prompt.rvs(size=N, random_state=rng))).astype(np.int64)
    o = np.maximum(1, np.ceil(reply.rvs(size=N, random_state=rng))).astype(np.int64)
    arrivals = np.cumsum(rng.exponential(1 / rate, N))
    return preset.cost, scheduler, l, o, arrivals, rate


def run() -> list[Row]:
    from tests.llm_serving.reference import reference_serve

    cost, scheduler, l, o, arrivals, rate = _workload()
    simulate_serving(cost, scheduler, input_tokens=l[:50], output_tokens=o[:50],
                     arrival_s=arrivals[:50])                       # compile
    result = {}

    def ours():
        result["r"] = simulate_serving(cost, scheduler, input_tokens=l, output_tokens=o,
                                       arrival_s=arrivals)
    seconds = best_time(ours, repeat=3)
    steps = result["r"].steps
    plain = best_time(lambda: reference_serve(cost, scheduler, arrivals[:N_PLAIN],
                                              l[:N_PLAIN], o[:N_PLAIN]), repeat=1)
    ours_rate, plain_rate = N / seconds, N_PLAIN / plain
    return [
        Row(f"serving sim, {N:,} Azure conv requests, 80 % of {rate:.3g}/s", seconds, "s",
            "goal s", 1.0, 1.0 / seconds, "<= 1 s", seconds <= 1.0),
        Row("serving sim, requests per s", ours_rate, "req/s", "plain scheduler req/s",
            plain_rate, ours_rate / plain_rate, ">= 100x plain", ours_rate / plain_rate >= 100),
        Row("serving sim, steps (events) per s", steps / seconds, "steps/s", "steps",
            steps, 1.0, "report", None),
    ]
