"""Sources of the step cost (engine/llm_serving/sources.py) and the serving presets
(engine/llm_serving/presets.py).

Each source is checked on synthetic data generated from a known ``StepCost`` with
``StepCost.step_ms`` (the fit must give the coefficients back), on the real files of
../shared/real-data, and on malformed input (``ValueError`` naming the line or field).
The presets' numbers are regenerated from the real files and compared with the TOML.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine.llm_serving import (ServingPreset, StepCost, StepCostFit, fit_step_cost_vllm_bench,
                                kv_capacity_tokens, load_serving_preset, serving_presets,
                                step_cost_from_csv, step_cost_from_distserve,
                                step_cost_from_splitwise)
from engine.llm_serving.presets import SERVING_PRESET_DIR
from tests.real_data import real_file

FIELDS = ("base_ms", "prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq",
          "decode_ms_per_seq", "context_ms_per_token", "frontend_ms")
DISTSERVE = ("distserve_opt13b_a100/profiler-a100-80g.vllm.json",
             "distserve_opt13b_a100/profiler-a100-80g.distserve.json")
SPLITWISE = "batch_splitwise_perf_model.csv"
VLLM = tuple(f"vllm_bench_rtx4090_qwen2.5-7b/p1_bf16_{n}_c{c}.json" for n, c in (
    (4096, 1), (4096, 4), (4096, 8), (16384, 1), (16384, 4), (16384, 8),
    (32768, 1), (32768, 4), (32768, 8), (63488, 1), (63488, 4)))

KNOWN = StepCost(base_ms=21.5, prefill_base_ms=14.25, prefill_ms_per_token=0.093,
                 prefill_ms_per_token_sq=4.5e-6, decode_ms_per_seq=0.061,
                 context_ms_per_token=3.7e-4, frontend_ms=9.0)


def assert_cost(got: StepCost, want: StepCost, *, rel=1e-7, skip=()):
    for f in FIELDS:
        if f not in skip:
            assert getattr(got, f) == pytest.approx(getattr(want, f), rel=rel, abs=1e-12), f


# ------------------------------------------------------------------------------ DistServe

def distserve_json(cost: StepCost, *, large: StepCost | None = None, threshold=95,
                   model="facebook/opt-13b", tp="1") -> str:
    """A profiler JSON whose prefill and decode pieces are ``cost`` (and ``large``)."""
    large = large or cost

    def dec(c):
        return [c.base_ms, c.context_ms_per_token, c.decode_ms_per_seq]
    entry = {"decoding_large_small_bs_threshold": threshold,
             "prefill": [cost.prefill_base_ms, cost.prefill_ms_per_token,
                         cost.prefill_ms_per_token_sq],
             "decoding_smallbs": dec(cost), "decoding_largebs": dec(large)}
    return json.dumps({model: {tp: entry}}, indent=4)


def test_distserve_recovers_a_known_cost():
    fit = step_cost_from_distserve(distserve_json(KNOWN), "facebook/opt-13b", 1)
    assert isinstance(fit, StepCostFit)
    assert_cost(fit.cost, KNOWN, skip=("frontend_ms",))
    assert fit.cost.frontend_ms == 0 and fit.held_at_zero == ("frontend_ms",)
    assert fit.r2["decode"] == pytest.approx(1.0)
    assert np.abs(fit.residuals_ms["decode"]).max() < 1e-9
    # the independent check: the fitted cost's step times are the known ones
    rng = np.random.default_rng(1)
    p, d = rng.integers(0, 4000, 50), rng.integers(0, 200, 50)
    q, k = p * rng.integers(1, 2000, 50), d * rng.integers(1, 2000, 50)
    np.testing.assert_allclose(fit.cost.step_ms(p, q, d, k) + 0.0,
                               KNOWN.step_ms(p, q, d, k) + 0.0, rtol=1e-9)


def test_distserve_two_pieces_joint_small_and_large():
    large = StepCost(base_ms=16.8, context_ms_per_token=4.1e-4, decode_ms_per_seq=0.1)
    text = distserve_json(KNOWN, large=large)
    joint = step_cost_from_distserve(text, "opt-13b", "1")
    small = step_cost_from_distserve(text, "opt-13b", 1, decode="small")
    big = step_cost_from_distserve(text, "opt-13b", 1, decode="large")
    assert (small.cost.base_ms, small.cost.decode_ms_per_seq) == (21.5, 0.061)
    assert (big.cost.base_ms, big.cost.decode_ms_per_seq) == (16.8, 0.1)
    for fit in (joint, small, big):           # the prefill is copied whatever the choice
        assert fit.cost.prefill_ms_per_token == KNOWN.prefill_ms_per_token
    assert 0.9 < joint.r2["decode"] < 1.0
    # least squares of the relative error: the joint law is closer to the pieces than
    # either piece alone
    published = piecewise(json.loads(text)["facebook/opt-13b"]["1"])
    sse = {n: float(np.sum((f.residuals_ms["decode"] / published) ** 2))
           for n, f in (("joint", joint), ("small", small), ("large", big))}
    assert sse["joint"] < min(sse["small"], sse["large"])
    assert any("chose one linear law" in n for n in joint.notes)
    assert any("differ by up to" in n for n in joint.notes)
    gap = max(abs((21.5 - 16.8) + (3.7e-4 - 4.1e-4) * 1000 * b + (0.061 - 0.1) * b)
              for b in range(1, 191))
    assert any(f"differ by up to {gap:.3g} ms" in n for n in joint.notes)


def grid(entry):
    """(batch, Σ context) of the points the joint fit samples, in its order."""
    t = entry["decoding_large_small_bs_threshold"]
    d, c = np.meshgrid(np.arange(1, 2 * t + 1.0), np.linspace(128, 2048, 16), indexing="ij")
    return d.ravel(), (d * c).ravel()


def piecewise(entry):
    """DistServe's decode step time at the grid's points (small piece below the
    threshold, large from it)."""
    d, k = grid(entry)
    small, large = entry["decoding_smallbs"], entry["decoding_largebs"]
    return np.where(d < entry["decoding_large_small_bs_threshold"],
                    small[0] + small[1] * k + small[2] * d, large[0] + large[1] * k + large[2] * d)


@pytest.mark.parametrize("name", DISTSERVE)
def test_distserve_real_files_read(name):
    text = real_file(name)
    data = json.loads(text)
    for model, tps in data.items():
        for tp, entry in tps.items():
            fit = step_cost_from_distserve(text, model, int(tp))
            a, b, c = entry["prefill"]
            assert (fit.cost.prefill_base_ms, fit.cost.prefill_ms_per_token,
                    fit.cost.prefill_ms_per_token_sq) == (a, b, c)
            assert fit.r2["decode"] > 0.85
            # residuals against the published pieces, recomputed here; the one law is
            # within 50 % of them everywhere (the pieces differ by up to 40 %)
            published = piecewise(entry)
            np.testing.assert_allclose(fit.residuals_ms["decode"],
                                       published - fit.cost.decode_ms(*grid(entry)),
                                       rtol=1e-9, atol=1e-9)
            assert np.abs(fit.residuals_ms["decode"] / published).max() < 0.5


def test_distserve_vllm_opt13b_tp1_numbers():
    fit = step_cost_from_distserve(real_file(DISTSERVE[0]), "facebook/opt-13b", 1)
    assert fit.cost.prefill_base_ms == pytest.approx(15.751574849507277)
    assert fit.cost.base_ms == pytest.approx(20.34, abs=0.01)
    assert fit.r2["decode"] == pytest.approx(0.9943, abs=1e-4)


@pytest.mark.parametrize("text, model, tp, match", [
    ('{\n  "facebook/opt-13b": {\n    "1": {\n      "prefill": [1, 2, 3],,\n', "opt-13b", 1,
     r"line 4, column"),
    ("[1, 2]", "opt-13b", 1, "expected a JSON object"),
    (None, "facebook/opt-99b", 1, r"unknown model 'facebook/opt-99b'.*facebook/opt-13b"),
    (None, "facebook/opt-13b", 3, r"unknown tensor_parallel 3.*the file has: 1"),
    (None, "facebook/opt-13b", 0, "tensor_parallel must be a whole number"),
    (None, "facebook/opt-13b", 1.5, "tensor_parallel must be a whole number"),
])
def test_distserve_refuses_bad_json_and_unknown_choices(text, model, tp, match):
    with pytest.raises(ValueError, match=match):
        step_cost_from_distserve(text or distserve_json(KNOWN), model, tp)


def test_distserve_refuses_missing_negative_and_junk():
    entry = json.loads(distserve_json(KNOWN))
    missing = json.loads(json.dumps(entry))
    del missing["facebook/opt-13b"]["1"]["decoding_smallbs"]
    with pytest.raises(ValueError, match=r"line \d+, field facebook/opt-13b → 1: no "
                                         r"'decoding_smallbs'"):
        step_cost_from_distserve(json.dumps(missing, indent=4), "opt-13b", 1)
    negative = json.loads(json.dumps(entry))
    negative["facebook/opt-13b"]["1"]["prefill"][1] = -0.1
    text = json.dumps(negative, indent=4)
    line = text.splitlines().index('            "prefill": [') + 1
    with pytest.raises(ValueError, match=rf"line {line}, field facebook/opt-13b → 1 → "
                                         rf"prefill\[1\]: expected a number ≥ 0"):
        step_cost_from_distserve(text, "opt-13b", 1)
    short = json.loads(json.dumps(entry))
    short["facebook/opt-13b"]["1"]["decoding_largebs"] = [1, "x", 2]
    with pytest.raises(ValueError, match=r"decoding_largebs\[1\]: expected a finite number"):
        step_cost_from_distserve(json.dumps(short), "opt-13b", 1)
    short["facebook/opt-13b"]["1"]["decoding_largebs"] = [1, 2]
    with pytest.raises(ValueError, match=r"decoding_largebs: expected a list of 3 numbers"):
        step_cost_from_distserve(json.dumps(short), "opt-13b", 1)
    with pytest.raises(ValueError, match=r"line 2: not UTF-8"):
        step_cost_from_distserve(b'{\n\xff\xfe junk}', "opt-13b", 1)
    with pytest.raises(ValueError, match="NUL"):
        step_cost_from_distserve(b'{"a": 1}\x00', "opt-13b", 1)
    with pytest.raises(ValueError, match="empty"):
        step_cost_from_distserve("  \n", "opt-13b", 1)
    with pytest.raises(ValueError, match="decode must be"):
        step_cost_from_distserve(distserve_json(KNOWN), "opt-13b", 1, decode="both")


# ------------------------------------------------------------------------------ Splitwise

SW_HEADER = ("model,hardware,prompt_size,batch_size,token_size,peak_power,average_power,"
             "prompt_time,token_time,e2e_time,tensor_parallel")


def splitwise_rows(cost: StepCost, *, model="llama2-70b", hardware="a100-80gb", tp=8,
                   noise=0.0, seed=0, generated=None) -> list:
    """Rows as the Splitwise sweeps lay them out, their times from ``cost.step_ms``:
    the prefill of b whole prompts of l tokens (P = b·l, Q = b·l²) and the mean decode
    step over the generated tokens (D = b, K = b·(l + g) for g = 1 … n − 1)."""
    rng = np.random.default_rng(seed)
    points = ([(l, 1, 128) for l in (128, 256, 512, 1024, 2048, 4096, 8192)]
              + [(512, b, 128) for b in (2, 4, 8, 16, 32, 64)]
              + [(512, 1, t) for t in (256, 512, 1024)])
    out = []
    for l, b, t in points:
        for _ in range(3):
            n = t if generated is None else min(t, generated)
            prompt = float(cost.step_ms(b * l, b * l * l, 0, 0))
            steps = cost.step_ms(0, 0, b, b * (l + np.arange(1, n)))
            token = float(np.mean(steps))
            prompt *= 1 + noise * rng.standard_normal()
            token *= 1 + noise * rng.standard_normal()
            e2e = prompt + (n - 1) * token
            out.append(f"{model},{hardware},{l},{b},{t},1.0,0.7,{prompt!r},{token!r},{e2e!r},{tp}")
    return out


SW_COST = StepCost(base_ms=44.0, prefill_base_ms=30.0, prefill_ms_per_token=0.2,
                   prefill_ms_per_token_sq=2e-6, decode_ms_per_seq=0.25,
                   context_ms_per_token=3e-4)


def test_splitwise_recovers_a_known_cost():
    text = "\n".join([SW_HEADER, *splitwise_rows(SW_COST),
                      *splitwise_rows(KNOWN, hardware="h100-80gb")]) + "\n"
    fit = step_cost_from_splitwise(text, "llama2-70b", "a100-80gb", 8)
    assert_cost(fit.cost, SW_COST, rel=1e-6)
    assert fit.r2 == pytest.approx({"prefill": 1.0, "decode": 1.0})
    assert fit.n_points == 16 * 3 and fit.held_at_zero == ("frontend_ms",)
    assert fit.residuals_ms["prefill"].shape == (48,)
    assert not fit.residuals_ms["prefill"].flags.writeable
    other = step_cost_from_splitwise(text.encode(), "LLAMA2-70B", "h100-80gb", "8")
    assert_cost(other.cost, KNOWN, rel=1e-6, skip=("frontend_ms",))


def test_splitwise_context_from_e2e_when_generation_stops_early():
    text = "\n".join([SW_HEADER, *splitwise_rows(SW_COST, generated=300)])
    fit = step_cost_from_splitwise(text, "llama2-70b", "a100-80gb", 8)
    assert_cost(fit.cost, SW_COST, rel=1e-6)
    assert any("stopped generating" in n for n in fit.notes)


def test_splitwise_noisy_data_close_and_broken_point_dropped():
    rows = splitwise_rows(SW_COST, noise=0.01, seed=3)
    for i, r in enumerate(rows):
        if ",512,64,128," in r:          # batch 64 faster than batch 32: not a real batch
            fields = r.split(",")
            fields[7] = "700.0"
            rows[i] = ",".join(fields)
    text = "\n".join([SW_HEADER, *rows])
    fit = step_cost_from_splitwise(text, "llama2-70b", "a100-80gb", 8)
    assert any("dropped the point batch 64, prompt 512" in n for n in fit.notes)
    assert fit.n_points == 45
    assert fit.cost.prefill_ms_per_token == pytest.approx(0.2, rel=0.05)
    assert fit.cost.decode_ms_per_seq == pytest.approx(0.25, rel=0.1)
    kept = step_cost_from_splitwise(text, "llama2-70b", "a100-80gb", 8, drop_broken=False)
    assert kept.n_points == 48


def test_splitwise_real_file_every_choice():
    text = real_file(SPLITWISE)
    for model, hw, tps in (("llama2-70b", "a100-80gb", (2, 4, 8)),
                           ("llama2-70b", "h100-80gb", (2, 4, 8)),
                           ("llama2-70b", "h100-80gb-pcap", (2, 4, 8)),
                           ("bloom-176b", "a100-80gb", (8,)), ("bloom-176b", "h100-80gb", (8,))):
        for tp in tps:
            fit = step_cost_from_splitwise(text, model, hw, tp)
            assert fit.r2["prefill"] > 0.98 and fit.r2["decode"] > 0.6
            assert fit.n_points in (100, 105)
            assert (fit.n_points == 100) == (tp == 2 and model == "llama2-70b")
            assert any("derived, not measured" in n for n in fit.notes) == hw.endswith("pcap")
    # the pcap prefill is 1.3 × the H100 one exactly, so is its fitted prefill law
    h100 = step_cost_from_splitwise(text, "llama2-70b", "h100-80gb", 8).cost
    pcap = step_cost_from_splitwise(text, "llama2-70b", "h100-80gb-pcap", 8).cost
    assert pcap.prefill_ms_per_token == pytest.approx(1.3 * h100.prefill_ms_per_token, rel=1e-6)


@pytest.mark.parametrize("model, hw, tp, match", [
    ("llama2-7b", "a100-80gb", 8, r"unknown model 'llama2-7b'; the file has: llama2-70b"),
    ("llama2-70b", "v100", 8, r"unknown hardware 'v100' for model llama2-70b; the file has: "
                              r"a100-80gb"),
    ("bloom-176b", "a100-80gb", 4, r"unknown tensor_parallel 4 for model bloom-176b on "
                                   r"a100-80gb; the file has: 8"),
])
def test_splitwise_unknown_choices_list_the_file(model, hw, tp, match):
    text = "\n".join([SW_HEADER, *splitwise_rows(SW_COST), *splitwise_rows(
        SW_COST, model="bloom-176b")])
    with pytest.raises(ValueError, match=match):
        step_cost_from_splitwise(text, model, hw, tp)


def test_splitwise_refuses_bad_cells_naming_line_and_column():
    rows = splitwise_rows(SW_COST)
    bad = rows[:]
    fields = bad[4].split(",")
    fields[8] = "fast"
    bad[4] = ",".join(fields)
    with pytest.raises(ValueError, match=r"line 6, column 9 \(token_time\): expected a "
                                         r"positive number, got 'fast'"):
        step_cost_from_splitwise("\n".join([SW_HEADER, *bad]), "llama2-70b", "a100-80gb", 8)
    fields[8] = "-3.5"
    bad[4] = ",".join(fields)
    with pytest.raises(ValueError, match=r"line 6, column 9 \(token_time\).*'-3.5'"):
        step_cost_from_splitwise("\n".join([SW_HEADER, *bad]), "llama2-70b", "a100-80gb", 8)
    with pytest.raises(ValueError, match=r"line 1: no column 'token_time'"):
        step_cost_from_splitwise("\n".join([SW_HEADER.replace("token_time", "tpot"), *rows]),
                                 "llama2-70b", "a100-80gb", 8)
    with pytest.raises(ValueError, match=r"line 3: expected 11 columns"):
        step_cost_from_splitwise("\n".join([SW_HEADER, rows[0], "llama2-70b,a100"]),
                                 "llama2-70b", "a100-80gb", 8)
    with pytest.raises(ValueError, match=r"line 1: only a header"):
        step_cost_from_splitwise(SW_HEADER + "\n", "llama2-70b", "a100-80gb", 8)
    with pytest.raises(ValueError, match=r"line 3: not UTF-8"):
        step_cost_from_splitwise(b"a,b\n1,2\n\x80\x81", "llama2-70b", "a100-80gb", 8)


# --------------------------------------------------------------------------- vllm bench

def vllm_run(cost: StepCost, prompt: int, reply: int, *, budget=2048, concurrency=1,
             n=6, median=True, seed=0) -> str:
    """A ``vllm bench serve --save-result`` summary of n lone requests of ``prompt`` and
    ``reply`` tokens, their TTFT and TPOT from ``cost.step_ms``: the prompt in chunks of
    ``budget`` tokens (P = x, Q = x·end), then reply − 1 decode steps (D = 1, K = l + g)."""
    ttft, end = cost.frontend_ms, 0
    while end < prompt:
        x = min(budget, prompt - end)
        end += x
        ttft += float(cost.step_ms(x, x * end, 0, 0))
    tpot = float(np.mean(cost.step_ms(0, 0, 1, prompt + np.arange(1, reply))))
    out = {"date": "20260708-103711", "endpoint_type": "openai", "label": None,
           "model_id": "models/test", "num_prompts": n, "request_rate": "inf",
           "max_concurrency": concurrency, "duration": 10.0, "completed": n,
           "total_input_tokens": n * prompt, "total_output_tokens": n * reply,
           "request_throughput": 0.2, "mean_ttft_ms": ttft * (0.8 if median else 1.0),
           "p99_ttft_ms": ttft, "mean_tpot_ms": tpot, "p99_tpot_ms": tpot}
    if median:
        out["median_ttft_ms"] = ttft
    return json.dumps(out)


VLLM_COST = StepCost(base_ms=15.0, prefill_base_ms=12.0, prefill_ms_per_token=0.09,
                     prefill_ms_per_token_sq=3e-6, decode_ms_per_seq=0.0,
                     context_ms_per_token=6e-5, frontend_ms=8.0)


def test_vllm_bench_recovers_a_known_cost():
    prompts = (1000, 3000, 7000, 12500, 25000, 41000)
    runs = [vllm_run(VLLM_COST, p, 200 + i) for i, p in enumerate(prompts)]
    runs.append(vllm_run(VLLM_COST, 5000, 256, concurrency=4))         # ignored
    fit = fit_step_cost_vllm_bench(runs)
    assert_cost(fit.cost, VLLM_COST, rel=1e-6)
    assert fit.held_at_zero == ("decode_ms_per_seq",)
    assert fit.n_points == 6 and fit.residuals_ms["prefill"].shape == (6,)
    assert fit.r2 == pytest.approx({"prefill": 1.0, "decode": 1.0})
    assert any("median_ttft_ms" in n for n in fit.notes)


def test_vllm_bench_lumps_the_per_request_decode_into_base():
    cost = StepCost(**{**{f: getattr(VLLM_COST, f) for f in FIELDS}, "decode_ms_per_seq": 0.4})
    runs = [vllm_run(cost, p, 128, budget=512) for p in (300, 900, 1700, 2900, 5000)]
    fit = fit_step_cost_vllm_bench(runs, max_num_batched_tokens=512)
    assert fit.cost.base_ms == pytest.approx(15.4)
    assert fit.cost.decode_ms_per_seq == 0 and "decode_ms_per_seq" in fit.held_at_zero
    assert fit.cost.prefill_base_ms == pytest.approx(12.0)


def test_vllm_bench_whole_chunks_hold_the_chunk_base_at_zero():
    runs = [vllm_run(VLLM_COST, p, 256) for p in (4096, 16384, 32768, 63488)]
    fit = fit_step_cost_vllm_bench(runs)
    assert "prefill_base_ms" in fit.held_at_zero and fit.cost.prefill_base_ms == 0
    # the per-chunk cost moved into the per-token one: 12 ms per 2048 tokens
    assert fit.cost.prefill_ms_per_token == pytest.approx(0.09 + 12.0 / 2048, rel=1e-3)
    assert any("cannot be told from a per-token one" in n for n in fit.notes)


def test_vllm_bench_mean_when_no_median_and_errors():
    runs = [vllm_run(VLLM_COST, p, 256, median=False) for p in (1000, 5000, 9000, 30000)]
    fit = fit_step_cost_vllm_bench(runs)
    assert any("mean_ttft_ms for runs 0, 1, 2, 3" in n for n in fit.notes)
    with pytest.raises(ValueError, match=r"no run at concurrency 1.*max_concurrency 4"):
        fit_step_cost_vllm_bench([vllm_run(VLLM_COST, 1000, 64, concurrency=4)])
    with pytest.raises(ValueError, match=r"run 1: line 1, column \d+: not JSON"):
        fit_step_cost_vllm_bench([runs[0], '{"completed": 6,, }'])
    bad = json.loads(runs[0])
    del bad["mean_tpot_ms"]
    with pytest.raises(ValueError, match=r"run 0: line 1, key 'mean_tpot_ms'"):
        fit_step_cost_vllm_bench([json.dumps(bad)])
    bad = json.loads(runs[0])
    bad["mean_ttft_ms"] = -5
    with pytest.raises(ValueError, match=r"run 0: .*'mean_ttft_ms'"):
        fit_step_cost_vllm_bench([json.dumps(bad)])
    with pytest.raises(ValueError, match=r"run 0: .*not UTF-8"):
        fit_step_cost_vllm_bench([b"\xff\xff"])
    with pytest.raises(ValueError, match="no runs given"):
        fit_step_cost_vllm_bench([])
    with pytest.raises(ValueError, match="max_num_batched_tokens"):
        fit_step_cost_vllm_bench(runs, max_num_batched_tokens=0)


def test_vllm_bench_real_runs():
    fit = fit_step_cost_vllm_bench([real_file(f) for f in VLLM])
    assert fit.n_points == 4
    assert fit.cost.base_ms == pytest.approx(15.89, abs=0.01)
    assert fit.cost.context_ms_per_token == pytest.approx(6.43e-5, rel=1e-2)
    assert fit.r2["decode"] > 0.9999 and fit.r2["prefill"] > 0.9999
    assert set(fit.held_at_zero) == {"prefill_base_ms", "decode_ms_per_seq"}
    assert np.abs(fit.residuals_ms["prefill"]).max() < 10         # ms, TTFTs of 0.4-11.5 s
    with pytest.raises(ValueError, match="no run at concurrency 1"):
        fit_step_cost_vllm_bench([real_file(f) for f in VLLM if f.endswith("_c4.json")])


# ---------------------------------------------------------------------------------- CSV

def step_rows(cost: StepCost, seed=0, n=40):
    """A well-spread design of steps: prompt-only, mixed and decode-only."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        kind = i % 3
        p = int(rng.integers(1, 8192)) if kind < 2 else 0
        d = int(rng.integers(1, 256)) if kind > 0 else 0
        q = p * int(rng.integers(p, p + 4096)) if p else 0
        k = d * int(rng.integers(16, 4096)) if d else 0
        rows.append((p, q, d, k, float(cost.step_ms(p, q, d, k))))
    return rows


