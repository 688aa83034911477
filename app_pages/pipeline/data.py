"""Memoised engine calls of the CPU-GPU pipeline page (hashable arguments only).

Rates are per ms as the engine gives them (the page converts with
``engine.core.units``); every number comes from ``engine.pipeline``.  An exact curve is solved in a few memoised chunks of points
so a progress bar can move between them.  An arrival process travels as a
``ui.arrivals_input.ArrivalChoice`` (hashable): the exact curves assume Poisson
arrivals; the simulations run under the choice, time-scaled to each load (per ms).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine import pipeline as pl
from engine.presets import GpuSpec, gpu_specs, pipeline_workloads
from ui.arrivals_input import POISSON
from ui.budget import heavy, long_running
from ui.memo import memo, over_points

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


@memo(CACHE_SIZE)
def model(r: pl.PipelineRates, blocking: str) -> pl.Tandem:
    """The tandem of these rates (``engine.pipeline.Tandem``): every call below
    is one of its methods, memoised on it."""
    return pl.Tandem.from_rates(r, blocking)


@memo(CACHE_SIZE)
def phases(m: pl.Tandem) -> int:
    """Phase count N of the exact solve (its cost grows as N³): small wherever the
    compute units provably never all fill."""
    return m.n_phases


@memo(CACHE_SIZE)
def capacity(m: pl.Tandem) -> float:
    return m.capacity_per_ms


@memo(256)
@long_running
def _chunk(lam: tuple, m: pl.Tandem) -> pl.TandemMeasures:
    return m.exact(np.array(lam))


@memo(CACHE_SIZE)
def curves(m: pl.Tandem, bar=None) -> pl.TandemCurves:
    """Exact curve on ``N_POINTS`` loads below capacity (solved in ``N_CHUNKS`` memoised
    calls, the bar moving between them) and the naive decomposition on a dense grid
    (``engine.pipeline.curves``)."""
    cap = capacity(m)
    chunks = pl.exact_load_chunks_per_ms(cap, N_POINTS, N_CHUNKS)
    parts = over_points(_chunk, [(chunk, m) for chunk in chunks], bar,
                        "Solving the exact tandem…")
    dense = pl.naive_loads_per_ms(cap, X_MAX)
    return pl.tandem_curves(chunks, parts, m.naive(dense), dense, cap)


@memo(256)
def point(lam, m: pl.Tandem) -> pl.TandemMeasures:
    return m.exact(lam)


@memo(256)
def point_naive(lam, m: pl.Tandem) -> pl.TandemMeasures:
    """The naive decomposition at one load (blocking does not enter it)."""
    return m.naive(lam)


@memo(256)
def operating(r: pl.PipelineRates, m: pl.Tandem, lam: float) -> pl.OperatingPoint:
    """Each stage at load ``lam`` (per ms): busy, blocked, contents (exact tandem)."""
    return pl.operating_point(r, lam, point(lam, m), capacity(m))


@memo(256)
def load(cap: float, mode: str, frac: float, rate_per_s: float) -> float:
    """The load λ (per ms) the load input sets (``engine.pipeline.load_per_ms``)."""
    return pl.load_per_ms(cap, mode, frac, rate_per_s)


@memo(512)
@heavy
def _sim_point(lam, m: pl.Tandem, n_jobs, i, arrivals=POISSON):
    return m.simulate(lam, n_jobs, seed=np.random.SeedSequence([SEED, i]),
                      **arrivals.keywords_at(lam))


def sim_at(lam, m: pl.Tandem, arrivals) -> pl.TandemSimResult:
    """One simulated run at the chosen load ``lam`` (per ms) under ``arrivals``."""
    return _sim_point(lam, m, SIM_JOBS, AT_STREAM, arrivals)


@memo(CACHE_SIZE)
def sim_sweep(m: pl.Tandem, bar=None, arrivals=POISSON) -> pl.TandemSimSweep:
    """Simulated points at ``SIM_FRACTIONS`` of the exact capacity under ``arrivals`` (an
    ``ArrivalChoice``), one memoised run each."""
    lam = pl.loads_at_fractions_per_ms(capacity(m), SIM_FRACTIONS)
    runs = over_points(_sim_point, [(x, m, SIM_JOBS, i, arrivals) for i, x in enumerate(lam)],
                       bar)
    return pl.tandem_sim_sweep(lam, runs)


@memo(CACHE_SIZE)
def _family(vary: str, m: pl.Tandem, bar=None) -> pl.CapacityFamily:
    """Exact capacity as K (or c) varies, each value one memoised solve."""
    cases = m.family_cases(vary, N_LIMIT)
    caps = over_points(capacity, [(replace(m, K=k, c=u),) for k, u in cases], bar,
                       f"Solving capacity vs {vary}…")
    return pl.capacity_family(vary, cases, caps)


def k_family(m: pl.Tandem, bar=None) -> pl.CapacityFamily:
    return _family("K", m, bar)


def c_family(m: pl.Tandem, bar=None) -> pl.CapacityFamily:
    """Capacity vs the number of modelled units, each as fast as now (more hardware)."""
    return _family("c", m, bar)


@memo(CACHE_SIZE)
def what_if(m: pl.Tandem) -> dict:
    """Capacity (per ms) with a bigger buffer or more units (same per-unit rate);
    None where the phase space is beyond ``N_LIMIT``."""
    return m.what_if_capacities(N_LIMIT)
