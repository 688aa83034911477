"""Answers at an operating point of a batching GPU server.

The largest load that meets a latency SLA (on the mean, exactly; on p99, by
simulation), everything at one load (latency, batch size, energy and dollar cost
per request: ``operating_point_at``), and which Triton max-queue-delay minimises
p99.  Times in ms and rates per ms, as with the presets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import brentq

from .curves import load_curves
from .formulas import (RATE_PER_S, capacity, efficiency_from_batch_size, load_in,
                       per_ms_to_per_s)
from .sim import simulate_batching
from .means import mean_latency, stationary
from ..core.renamed import renamed_attribute, renamed_keywords
from ..core.domains import (ALPHA, BATCH_ENERGY_J as ENERGY, BATCH_POWER_W as POWER,
                            BATCH_PRICE as PRICE, BATCH_TARGET_MS as TARGET, DELAY, LAM, TAU0,
                            check_b_max)


@renamed_keywords(alpha="alpha_ms", tau0="tau0_ms")
def max_rate_for_mean_latency(target_ms, alpha_ms, tau0_ms, b_max=None) -> float:
    """Largest λ (per ms) with exact E[W] ≤ target: root of E[W](λ) = target.

    E[W] increases in λ (tested), from α + τ0 at λ = 0 to ∞ at capacity; 0 if
    even a lone job misses the target (α + τ0 > target).
    """
    alpha, tau0 = alpha_ms, tau0_ms
    target = float(TARGET.check(target_ms))
    alpha, tau0 = float(ALPHA.check(alpha, "alpha_ms")), float(TAU0.check(tau0, "tau0_ms"))
    b = check_b_max(b_max)
    b_max = None if np.isinf(b) else int(b)
    if mean_latency(0.0, alpha, tau0, b_max) > target:
        return 0.0
    cap = float(capacity(alpha, tau0, b_max))

    def gap(x):
        return float(mean_latency(x, alpha, tau0, b_max)) - target

    # Bracket by approaching capacity geometrically (1 − 2^-k): E[W] blows up there.
    lo, hi = 0.0, None
    for k in range(1, 21):
        x = cap * (1.0 - 2.0 ** -k)
        if gap(x) > 0:
            hi = x
            break
        lo = x
    if hi is None:              # meets the target within 1e-6 of capacity
        return lo
    return brentq(gap, lo, hi, xtol=1e-12 * cap, rtol=1e-10)


@dataclass(frozen=True)
class RateSweep:
    """Simulated statistics over a grid of arrival rates (per ms), times in ms; the names
    without a unit still read the fields, with a ``DeprecationWarning``."""

    lam_per_ms: np.ndarray
    mean_latency_ms: np.ndarray
    ci95_ms: np.ndarray
    p50_ms: np.ndarray
    p95_ms: np.ndarray
    p99_ms: np.ndarray
    mean_batch_size: np.ndarray
    ci_reliable: np.ndarray

    lam = renamed_attribute("lam_per_ms")
    mean_latency = renamed_attribute("mean_latency_ms")
    ci95 = renamed_attribute("ci95_ms")
    p50 = renamed_attribute("p50_ms")
    p95 = renamed_attribute("p95_ms")
    p99 = renamed_attribute("p99_ms")


def rate_seed(seed, i: int) -> np.random.SeedSequence:
    """The independent stream of grid point ``i`` of a sweep started from ``seed``."""
    return np.random.SeedSequence(seed, spawn_key=(i,))


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def simulate_rate(lam_per_ms, alpha_ms, tau0_ms, b_max=None, n_jobs=200_000, seed=None, **policy):
    """One point of a sweep: the simulation summary, or None when λ is unstable (or 0)."""
    lam, alpha, tau0 = lam_per_ms, alpha_ms, tau0_ms
    lam = float(LAM.check(lam, "lam_per_ms"))
    cap = float(capacity(alpha, tau0, b_max))     # checks them at λ = 0 too
    if not 0.0 < lam < cap:
        return None
    return simulate_batching(lam, alpha, tau0, b_max=b_max, n_jobs=n_jobs, seed=seed, **policy)


@renamed_keywords(lam="lam_per_ms")
def sweep_from_results(lam_per_ms, results) -> RateSweep:
    """Collect per-point simulation summaries (None = unstable) at the rates ``lam_per_ms``
    (per ms) into a ``RateSweep``."""
    lam = np.asarray(lam_per_ms, dtype=float)
    fields = ("mean_latency_ms", "ci95_ms", "p50_ms", "p95_ms", "p99_ms", "mean_batch_size")
    cols = {k: np.array([np.inf if r is None else getattr(r, k) for r in results]) for k in fields}
    reliable = np.array([r is not None and r.ci_reliable for r in results])
    return RateSweep(lam_per_ms=lam, ci_reliable=reliable, **cols)


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def simulate_rates(lam_per_ms, alpha_ms, tau0_ms, b_max=None, n_jobs=200_000, seed=0,
                   progress: Callable[[float], None] | None = None, **policy) -> RateSweep:
    """Simulate each rate in ``lam_per_ms`` (point i uses the stream ``rate_seed(seed, i)``).

    ``policy``: ``max_queue_delay_ms``/``preferred_batch_size`` as in
    ``engine.batching.sim.simulate_batching``.  ``progress(fraction)`` is called after
    each point.  Unstable rates give ``inf`` statistics without simulating.
    """
    lam, alpha, tau0 = lam_per_ms, alpha_ms, tau0_ms
    lam = np.atleast_1d(np.asarray(lam, dtype=float))
    results = []
    for i, x in enumerate(lam):
        results.append(simulate_rate(float(x), alpha, tau0, b_max, n_jobs, rate_seed(seed, i),
                                     **policy))
        if progress is not None:
            progress((i + 1) / lam.size)
    return sweep_from_results(lam, results)


@renamed_keywords(values="latency_ms", target="target_ms")
def largest_rate_below(lam_per_ms, latency_ms, target_ms) -> float:
    """Largest λ (per ms) whose latency (ms, growing with λ) is ≤ ``target_ms``, linearly
    interpolated between the grid points around the first miss:
    λ = λ₀ + (target − y₀)(λ₁ − λ₀)/(y₁ − y₀); the last passing λ when the first miss is
    infinite (unstable), the last λ when none misses, 0 if the first misses."""
    lam, values = np.asarray(lam_per_ms, float), np.asarray(latency_ms, float)
    if lam.shape != values.shape or lam.ndim != 1 or lam.size == 0:
        raise ValueError("lam_per_ms and latency_ms must be 1-d arrays of one length")
    target = float(TARGET.check(target_ms, "target_ms"))
    ok = values <= target
    if not ok[0]:
        return 0.0
    fail = np.flatnonzero(~ok)
    if fail.size == 0:
        return float(lam[-1])
    j = fail[0]
    if not np.isfinite(values[j]):
        return float(lam[j - 1])
    return float(lam[j - 1] + (target - values[j - 1]) * (lam[j] - lam[j - 1])
                 / (values[j] - values[j - 1]))


def max_rate_for_p99(target_ms, sweep: RateSweep) -> float:
    """Largest simulated rate whose p99 ≤ target, interpolated linearly between the
    last passing and first failing grid point (``largest_rate_below``; p99 is an
    estimate: see its sweep)."""
    return largest_rate_below(sweep.lam_per_ms, sweep.p99_ms, float(TARGET.check(target_ms)))


@dataclass(frozen=True)
class DelaySweep:
    """Triton batcher: simulated latency over a grid of max queue delays (ms)."""

    delay_ms: np.ndarray
    mean_latency_ms: np.ndarray
    p99_ms: np.ndarray
    mean_batch_size: np.ndarray
    best_delay_ms: float          # the delay with the smallest p99
    greedy_p99_ms: float          # the paper's greedy policy (delay 0)

    mean_latency = renamed_attribute("mean_latency_ms")
    p99 = renamed_attribute("p99_ms")
    greedy_p99 = renamed_attribute("greedy_p99_ms")

    @property
    def best_p99_ms(self) -> float:
        """The smallest p99 over the delays (at ``best_delay_ms``)."""
        return float(np.min(self.p99_ms))


def delay_grid_ms(alpha_ms, tau0_ms, n_points=13) -> tuple:
    """Max queue delays to try (ms): 0 to four single-request batch times 4τ[1] = 4(α + τ0)
    (eq 25), ``n_points`` evenly spaced, rounded to 4 decimals (a cache key)."""
    top = 4.0 * (float(ALPHA.check(alpha_ms, "alpha_ms")) + float(TAU0.check(tau0_ms, "tau0_ms")))
    return tuple(round(float(x), 4) for x in np.linspace(0.0, top, int(n_points)))


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def sweep_queue_delay(lam_per_ms, alpha_ms, tau0_ms, b_max, preferred_batch_size, delays_ms,
                      n_jobs=200_000, seed=0,
                      progress: Callable[[float], None] | None = None) -> DelaySweep:
    """p99 and mean latency of the Triton-style batcher for each max queue delay.

    All delays replay the same arrivals (one seed), so differences are due to the
    policy, not to sampling noise.
    """
    lam, alpha, tau0 = lam_per_ms, alpha_ms, tau0_ms
    delays = np.atleast_1d(DELAY.check(delays_ms, "delays_ms"))
    out = np.empty((3, delays.size))
    for i, d in enumerate(delays):
        r = simulate_batching(lam, alpha, tau0, b_max=b_max, n_jobs=n_jobs, seed=seed,
                                  max_queue_delay_ms=d, preferred_batch_size=preferred_batch_size)
        out[:, i] = r.mean_latency_ms, r.p99_ms, r.mean_batch_size
        if progress is not None:
            progress((i + 1) / delays.size)
    greedy = out[1, 0] if delays[0] == 0 else simulate_batching(
        lam, alpha, tau0, b_max=b_max, n_jobs=n_jobs, seed=seed).p99_ms
    return DelaySweep(delays, out[0], out[1], out[2], float(delays[np.argmin(out[1])]),
                      float(greedy))


def merge_delay_sweeps(parts) -> DelaySweep:
    """Join single-delay sweeps (same load and seed) into one, best delay recomputed."""
    delay = np.concatenate([p.delay_ms for p in parts])
    p99 = np.concatenate([p.p99_ms for p in parts])
    return DelaySweep(delay, np.concatenate([p.mean_latency_ms for p in parts]), p99,
                      np.concatenate([p.mean_batch_size for p in parts]),
                      float(delay[np.argmin(p99)]), parts[0].greedy_p99_ms)


def cost_per_million(lam_per_ms, joules_per_request, gpu_usd_per_hour=0.0,
                     usd_per_kwh=0.0):
    """$ per million requests: the GPU's hourly price spread over the requests it
    serves at this load, plus the electricity of each request (J → kWh)."""
    lam = LAM.check(lam_per_ms, "lam_per_ms")
    joules = ENERGY.check(joules_per_request)
    gpu = float(PRICE.check(gpu_usd_per_hour, "gpu_usd_per_hour"))
    power = float(PRICE.check(usd_per_kwh, "usd_per_kwh"))
    with np.errstate(divide="ignore", invalid="ignore"):
        # a free GPU adds nothing at any load (not 0/0 at λ = 0)
        gpu_share = np.where(gpu > 0, gpu / 3600.0 / (lam * 1000.0), 0.0)
    return ((gpu_share + joules / 3.6e6 * power) * 1e6)[()]


def energy_per_request_at_power(rate_per_s, utilization, busy_power_w, idle_power_w=0.0):
    """J per request of a GPU drawing ``busy_power_w`` W while busy (a share
    ``utilization`` of the time) and ``idle_power_w`` W otherwise, serving ``rate_per_s``
    requests/s: (P_busy·u + P_idle·(1 − u)) / λ.  The energy a datasheet's board power
    gives where no power was measured (an upper bound: the board's maximum); the
    capacity planner prices energy the same way."""
    rate = RATE_PER_S.check(rate_per_s, "rate_per_s")
    u = np.clip(np.asarray(utilization, float), 0.0, 1.0)
    busy = POWER.check(busy_power_w, "busy_power_w")
    idle = POWER.check(idle_power_w, "idle_power_w")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rate > 0, (busy * u + idle * (1.0 - u)) / rate, np.inf)[()]


def datasheet_power_w(prices) -> dict:
    """{batch-profile preset id: (W its GPUs draw at most, the hardware's name, its source)}:
    the board power of one GPU × the GPUs the profile ran on, for each hardware price
    preset (``engine.presets.hardware_prices().values()``); the busy power
    ``energy_per_request_at_power`` takes where a profile has no measured power."""
    out = {}
    for price in prices:
        watts = float(POWER.check(price.board_power_w, "board_power_w"))
        for pid, gpus in price.gpus_per_profile:
            out[pid] = (watts * gpus, price.name, price.source)
    return out


@dataclass(frozen=True)
class Validation:
    """How far φ lies above the exact E[W], and how simulation agrees with it."""

    phi_gap: float               # largest relative gap (φ − E[W])/E[W] over the loads (b_max = ∞)
    max_z: float                 # largest |simulated − exact| mean, in CI half-widths
    loads_per_ms: tuple          # simulated rates

    loads = renamed_attribute("loads_per_ms")


@renamed_keywords(alpha="alpha_ms", tau0="tau0_ms")
def validation(alpha_ms, tau0_ms, b_max=None, n_jobs=200_000, seed=7,
               fractions=(0.3, 0.6, 0.85)) -> Validation:
    """φ against the exact mean on 100 loads up to 99% of 1/α (Theorem 2 bounds it), and
    the exact mean against simulation at ``fractions`` of the capacity."""
    alpha, tau0 = alpha_ms, tau0_ms
    c = load_curves(alpha, tau0, None, n_points=100, max_fraction=0.99)
    gap = float(np.max((c.phi_ms - c.mean_latency_ms) / c.mean_latency_ms))
    loads = np.asarray(fractions, dtype=float) * float(capacity(alpha, tau0, b_max))
    sweep = simulate_rates(loads, alpha, tau0, b_max, n_jobs=n_jobs, seed=seed)
    exact_mean = mean_latency(loads, alpha, tau0, b_max)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(sweep.mean_latency_ms - exact_mean) / sweep.ci95_ms
    return Validation(gap, float(np.max(np.where(np.isnan(z), 0.0, z))), tuple(loads.tolist()))


@dataclass(frozen=True)
class OperatingPoint:
    """Everything at one load: exact means, energy and cost per request (ms, per ms, J, $)."""

    lam_per_ms: float
    rate_per_s: float
    rho: float                            # normalised load λα
    capacity_per_ms: float
    capacity_per_s: float
    stable: bool
    mean_latency_ms: float                # exact E[W]; inf when unstable
    mean_wait_ms: float
    mean_batch_size: float
    utilization: float
    energy_efficiency_per_j: float | None  # η (eq 19) in jobs/J; None without energy data
    joules_per_request: float | None       # 1/η
    usd_per_million: float                 # GPU time + electricity; inf when unstable
    work_share: float = float("nan")       # share of time on per-job work αb: ρ when stable
    overhead_share: float = float("nan")   # share of time on the fixed cost τ0 of batches

    mean_latency = renamed_attribute("mean_latency_ms")

    @property
    def idle_share(self) -> float:
        """Share of time the GPU is idle, π0 (1 − utilization)."""
        return 1.0 - self.utilization


@renamed_keywords(alpha="alpha_ms", tau0="tau0_ms")
def busy_split(utilization, mean_batch_size, alpha_ms, tau0_ms) -> tuple[float, float]:
    """The GPU's busy time split into per-job work and per-batch overhead (shares of all time).

    A batch of b jobs takes αb + τ0, so of the busy share u the part αE[B]/(αE[B] + τ0)
    is per-job work and the rest the fixed cost τ0.  When stable, batches start at rate
    λ/E[B], so the work share is λα = ρ and the overhead λτ0/E[B]: at low load batches are
    small and τ0 is paid often, which is why the GPU can be busy all the time at ρ = 0.5.
    Unbounded batches (E[B] = ∞, beyond capacity without b_max) are all work.
    """
    alpha, tau0 = alpha_ms, tau0_ms
    u, eb = float(utilization), float(mean_batch_size)
    if not np.isfinite(eb):
        return u, 0.0
    per_batch = alpha * eb + tau0
    return u * alpha * eb / per_batch, u * tau0 / per_batch    # both ≥ 0, no cancellation


def operating_point_at(lam_per_ms, alpha_ms, tau0_ms, b_max=None, beta_j=None, c0_j=None,
                       gpu_usd_per_hour=0.0, usd_per_kwh=0.0) -> OperatingPoint:
    """The dynamic-batching server at one load λ (per ms): exact E[W], E[B] and utilization
    (``stationary``), η = 1/(β + c0/E[B]) (eq 19) when β and c0 (J) are given, and the
    ``cost_per_million`` of a request at that load."""
    lam = float(LAM.check(lam_per_ms, "lam_per_ms"))
    st = stationary(lam, alpha_ms, tau0_ms, b_max)
    cap = float(capacity(alpha_ms, tau0_ms, b_max))
    stable = bool(np.isfinite(st.mean_latency_ms))
    eta = joules = None
    if beta_j is not None and c0_j is not None:
        eta = float(efficiency_from_batch_size(st.mean_batch_size, beta_j, c0_j))
        joules = 1.0 / eta
    usd = float(cost_per_million(lam, joules or 0.0, gpu_usd_per_hour, usd_per_kwh))
    work, overhead = busy_split(st.utilization, st.mean_batch_size, alpha_ms, tau0_ms)
    return OperatingPoint(
        lam_per_ms=lam, rate_per_s=float(per_ms_to_per_s(lam)),
        rho=float(load_in(lam, alpha_ms, "rho")), capacity_per_ms=cap,
        capacity_per_s=float(per_ms_to_per_s(cap)), stable=stable,
        mean_latency_ms=float(st.mean_latency_ms), mean_wait_ms=float(st.mean_wait_ms),
        mean_batch_size=float(st.mean_batch_size), utilization=float(st.utilization),
        energy_efficiency_per_j=eta, joules_per_request=joules,
        usd_per_million=usd if stable else float("inf"), work_share=work,
        overhead_share=overhead)