def csv_text(rows, header="prompt_tokens,prompt_tokens_sq,decoding,context_tokens,step_ms"):
    return "\n".join([header, *(",".join(repr(v) for v in r) for r in rows)]) + "\n"


def test_csv_recovers_a_known_cost():
    fit = step_cost_from_csv(csv_text(step_rows(KNOWN)))
    assert_cost(fit.cost, KNOWN, rel=1e-6, skip=("frontend_ms",))
    assert fit.held_at_zero == ("frontend_ms",) and fit.n_points == 40
    assert set(fit.r2) == {"prefill", "decode"}
    assert fit.residuals_ms["prefill"].size == 14 and fit.residuals_ms["decode"].size == 26


def test_csv_without_q_and_without_prompt_only_steps():
    rows = [(p, p * p, d, k, float(KNOWN.step_ms(p, p * p, d, k)))
            for p, _, d, k, _ in step_rows(KNOWN, seed=2)]
    fit = step_cost_from_csv(csv_text([(p, d, k, y) for p, _, d, k, y in rows],
                                      header="P,D,K,step_ms"))
    assert_cost(fit.cost, KNOWN, rel=1e-6, skip=("frontend_ms",))
    assert any("Q = P²" in n for n in fit.notes)
    decode_only = [r for r in step_rows(KNOWN, seed=4) if r[2] > 0 and r[0] == 0]
    fit = step_cost_from_csv(csv_text(decode_only))
    assert fit.cost.prefill_base_ms == fit.cost.base_ms == pytest.approx(KNOWN.base_ms)
    assert {"prefill_ms_per_token", "prefill_ms_per_token_sq"} <= set(fit.held_at_zero)
    assert set(fit.r2) == {"decode"}


