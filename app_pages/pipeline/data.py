"""Memoised engine calls of the CPU-GPU pipeline page (hashable arguments only).

Rates are per ms as the engine gives them (the page converts with the engine's
``per_ms_to_per_s``).  An exact curve is solved in a few memoised chunks of points
so a progress bar can move between them.  An arrival process travels as a
``ui.arrivals_input.ArrivalChoice`` (hashable): the exact curves assume Poisson
arrivals; the simulations run under the choice, time-scaled to each load (per ms).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine import pipeline as pl
from engine.presets import GpuSpec, gpu_specs, pipeline_workloads
from ui.arrivals_input import POISSON
from ui.budget import heavy, long_running
from ui.memo import memo

pl.limit_blas_threads()      # once per process, before any session solves (engine/pipeline/blas.py)

CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
N_POINTS = 25              # exact λ grid
N_CHUNKS = 5               # progress steps of one exact curve
X_MAX = 1.15               # charts run to 1.15 × the exact capacity
SIM_FRACTIONS = (0.2, 0.4, 0.6, 0.8, 0.9)      # of the exact capacity
SIM_JOBS = 40_000
SEED = 2010
AT_STREAM = 99             # seed stream of the simulation at the chosen load (the answer)
N_AUTO = 160               # phases solved at once on every rerun; beyond, behind a button
N_LIMIT = 3_000            # largest phase space the sensitivity sweeps solve
K_FAMILY = (1, 2, 4, 8, 16, 32, 64)
C_FAMILY = (1, 2, 4, 8, 16, 32, 64, 128)


@memo(CACHE_SIZE)
def phases(mu_cpu, mu_mem, mu_cu, K: int, c: int, blocking: str) -> int:
    """Phase count N of the exact solve for these rates (its cost grows as N³):
    small wherever the compute units provably never all fill."""
    return pl.solve_phases(mu_cpu, mu_mem, mu_cu, K, c, blocking)


@memo(CACHE_SIZE)
def spec_table() -> dict:
    return gpu_specs()


@memo(CACHE_SIZE)
def workload_table() -> dict:
    return pipeline_workloads()


def custom_spec(link, mem_bw, mem_gb, sms, peak) -> GpuSpec:
    """A GPU spec from the page's own numbers (one peak for both precisions)."""
    return GpuSpec(id="custom", name="Custom GPU", source="entered on the page",
                   host_link_bandwidth_GB_per_s=float(link),
                   memory_bandwidth_GB_per_s=float(mem_bw),
                   memory_GB=float(mem_gb), sm_count=int(sms), boost_clock_MHz=1000.0,
                   fp32_peak_TFLOP_per_s=float(peak), fp16_peak_TFLOP_per_s=float(peak))


@memo(CACHE_SIZE)
def rates(spec: GpuSpec, workload_id: str, K: int, units: int,
          cpu_speedup: float = 1.0) -> pl.PipelineRates:
    """Stage rates (per ms) with the chosen K, the SMs grouped into ``units`` servers
    and the CPU stage ``cpu_speedup`` times faster."""
    wl = replace(workload_table()[workload_id], memory_slots=int(K))
    return pl.with_cpu_speedup(pl.group_compute_units(pl.rates_from_specs(spec, wl), units),
                               cpu_speedup)


def key(r: pl.PipelineRates, blocking: str) -> tuple:
    """The solver's arguments for these rates: (μ_cpu, μ_mem, μ_cu, K, c, blocking)."""
    return (r.mu_cpu, r.mu_mem, r.mu_cu, r.K, r.c, blocking)


@memo(CACHE_SIZE)
def capacity(mu_cpu, mu_mem, mu_cu, K, c, blocking) -> float:
    return float(pl.capacity(mu_cpu, mu_mem, mu_cu, K, c, blocking))


@dataclass(frozen=True)
class Curves:
    lam: np.ndarray            # exact grid, per ms
    exact: pl.Tandem
    lam_dense: np.ndarray      # naive decomposition grid, per ms
    naive: pl.Tandem
    cap: float                 # exact capacity, per ms


@memo(256)
@long_running
def _chunk(lam: tuple, mu_cpu, mu_mem, mu_cu, K, c, blocking) -> pl.Tandem:
    return pl.tandem(np.array(lam), mu_cpu, mu_mem, mu_cu, K, c, blocking)


@memo(CACHE_SIZE)
def curves(mu_cpu, mu_mem, mu_cu, K, c, blocking, bar=None) -> Curves:
    """Exact curve on ``N_POINTS`` loads below capacity (solved in ``N_CHUNKS`` cached
    calls, the bar moving between them) and the naive decomposition on a dense grid."""
    cap = capacity(mu_cpu, mu_mem, mu_cu, K, c, blocking)
    lam = cap * np.linspace(0.02, 0.98, N_POINTS)
    parts = []
    for i, chunk in enumerate(np.array_split(lam, N_CHUNKS)):
        parts.append(_chunk(tuple(chunk), mu_cpu, mu_mem, mu_cu, K, c, blocking))
        if bar is not None:
            bar.progress((i + 1) / N_CHUNKS, "Solving the exact tandem…")
    exact = pl.Tandem(*(np.concatenate([getattr(p, f) for p in parts])
                        for f in pl.Tandem.__dataclass_fields__))
    dense = cap * np.linspace(0.005, X_MAX, 200)
    naive = pl.tandem_independent(dense, mu_cpu, mu_mem, mu_cu, K, c)
    return Curves(lam, exact, dense, naive, cap)


