"""Hypothesis strategies derived from the engine's declared parameter domains.

``valid(domain)`` draws values a user may pass (the typical range, the bounds
themselves where closed, values just inside open bounds, tiny and huge
magnitudes, ``inf`` where admitted); ``invalid(domain)`` draws values the
domain rejects (below ``low``, above ``high``, open bounds, NaN, -inf, +inf
where not admitted, non-integers for integer domains, non-numbers).  Both read
only the ``Domain`` declaration (engine/core/domains/), so a changed domain changes
what the fuzz tests try.

Loads are drawn as ρ, a fraction of a model's capacity, so stable and unstable
points are both generated on purpose: ρ in (0, 0.999] (and 0), and ρ ≥ 1
(exactly 1, slightly above, far above, ``inf``).  The gap (0.999, 1) is left
out: there the stability verdict of a formula written as λα < 1 and of a
capacity written as 1/α may differ in the last bit.

Token and service-time laws cover light and heavy tails: lognormal with a large
log-sd, uniform, truncated normal, exponential, empirical counts (and for
service times deterministic numbers and measured histograms).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from hypothesis import strategies as st
from scipy import stats

from engine.core import token_laws
from engine.core.domains import Domain

TINY = 1e-6        # "tiny": this times the low end of the typical range
HUGE = 1e6         # "huge": this times the high end of the typical range


def _bounds(domain: Domain, low, high):
    lo = domain.low if low is None else max(float(low), domain.low)
    hi = domain.high if high is None else min(float(high), domain.high)
    return lo, hi


def _inside(domain: Domain, x: float) -> bool:
    """Whether ``x`` passes ``domain`` (the engine's own check is the reference)."""
    try:
        domain.check(x)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=None)
def valid(domain: Domain, *, low=None, high=None, allow_inf=None):
    """Values inside ``domain``, optionally narrowed to [low, high] to bound the cost.

    Mixes the typical range with the extremes of the (narrowed) domain: a closed
    bound itself, a value ``TINY``·(typical width) inside an open bound, tiny and
    huge values (``TINY``·typical low, ``HUGE``·typical high) and ``inf`` where
    the domain admits it (``allow_inf=False`` leaves it out).  Integer domains
    give Python ints (or ``inf``).  Cached: Hypothesis validates each strategy once.
    """
    lo, hi = _bounds(domain, low, high)
    t_lo = min(max(domain.typical[0], lo), hi)
    t_hi = max(min(domain.typical[1], hi), lo)
    inf_ok = domain.allow_inf if allow_inf is None else (allow_inf and domain.allow_inf)
    extremes = []
    if domain.integer:
        first = int(math.ceil(lo))
        last = int(min(hi, 2 ** 62))
        if first == lo:
            extremes.append(first)
        if math.isfinite(hi):
            extremes.append(last)
        typical = st.integers(max(first, int(math.ceil(t_lo))), max(first, int(t_hi)))
        spread = st.integers(first, max(first, min(last, int(max(t_hi, 1) * 100))))
        body = st.one_of(typical, typical, spread)
    else:
        scale_lo = t_lo if t_lo > 0 else (t_hi if t_hi > 0 else 1.0)
        step = TINY * max(t_hi - t_lo, 1e-300)      # "just inside" an open bound
        in_lo = lo + step if domain.low_open and lo == domain.low else lo
        in_hi = hi - step if domain.high_open and hi == domain.high else hi
        # A bound at 0 is an extreme of its own; other draws stay above TINY·scale
        # (1e-308 is no rate anyone means, and only overflows).
        b_lo = max(in_lo, scale_lo * TINY) if lo == 0 else in_lo
        if math.isfinite(lo):
            extremes.append(in_lo)
        if math.isfinite(hi):
            extremes.append(in_hi)
        extremes += [scale_lo * TINY, max(abs(t_hi), 1.0) * HUGE]
        s_lo = b_lo if math.isfinite(lo) else -max(abs(t_lo), 1.0) * HUGE
        s_hi = in_hi if math.isfinite(hi) else max(abs(t_hi), 1.0) * HUGE
        typical = st.floats(max(t_lo, s_lo), min(max(t_hi, s_lo), s_hi), allow_nan=False,
                            allow_infinity=False, allow_subnormal=False)
        spread = st.floats(s_lo, s_hi, allow_nan=False, allow_infinity=False,
                           allow_subnormal=False)
        body = st.one_of(typical, typical, spread)
    if inf_ok:
        extremes.append(math.inf)
    extremes = [x for x in dict.fromkeys(extremes) if _inside(domain, x) and
                (lo <= x <= hi or (math.isinf(x) and inf_ok))]
    return st.one_of(body, st.sampled_from(extremes)) if extremes else body