@pytest.mark.parametrize("text, match", [
    ("prompt_tokens,decoding,context_tokens\n1,0,0\n", r"line 1: no column 'step_ms'"),
    ("P,D,K,step_ms\n100,0,0,12\n10.5,0,0,3\n", r"line 3, column 1 \(P\): expected a "
                                                r"non-negative whole number, got '10.5'"),
    ("P,D,K,step_ms\n100,0,0,12\n\n0,4,-3,3\n", r"line 4, column 3 \(K\).*'-3'"),
    ("P,D,K,step_ms\n100,0,0,abc\n", r"line 2, column 4 \(step_ms\).*'abc'"),
    ("P,D,K,step_ms\n0,0,0,1.0\n", r"line 2, column 1 \(P\): a step with prompt_tokens 0 "
                                   r"and decoding 0"),
    ("P,D,K,step_ms\n10,0,50,1.0\n", r"line 2, column 3 \(K\): context_tokens 50 with "
                                     r"decoding 0"),
    ("P,D,K,step_ms\n10,0,0\n", r"line 2: expected 4 columns"),
    (b"P,D,K,step_ms\n10,0,0,\xc3\x28\n", r"line 2: not UTF-8"),
    ("\n\n", "empty"),
])
def test_csv_refuses_bad_input_naming_line_and_column(text, match):
    with pytest.raises(ValueError, match=match):
        step_cost_from_csv(text)


