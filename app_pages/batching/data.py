"""Memoised engine calls of the GPU batching page (hashable arguments only)."""
from __future__ import annotations

from engine import batching, fit
from engine.presets import batch_profiles, hardware_prices
from ui.arrivals_input import POISSON
from ui.budget import heavy, long_running
from ui.memo import memo, over_points

# Results are immutable by convention: the memo hands out the object itself.
CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
B_FAMILY = (4, 8, 16, 32, 64, 128)
SEED = 2021
N_JOBS = 200_000
SIM_FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)   # of capacity


@memo(CACHE_SIZE)
def preset_table() -> dict:
    return {pid: (p.name, p.source, tuple(p.batch_size), tuple(p.throughput_per_s),
                  None if p.power_w is None else tuple(p.power_w))
            for pid, p in batch_profiles().items()}


@memo(CACHE_SIZE)
def datasheet_power() -> dict:
    """{batch-profile preset id: (W its GPUs draw at most, the hardware's name, the source)}
    (``engine.batching.datasheet_power_w``): the busy power the capacity planner prices
    energy with where a profile has no measured power."""
    return batching.datasheet_power_w(hardware_prices().values())


@memo(CACHE_SIZE)
def profile_fit(batch_size: tuple, throughput: tuple, power: tuple | None) -> fit.BatchProfileFit:
    return fit.fit_batch_profile(batch_size, throughput, power)


@memo(CACHE_SIZE)
@long_running
def curves(alpha, tau0, b_max, beta, c0) -> batching.LoadCurves:
    return batching.load_curves(alpha, tau0, b_max, beta, c0)


@memo(CACHE_SIZE)
@long_running
def family(alpha, tau0) -> list:
    return batching.b_max_family(alpha, tau0, B_FAMILY)


@memo(CACHE_SIZE)
def operating_point(lam, alpha, tau0, b_max, beta, c0, gpu_usd_per_hour,
                    usd_per_kwh) -> batching.OperatingPoint:
    return batching.operating_point_at(lam, alpha, tau0, b_max, beta, c0, gpu_usd_per_hour,
                                       usd_per_kwh)


@memo(CACHE_SIZE)
def max_rate_mean(target_ms, alpha, tau0, b_max) -> float:
    return batching.max_rate_for_mean_latency(target_ms, alpha, tau0, b_max)


@memo(512)
@heavy
def _rate_point(lam, alpha, tau0, b_max, n_jobs, i, arrivals=POISSON):
    return batching.simulate_rate(lam, alpha, tau0, b_max, n_jobs, batching.rate_seed(SEED, i),
                                  **arrivals.keywords_at(lam))


@memo(CACHE_SIZE)
def rate_sweep(fractions: tuple, alpha, tau0, b_max, n_jobs, bar=None, arrivals=POISSON):
    """Simulated sweep over loads (fractions of capacity) under ``arrivals``, point by
    point so each point is cached and a progress bar moves between points.  Whole sweeps
    are memoised too (one lookup on a rerun instead of one per point)."""
    lam = batching.loads_of_capacity(alpha, tau0, b_max, fractions).tolist()
    results = over_points(_rate_point, ((x, alpha, tau0, b_max, n_jobs, i, arrivals)
                                         for i, x in enumerate(lam)), bar)
    return batching.sweep_from_results(lam, results)


@memo(256)
@heavy
def sim_at(lam, alpha, tau0, b_max, arrivals=POISSON, n_jobs=N_JOBS):
    """The simulation at one load under ``arrivals`` (None when unstable): the stream
    ``rate_seed(SEED, 99)`` of the results table's p99."""
    return batching.simulate_rate(lam, alpha, tau0, b_max, n_jobs,
                                  batching.rate_seed(SEED, 99), **arrivals.keywords_at(lam))


def p99_at(lam, alpha, tau0, b_max, n_jobs=N_JOBS, arrivals=POISSON) -> float:
    """Simulated p99 latency (ms) at one load."""
    return sim_at(lam, alpha, tau0, b_max, arrivals, n_jobs).p99_ms


@memo(256)
@heavy
def _delay_point(lam, alpha, tau0, b_max, preferred, delay, n_jobs):
    return batching.sweep_queue_delay(lam, alpha, tau0, b_max, preferred, (delay,),
                                      n_jobs=n_jobs, seed=SEED)


@memo(CACHE_SIZE)
def delay_sweep(lam, alpha, tau0, b_max, preferred, delays: tuple, n_jobs, bar=None):
    """Triton batcher over max queue delays, one cached simulation per delay."""
    parts = over_points(_delay_point, ((lam, alpha, tau0, b_max, preferred, d, n_jobs)
                                       for d in delays), bar, "Simulating the Triton batcher…")
    return batching.merge_delay_sweeps(parts)


@memo(CACHE_SIZE)
@heavy
def validation(alpha, tau0, b_max) -> batching.Validation:
    """φ's largest gap above the exact mean and simulation-vs-exact z-scores."""
    return batching.validation(alpha, tau0, b_max, n_jobs=N_JOBS, seed=7)