@functools.lru_cache(maxsize=None)
def invalid(domain: Domain):
    """Values ``domain`` rejects: out of range, open bounds, NaN, ±inf not admitted,
    non-integers for integer domains, and a non-number."""
    out = [math.nan, -math.inf, "not a number"]
    if not domain.allow_inf:
        out.append(math.inf)
    strategies = []
    if math.isfinite(domain.low):
        if domain.low_open:
            out.append(domain.low)
        out.append(domain.low - max(abs(domain.low), 1.0))
        strategies.append(st.floats(-1e12, domain.low, exclude_max=True, allow_nan=False))
    if math.isfinite(domain.high):
        if domain.high_open:
            out.append(domain.high)
        out.append(domain.high + max(abs(domain.high), 1.0))
        strategies.append(st.floats(domain.high, 1e12, exclude_min=True, allow_nan=False))
    if domain.integer:
        base = max(domain.low, domain.typical[0])
        out += [base + 0.5, base + 1e-6]
        strategies.append(st.floats(base, base + 1000.0, allow_nan=False).filter(
            lambda x: x != round(x)))
    rejected = [x for x in out if not _inside(domain, x)]
    return st.one_of(st.sampled_from(rejected), *strategies)


# ------------------------------------------------------------ loads

STABLE_RHO = st.one_of(st.floats(1e-6, 0.999), st.sampled_from([0.0, 1e-9, 0.5, 0.9, 0.999]))
UNSTABLE_RHO = st.one_of(st.floats(1.0, 1.01), st.sampled_from([1.0, 1.0005, 1.5, 1e3, math.inf]))


@functools.lru_cache(maxsize=None)
def rho(stable_weight: int = 3):
    """Load as a fraction ρ of capacity: stable (0 ≤ ρ ≤ 0.999) ``stable_weight``
    times as often as unstable (ρ ≥ 1, ``inf`` included)."""
    return st.one_of(*([STABLE_RHO] * stable_weight), UNSTABLE_RHO)


def at_load(r, capacity):
    """λ = ρ·capacity, elementwise, with ρ = inf giving λ = inf (never inf·0)."""
    r, capacity = np.broadcast_arrays(np.asarray(r, dtype=float), np.asarray(capacity, float))
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(r), np.inf, r * capacity)[()]


# ------------------------------------------------------------ token-length laws

def _empirical(counts):
    return token_laws.EmpiricalTokens.from_counts(counts)


def token_law_specs(*, heavy: bool = True, max_log_mean: float = 8.0):
    """(name, law) pairs of output-token laws, from ``engine.core.token_laws`` constructors.

    ``heavy`` adds lognormals with log-sd up to 3 (tails reaching far beyond
    ``MAX_TOKEN_GRID``); ``max_log_mean`` bounds the lognormal's median.
    """
    sd_high = 3.0 if heavy else 0.7
    lognormal = st.builds(lambda m, s: (f"lognormal({m:g}, {s:g})", token_laws.lognormal(m, s)),
                          st.floats(0.0, max_log_mean), st.floats(0.05, sd_high))
    uniform = st.builds(lambda lo, w: (f"uniform({lo:g}, {lo + w:g})",
                                       token_laws.uniform(lo, lo + w)),
                        st.one_of(st.just(0.0), st.floats(1e-3, 500.0)), st.floats(1.0, 3000.0))
    # (locations like 1e-280 are left out: scipy's moment() overflows dividing by them)
    truncnorm = st.builds(lambda m, s, lo: (f"truncnorm({m:g}, {s:g}, {lo:g})",
                                            token_laws.truncated_normal(m, s, lo)),
                          st.one_of(st.just(0.0), st.floats(1e-3, 2000.0)), st.floats(1.0, 800.0),
                          st.one_of(st.just(0.0), st.floats(1e-3, 100.0)))
    expon = st.builds(lambda s: (f"expon({s:g})", stats.expon(scale=s)), st.floats(1.0, 2000.0))
    empirical = st.builds(lambda c: (f"empirical({len(c)})", _empirical(c)),
                          st.lists(st.integers(1, 5000), min_size=1, max_size=30))
    return st.one_of(lognormal, uniform, truncnorm, expon, empirical)


# ------------------------------------------------------------ service-time laws (seconds)

def service_laws(mean_low: float = 1e-4, mean_high: float = 0.1):
    """(name, law, mean) of service times: exponential, lognormal (log-sd up to 3),
    uniform, a deterministic number, and a measured histogram."""
    means = st.floats(mean_low, mean_high)
    expon = st.builds(lambda m: ("expon", stats.expon(scale=m), m), means)
    lognorm = st.builds(lambda m, s: (f"lognorm(s={s:g})",
                                      stats.lognorm(s=s, scale=m * math.exp(-0.5 * s * s)), m),
                        means, st.floats(0.1, 3.0))
    unif = st.builds(lambda m: ("uniform", stats.uniform(0.0, 2.0 * m), m), means)
    det = st.builds(lambda m: ("deterministic", m, m), means)
    hist = st.builds(_histogram, means, st.integers(0, 2 ** 32 - 1))
    return st.one_of(expon, lognorm, unif, det, hist)


def _histogram(mean, seed):
    from engine.sla import empirical_service
    x = np.random.default_rng(seed).exponential(mean, size=200)
    law = empirical_service(x, bins=20)
    return "histogram", law, float(law.mean())