def _cost_values():
    def part(high):
        return st.one_of(st.just(0.0), st.floats(high * 1e-3, high, allow_nan=False))
    return st.builds(lambda *v: StepCost(**dict(zip(FIELDS[:6], v))),
                     part(100.0), part(100.0), part(1.0), part(1e-5), part(2.0), part(1e-3))


@settings(max_examples=60)
@given(cost=_cost_values(), seed=st.integers(0, 2 ** 16))
def test_any_cost_round_trips_through_the_csv(cost, seed):
    rows = step_rows(cost, seed=seed, n=30)
    fit = step_cost_from_csv(csv_text(rows))
    # the fitted law gives the same step times, and each coefficient is back to within
    # what a 1e-9 relative change of the step times can hide
    y = np.array([r[-1] for r in rows])
    design = np.array([r[:4] for r in rows], dtype=float)
    scale = np.abs(y).max()
    for f, col in (("prefill_ms_per_token", 0), ("prefill_ms_per_token_sq", 1),
                   ("decode_ms_per_seq", 2), ("context_ms_per_token", 3)):
        tol = 1e-7 * scale / design[:, col].max()
        assert abs(getattr(fit.cost, f) - getattr(cost, f)) <= tol + 1e-9 * getattr(cost, f), f
    for f in ("base_ms", "prefill_base_ms"):
        assert getattr(fit.cost, f) == pytest.approx(getattr(cost, f), abs=1e-7 * scale)
    got = fit.cost.step_ms(*design.T)
    np.testing.assert_allclose(got, y, rtol=1e-8, atol=1e-9 * scale)


