"""GPU inference server with dynamic batching (Inoue 2021): the model's public names.

Poisson arrivals of rate λ; whenever the server is free and jobs wait, all of them
(at most ``b_max``) start as one batch of deterministic time τ[b] = αb + τ0 (eq 25).
Times in ms and rates per ms, as the names say (``lam_per_ms``, ``alpha_ms``, ``tau0_ms``,
``think_time_ms``, ``max_queue_delay_ms``; energies ``beta_j``, ``c0_j`` in J); the keywords
of before (``lam=``, ``alpha=``, ``tau0=`` …) still work for one release, with a
``DeprecationWarning``.

* ``formulas``    capacity, bounds φ0/φ1/φ, energy efficiency and its bound, load units
* ``exact``       the exact chain solvers (series for b_max = ∞, departure chain otherwise)
* ``means``       exact E[W], E[B], utilization, η; the ``DynamicBatching`` object
* ``curves``      everything over a load grid, for plots and reports
* ``answers``     SLA answers, the operating point, cost, simulated sweeps, Triton delays
* ``sim``         the discrete-event simulator (greedy and Triton-style batchers)
* ``closed_loop`` N clients in a loop (perf_analyzer's fixed concurrency), several copies
* ``closed_sim``  the closed-loop simulator (records, and their summary)
* ``traffic``     under other arrivals: which result answers, the MMPP-2 curve, the
                  operating point, "Poisson vs this traffic"
* ``profile``     a measured batch profile, checked and sorted
* ``mmpp``        exact means under MMPP-2 (bursty) arrivals: ``mean_latency_mmpp2``
                  (its chain in ``mmpp_chain``, the counting matrices in ``map_counts``)

The model, its derivations and the paper's errata: docs/models/batching.md.

>>> lam = 0.5 / 0.1438                      # ρ = 0.5 on the V100 profile (per ms)
>>> bool(mean_latency(lam, 0.1438, 1.8874) < phi(lam, 0.1438, 1.8874))   # Theorem 2
True
>>> float(capacity(1.0, 2.0, 2))
0.5
"""
import importlib

from .. import OLD_NAMES
from . import exact
from .closed_loop import ClosedLoop, closed_loop
from .closed_sim import (ClosedLoopRecords, ClosedLoopSimResult, simulate_closed_loop,
                         simulate_closed_loop_records, summarize_closed_loop)
from .answers import (ENERGY, PRICE, TARGET, DelaySweep, OperatingPoint, RateSweep, Validation,
                      busy_split, cost_per_million, datasheet_power_w, delay_grid_ms,
                      largest_rate_below,
                      energy_per_request_at_power,
                      max_rate_for_mean_latency, max_rate_for_p99,
                      merge_delay_sweeps, operating_point_at, rate_seed, simulate_rate,
                      simulate_rates, sweep_from_results, sweep_queue_delay, validation)
from .curves import MAX_FRACTION, N_POINTS, LoadCurves, b_max_family, load_curves
from .exact import LimitedSolution, limited_solution, unlimited_idle_weight, unlimited_moments
from .formulas import (LOAD_UNITS, MEAN_BATCH, RATE_PER_S, RHO, batch_energy, below_capacity,
                       capacity, efficiency_from_batch_size, energy_efficiency_bound, load_in,
                       per_ms_to_per_s, per_s_to_per_ms, phi, phi0, phi1, rate_from_load,
                       throughput_per_s, utilization_bound)
from .means import (DynamicBatching, Stationary, energy_efficiency, mean_batch_size, mean_latency,
                    mean_wait, stationary, utilization)
from .mmpp import Mmpp2Batching, mean_latency_mmpp2
from .profile import batch_size_grid, sorted_profile
from .traffic import (TrafficComparison, comparison_loads, loads_of_capacity,
                      mean_under, mmpp2_curve, operating_point_under, traffic_comparison)
from .sim import BatchingSimResult, SimRecords, simulate_batching, simulate_records, summarize

__all__ = [
    "exact",
    "capacity", "below_capacity", "phi0", "phi1", "phi", "efficiency_from_batch_size",
    "energy_efficiency_bound", "utilization_bound", "per_ms_to_per_s", "per_s_to_per_ms",
    "rate_from_load", "load_in", "throughput_per_s", "batch_energy", "LOAD_UNITS", "MEAN_BATCH",
    "RATE_PER_S", "RHO",
    "Stationary", "stationary", "mean_latency", "mean_wait", "mean_batch_size", "utilization",
    "energy_efficiency", "DynamicBatching",
    "LimitedSolution", "limited_solution", "unlimited_idle_weight", "unlimited_moments",
    "LoadCurves", "load_curves", "b_max_family", "N_POINTS", "MAX_FRACTION",
    "TARGET", "PRICE", "ENERGY", "RateSweep", "DelaySweep", "OperatingPoint",
    "max_rate_for_mean_latency", "max_rate_for_p99", "rate_seed", "simulate_rate",
    "simulate_rates", "sweep_from_results", "sweep_queue_delay", "merge_delay_sweeps",
    "busy_split", "cost_per_million", "energy_per_request_at_power", "operating_point_at",
    "Validation", "validation",
    "BatchingSimResult", "SimRecords", "simulate_batching", "simulate_records", "summarize",
    "ClosedLoop", "closed_loop", "ClosedLoopSimResult", "simulate_closed_loop",
    "ClosedLoopRecords", "simulate_closed_loop_records", "summarize_closed_loop",
    "Mmpp2Batching", "mean_latency_mmpp2",
    "datasheet_power_w", "delay_grid_ms", "batch_size_grid", "sorted_profile",
    "TrafficComparison", "comparison_loads", "largest_rate_below", "loads_of_capacity",
    "mean_under", "mmpp2_curve", "operating_point_under", "traffic_comparison",
]


def __getattr__(name):
    """``engine.batching.batch_chain``: an old name, a deprecation stub (``engine.OLD_NAMES``)."""
    if f"{__name__}.{name}" in OLD_NAMES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
