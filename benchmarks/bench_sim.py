"""Simulator throughput (jobs/s) against Ciw on the identical model.

b_max = 1 makes the batching server an M/D/1 queue, which Ciw simulates
directly.  Both start empty and run the same number of customers per second of
wall time is compared; the goal is ≥ 1000× Ciw.  The pure-numpy fallback (no
numba) is reported beside it.
"""
import time

import numpy as np

from benchmarks.harness import Row, best_time
from engine import sim

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
    return [
        Row("simulator M/D/1 (b_max=1), numba", ours, "jobs/s", "Ciw jobs/s", ciw_rate,
            ours / ciw_rate, ">= 1000x Ciw", ours / ciw_rate >= 1000),
        Row("simulator M/D/1, numpy fallback", numpy_only, "jobs/s", "Ciw jobs/s", ciw_rate,
            numpy_only / ciw_rate, "report", None),
        Row("simulator greedy batching, rho=0.7, numba", batched, "jobs/s", "Ciw jobs/s",
            ciw_rate, batched / ciw_rate, "report", None),
    ]