@memo(256)
def point(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking) -> pl.Tandem:
    return pl.tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking)


@memo(256)
def operating(r: pl.PipelineRates, blocking: str, lam: float) -> pl.OperatingPoint:
    """Each stage at load ``lam`` (per ms): busy, blocked, contents (exact tandem)."""
    k = key(r, blocking)
    return pl.operating_point(r, lam, point(lam, *k), capacity(*k))


@memo(256)
def point_naive(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking) -> pl.Tandem:
    """The naive decomposition at one load (blocking does not enter it)."""
    return pl.tandem_independent(lam, mu_cpu, mu_mem, mu_cu, K, c)


def arrivals_at(arrivals, lam) -> dict:
    """The simulator's ``arrivals`` keyword for the choice ``arrivals`` at ``lam`` (per
    ms): none for Poisson (the simulator's own arrivals, as before), else the process
    time-scaled to ``lam`` (its times in ms)."""
    return {} if arrivals.is_poisson else {"arrivals": arrivals.process(lam)}


@memo(512)
@heavy
def _sim_point(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking, n_jobs, i, arrivals=POISSON):
    return pl.simulate_tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking, n_jobs,
                              seed=np.random.SeedSequence([SEED, i]),
                              **arrivals_at(arrivals, lam))


def sim_at(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking, arrivals) -> pl.TandemSimResult:
    """One simulated run at the chosen load ``lam`` (per ms) under ``arrivals``."""
    return _sim_point(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking, SIM_JOBS, AT_STREAM,
                      arrivals)


@dataclass(frozen=True)
class SimSweep:
    lam: np.ndarray            # per ms
    throughput: np.ndarray     # per ms
    w_total: np.ndarray        # ms
    ci95: np.ndarray           # ms


@memo(CACHE_SIZE)
def sim_sweep(mu_cpu, mu_mem, mu_cu, K, c, blocking, cap, bar=None,
              arrivals=POISSON) -> SimSweep:
    """Simulated points at ``SIM_FRACTIONS`` of the exact capacity under ``arrivals`` (an
    ``ArrivalChoice``), one cached run each."""
    lam = [f * cap for f in SIM_FRACTIONS]
    out = []
    for i, x in enumerate(lam):
        out.append(_sim_point(x, mu_cpu, mu_mem, mu_cu, K, c, blocking, SIM_JOBS, i)
                   if arrivals.is_poisson else
                   _sim_point(x, mu_cpu, mu_mem, mu_cu, K, c, blocking, SIM_JOBS, i, arrivals))
        if bar is not None:
            bar.progress((i + 1) / len(lam), "Simulating…")
    return SimSweep(np.array(lam), np.array([r.throughput for r in out]),
                    np.array([r.w_total for r in out]), np.array([r.ci95 for r in out]))


@memo(CACHE_SIZE)
def _family(values, mu_cpu, mu_mem, mu_cu, blocking, vary: str, K, c, bar=None):
    """Exact capacity as K (or c) varies, each value one cached solve."""
    xs = [v for v in values if phases(mu_cpu, mu_mem, mu_cu, v if vary == "K" else K,
                                      v if vary == "c" else c, blocking) <= N_LIMIT]
    caps = []
    for i, v in enumerate(xs):
        caps.append(capacity(mu_cpu, mu_mem, mu_cu, v if vary == "K" else K,
                             v if vary == "c" else c, blocking))
        if bar is not None:
            bar.progress((i + 1) / len(xs), f"Solving capacity vs {vary}…")
    return np.array(xs, dtype=float), np.array(caps)


def k_family(mu_cpu, mu_mem, mu_cu, K, c, blocking, bar=None):
    values = sorted(set(K_FAMILY) | {K, K + 1, 2 * K})
    return _family(values, mu_cpu, mu_mem, mu_cu, blocking, "K", K, c, bar)


def c_family(mu_cpu, mu_mem, mu_cu, K, c, blocking, bar=None):
    """Capacity vs the number of modelled units, each as fast as now (more hardware)."""
    values = sorted(set(C_FAMILY) | {c, c + 1, 2 * c})
    return _family(values, mu_cpu, mu_mem, mu_cu, blocking, "c", K, c, bar)


@memo(CACHE_SIZE)
def what_if(mu_cpu, mu_mem, mu_cu, K, c, blocking) -> dict:
    """Capacity (per ms) with a bigger buffer or more units (same per-unit rate);
    None where the phase space is beyond ``N_LIMIT``."""
    cases = {"K + 1": (K + 1, c), "2K": (2 * K, c), "c + 1 units": (K, c + 1),
             "2c units": (K, 2 * c)}
    return {name: capacity(mu_cpu, mu_mem, mu_cu, k, u, blocking)
            if phases(mu_cpu, mu_mem, mu_cu, k, u, blocking) <= N_LIMIT else None
            for name, (k, u) in cases.items()}
