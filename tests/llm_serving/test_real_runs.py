"""The serving model against real vLLM runs it was not fitted to (../shared/real-data).

Only the step cost's serving overhead is calibrated, and only on low-load or
concurrency-1 runs; every other run is predicted.  The measured errors are tabled in
docs/models/llm_serving.md ("Against real servers").
"""
import glob

import numpy as np
import pytest

from engine.llm_serving import (Scheduler, calibrate_step_cost, compare_replay,
                                compare_vllm_bench, load_serving_preset)
from engine.measured import read_request_records
from tests.real_data import REAL_DATA, real_file

DISTSERVE = "distserve_opt13b_a100"
LOW_LOAD = ("vllm-100-1.exp", "vllm-150-1.5.exp")
KNEE = "vllm-300-3.exp"
RTX = "vllm_bench_rtx4090_qwen2.5-7b"


def _errors(table, metrics=("TTFT", "TPOT"), stats=("p50", "p90")):
    keep = table["metric"].isin(metrics) & table["statistic"].isin(stats)
    return np.abs(table.loc[keep, "error_pct"].to_numpy())


@pytest.fixture(scope="module")
def distserve():
    """DistServe's vLLM runs and the serving overhead calibrated on the two low-load
    ones, with the preset's scheduler (vLLM 0.2.3: whole prompts, 16,384 tokens a step,
    1,024 sequences, its KV cache computed from the GPU's memory: 4,243 blocks)."""
    runs = {name: read_request_records(real_file(f"{DISTSERVE}/{name}"))
            for name in LOW_LOAD + (KNEE,)}
    preset = load_serving_preset("distserve_vllm_a100_opt_13b")
    scheduler = preset.scheduler()
    cal = calibrate_step_cost(preset.cost, [runs[n] for n in LOW_LOAD], scheduler)
    return runs, cal, scheduler, preset


def test_offline_profile_alone_is_optimistic(distserve):
    """The README's warning, measured: DistServe's offline fit replays the low-load runs
    optimistically (its steps lack the serving stack)."""
    runs, _, scheduler, preset = distserve
    for name in LOW_LOAD:
        table = compare_replay(runs[name], preset.cost, scheduler)
        tpot = table[(table.metric == "TPOT") & (table.statistic == "p50")]
        assert float(tpot.error_pct.iloc[0]) < -15


def test_below_saturation_within_15_percent_median_25_max(distserve):
    runs, cal, scheduler, _ = distserve
    errors = np.concatenate([_errors(compare_replay(runs[n], cal.cost, scheduler))
                             for n in LOW_LOAD])
    assert np.median(errors) <= 15 and errors.max() <= 25, errors
    assert cal.overhead["prompt_factor"] >= 1 and cal.overhead["per_seq_ms"] > 0


def test_the_knee_tpot_within_25_percent_ttft_median_within_50(distserve):
    """At 3 requests/s: TPOT p50/p90 within 25 % and the median TTFT within 50 %.  The
    TTFT tail is not met with the computed block count: from about 70 s into the run the
    real server's cache fills and prompts queue; the model's 4,243 blocks fill only
    briefly (docs/models/llm_serving.md tables how TTFT p90 moves with the block count)."""
    runs, cal, scheduler, _ = distserve
    table = compare_replay(runs[KNEE], cal.cost, scheduler)
    assert _errors(table, ("TPOT",)).max() <= 25
    assert _errors(table, ("TTFT",), ("p50",)).max() <= 50
    p90 = table[(table.metric == "TTFT") & (table.statistic == "p90")].error_pct.iloc[0]
    assert p90 < -50                     # the known miss, kept visible
    assert table.attrs["kv_peak_fraction"] > 0.95


@pytest.fixture(scope="module")
def rtx_table():
    names = sorted(glob.glob(str(REAL_DATA / RTX / "*.json")))
    if not names:
        real_file(f"{RTX}/p1_bf16_4096_c1.json")          # skips, or fails under CI
    runs = [real_file(f"{RTX}/{n.rsplit('/', 1)[1]}") for n in names]
    return compare_vllm_bench(runs, kv_cache_tokens=110_896, max_num_batched_tokens=2048,
                              max_num_seqs=256)


def test_rtx4090_runs_taken_in_order_with_the_cache_living_across_them(rtx_table):
    t = rtx_table
    assert t.attrs["ordered_by_date"] and list(t["date"]) == sorted(t["date"])
    assert list(t["input_tokens"].round(-3)) == [4000] * 3 + [16000] * 3 + [33000] * 3 \
        + [63000] * 2


def test_rtx4090_concurrency_4_and_8_predicted(rtx_table):
    """Calibrated on the concurrency-1 runs only; at concurrency 4 and 8: mean TTFT, mean
    TPOT and throughput within median 10 %, max 25 %; p99 TTFT within median 15 %,
    max 50 %."""
    t = rtx_table[~rtx_table.calibration]
    for metric in ("mean_ttft_ms", "mean_tpot_ms", "throughput_requests_per_s"):
        err = t[f"{metric}_error_pct"].abs()
        assert err.median() <= 10 and err.max() <= 25, (metric, err.tolist())
    err = t["p99_ttft_ms_error_pct"].abs()
    assert err.median() <= 15 and err.max() <= 50, err.tolist()
