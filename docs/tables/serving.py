"""The tables of docs/models/llm_serving.md, computed as the engine computes them.

``python -m docs.tables.serving`` (from the repository root, with ../shared/real-data
beside it for the real runs) prints, in markdown:

1. the approximation (``approximate_serving``) against the simulation: mean TTFT and
   TPOT at 10-95 % of ``max_rate_per_s`` on two presets with the Azure conversation
   laws (chunked prefill) and on the DistServe preset (whole prompts); and its
   percentiles (``approximate_percentiles``, the planner's screening) at p95;
2. DistServe's vLLM runs replayed with the overhead calibrated on the 1 and 1.5
   requests/s runs, for several KV block counts (the knee hangs on it);
3. the RTX 4090 vllm bench runs predicted from the concurrency-1 runs.
"""
from __future__ import annotations

from pathlib import Path

from engine.llm_serving import (Scheduler, approximate_percentiles, approximate_serving,
                                calibrate_step_cost,
                                compare_replay, compare_vllm_bench, load_serving_preset,
                                max_rate_per_s, simulate_serving)
from engine.measured import read_request_records
from engine.presets import token_law_presets

REAL = Path(__file__).resolve().parents[3] / "shared" / "real-data"
SHARES = (0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


def approximation_table() -> None:
    laws = token_law_presets()
    prompt, reply = laws["azure_2023_conv_prompt"].law(), laws["azure_2023_conv_output"].law()
    cases = []
    for pid in ("splitwise_h100_llama2_70b_tp8", "vllm_rtx4090_qwen2_5_7b"):
        p = load_serving_preset(pid)
        cases.append((p.name + ", chunked prefill", p.cost, Scheduler(
            max_num_seqs=256, max_num_batched_tokens=8192, kv_cache_tokens=p.kv_cache_tokens)))
    d = load_serving_preset("distserve_vllm_a100_opt_13b")
    cases.append((d.name + ", whole prompts", d.cost, d.scheduler()))
    print("| configuration | load (share of capacity) | TTFT mean: approx / sim (ms) | error "
          "| TPOT mean: approx / sim (ms) | error |")
    print("|---|---|---|---|---|---|")
    for name, cost, sched in cases:
        cap = max_rate_per_s(cost, sched, prompt, reply)
        for share in SHARES:
            a = approximate_serving(cost, sched, input_tokens=prompt, output_tokens=reply,
                                    rate_per_s=share * cap)
            s = simulate_serving(cost, sched, input_tokens=prompt, output_tokens=reply,
                                 rate_per_s=share * cap, n_requests=40_000, seed=1)
            ta, ts = float(a.ttft_ms), s.ttft_ms.mean
            pa, ps = float(a.tpot_ms), s.tpot_ms.mean
            print(f"| {name} ({cap:.3g} requests/s) | {share:.0%} | {ta:.4g} / {ts:.4g} | "
                  f"{(ta / ts - 1) * 100:+.0f} % | {pa:.4g} / {ps:.4g} | "
                  f"{(pa / ps - 1) * 100:+.0f} % |")


def percentile_table() -> None:
    """approximate_percentiles against the simulation: p95 TTFT, TPOT and e2e at 30-90 %
    of capacity (chunked prefill, the Azure conversation laws)."""
    laws = token_law_presets()
    prompt, reply = laws["azure_2023_conv_prompt"].law(), laws["azure_2023_conv_output"].law()
    print("| configuration | load | p95 TTFT approx / sim (ms) | error | p95 TPOT | error | "
          "p95 e2e | error |")
    print("|---|---|---|---|---|---|---|---|")
    for pid in ("splitwise_h100_llama2_70b_tp8", "vllm_rtx4090_qwen2_5_7b",
                "distserve_vllm_a100_opt_13b"):
        p = load_serving_preset(pid)
        sched = Scheduler(max_num_seqs=min(p.max_num_seqs, 256),
                          max_num_batched_tokens=max(p.max_num_batched_tokens, 2048),
                          kv_cache_tokens=p.kv_cache_tokens, chunked_prefill=True)
        cap = max_rate_per_s(p.cost, sched, prompt, reply)
        for share in (0.3, 0.6, 0.8, 0.9):
            a = approximate_percentiles(p.cost, sched, input_tokens=prompt,
                                        output_tokens=reply, rate_per_s=share * cap,
                                        percentile=95)
            r = simulate_serving(p.cost, sched, input_tokens=prompt, output_tokens=reply,
                                 rate_per_s=share * cap, n_requests=40_000, seed=1)
            cells = []
            for metric in ("ttft", "tpot", "e2e"):
                x = float(getattr(a, f"{metric}_ms"))
                y = getattr(r, f"{metric}_ms").percentile(95)
                cells.append(f"{x:.4g} / {y:.4g} | {(x / y - 1) * 100:+.0f} %")
            print(f"| {p.name.split(' (')[0]} ({cap:.3g} requests/s) | {share:.0%} | "
                  + " | ".join(cells) + " |")


def distserve_table() -> None:
    folder = REAL / "distserve_opt13b_a100"
    names = ("vllm-100-1.exp", "vllm-150-1.5.exp", "vllm-300-3.exp")
    runs = {n: read_request_records((folder / n).read_bytes()) for n in names}
    preset = load_serving_preset("distserve_vllm_a100_opt_13b")
    print("| KV blocks | run | TTFT p50 | TTFT p90 | TPOT p50 | TPOT p90 | preempted |")
    print("|---|---|---|---|---|---|---|")
    for blocks in (3800, 3900, 4000, preset.kv_cache_tokens // 16):
        sched = Scheduler(max_num_seqs=1024, max_num_batched_tokens=16384,
                          kv_cache_tokens=blocks * 16, chunked_prefill=False,
                          prefix_caching=False)
        cal = calibrate_step_cost(preset.cost, [runs[n] for n in names[:2]], sched)
        for n in names:
            t = compare_replay(runs[n], cal.cost, sched)
            cell = {(m, s): e for m, s, e in zip(t.metric, t.statistic, t.error_pct)}
            print(f"| {blocks:,} | {n} | " + " | ".join(
                f"{cell[(m, s)]:+.0f} %" for m in ("TTFT", "TPOT") for s in ("p50", "p90"))
                + f" | {t.attrs['preempted_fraction']:.1%} |")
        print(f"| {blocks:,} | overhead fitted | " + ", ".join(
            f"{k} {v:.3g}" for k, v in cal.overhead.items()) + " | | | | |")


def rtx_table() -> None:
    files = sorted((REAL / "vllm_bench_rtx4090_qwen2.5-7b").glob("*.json"))
    t = compare_vllm_bench([f.read_text() for f in files], kv_cache_tokens=110_896,
                           max_num_batched_tokens=2048, max_num_seqs=256)
    print("| prompt | concurrency | mean TTFT meas / pred (ms) | p99 TTFT | mean TPOT | "
          "throughput | preempted (pred) |")
    print("|---|---|---|---|---|---|---|")
    for r in t.itertuples():
        role = " (calibration)" if r.calibration else ""
        print(f"| {r.input_tokens:,} | {r.max_concurrency}{role} | "
              f"{r.measured_mean_ttft_ms:.4g} / {r.predicted_mean_ttft_ms:.4g} "
              f"({r.mean_ttft_ms_error_pct:+.0f} %) | {r.p99_ttft_ms_error_pct:+.0f} % | "
              f"{r.mean_tpot_ms_error_pct:+.0f} % | "
              f"{r.throughput_requests_per_s_error_pct:+.0f} % | "
              f"{r.predicted_preempted_fraction:.0%} |")


def main() -> None:
    approximation_table()
    print()
    percentile_table()
    if not REAL.is_dir():
        raise SystemExit(f"{REAL} is absent: the real runs are read from ../shared/real-data "
                         "beside the repository, never copied into it")
    print()
    distserve_table()
    print()
    rtx_table()


if __name__ == "__main__":
    main()
