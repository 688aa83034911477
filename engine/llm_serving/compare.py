"""The serving model against real servers' runs.

* ``compare_replay``: replays a measured run (its send times, prompt and reply lengths)
  through the simulator and tables measured against predicted TTFT, TPOT and e2e.
* ``calibrate_step_cost``: an offline step profile misses what the serving stack adds
  (the HTTP server, the tokenizer, the scheduler's and sampler's Python work); fits that
  overhead (per step, per decoding request, a factor on prompt steps, the front end)
  from one or two low-load runs, request by request.

Measured records are anything with ``arrival_s``, ``input_tokens``, ``output_tokens``,
``ttft_ms`` and ``e2e_ms`` per request in send order (``engine.measured.RequestRecords``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import itertools
import math

import numpy as np
import pandas as pd
from scipy import optimize

from .cost import StepCost
from .result import ServingRecords, summarize
from .scheduler import Scheduler
from .sim import simulate_serving

__all__ = ["compare_replay", "compare_vllm_bench", "calibrate_step_cost", "Calibration", "measured_records",
           "replay", "OVERHEAD_TERMS"]

OVERHEAD_TERMS = ("step_ms", "per_seq_ms", "prompt_factor", "frontend_ms")
_BOUNDS = {"step_ms": (0.0, 200.0), "per_seq_ms": (0.0, 20.0), "prompt_factor": (0.5, 5.0),
           "frontend_ms": (0.0, 2000.0)}
_GRID = {"step_ms": (0.0, 2.0, 5.0, 10.0, 20.0), "per_seq_ms": (0.0, 0.1, 0.3, 0.6, 1.0, 2.0),
         "prompt_factor": (0.9, 1.0, 1.15, 1.3, 1.6), "frontend_ms": (0.0,)}
_NEUTRAL = {"step_ms": 0.0, "per_seq_ms": 0.0, "prompt_factor": 1.0, "frontend_ms": None}


def _column(records, name):
    value = getattr(records, name, None)
    if value is None:
        raise ValueError(f"records: no {name!r} per request (a run read by "
                         f"engine.measured.read_request_records has it)")
    return np.asarray(value)


def measured_records(records) -> ServingRecords:
    """A measured run as ``ServingRecords`` (send order, times from the first send), so
    it is summarised by the same function as a simulated one."""
    if isinstance(records, ServingRecords):
        return records
    a = _column(records, "arrival_s").astype(float)
    if a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError("records: send times (arrival_s) are needed to replay a run; this "
                         "file has none")
    order = np.argsort(a, kind="stable")
    a = a[order] - a[order][0]
    ttft = _column(records, "ttft_ms").astype(float)[order]
    e2e = _column(records, "e2e_ms").astype(float)[order]
    return ServingRecords(
        arrival_s=a, first_token_s=a + ttft / 1e3, finish_s=a + e2e / 1e3,
        input_tokens=_column(records, "input_tokens").astype(np.int64)[order],
        output_tokens=_column(records, "output_tokens").astype(np.int64)[order],
        preemptions=np.zeros(a.size, np.int64), cached_tokens=np.zeros(a.size, np.int64))


def replay(records, cost: StepCost, scheduler: Scheduler, **kwargs):
    """The simulator's run of the measured ``records``' send times and lengths (a
    ``ServingResult`` with its records)."""
    m = measured_records(records)
    return simulate_serving(cost, scheduler, input_tokens=m.input_tokens,
                            output_tokens=m.output_tokens, arrival_s=m.arrival_s,
                            return_records=True, **kwargs)


_METRICS = (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms"), ("e2e", "e2e_ms"))


def compare_replay(records, cost: StepCost, scheduler: Scheduler, **kwargs) -> pd.DataFrame:
    """Measured against predicted TTFT, TPOT and e2e (mean, p50, p90, p99, ms) of a
    replayed run: columns ``metric, statistic, measured_ms, predicted_ms, error_pct``
    (error = predicted / measured − 1)."""
    m = measured_records(records)
    measured = summarize(m)
    predicted = replay(m, cost, scheduler, **kwargs)
    rows = []
    for label, attr in _METRICS:
        got, want = getattr(predicted, attr), getattr(measured, attr)
        for stat in ("mean", "p50", "p90", "p99"):
            mv, pv = getattr(want, stat), getattr(got, stat)
            rows.append({"metric": label, "statistic": stat, "measured_ms": mv,
                         "predicted_ms": pv,
                         "error_pct": (pv / mv - 1) * 100 if mv > 0 else math.nan})
    table = pd.DataFrame(rows)
    table.attrs["n_requests"] = m.n_requests
    table.attrs["preempted_fraction"] = predicted.preempted_fraction
    table.attrs["kv_peak_fraction"] = predicted.kv_peak_fraction
    return table


@dataclass(frozen=True)
class Calibration:
    """A step cost with the serving stack's overhead fitted: ``cost`` (the calibrated
    one), ``overhead`` (each term's value; terms not fitted at their neutral value),
    ``rms_log_error`` (per request, TTFT and TPOT, over the calibration runs),
    ``n_requests`` and ``tables`` (``compare_replay`` of each calibration run)."""

    cost: StepCost
    overhead: dict
    rms_log_error: float
    n_requests: int
    tables: tuple = field(default=(), repr=False)
    notes: tuple = ()


def _residuals(costs_of, runs, scheduler, x, kwargs, weighted=True):
    cost = costs_of(x)
    out = []
    for m in runs:
        r = replay(m, cost, scheduler, **kwargs).records
        two = m.output_tokens >= 2
        w = 1.0 / math.sqrt(m.n_requests) if weighted else 1.0
        out.append(w * np.log(r.ttft_ms / m.ttft_ms))
        out.append(w * np.log(r.tpot_ms[two] / m.tpot_ms[two]))
    return np.concatenate(out)


def calibrate_step_cost(cost: StepCost, records, scheduler: Scheduler, *,
                        terms=OVERHEAD_TERMS, **kwargs) -> Calibration:
    """Fit the serving overhead ``terms`` (of ``OVERHEAD_TERMS``: ``step_ms`` on every
    step, ``per_seq_ms`` per decoding request, ``prompt_factor`` on the prompt terms,
    ``frontend_ms``) to one run or a list of runs (low load: the method assumes the
    overhead, not queueing, explains the gap), minimising the per-request log errors of
    TTFT and TPOT (each run weighted equally): a coarse grid, then least squares from its
    best point.  Returns a ``Calibration``."""
    terms = tuple(terms)
    bad = [t for t in terms if t not in OVERHEAD_TERMS]
    if bad or not terms:
        raise ValueError(f"terms must be some of {', '.join(OVERHEAD_TERMS)}, got {terms!r}")
    runs = [measured_records(r) for r in (records if isinstance(records, (list, tuple))
                                          else [records])]
    for m in runs:
        if m.n_requests < 2:
            raise ValueError("records: a calibration run needs at least 2 requests")
        if np.any(m.ttft_ms <= 0):
            raise ValueError("records: a measured TTFT of 0 ms or less cannot be fitted")

    def costs_of(x):
        values = dict(zip(terms, x))
        return cost.with_overhead(
            step_ms=values.get("step_ms", 0.0), per_seq_ms=values.get("per_seq_ms", 0.0),
            prompt_factor=values.get("prompt_factor", 1.0),
            frontend_ms=values.get("frontend_ms", cost.frontend_ms if "frontend_ms" not in
                                   terms else 0.0),
            label=f"{cost.label} + serving overhead calibrated".strip(" +"))

    def loss(x):
        return float(np.sum(_residuals(costs_of, runs, scheduler, x, kwargs) ** 2))

    grid = [_GRID[t] for t in terms]
    start = min(itertools.product(*grid), key=lambda x: loss(np.array(x)))
    x0 = np.array(start, dtype=float)
    if "frontend_ms" in terms:                  # the front end shifts every TTFT
        i = terms.index("frontend_ms")
        r = np.concatenate([replay(m, costs_of(x0), scheduler, **kwargs).records.ttft_ms
                            - m.ttft_ms for m in runs])
        x0[i] = float(np.clip(-np.median(r), *_BOUNDS["frontend_ms"]))
    lo = np.array([_BOUNDS[t][0] for t in terms])
    hi = np.array([_BOUNDS[t][1] for t in terms])
    fit = optimize.least_squares(lambda x: _residuals(costs_of, runs, scheduler, x, kwargs),
                                 np.clip(x0, lo, hi), bounds=(lo, hi), diff_step=0.02,
                                 max_nfev=200)
    x = fit.x if loss(fit.x) <= loss(x0) else x0
    calibrated = costs_of(x)
    n = sum(m.n_requests for m in runs)
    res = _residuals(costs_of, runs, scheduler, x, kwargs, weighted=False)
    overhead = {t: _NEUTRAL[t] for t in OVERHEAD_TERMS}
    overhead["frontend_ms"] = cost.frontend_ms
    overhead.update({t: float(v) for t, v in zip(terms, x)})
    tables = tuple(compare_replay(m, calibrated, scheduler, **kwargs) for m in runs)
    rms = float(np.sqrt(np.mean(res ** 2)))
    return Calibration(calibrated, overhead, rms, n, tables,
                       notes=(f"fitted {', '.join(terms)} on {len(runs)} run(s), {n} requests",))


def _bench_runs(runs):
    from ..measured import read_vllm_bench
    if isinstance(runs, (str, bytes)):
        runs = [runs]
    read = []
    for i, text in enumerate(runs):
        try:
            read.append((read_vllm_bench(text), text))
        except ValueError as err:
            raise ValueError(f"run {i + 1}: {err}") from None
    if not read:
        raise ValueError("runs: no vllm bench serve results given")
    for i, (r, _) in enumerate(read):
        if r.max_concurrency is None:
            raise ValueError(f"run {i + 1}: no max_concurrency: a closed-loop run "
                             f"(--max-concurrency N) is needed")
        if r.completed < 1:
            raise ValueError(f"run {i + 1}: no request completed")
    dated = all(r.date for r, _ in read)
    return sorted(read, key=lambda rt: rt[0].date) if dated else read, dated


def compare_vllm_bench(runs, *, kv_cache_tokens=None, max_num_batched_tokens=None,
                       max_num_seqs=None, block_size=16) -> pd.DataFrame:
    """One server's ``vllm bench serve --save-result`` runs, predicted.

    The step cost is fitted on the concurrency-1 runs only
    (``fit_step_cost_vllm_bench``); every run is then simulated in the order it was
    taken (its ``date``) on one server whose prefix cache lives across runs: request i
    of every run shares its leading tokens with request i of the others (vllm bench's
    seeded random prompts), and each run starts with request 0 sent alone (vllm bench's
    test request).  Scheduler: vLLM V1 (chunked prefill, prefix caching) with the given
    settings, by default V1's for a GPU under 70 GiB (2,048 tokens a step, 256
    sequences; KV unbounded unless given).  Columns: ``max_concurrency, input_tokens,
    output_tokens, calibration`` and ``measured_``/``predicted_`` ``mean_ttft_ms,
    p99_ttft_ms, mean_tpot_ms, throughput_requests_per_s``, then each ``error_pct``.
    """
    from .measured_fits import fit_step_cost_vllm_bench
    read, dated = _bench_runs(runs)
    ones = [text for r, text in read if r.max_concurrency == 1]
    if not ones:
        raise ValueError("runs: no concurrency-1 run (--max-concurrency 1) to calibrate on")
    fit = fit_step_cost_vllm_bench(ones, max_num_batched_tokens=max_num_batched_tokens or 2048)
    scheduler = Scheduler(max_num_seqs=max_num_seqs or 256,
                          max_num_batched_tokens=max_num_batched_tokens or 2048,
                          kv_cache_tokens=kv_cache_tokens, block_size=block_size)
    cache = None
    rows = []
    for r, _ in read:
        n = r.completed
        l = max(1, round(r.total_input_tokens / n))
        o = max(1, round(r.total_output_tokens / n))
        if scheduler.kv_cache_tokens is not None and l + o - 1 > scheduler.kv_cache_tokens:
            raise ValueError(f"a run with {l} prompt tokens does not fit kv_cache_tokens = "
                             f"{scheduler.kv_cache_tokens}")
        warm = {} if cache is None else {"warm_prefix_cache": cache}
        if scheduler.kv_cache_tokens is not None:
            test = simulate_serving(fit.cost, scheduler, input_tokens=l, output_tokens=o,
                                    concurrency=1, n_requests=1, prefix_stream=0,
                                    prefix_tokens=l, **warm)
            warm = {"warm_prefix_cache": test.prefix_cache}
        sim = simulate_serving(fit.cost, scheduler, input_tokens=l, output_tokens=o,
                               concurrency=r.max_concurrency, n_requests=n,
                               prefix_stream=np.arange(n), prefix_tokens=l, **warm)
        cache = sim.prefix_cache if scheduler.kv_cache_tokens is not None else None
        rows.append({
            "max_concurrency": r.max_concurrency, "input_tokens": l, "output_tokens": o,
            "calibration": r.max_concurrency == 1, "date": r.date,
            "measured_mean_ttft_ms": r.mean_ttft_ms, "predicted_mean_ttft_ms": sim.ttft_ms.mean,
            "measured_p99_ttft_ms": r.p99_ttft_ms, "predicted_p99_ttft_ms": sim.ttft_ms.p99,
            "measured_mean_tpot_ms": r.mean_tpot_ms, "predicted_mean_tpot_ms": sim.tpot_ms.mean,
            "measured_throughput_requests_per_s": r.request_throughput_per_s,
            "predicted_throughput_requests_per_s": sim.throughput_requests_per_s,
            "predicted_preempted_fraction": sim.preempted_fraction,
            "predicted_kv_peak_fraction": sim.kv_peak_fraction})
    table = pd.DataFrame(rows)
    for metric in ("mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                   "throughput_requests_per_s"):
        table[f"{metric}_error_pct"] = (table[f"predicted_{metric}"]
                                        / table[f"measured_{metric}"] - 1) * 100
    table.attrs["step_cost"] = fit.cost
    table.attrs["scheduler"] = scheduler
    table.attrs["fit_notes"] = fit.notes
    table.attrs["ordered_by_date"] = dated
    return table
