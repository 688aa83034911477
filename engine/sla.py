"""Replicas for a percentile-latency SLA: Swayam's random dispatch and M/M/n.

Times are in seconds, rates per second.  Requests arrive at rate λ and are sent
to one of n backends serving μ requests/s each (mean service time 1/μ).

**Swayam's approximation** (appendix, RAND LB policy): a try reaches a random
backend d1 after it is sent; a busy backend answers busy (d2 back) and the
frontend retries another random backend Δ later.  Assuming every try finds its
backend busy with probability ρ = λ/(nμ) independently of the others (eq 2),
the number of retries r is geometric, P_r = ρ^r (1 − ρ) (eq 4), and the wait is
W_r = d1 + r·c with c = d1 + d2 + Δ (eq 5).  ``waiting_percentile`` is eq 1,
``response_cdf`` eq 7, ``min_backends`` the smallest n meeting an SLA by eq 7.

**Reference**: one central FIFO queue (M/M/n): ``erlang_c``,
``mmn_response_cdf``, ``mmn_waiting_percentile`` and ``erlang_c_min_servers``.
``simulate_dispatch`` (``engine.dispatch_sim``) simulates random_retry, jsq and
central_queue; ``fewest_meeting`` reads the fewest replicas off simulated
fractions.  ``service_law`` builds an exponential, lognormal or deterministic
service time of a given mean; ``diurnal_trace`` a seeded synthetic day of load
for ``plan_replicas``.

Errata and limits, checked in ``tests/test_sla.py``:

* Eq 1 treats the retry count r_max as a real number.  The p-quantile of the
  geometric law of its own proof is d1 + ⌈ln(1 − p/100)/ln ρ − 1⌉⁺·c: eq 1
  equals it only where ln(1 − p/100)/ln ρ is a whole number and is smaller
  otherwise; for p/100 < 1 − ρ (the first try meets the level) eq 1 even falls
  below d1, the least possible wait (at ρ → 0 it gives d1 − c).
  ``waiting_percentile`` returns the quantile; ``printed=True`` gives eq 1.
* Eq 2 holds for a *first* try (Poisson arrivals see time averages and the
  busy fraction is exactly λ/(nμ): each request is served once), but not for
  retries: a request retried c later meets the same busy period again, so a
  retry finds its backend busy more often than ρ, and the tries are not
  independent.  The geometric law is optimistic: it breaks down at high
  utilisation, few backends and c short against 1/μ (the very regime the
  proof assumes, d1, d2, Δ ≪ 1/μ); it holds when c is long against 1/μ.
  Simulation measures the busy probability a retry sees; ``response_cdf``,
  ``waiting_percentile`` and ``min_backends`` accept it as ``p_retry_busy``
  (the first try keeps ρ), and ``retry_busy_probability`` estimates it from
  the M/M/n busy-count chain (correlation of two tries c apart).
* Eq 7's R = Y + Z counts d1 to the backend but not d2 back to the frontend.

Measured (``simulate_dispatch``, n = 10, exponential service 1/μ = 10 ms,
d1 = d2 = c/4, Δ = c/2, 300 000 requests): eq 7's p99 response time is within
~7% of the simulated one for ρ ≤ 0.5 at every c·μ in {0.1, 1, 10}; it is too
low by 10% at ρ = 0.7, c·μ = 0.1 and by 19-51% at ρ = 0.9 (64.5 ms against
131 ms at c·μ = 0.1).  Mean tries: 18.1 against the paper's 1/(1 − ρ) = 10 at
ρ = 0.9, c·μ = 0.1; 11.0 at c·μ = 10.  With ``retry_busy_probability`` the p99
is within 1-8% at c·μ = 1 and 80 ms (against 131 ms) at ρ = 0.9, c·μ = 0.1.

Replicas for 900 requests/s of 10 ms exponential service, 99% within 100 ms,
d1 = d2 = 0.25 ms, Δ = 0.5 ms (simulation needs 11 with random_retry):

>>> from scipy import stats
>>> service = stats.expon(scale=0.01)
>>> int(min_backends(900.0, 100.0, 0.1, 99, 0.00025, 0.00025, 0.0005, service))
10
>>> int(erlang_c_min_servers(900.0, 100.0, 0.1, 99))
10
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from . import batching
from .dispatch_sim import DispatchSimResult, simulate_dispatch  # noqa: F401 (public API)
from .core.domains import (ALPHA, COST, HEADROOM, INTERVAL, LAM, LATENCY_TARGET_MS, MU,
                     N_BACKENDS, NET_DELAY, PERCENTILE, PROVISIONING_DELAY, RESPONSE_TARGET,
                     TAU0, WARMUP, check_b_max)

_TAIL_EPS = 1e-17        # geometric terms dropped once ρ^(r+1) is below this
_R_BLOCK = 256           # retries summed per block in response_cdf
_N_CAP = 2.0 ** 40       # min_backends gives inf beyond this many backends
MAX_TRACE_INTERVALS = 10_000_000    # largest synthetic trace (80 MB of rates)


# ------------------------------------------------------------ validation helpers

def _delays(d1, d2, delta):
    return (NET_DELAY.check(d1, "d1"), NET_DELAY.check(d2, "d2"),
            NET_DELAY.check(delta, "delta"))


def _probability(p, name):
    p = np.asarray(p, dtype=float)
    if np.isnan(p).any() or np.any((p < 0) | (p > 1)):
        raise ValueError(f"{name} must be a probability in [0, 1]")
    return p


def empirical_service(samples_s, bins=200):
    """Service-time law (s) from measured times: a scipy.stats ``rv_histogram``
    with ``cdf``/``ppf``/``rvs``/``mean``, usable wherever ``service`` is asked."""
    x = np.asarray(samples_s, dtype=float)
    if x.ndim != 1 or x.size < 2 or not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError("samples_s must be a 1-d array of at least 2 finite times >= 0")
    return stats.rv_histogram(np.histogram(x, bins=int(bins)), density=False)


def _service_cdf(service):
    """CDF x ↦ P(Y ≤ x) of a service-time law given as a number or a distribution."""
    if hasattr(service, "cdf"):
        return service.cdf
    try:
        s = float(NET_DELAY.check(service, "service"))
    except ValueError:
        raise ValueError("service must be a time in seconds (deterministic) or a "
                         "distribution with a cdf (a scipy.stats frozen distribution)") from None
    return lambda x: (np.asarray(x) >= s).astype(float)


def _busy(lam, mu, n):
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    with np.errstate(invalid="ignore"):
        rho = lam / (n * mu)
    return np.where(np.isnan(rho), np.inf, rho)


# ------------------------------------------------------------ Swayam, eqs 1 and 7

def waiting_percentile(p, lam, mu, n, d1, d2, delta, *, printed=False, p_retry_busy=None):
    """p-th percentile waiting time ω_p (s) under random dispatch with retries.

    Theorem 1, eq 1: ω_p = d1 + (ln(1 − p/100)/ln(λ/(nμ)) − 1)·(d1 + d2 + Δ) with
    ``printed=True``.  By default the p-quantile of the law eq 1 is derived from
    (the smallest W_r = d1 + r·c with P(Z ≤ W_r) = 1 − ρ^(r+1) ≥ p/100; see the
    module docstring).  ``p_retry_busy``: busy probability of a retry (e.g.
    measured by simulation) in place of ρ; the first try keeps ρ = λ/(nμ).
    ``inf`` for λ ≥ nμ.
    """
    p = PERCENTILE.check(p, "p") / 100.0
    rho = _busy(lam, mu, n)
    d1, d2, delta = _delays(d1, d2, delta)
    c = d1 + d2 + delta
    stable = rho < 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if printed:
            if p_retry_busy is not None:
                raise ValueError("p_retry_busy applies to the quantile, not to printed eq 1")
            val = d1 + (np.log1p(-p) / np.log(rho) - 1.0) * c
            return np.where(stable, val, np.inf)[()]
        q = rho if p_retry_busy is None else _probability(p_retry_busy, "p_retry_busy")
        # P(Z > W_r) = ρ q^r ≤ 1 − p  ⇔  r ≥ ln((1 − p)/ρ)/ln q.
        need = np.log1p(-p) - np.log(rho)
        r = np.where(need >= 0.0, 0.0, np.maximum(np.ceil(need / np.log(q) - 1e-9), 1.0))
        r = np.where(q >= 1.0, np.where(need >= 0.0, 0.0, np.inf), np.maximum(r, 0.0))
        val = np.where(np.isinf(r), np.inf, d1 + r * c)      # never served: inf, even at c = 0
    return np.where(stable, val, np.inf)[()]


def response_cdf(rt, lam, mu, n, d1, d2, delta, service, *, p_retry_busy=None):
    """P(R ≤ RT) under random dispatch with retries, Theorem 2 (eq 7).

    Σ_{r=0}^{r_max} P(Z = W_r)·CDF_exe(RT − W_r), r_max = ⌊(RT − d1)/c⌋, with
    P(Z = W_r) = ρ^r(1 − ρ), ρ = λ/(nμ) (the paper's), or ρ·q^(r−1)(1 − q) for
    r ≥ 1 with ``p_retry_busy`` = q.  ``service``: a scipy.stats frozen
    distribution of the service time (s; exponential, lognormal, an empirical
    ``rv_histogram``...) or a number meaning a deterministic time.  0 for
    λ ≥ nμ.  Terms beyond ρ^(r+1) < 1e-17 are dropped.
    """
    rt = RESPONSE_TARGET.check(rt)
    rho = _busy(lam, mu, n)
    d1, d2, delta = _delays(d1, d2, delta)
    cdf = _service_cdf(service)
    q = rho if p_retry_busy is None else _probability(p_retry_busy, "p_retry_busy")
    # The CDF terms depend on (rt, d1, c) only, the weights on (ρ, q) only: the CDF
    # is evaluated on the time grid alone and broadcast against the load grid.
    rt, d1, c = np.broadcast_arrays(rt, d1, d1 + d2 + delta)
    rho, q = np.broadcast_arrays(rho, q)
    stable = rho < 1.0
    q = np.where(stable, q, 0.0)
    rho_s = np.where(stable, rho, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r_max = np.where(rt < d1, -1.0,
                         np.where(c > 0, np.floor((rt - d1) / c + 1e-9), 0.0))
        r_tail = np.where(q <= 0.0, 1.0, np.ceil(np.log(_TAIL_EPS) / np.log(q)))
    # q = 1: a retry never succeeds, P(Z = W_r) = 0 for r ≥ 1 (summing them hung for
    # large RT/c, or needed c > 0)
    r_tail = np.where(q >= 1.0, 0.0, r_tail)
    top = min(np.max(r_max, initial=-1.0), np.max(r_tail, initial=0.0))
    total = np.zeros(np.broadcast_shapes(rt.shape, rho.shape))
    for r0 in range(0, int(top) + 1, _R_BLOCK):
        r = np.arange(r0, min(r0 + _R_BLOCK, int(top) + 1), dtype=float)
        # P(Z = W_r): 1 − ρ for r = 0, ρ q^(r−1) (1 − q) after.
        rl = r.reshape((1,) * rho.ndim + (-1,))
        pz = np.where(rl == 0, 1.0 - rho_s[..., None],
                      rho_s[..., None] * q[..., None] ** np.maximum(rl - 1, 0)
                      * (1.0 - q[..., None]))
        # CDF_exe(RT − W_r), 0 beyond r_max (RT − W_r < 0, up to rounding).
        x = rt[..., None] - d1[..., None] - r.reshape((1,) * rt.ndim + (-1,)) * c[..., None]
        f = cdf(np.where(x >= -1e-12, np.maximum(x, 0.0), -1.0))
        total += (pz * f).sum(axis=-1)
    # c = 0: every try lands at W_r = d1, so the weights sum in closed form (to 1, or to
    # 1 − ρ when retries never succeed) instead of ~40/(1 − ρ) terms
    instant = (c == 0) & (rt >= d1)
    if instant.any():
        mass = np.where(q >= 1.0, 1.0 - rho_s, 1.0)
        total = np.where(instant, cdf(np.where(instant, rt - d1, -1.0)) * mass, total)
    return np.where(stable, np.clip(total, 0.0, 1.0), 0.0)[()]


def retry_busy_probability(lam, mu, n, d1, d2, delta):
    """Estimated probability that a retry finds its backend busy (corrects eq 2).

    A try that found a random backend busy at time 0 is followed by one to
    another random backend at c = d1 + d2 + Δ.  With K(t) the number of busy
    backends, taken as min(N(t), n) of the M/M/n birth-death chain N:
    q = E[K(0)·K(c)]/(n²ρ) = (π∘f)·e^(Qc) f / (π·f), f_k = min(k, n)/n.
    q → ρ as c·μ → ∞ (the paper's eq 2) and exceeds ρ for short c.  Plug it
    into ``response_cdf``/``min_backends`` as ``p_retry_busy``.  One sparse
    matrix-exponential product per point (``scipy.sparse.linalg.expm_multiply``).
    1 for λ ≥ nμ, 0 for λ = 0; at c = 0 it is E[K²]/(n²ρ).  Against simulation
    (n = 10, exponential service) it closes a third (ρ = 0.7) to two thirds
    (ρ = 0.9) of eq 7's error in P(R ≤ 3/μ) at c·μ = 0.1, still optimistic; at
    c·μ = 1, ρ = 0.9 it is a little pessimistic in the body (P(R ≤ 10/μ) = 0.56
    against 0.61 simulated) and 8% low at p99 (``tests/test_sla.py``).
    """
    from scipy import sparse
    from scipy.sparse.linalg import expm_multiply

    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    d1, d2, delta = _delays(d1, d2, delta)
    lam, mu, n, c = np.broadcast_arrays(lam, mu, n, d1 + d2 + delta)
    out = np.ones(lam.shape)
    for idx in np.ndindex(lam.shape):
        la, m, k, cc = float(lam[idx]), float(mu[idx]), int(n[idx]), float(c[idx])
        rho = la / (k * m)
        if rho >= 1.0:
            continue
        if la == 0.0:
            out[idx] = 0.0
            continue
        size = k + int(np.ceil(np.log(1e-16) / np.log(rho))) + 10
        j = np.arange(size)
        logw = np.where(j <= k, j * np.log(la / m) - np.cumsum(np.log(np.maximum(j, 1))),
                        0.0)
        logw = np.where(j <= k, logw, logw[k] + (j - k) * np.log(rho))
        pi = np.exp(logw - logw.max())
        pi /= pi.sum()
        deaths = np.minimum(j[1:], k) * m
        gen = sparse.diags([np.full(size - 1, la), deaths], [1, -1], format="csr")
        gen = gen - sparse.diags(np.asarray(gen.sum(axis=1)).ravel())
        f = np.minimum(j, k) / k
        out[idx] = float((pi * f) @ expm_multiply(gen * cc, f) / (pi @ f))
    return np.clip(out, 0.0, 1.0)[()]


def _invert_cdf(cdf, p, shape, tol=1e-9):
    """Smallest t (s) with cdf(t) ≥ p, by doubling and bisection, vectorised.

    ``cdf`` maps an array of times of ``shape`` to probabilities and grows
    with t; ``inf`` where it stays below p (up to 2^40 s)."""
    lo = np.zeros(shape)
    hi = np.full(shape, 1e-3)
    while True:
        short = cdf(hi) < p
        if not short.any() or np.all(hi[short] > 2.0 ** 40):
            break
        lo, hi = np.where(short, hi, lo), np.where(short, 2.0 * hi, hi)
    reach = cdf(hi) >= p
    hi = np.where(reach, hi, lo)
    while np.any(hi - lo > tol * np.maximum(hi, 1e-6)):
        mid = 0.5 * (lo + hi)
        good = cdf(mid) >= p
        lo, hi = np.where(good, lo, mid), np.where(good, mid, hi)
    return np.where(reach, hi, np.inf)


def response_percentile(p, lam, mu, n, d1, d2, delta, service, *, p_retry_busy=None):
    """p-th percentile response time (s) by eq 7: the smallest RT with
    ``response_cdf(RT, ...)`` ≥ p/100 (to relative 1e-9); ``inf`` for λ ≥ nμ."""
    pc = PERCENTILE.check(p, "p") / 100.0
    rho = _busy(lam, mu, n)
    d1, d2, delta = _delays(d1, d2, delta)
    shape = np.broadcast_shapes(pc.shape, rho.shape, d1.shape, d2.shape, delta.shape)

    def cdf(t):
        return response_cdf(t, lam, mu, n, d1, d2, delta, service, p_retry_busy=p_retry_busy)

    return _invert_cdf(cdf, pc, shape)[()]


def mmn_response_percentile(p, lam, mu, n):
    """p-th percentile response time (s) of one central M/M/n FIFO queue."""
    pc = PERCENTILE.check(p, "p") / 100.0
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    shape = np.broadcast_shapes(pc.shape, lam.shape, mu.shape, n.shape)
    return _invert_cdf(lambda t: mmn_response_cdf(t, lam, mu, n), pc, shape)[()]


def min_backends(lam, mu, rt, percentile, d1, d2, delta, service, *, p_retry_busy=None):
    """Fewest backends n with P(R ≤ RT) ≥ percentile/100 by eq 7 (``response_cdf``).

    P(R ≤ RT) grows with n (ρ = λ/(nμ) falls), so the smallest n is found by
    doubling and bisection, vectorised over all arguments.  ``inf`` where no n
    meets it (CDF_exe(RT − d1) < percentile/100: even an idle backend is too
    slow).  λ = 0 needs one backend if an idle one meets the SLA.
    """
    lam, mu = LAM.check(lam), MU.check(mu)
    rt, pc = RESPONSE_TARGET.check(rt), PERCENTILE.check(percentile) / 100.0
    d1, d2, delta = _delays(d1, d2, delta)
    lam, mu, rt, pc, d1, d2, delta = np.broadcast_arrays(lam, mu, rt, pc, d1, d2, delta)
    prb = None if p_retry_busy is None else np.broadcast_to(
        _probability(p_retry_busy, "p_retry_busy"), lam.shape)

    def ok(n):
        return response_cdf(rt, lam, mu, n, d1, d2, delta, service,
                            p_retry_busy=prb) >= pc

    feasible = (_service_cdf(service)(rt - d1) >= pc) & np.isfinite(lam)
    lo = np.where(feasible, np.floor(lam / mu), 0.0)    # ρ ≥ 1 at n = lo: never enough
    hi = np.maximum(lo + 1.0, 1.0)
    pending = feasible.copy()
    while True:
        good = np.where(pending, ok(hi), True)
        grow = pending & ~good & (hi < _N_CAP)
        if not grow.any():
            break
        lo = np.where(grow, hi, lo)
        hi = np.where(grow, 2.0 * hi, hi)
    feasible &= np.where(pending, ok(hi), True)
    while True:
        active = feasible & (hi - lo > 1.0)
        if not active.any():
            break
        mid = np.floor((lo + hi) / 2.0)
        mid = np.where(active, np.maximum(mid, 1.0), hi)
        good = ok(mid)
        hi = np.where(active & good, mid, hi)
        lo = np.where(active & ~good, mid, lo)
    return np.where(feasible, np.maximum(hi, 1.0), np.inf)[()]


# ------------------------------------------------------------ central queue, M/M/n

def erlang_c(n, a):
    """Erlang C: probability an arrival waits in M/M/n with offered load a = λ/μ.

    From Erlang B = Poisson pmf/cdf (log space, no factorials):
    C = nB/(n − a(1 − B)); 1 for a ≥ n.
    """
    n = N_BACKENDS.check(n)
    a = LAM.check(a, "a")
    n, a = np.broadcast_arrays(n, a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        b = np.exp(stats.poisson.logpmf(n, a) - stats.poisson.logcdf(n, a))
        c = n * b / (n - a * (1.0 - b))
    c = np.where(a == 0, 0.0, c)
    return np.where(a < n, np.clip(c, 0.0, 1.0), 1.0)[()]


def mmn_response_cdf(t, lam, mu, n):
    """P(R ≤ t) in M/M/n FIFO: R = W_q + S, W_q = 0 w.p. 1 − C, else Exp(nμ − λ).

    P(R > t) = e^(−μt) + C·μ e^(−μt)(1 − e^(−(γ−μ)t))/(γ − μ), γ = nμ − λ (the
    limit μt e^(−μt) at γ = μ).  0 for λ ≥ nμ.
    """
    t = RESPONSE_TARGET.check(t, "t")
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    t, lam, mu, n = np.broadcast_arrays(t, lam, mu, n)
    stable = lam < n * mu
    cw = erlang_c(n, np.where(stable, lam / mu, 0.0))
    gap = np.where(stable, n * mu - lam, 1.0) - mu
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # e^(−μt)(1 − e^(−(γ−μ)t))/(γ − μ) = e^(−min(μ, γ)t)(1 − e^(−|γ−μ|t))/|γ − μ|:
        # no exp of a large positive number when γ < μ (inf·0 = NaN otherwise)
        size = np.abs(gap)
        ratio = np.where(size * t > 1e-12, -np.expm1(-size * t) / size, t)
        tail = np.exp(-mu * t) + cw * mu * np.exp(-np.minimum(mu, gap + mu) * t) * ratio
    return np.where(stable, np.clip(1.0 - tail, 0.0, 1.0), 0.0)[()]


def mmn_waiting_cdf(t, lam, mu, n):
    """P(W_q ≤ t) in M/M/n FIFO: 1 − C e^(−(nμ − λ)t); 0 for λ ≥ nμ."""
    t = RESPONSE_TARGET.check(t, "t")
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    stable = lam < n * mu
    cw = erlang_c(n, np.where(stable, lam / mu, 0.0))
    with np.errstate(invalid="ignore", over="ignore"):
        val = 1.0 - cw * np.exp(-np.where(stable, n * mu - lam, 0.0) * t)
    return np.where(stable, val, 0.0)[()]


def erlang_c_min_servers(lam, mu, rt, percentile):
    """Fewest servers n of one central M/M/n queue with P(R ≤ rt) ≥ percentile/100.

    ``inf`` where even unlimited servers miss it (1 − e^(−μ·rt) < percentile/100).
    Found by doubling and bisection from n = ⌊λ/μ⌋ + 1 (P(R ≤ rt) grows with n).
    """
    lam, mu = LAM.check(lam), MU.check(mu)
    rt, pc = RESPONSE_TARGET.check(rt), PERCENTILE.check(percentile) / 100.0
    lam, mu, rt, pc = np.broadcast_arrays(lam, mu, rt, pc)
    feasible = (-np.expm1(-mu * rt) >= pc) & np.isfinite(lam)

    def ok(n):
        return mmn_response_cdf(rt, lam, mu, n) >= pc

    lo = np.where(feasible, np.floor(lam / mu), 0.0)
    hi = lo + 1.0
    while True:
        grow = feasible & ~ok(hi) & (hi < _N_CAP)
        if not grow.any():
            break
        lo, hi = np.where(grow, hi, lo), np.where(grow, 2.0 * hi, hi)
    feasible &= ok(hi)
    while True:
        active = feasible & (hi - lo > 1.0)
        if not active.any():
            break
        mid = np.where(active, np.floor((lo + hi) / 2.0), hi)
        good = ok(mid)
        hi, lo = np.where(active & good, mid, hi), np.where(active & ~good, mid, lo)
    return np.where(feasible, hi, np.inf)[()]


def mmn_waiting_percentile(p, lam, mu, n):
    """p-th percentile of the queueing wait W_q (s) in M/M/n FIFO, in closed form:
    P(W_q > t) = C e^(−(nμ − λ)t), so t_p = max(0, ln(C/(1 − p/100))/(nμ − λ));
    ``inf`` for λ ≥ nμ."""
    pc = PERCENTILE.check(p, "p") / 100.0
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    stable = lam < n * mu
    cw = erlang_c(n, np.where(stable, lam / mu, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(cw / (1.0 - pc)) / np.where(stable, n * mu - lam, 1.0)
    return np.where(stable, np.maximum(np.nan_to_num(t, nan=0.0, neginf=0.0), 0.0),
                    np.inf)[()]


def fewest_meeting(n, within, percentile):
    """Smallest n of a grid whose fraction within RT reaches percentile/100
    (e.g. simulated ``fraction_within`` at each n); ``inf`` if none on the grid.
    P(R ≤ RT) grows with n, so the first n that meets it is the answer provided
    the grid starts low enough and is contiguous."""
    n = np.asarray(N_BACKENDS.check(n, "n"), dtype=float).ravel()
    within = _probability(np.ravel(within), "within")
    if within.shape != n.shape:
        raise ValueError("within must have one value per n")
    pc = float(PERCENTILE.check(percentile)) / 100.0
    ok = within >= pc
    return float(n[ok].min()) if ok.any() else float("inf")


SERVICE_LAWS = ("exponential", "lognormal", "deterministic")


def service_law(kind, mean_s, sigma=1.0):
    """Service-time law with mean ``mean_s`` (s): a scipy.stats frozen
    exponential or lognormal (log-sd ``sigma``, scale e^(ln mean − σ²/2)), or
    the number ``mean_s`` for a deterministic time (as ``response_cdf`` and
    ``simulate_dispatch`` take it)."""
    mean = float(NET_DELAY.check(mean_s, "mean_s"))
    if mean <= 0:
        raise ValueError(f"mean_s must be a time > 0, got {mean:g}")
    if kind == "exponential":
        return stats.expon(scale=mean)
    if kind == "lognormal":
        s = float(sigma)
        if not 0.0 < s <= 5.0:
            raise ValueError(f"sigma must be a number in (0, 5], got {sigma!r}")
        return stats.lognorm(s=s, scale=mean * np.exp(-0.5 * s * s))
    if kind == "deterministic":
        return mean
    raise ValueError(f"kind must be one of {', '.join(SERVICE_LAWS)}, got {kind!r}")


# ------------------------------------------------------------ GPU operating point

def gpu_service_rate(alpha_ms, tau0_ms, latency_target_ms, b_max=None):
    """Requests/s one GPU serves with exact mean latency ≤ the target (dynamic batching).

    The largest λ with ``engine.batching.mean_latency(λ, α, τ0, b_max)`` ≤ target
    (E[W] grows with λ from α + τ0 at λ = 0 to ∞ at capacity), found by
    bisection to relative 1e-12, converted from per ms to per s (×1000).
    0 where the target is at or below α + τ0 (a lone request takes α + τ0, and any
    load adds to it).
    """
    alpha, tau0 = ALPHA.check(alpha_ms, "alpha_ms"), TAU0.check(tau0_ms, "tau0_ms")
    target = LATENCY_TARGET_MS.check(latency_target_ms)
    b = check_b_max(b_max)
    if b.ndim:
        raise ValueError("b_max must be a single value (None: unlimited)")
    bm = None if np.isinf(b) else int(b)
    alpha, tau0, target = np.broadcast_arrays(alpha, tau0, target)
    cap = batching.capacity(alpha, tau0, bm)
    reachable = alpha + tau0 < target          # at equality only λ = 0 meets it
    lo = np.zeros(alpha.shape)
    hi = np.where(reachable, cap, 0.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        good = batching.mean_latency(mid, alpha, tau0, bm) <= target
        lo, hi = np.where(good, mid, lo), np.where(good, hi, mid)
        if np.all(hi - lo <= 1e-12 * hi):
            break
    return np.where(reachable, lo * 1000.0, 0.0)[()]


# ------------------------------------------------------------ trace-driven plan

@dataclass(frozen=True)
class ReplicaPlan:
    """Replicas over a load trace, against static provisioning for the peak."""

    interval_s: float
    rate_per_s: np.ndarray          # measured load of each interval
    needed: np.ndarray              # replicas the SLA needs (with headroom)
    ordered: np.ndarray             # replicas paid for (ordered, booting or serving)
    serving: np.ndarray             # replicas ready, after the provisioning delay
    sla_met: np.ndarray             # P(R ≤ rt) ≥ percentile/100 with ``serving`` replicas
    within_rt: np.ndarray           # P(R ≤ rt) with ``serving`` replicas
    gpu_hours: float
    static_gpu_hours: float         # max(needed) for the whole trace
    cost: float
    static_cost: float
    violation_intervals: int        # intervals where the SLA is missed
    late_requests: float            # expected requests over rt beyond the SLA's allowance

    @property
    def savings(self) -> float:
        """Fraction of the static cost saved (0 if nothing is static)."""
        return 1.0 - self.gpu_hours / self.static_gpu_hours if self.static_gpu_hours else 0.0


def diurnal_trace(mean_rate, hours=24.0, interval_s=300.0, amplitude=0.5, n_spikes=3,
                  spike_factor=2.0, spike_minutes=15.0, noise=0.05, seed=None):
    """A synthetic day of load: requests/s per interval (seeded, reproducible).

    rate(t) = mean·(1 − a·cos(2π(t − 3 h)/24 h)) (lowest at 03:00, highest at
    15:00), times a lognormal noise factor of log-sd ``noise`` and mean 1,
    with ``n_spikes`` bursts at random starts that multiply the rate by
    ``spike_factor`` for ``spike_minutes`` (at least one interval).  With no
    noise or spikes and a whole number of days the mean is ``mean_rate``.
    More than ``MAX_TRACE_INTERVALS`` intervals raise ``ValueError``.
    """
    mean = float(LAM.check(mean_rate, "mean_rate"))
    if not np.isfinite(mean):
        raise ValueError("mean_rate must be finite")
    interval = float(INTERVAL.check(interval_s))
    hours = float(INTERVAL.check(hours, "hours"))
    a = float(_probability(amplitude, "amplitude"))
    spikes = int(WARMUP.check(n_spikes, "n_spikes"))
    factor = float(HEADROOM.check(spike_factor, "spike_factor"))
    length = float(PROVISIONING_DELAY.check(spike_minutes, "spike_minutes")) * 60.0
    sd = float(HEADROOM.check(noise, "noise"))
    size = max(round(hours * 3600.0 / interval), 1)
    if size > MAX_TRACE_INTERVALS:
        raise ValueError(f"hours / interval_s gives {size:g} intervals, at most "
                         f"{MAX_TRACE_INTERVALS} allowed: lengthen interval_s")
    rng = np.random.default_rng(seed)
    t_h = np.arange(size) * interval / 3600.0
    rate = mean * (1.0 - a * np.cos(2.0 * np.pi * (t_h - 3.0) / 24.0))
    rate = rate * np.exp(sd * rng.standard_normal(size) - 0.5 * sd * sd)
    width = max(int(np.ceil(length / interval - 1e-12)), 1)
    for s in rng.integers(0, size, size=spikes):
        rate[s:s + width] *= factor
    return rate


def trace_rates(trace, interval_s, kind="rate"):
    """Requests/s per interval from a trace: ``kind="rate"`` (a rate per interval)
    or ``"timestamps"`` (sorted arrival times in s, binned from the first interval
    that starts at 0).  A malformed trace raises ``ValueError`` naming the problem."""
    interval = float(INTERVAL.check(interval_s))
    try:
        arr = np.asarray(trace, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("trace must be a 1-d array of numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"trace must be a non-empty 1-d array, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"trace holds a non-finite value at index {int(np.argmax(bad))}")
    if np.any(arr < 0):
        raise ValueError(f"trace holds a negative value at index {int(np.argmax(arr < 0))}")
    if kind == "rate":
        return arr
    if kind != "timestamps":
        raise ValueError(f"kind must be 'rate' or 'timestamps', got {kind!r}")
    down = np.diff(arr) < 0
    if down.any():
        i = int(np.argmax(down)) + 1
        raise ValueError(f"trace timestamps must be sorted: index {i} ({arr[i]:g} s) "
                         f"precedes index {i - 1} ({arr[i - 1]:g} s)")
    bins = int(np.floor(arr[-1] / interval)) + 1
    counts = np.bincount(np.minimum((arr / interval).astype(np.int64), bins - 1),
                         minlength=bins)
    return counts / interval


def plan_replicas(trace, mu, rt, percentile, d1=0.0, d2=0.0, delta=0.0, service=None, *,
                  interval_s=60.0, kind="rate", provisioning_delay=0.0, headroom=0.0,
                  cost_per_gpu_hour=1.0, min_replicas=1, p_retry_busy=None) -> ReplicaPlan:
    """Replicas over time for a load trace, GPU-hours and cost against static peak.

    Each interval needs ``min_backends(rate·(1 + headroom), ...)`` replicas
    (eq 7; ``service`` defaults to exponential with mean 1/μ).  The planner
    knows each interval's need at its start; a replica ordered then serves
    ``provisioning_delay`` later (rounded up to whole intervals, k) while
    surplus replicas are released at once, newest first, so the replicas
    serving in interval t are min(needed[t−k..t]).  Paid: ``ordered`` (serving
    or booting).  Static: max(needed) for the whole trace.  An interval misses
    the SLA when its serving replicas give P(R ≤ rt) < percentile/100;
    ``late_requests`` sums (allowed − achieved fraction within rt) × requests.
    """
    rate = trace_rates(trace, interval_s, kind)
    interval = float(INTERVAL.check(interval_s))
    mu_ = float(MU.check(mu))
    pc = float(PERCENTILE.check(percentile)) / 100.0
    delay = float(PROVISIONING_DELAY.check(provisioning_delay))
    head = float(HEADROOM.check(headroom))
    price = float(COST.check(cost_per_gpu_hour))
    floor_n = float(N_BACKENDS.check(min_replicas, "min_replicas"))
    if service is None:
        service = stats.expon(scale=1.0 / mu_)
    need = min_backends(rate * (1.0 + head), mu_, rt, percentile, d1, d2, delta, service,
                        p_retry_busy=p_retry_busy)
    need = np.atleast_1d(need)
    if np.isinf(need).any():
        i = int(np.argmax(np.isinf(need)))
        raise ValueError(f"no number of replicas meets the SLA in interval {i}: rt is too "
                         "short for the service time and d1")
    need = np.maximum(need, floor_n)
    k = int(np.ceil(delay / interval - 1e-12))
    padded = np.concatenate([np.full(k, need[0]), need])
    windows = np.lib.stride_tricks.sliding_window_view(padded, k + 1)
    serving = windows.min(axis=1)
    within = np.atleast_1d(response_cdf(rt, rate, mu_, serving, d1, d2, delta, service,
                                        p_retry_busy=p_retry_busy))
    within = np.where(rate > 0, within, 1.0)
    met = within >= pc
    hours = interval / 3600.0
    gpu_h = float(need.sum() * hours)
    static_h = float(need.max() * need.size * hours)
    late = float(np.sum(np.maximum(pc - within, 0.0) * rate * interval))
    return ReplicaPlan(interval_s=interval, rate_per_s=rate, needed=need, ordered=need,
                       serving=serving, sla_met=met, within_rt=within, gpu_hours=gpu_h,
                       static_gpu_hours=static_h, cost=gpu_h * price,
                       static_cost=static_h * price, violation_intervals=int(np.sum(~met)),
                       late_requests=late)