def test_fit_result_is_frozen():
    fit = step_cost_from_csv(csv_text(step_rows(KNOWN)))
    with pytest.raises(AttributeError):
        fit.n_points = 3
    with pytest.raises(ValueError):
        fit.residuals_ms["decode"][0] = 1.0


# ------------------------------------------------------------------------------- presets

PRESET_IDS = ("distserve_vllm_a100_opt_13b", "splitwise_a100_bloom_176b_tp8",
              "splitwise_a100_llama2_70b_tp2", "splitwise_a100_llama2_70b_tp4",
              "splitwise_a100_llama2_70b_tp8", "splitwise_h100_bloom_176b_tp8",
              "splitwise_h100_llama2_70b_tp2", "splitwise_h100_llama2_70b_tp4",
              "splitwise_h100_llama2_70b_tp8", "vllm_rtx4090_qwen2_5_7b")


def test_presets_load():
    presets = serving_presets()
    assert tuple(presets) == PRESET_IDS
    for p in presets.values():
        assert isinstance(p, ServingPreset) and isinstance(p.cost, StepCost)
        assert "commit" in p.source and p.kv_cache_tokens
        sched = p.scheduler()
        assert sched.max_num_batched_tokens == p.max_num_batched_tokens
    qwen = presets["vllm_rtx4090_qwen2_5_7b"]
    assert (qwen.kv_cache_tokens, qwen.max_num_batched_tokens, qwen.max_num_seqs,
            qwen.chunked_prefill, qwen.block_size) == (110896, 2048, 256, True, 16)
    opt = presets["distserve_vllm_a100_opt_13b"]
    assert (opt.max_num_batched_tokens, opt.max_num_seqs, opt.chunked_prefill,
            opt.prefix_caching) == (16384, 1024, False, False)
    assert opt.kv_cache_tokens == kv_capacity_tokens(
        gpu_memory_gib=80, weights_gib=24.2, layers=40, kv_heads=40, head_dim=128,
        gpu_memory_utilization=0.95)
    assert load_serving_preset("vllm_rtx4090_qwen2_5_7b").cost.base_ms == qwen.cost.base_ms


