"""Simulator throughput (jobs/s) against Ciw on the identical model.

b_max = 1 makes the batching server an M/D/1 queue, which Ciw simulates
directly.  Both start empty and run the same number of customers per second of
wall time is compared; the goal is ≥ 1000× Ciw.  The pure-numpy fallback (no
numba) is reported beside it, and so are trace replay and a sampled MMPP-2 against the
Poisson run of the same length.
"""
import time

import numpy as np

from benchmarks.harness import Row, best_time
from engine.batching import sim

ALPHA, TAU0 = 0.1438, 1.8874
SERVICE = ALPHA + TAU0
LAM = 0.8 / SERVICE


def ciw_jobs_per_s(n_jobs: int = 20_000) -> float:
    import ciw

    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=LAM)],
        service_distributions=[ciw.dists.Deterministic(value=SERVICE)],
        number_of_servers=[1])
    ciw.seed(1)
    q = ciw.Simulation(network)
    t0 = time.perf_counter()
    q.simulate_until_max_customers(n_jobs, method="Finish")
    records = q.get_all_records()
    np.mean([r.waiting_time + r.service_time for r in records])
    return len(records) / (time.perf_counter() - t0)


def bursty_rows(n: int, poisson_rate: float) -> list[Row]:
    """Trace replay and bursty processes at ρ = 0.7 (unlimited batches), jobs/s against the
    Poisson run of the same length: the Azure code trace (read from ../shared/real-data
    when it is there, cycled to ``n`` arrivals), else a bursty renewal trace of SCV 13."""
    from engine.arrivals import MMPP2, Renewal, Replay, fit_mmpp2

    lam = 0.7 / ALPHA
    trace = _code_trace()
    source = "Azure code trace" if trace is not None else "renewal SCV 13"
    if trace is None:
        trace = Renewal(1.0, 13.0).sample(10_000, np.random.default_rng(1))
    times = Replay(trace).scaled(lam).sample(n)
    replay = n / best_time(lambda: sim.simulate_batching(lam, ALPHA, TAU0, n_jobs=n, seed=1,
                                                         arrivals=times), repeat=3)
    mmpp = fit_mmpp2(trace)
    mmpp = MMPP2(*(v * lam / mmpp.rate for v in (mmpp.rate_1, mmpp.rate_2, mmpp.switch_12,
                                                  mmpp.switch_21)))
    drawn = n / best_time(lambda: sim.simulate_batching(lam, ALPHA, TAU0, n_jobs=n, seed=1,
                                                        arrivals=mmpp), repeat=3)
    return [
        Row(f"replay ({source}), rho=0.7, numba", replay, "jobs/s", "Poisson jobs/s",
            poisson_rate, replay / poisson_rate, "report", None),
        Row("MMPP-2 (fitted, sampled), rho=0.7", drawn, "jobs/s", "Poisson jobs/s",
            poisson_rate, drawn / poisson_rate, "report", None),
    ]


def _code_trace():
    """Arrival times (s) of the Azure code trace, or None when the file is not there."""
    from pathlib import Path

    from engine.measured import read_trace

    path = Path(__file__).resolve().parents[2] / "shared" / "real-data" / \
        "trace_azure_llm_2023_code.csv"
    return read_trace(path.read_bytes()).arrival_s if path.is_file() else None


def run() -> list[Row]:
    sim.simulate_batching(LAM, ALPHA, TAU0, b_max=1, n_jobs=1_000, seed=0)   # compile
    n = 5_000_000
    ours = n / best_time(lambda: sim.simulate_batching(LAM, ALPHA, TAU0, b_max=1, n_jobs=n,
                                                       seed=1), repeat=3)
    n_np = 200_000
    numpy_only = n_np / best_time(lambda: sim.simulate_batching(
        LAM, ALPHA, TAU0, b_max=1, n_jobs=n_np, seed=1, backend="numpy"), repeat=1)
    batched = n / best_time(lambda: sim.simulate_batching(0.7 / ALPHA, ALPHA, TAU0, n_jobs=n,
                                                          seed=1), repeat=3)
    ciw_rate = ciw_jobs_per_s()
    rows = [
        Row("simulator M/D/1 (b_max=1), numba", ours, "jobs/s", "Ciw jobs/s", ciw_rate,
            ours / ciw_rate, ">= 1000x Ciw", ours / ciw_rate >= 1000),
        Row("simulator M/D/1, numpy fallback", numpy_only, "jobs/s", "Ciw jobs/s", ciw_rate,
            numpy_only / ciw_rate, "report", None),
        Row("simulator greedy batching, rho=0.7, numba", batched, "jobs/s", "Ciw jobs/s",
            ciw_rate, batched / ciw_rate, "report", None),
    ]
    return rows + bursty_rows(n, batched)
