"""Old name of ``engine.batching.answers`` (SLA answers, costs, simulated sweeps, Triton
delay search): re-exports its public names."""
from . import batching, sim
from .batching.answers import (ENERGY, PRICE, TARGET, DelaySweep, OperatingPoint, RateSweep,
                               Validation, cost_per_million, max_rate_for_mean_latency,
                               max_rate_for_p99, merge_delay_sweeps, operating_point_at,
                               rate_seed, simulate_rate, simulate_rates, sweep_from_results,
                               sweep_queue_delay, validation)

__all__ = ["batching", "sim", "ENERGY", "PRICE", "TARGET", "DelaySweep", "OperatingPoint",
           "RateSweep", "Validation", "cost_per_million", "max_rate_for_mean_latency",
           "max_rate_for_p99", "merge_delay_sweeps", "operating_point_at", "rate_seed",
           "simulate_rate", "simulate_rates", "sweep_from_results", "sweep_queue_delay",
           "validation"]