@pytest.mark.parametrize("preset_id", PRESET_IDS)
def test_preset_numbers_regenerate_from_the_real_files(preset_id):
    preset = load_serving_preset(SERVING_PRESET_DIR / f"{preset_id}.toml")
    fit = preset.refit(real_file)
    assert_cost(fit.cost, preset.cost, rel=1e-6)
    assert fit.r2 == pytest.approx(preset.r2, abs=1e-8)
    assert fit.n_points == preset.n_points
    assert fit.held_at_zero == preset.held_at_zero


GOOD = (SERVING_PRESET_DIR / "distserve_vllm_a100_opt_13b.toml").read_text()


@pytest.mark.parametrize("old, new, match", [
    ('base_ms = 19', 'base_ms = -19', r"\[cost\]: field 'base_ms' must be a finite number ≥ 0"),
    ('frontend_ms = 0.0\n', '', r"\[cost\]: missing field 'frontend_ms'"),
    ('model = ', 'modell = ', r"unknown field 'modell'"),
    ('max_num_seqs = 1024', 'max_num_seqs = "many"', r"\[scheduler\]: field 'max_num_seqs' "
                                                      r"must be a whole number"),
    ('chunked_prefill = false', 'chunked_prefill = 0', r"field 'chunked_prefill' must be a bool"),
    ('kv_cache_tokens = 67895', 'kv_cache_tokens = 67000', r"field 'kv_cache_tokens' is 67000, "
                                                           r"but \[kv_capacity\] computes 67895"),
    ('weights_gib = 24.2', 'weights_gib = 240.0', r"\[kv_capacity\]: no room"),
    ('held_at_zero = ["frontend_ms"]', 'held_at_zero = ["base_ms"]',
     r"field 'base_ms' is listed in \[fit\] held_at_zero"),
    ('function = "step_cost_from_distserve"', 'function = "eval"', r"field 'function' must be"),
    ('id = "distserve_vllm_a100_opt_13b"', 'id = "other"', r"field 'id' must be the file's name"),
    ('r2 = {decode', 'r2 = {decode = 2.0, x', r"field 'r2.decode' must be a finite number ≤ 1"),
    ('[cost]', '[cost', r"not valid TOML"),
])
def test_bad_preset_files_name_the_file_and_field(tmp_path, old, new, match):
    assert old in GOOD
    path = tmp_path / "distserve_vllm_a100_opt_13b.toml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ValueError, match=r"distserve_vllm_a100_opt_13b\.toml.*" + match):
        load_serving_preset(path)


def test_unknown_preset_id_lists_the_presets():
    with pytest.raises(ValueError, match=r"unknown serving preset 'nope'.*vllm_rtx4090_qwen2_5_7b"):
        load_serving_preset("nope")
