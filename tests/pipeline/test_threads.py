"""Pipeline solves from several threads at once (a Streamlit server runs each session
on a thread): each gives what it gives alone, and no solve changes process-wide
state (the BLAS thread count is chosen once, engine/pipeline/blas.py)."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from engine import pipeline as pl
from engine.pipeline import blas

# (function, arguments): the reduced route, the full chain (units can all be busy) by
# cyclic and by logarithmic reduction, both blocking rules, capacities, small sizes.
JOBS = [
    (pl.tandem, (np.linspace(0.05, 0.95, 7), 1.0, 2.0, 0.1, 8, 16, "before")),      # reduced
    (pl.tandem, (np.linspace(0.02, 0.3, 6), 1.0, 2.0, 0.02, 4, 6, "before")),       # full chain
    (pl.tandem, (np.linspace(0.02, 0.3, 6), 1.0, 2.0, 0.02, 4, 6, "after")),
    (pl.tandem, (np.linspace(0.1, 0.4, 5), 0.8, 1.5, 0.05, 3, 5, "after", "reference")),
    (pl.capacity, (np.geomspace(0.5, 2.0, 5), 1.0, 0.03, 6, 8, "before")),
    (pl.capacity, (1.0, np.geomspace(0.5, 2.0, 5), 0.03, 6, 8, "after")),
]


def _solve(job):
    fn, args = job
    if fn is pl.tandem and len(args) == 8:
        return fn(*args[:7], method=args[7])
    return fn(*args)


def _same(a, b):
    """Exact equality of two results (arrays, or dataclasses of arrays)."""
    if hasattr(a, "__dataclass_fields__"):
        return all(_same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


def test_a_full_chain_job_is_on_the_full_route():
    """The test exercises the slow route: the second job's units can all be busy."""
    _, (lam, mu_cpu, mu_mem, mu_cu, K, c, blocking) = JOBS[1]
    assert pl.solve_phases(mu_cpu, mu_mem, mu_cu, K, c, blocking) == (K + 1) * (c + 1)


@pytest.mark.parametrize("workers", [2, 6])
def test_parallel_solves_equal_serial_solves(workers):
    serial = [_solve(job) for job in JOBS]
    jobs = JOBS * 3                                       # several of each at once
    with ThreadPoolExecutor(max_workers=workers) as pool:
        parallel = list(pool.map(_solve, jobs))
    for i, (got, want) in enumerate(zip(parallel, serial * 3)):
        assert _same(got, want), JOBS[i % len(JOBS)]


def test_solves_do_not_change_the_blas_setting(monkeypatch):
    """After the first solve the BLAS thread count is never touched again: no solve
    builds a threadpool controller or sets a limit."""
    pl.capacity(1.0, 2.0, 0.1, 2, 2)                      # first use (if not already)
    chosen = blas.blas_threads_chosen()

    def refuse(*args, **kwargs):
        raise AssertionError("a solve changed the process-wide BLAS setting")

    monkeypatch.setattr(blas, "ThreadpoolController", refuse)
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(_solve, JOBS))
    assert blas.limit_blas_threads(3) == chosen            # idempotent: the first choice stays
    assert blas.blas_threads_chosen() == chosen


def test_blas_limit_is_in_effect_once_chosen():
    """The limit the engine chose is what BLAS runs with (threadpoolctl's own report)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    pl.capacity(1.0, 2.0, 0.1, 2, 2)
    chosen = blas.blas_threads_chosen()
    if chosen is None:
        pytest.skip("BLAS left alone in this process")
    infos = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"
             and ("numpy" in i["filepath"] or "scipy" in i["filepath"])]   # the solvers' BLAS
    if not infos:
        pytest.skip("numpy's and scipy's BLAS not reported by threadpoolctl here")
    assert all(i["num_threads"] == chosen for i in infos), infos
