"""Batching strategies for LLM inference with token-dependent batch times (Yang et al., §IV).

A batch of b requests whose longest output has l tokens (second to last token)
takes H(b, l) = k1·b + k2 + k3·b·l + k4·l seconds (eq 18): k1·b + k2 for the
first token, (k3·b + k4) per further token, every request padded to the
longest.  Requests arrive as a Poisson process of rate λ (per second); output
token counts are i.i.d. from a continuous law ``dist`` on [0, ∞) (any
scipy.stats frozen law, or an object with the same ``ppf``/``isf``/``mean``
methods, such as an empirical law).  L_b, the largest of b counts, has
E[L_b] = ∫ b x f(x) F(x)^{b−1} dx (eq 23), computed here on a logit grid of
quantiles (``expected_max_tokens``).

Strategies (times in seconds; "wait" = before the request's batch starts):

* fixed batch size b (§IV-C, M/D^b/1 with H = H(b, E[L_b])): ``fixed_batch_wait``,
  exact from the b − 1 roots of z^b = exp(λH(z − 1)) in the unit disc;
* dynamic batching (§IV-A/B): ``dynamic_wait``/``dynamic_solution``, exact for
  the random batch time H(B, L_B) from the departure chain of jobs left
  waiting; ``dynamic_wait_bound`` (Inoue's φ with the linear bound of eq 20) and
  the printed eq 16 (``yang_phi0``/``yang_phi1``/``yang_phi``);
* elastic and continuous (iteration-level) batching: simulation only,
  ``simulate`` (all four strategies; the loops are in ``engine.llm_batching_sim``);
  stability limits for all in ``stability_limit``; ``compare_strategies`` and
  ``paper_comparison`` for the §V-C comparison.

Errata and clarifications, each checked in ``tests/test_llm_batching.py``:

* Eq 16 prints φ0 = λ(α+β)²/(2(1−ρ²)) and φ1 = (λαβ + λα² + β)/(2(1−ρ²)),
  ρ = λα, not Inoue's eqs 41–42.  They are correct, but for a different
  quantity: Inoue's bound the latency (wait + processing); eq 16 bounds the wait
  before the batch starts.  Proof: Inoue's eqs 15 and 32 give
  wait = (ρ² + 2ρc + c²/E[B]) / (2λ(1−ρ²)), c = λβ; E[B] ≥ 1 gives φ0 and
  E[B] ≥ c/(1−ρ) (Inoue's Remark 5) gives φ1.  The paper calls both "E[W]".
* Eq 25 (M/D^b/1) is not the mean wait.  With the exact roots it equals
  E[Q_d]/λ, Q_d the number of requests left waiting just after a batch
  departs (a departure-epoch mean, not a time average: Little's law does not
  apply).  At b = 1 it is the M/D/1 *sojourn* (wait + H); for b > 1 it is near
  H at light load, far below the true wait, which is dominated by the time
  spent waiting for the batch to fill, and above the wait at heavy load.  The
  mean wait, by renewal reward over departure cycles of mean length b/λ, is
  E[Wq] = [(E[Q_d] − a)H + aH/2 + (b − a)S/λ] / b,  a = λH,  S = Σ 1/(1 − z_k).
  The 20-term Lagrange series for z_k converges slowly as λH/b → 1 (terms
  ~ m^{-3/2}); its roots are off by ~4e-3 at λH/b = 0.99, which moves eq 25 by
  under 0.1 %.  The roots here are z_k = −W0(−c ω_k e^{−c})/c, c = λH/b, with
  Newton steps.
* The M/D^b/1 model itself assumes the deterministic batch time H(b, E[L_b]).
  With the realised longest output fixed batching waits much longer for heavy
  tails: lognormal(7, 0.7), preset k, b = 16 at λ = 0.126/s gives a sojourn of
  252 s simulated against 192 s from the model (b = 40, λ = 0.2/s: 455 s
  against 305 s), about what capped dynamic batching with b_max = b gives
  (250 s, 444 s).  For uniform tokens the two agree within 1 %.
  ``compare_strategies`` reports both (``fixed`` and ``fixed_realised``).
* Eq 26 prints k3·b·E[N] for k3·(n_1 + … + n_b): equal in expectation only.
* With k3 > 0 and a token law of unbounded support, μ[b] = b/E[H(b, L_b)] → 0
  as b → ∞, so *uncapped* dynamic batching is unstable at every load (eventually
  the batch time grows faster than the batch).  For light tails the escape
  level is astronomically large; ``dynamic_wait`` therefore treats a load as
  stable when the drift λE[H_b] − b is negative for all batch sizes from the
  throughput peak up to ``B_HORIZON`` = 10^6, and returns ``inf`` otherwise.
  For lognormal(7, 0.7) and the preset k that limit is 0.099/s, a third of the
  peak throughput μ[272] = 0.306/s; a finite b_max keeps μ[b_max].
* §V's numbers (b* = 8, 125 s at λ = 0.43/s) rest on an unpublished fit:
  with the per-token time of Table I (≈ 23 ms) a batch of 8 lognormal(7, 0.7)
  requests takes 83 s on average (μ[8] = 0.097/s), so λ = 0.43/s is beyond
  every padded strategy (fixed, dynamic: at most 0.306/s at b = 272); only
  elastic (limit 2.08/s; simulated sojourn 153 s) and continuous batching
  (48 s with the preset KV cache) are stable there.  The sojourn-optimal fixed
  b is 4, 16 and 40 at λ = 0.05, 0.126, 0.2/s.  ``paper_comparison``
  recomputes the comparison at loads relative to the capacities.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, lambertw, roots_legendre

from . import batching
from .token_laws import EmpiricalTokens
from .core.domains import (LAM_PER_S, LLM_BATCH, LLM_K1, LLM_K2, LLM_K3, LLM_K4, LLM_KV_CAPACITY,
                     LLM_MAX_TOKENS, LLM_PROMPT_TOKENS, check_b_max)

B_HORIZON = 10 ** 6        # largest batch size the stability checks look at
_GRID = np.linspace(-41.0, 37.0, 6001)   # logit(u) nodes of the quantile grid
_GL_NODES = 8              # Gauss-Legendre nodes per panel for the law of L_b (chain)
_CHAIN_TOL = 1e-10         # probability allowed in the top quarter of the chain
_CHAIN_START, _CHAIN_MAX = 64, 2048    # states; 2048 takes ~15 s, so heavier loads give up
_NEWTON_STEPS = 4


# ---------------------------------------------------------------- arguments

def check_k(k) -> tuple[float, float, float, float]:
    """(k1, k2, k3, k4) as floats, or ``ValueError`` naming the bad coefficient."""
    try:
        values = tuple(k)
    except TypeError:
        raise ValueError(f"k must be a sequence (k1, k2, k3, k4), got {k!r}") from None
    if len(values) != 4:
        raise ValueError(f"k must hold 4 coefficients (k1, k2, k3, k4), got {len(values)}")
    out = []
    for dom, v in zip((LLM_K1, LLM_K2, LLM_K3, LLM_K4), values):
        arr = dom.check(v)
        if arr.ndim:
            raise ValueError(f"{dom.name} must be a single number")
        out.append(float(arr))
    return tuple(out)


def _check_dist(dist):
    for attr in ("ppf", "mean"):
        if not callable(getattr(dist, attr, None)):
            raise ValueError(f"dist must be a token-length law with a {attr}() method, "
                             f"got {dist!r}")
    return dist


def _quantile_grid(dist):
    """(x, log u, 1 − u) on the logit grid; x = Q(u), upper half from isf if present."""
    s = _GRID
    log_u = -np.logaddexp(0.0, -s)
    tail = np.exp(-np.logaddexp(0.0, s))                   # 1 − u
    u = np.exp(log_u)
    isf = getattr(dist, "isf", None)
    x = np.asarray(dist.ppf(u), dtype=float)
    if callable(isf):
        upper = s > 0
        x = np.where(upper, np.asarray(isf(tail), dtype=float), x)
    if not np.all(np.isfinite(x)):
        raise ValueError("dist: quantiles must be finite on (0, 1)")
    if x[0] < -1e-9 * max(1.0, float(np.max(np.abs(x)))):
        raise ValueError("dist must be a token-length law on [0, inf)")
    # scipy's ppf can round a lower bound at 0 to -1e-15 (truncnorm): that is 0
    return np.maximum.accumulate(np.maximum(x, 0.0)), log_u, tail


def _upper_support(dist) -> float:
    support = getattr(dist, "support", None)
    if callable(support):
        return float(support()[1])
    return float(dist.ppf(1.0))


def _max_moments(dist, b):
    """(E[L_b], E[L_b²]) for an integer array ``b``, by ∫ (1 − F^b) dx on the grid.

    E[L] = x_0 + ∫ (1 − F(x)^b) dx and E[L²] = x_0² + ∫ 2x (1 − F(x)^b) dx above
    x_0 = Q(4e-18); trapezoids in x between quantile nodes (F(Q(u)) = u).  The
    tail above the last node is closed with its local power-law index (``inf``
    when the mean is infinite).
    """
    if isinstance(dist, EmpiricalTokens):
        return _empirical_max_moments(dist, b)
    x, log_u, tail = _quantile_grid(dist)
    b = np.asarray(b, dtype=float)
    g = -np.expm1(b[..., None] * log_u)                    # 1 − u^b

    def trapezoids(step):
        xs, gs = x[::step], g[..., ::step]
        mid = 0.5 * (gs[..., 1:] + gs[..., :-1])
        return (np.sum(mid * np.diff(xs), axis=-1),
                np.sum(mid * np.diff(xs ** 2), axis=-1))

    (f1, f2), (c1, c2) = trapezoids(1), trapezoids(2)
    m1 = x[0] + (4.0 * f1 - c1) / 3.0                      # Richardson: O(h^2) -> O(h^4)
    m2 = x[0] ** 2 + (4.0 * f2 - c2) / 3.0
    # tail: sf(x) ~ C x^{-a}; ∫_X^∞ (1 − F^b) ≈ g_X X/(a − 1), second moment 2 g_X X²/(a − 2)
    xl, xp = x[-1], x[-200]
    if xl > xp > 0:
        gl = g[..., -1]
        with np.errstate(divide="ignore"):
            # xl and xp one ulp apart have equal logs: a = inf, no tail beyond the grid
            a = -(np.log(tail[-1]) - np.log(tail[-200])) / (np.log(xl) - np.log(xp))
            m1 = m1 + (gl * xl / (a - 1.0) if a > 1.0 else np.inf)
            m2 = m2 + (2.0 * gl * xl ** 2 / (a - 2.0) if a > 2.0 else np.inf)
    return m1, m2


_EMPIRICAL_BLOCK = 4_000_000      # batch sizes × distinct counts per block of work


def _empirical_max_moments(law: EmpiricalTokens, b):
    """Exact (E[L_b], E[L_b²]) for a sample's law (a step CDF, which the quantile
    grid's trapezoids missed by up to 0.4 %).

    Over the distinct counts v_1 < … < v_n with F_i = P(L ≤ v_i):
    E[L_b] = v_1 + Σ_{i<n} (v_{i+1} − v_i)(1 − F_i^b), and the same with v² for
    E[L_b²] (Σ_k P(L_b > k) summed between jumps).  1 − F_i^b is formed from the
    upper tail sums, so it keeps its accuracy where F_i is near 1.
    """
    v = law.values
    upper = np.cumsum(law.probs[::-1])[::-1][1:]            # P(L > v_i), i < n
    log_f = np.log1p(-np.minimum(upper, 1.0))
    b = np.asarray(b, dtype=float)
    flat = b.ravel()
    m1, m2 = np.empty(flat.size), np.empty(flat.size)
    step = max(1, _EMPIRICAL_BLOCK // max(upper.size, 1))
    for lo in range(0, flat.size, step):
        g = -np.expm1(flat[lo:lo + step, None] * log_f)     # 1 − F_i^b
        m1[lo:lo + step] = v[0] + g @ np.diff(v)
        m2[lo:lo + step] = v[0] ** 2 + g @ np.diff(v * v)
    return m1.reshape(b.shape), m2.reshape(b.shape)


# ---------------------------------------------------------------- batch times

def expected_max_tokens(dist, b):
    """E[L_b], the mean of the largest of b i.i.d. token counts (eq 23), for each b.

    Broadcasts over integer ``b`` ≥ 1.  Relative error below 1e-6 for laws with
    a finite mean (tests: uniform m·b/(b+1), exponential harmonic numbers); exact
    (a finite sum) for a sample's law, ``token_laws.EmpiricalTokens``.

    >>> from scipy import stats
    >>> round(float(expected_max_tokens(stats.uniform(0, 1000), 3)), 3)
    750.0
    """
    _check_dist(dist)
    b = LLM_BATCH.check(b)
    return _max_moments(dist, b)[0][()]


def batch_time(b, l, k):
    """H(b, l) = k1·b + k2 + k3·b·l + k4·l, in seconds (eq 18); broadcasts over b, l."""
    k1, k2, k3, k4 = check_k(k)
    b = LLM_BATCH.check(b)
    l = LLM_MAX_TOKENS.check(l)
    return (k1 * b + k2 + (k3 * b + k4) * l)[()]


def mean_batch_time(b, dist, k):
    """E[H(b, L_b)] = H(b, E[L_b]) (eq 18 is linear in l), seconds."""
    k1, k2, k3, k4 = check_k(k)
    b = LLM_BATCH.check(b)
    return (k1 * b + k2 + (k3 * b + k4) * expected_max_tokens(dist, b))[()]


def throughput(b, dist, k):
    """μ[b] = b / H(b, E[L_b]), requests per second (eq 24); broadcasts over b."""
    b = LLM_BATCH.check(b)
    return (b / mean_batch_time(b, dist, k))[()]


def optimal_batch_size(dist, k, b_limit: int = 1024) -> int:
    """The throughput-optimal batch size argmax_{1 ≤ b ≤ b_limit} μ[b] (Fig 3b).

    Light-tailed laws give b_limit (μ[b] still increases there); heavy-tailed
    laws an interior optimum.
    """
    b_limit = int(LLM_BATCH.check(b_limit, "b_limit"))
    b = np.arange(1, b_limit + 1)
    return int(b[np.argmax(throughput(b, dist, k))])


# ---------------------------------------------------------------- stability

def _log_grid(top: int) -> np.ndarray:
    return np.unique(np.round(np.logspace(0, np.log10(top), 400)).astype(np.int64))


def stability_limit(strategy: str, dist, k, b=None, b_max=None, *, kv_capacity_tokens=None,
                    prompt_tokens=0.0) -> float:
    """Largest stable arrival rate (requests per second) of a strategy.

    * ``fixed``: μ[b] (needs ``b``).
    * ``dynamic``: μ[b_max] for finite b_max; uncapped: min of μ[b] over batch
      sizes from the throughput peak up to ``B_HORIZON`` (strictly 0 for an
      unbounded token law and k3 > 0, see the module docstring).
    * ``elastic``: b_max/E[H_el(b_max)] with E[H_el(b)] = k1·b + k2 + k3·b·E[N] +
      k4·E[L_b] (eq 26); uncapped 1/(k1 + k3·E[N]).
    * ``continuous``: unlimited KV cache and b_max 1/(k1 + k3·E[N]) (prefill and
      decode work per request; k2, k4 amortise).  Otherwise an approximation:
      saturated, m = min(C/(p + E[N²]/E[N]), b_max) sequences run (a request
      holds p + N tokens, p = ``prompt_tokens``, for a time ∝ N) and each
      admission pays its own prefill, 1/(k1 + k2 + (k3 + k4/m)·E[N]); checked
      by simulation (stable at 0.9×, unstable at 1.1×, preset KV cache).
    """
    k1, k2, k3, k4 = check_k(k)
    _check_dist(dist)
    en = float(dist.mean())
    if strategy == "fixed":
        if b is None:
            raise ValueError("b: fixed batching needs a batch size")
        return float(throughput(b, dist, k))
    cap = check_b_max(b_max)
    if cap.ndim:
        raise ValueError("b_max must be a single value")
    if strategy == "dynamic":
        if np.isfinite(cap):
            return float(throughput(cap, dist, k))
        grid = _log_grid(B_HORIZON)
        mu = throughput(grid, dist, k)
        return float(mu[np.argmax(mu):].min())
    if strategy == "elastic":
        if np.isfinite(cap):
            return float(cap / (k1 * cap + k2 + k3 * cap * en
                                + k4 * expected_max_tokens(dist, cap)))
        return 1.0 / (k1 + k3 * en)
    if strategy == "continuous":
        p = float(LLM_PROMPT_TOKENS.check(prompt_tokens))
        c = (np.inf if kv_capacity_tokens is None
             else float(LLM_KV_CAPACITY.check(kv_capacity_tokens)))
        # a request holds p + N tokens for a time ∝ N: size-biased occupancy
        m = min(c / (p + float(dist.moment(2)) / en), float(cap)) if en > 0 else float(cap)
        if np.isinf(m):
            return 1.0 / (k1 + k3 * en)
        m = max(m, 1.0)
        return 1.0 / (k1 + k2 + (k3 + k4 / m) * en)
    raise ValueError(f"strategy must be 'dynamic', 'fixed', 'elastic' or 'continuous', "
                     f"got {strategy!r}")


# ---------------------------------------------------------------- fixed batching

def _lambert_roots(c: np.ndarray, b: int) -> np.ndarray:
    """Roots z_k (k = 1..b−1) of z = ω_k e^{c(z−1)} in the unit disc, shape c.shape + (b−1,).

    z_k = −W0(−c ω_k e^{−c})/c (z^b = e^{λH(z−1)} with c = λH/b), then Newton
    steps on g(z) = z − ω_k e^{c(z−1)}.  c → 0 gives z_k → ω_k e^{−c}.
    """
    omega = np.exp(2j * np.pi * np.arange(1, b) / b)
    c = np.asarray(c, dtype=float)[..., None]
    x = omega * np.exp(-c)
    small = c < 1e-12
    safe = np.where(small, 1.0, c)
    z = np.where(small, x, -lambertw(-safe * x, 0) / safe)
    for _ in range(_NEWTON_STEPS):
        e = omega * np.exp(c * (z - 1.0))
        z = z - (z - e) / (1.0 - c * e)
    return z


def _fixed_parts(lam, b, dist, k):
    lam = LAM_PER_S.check(lam)
    b = LLM_BATCH.check(b)
    h = mean_batch_time(b, dist, k)
    lam, b, h = np.broadcast_arrays(lam, b, h)
    a = lam * h
    s = np.zeros(lam.shape)
    # λ < μ[b] = b/H too: (b/H)·H can round below b, and λ = μ[b] is unstable
    stable = (a < b) & (lam < b / h) & np.isfinite(lam)
    for size in np.unique(b[stable]).astype(int):
        sel = stable & (b == size)
        if size > 1:
            z = _lambert_roots(a[sel] / size, size)
            s[sel] = np.sum(1.0 / (1.0 - z), axis=-1).real
    return lam, b, h, a, s, stable


def fixed_batch_wait(lam, b, dist, k):
    """Exact mean wait (s) before service with a fixed batch size b (M/D^b/1, §IV-C).

    The server waits until b requests are present and serves the b oldest in
    H = H(b, E[L_b]) (the paper's deterministic batch time).  With a = λH,
    S = Σ_k 1/(1 − z_k) over the b − 1 roots of z^b = e^{a(z−1)} in the unit disc
    and E[Q_d] = (b − (b − a)²)/(2(b − a)) + S (jobs waiting after a departure),

        E[Wq] = [(E[Q_d] − a)·H + a·H/2 + (b − a)·S/λ] / b,

    including the time to fill the batch (renewal reward over departure
    cycles; see the module docstring).  b = 1 gives M/D/1.  ``inf`` for
    λH ≥ b and, for b > 1, at λ = 0.  Broadcasts over ``lam`` and ``b``.
    """
    lam, b, h, a, s, stable = _fixed_parts(lam, b, dist, k)
    out = np.full(lam.shape, np.inf)
    ok = stable & ((lam > 0) | (b == 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        eq = (b - (b - a) ** 2) / (2.0 * (b - a)) + s
        fill = np.where(lam > 0, (b - a) * s / np.where(lam > 0, lam, 1.0), 0.0)
        val = ((eq - a) * h + 0.5 * a * h + fill) / b
    out[ok] = val[ok]
    return out[()]


def fixed_batch_sojourn(lam, b, dist, k):
    """Mean wait + processing (s) with a fixed batch size: fixed_batch_wait + H(b, E[L_b])."""
    return (fixed_batch_wait(lam, b, dist, k) + mean_batch_time(b, dist, k))[()]


def fixed_batch_wait_eq25(lam, b, dist, k, terms: int = 20):
    """Eq 25 exactly as printed: (1/λ)[(b − (b−a)²)/(2(b−a)) + Σ 1/(1 − Z_k)], a = λH.

    Z_k = Σ_{m=1}^{terms} c_m ω_k^m, c_m = e^{−am/b} (am)^{m−1}/(b^{m−1} m!) (the
    truncated Lagrange series of the roots).  Not the mean wait: with exact
    roots it is E[Q_d]/λ, the number waiting just after a departure over λ
    (module docstring).  ``inf`` where λH ≥ b or λ = 0.
    """
    lam = LAM_PER_S.check(lam)
    b = LLM_BATCH.check(b)
    h = mean_batch_time(b, dist, k)
    lam, b, h = np.broadcast_arrays(lam, b, h)
    a = lam * h
    out = np.full(lam.shape, np.inf)
    ok = (a < b) & (lam < b / h) & (lam > 0) & np.isfinite(lam)
    m = np.arange(1, terms + 1)
    for size in np.unique(b[ok]).astype(int):
        sel = ok & (b == size)
        aa = a[sel][:, None]
        with np.errstate(divide="ignore"):
            log_c = -aa * m / size + (m - 1) * np.log(aa * m / size) - gammaln(m + 1.0)
        log_c[:, 0] = -aa[:, 0] / size
        omega = np.exp(2j * np.pi * np.arange(1, size) / size)
        z = np.exp(log_c) @ (omega[None, :] ** m[:, None]) if size > 1 else np.zeros((aa.size, 0))
        s = np.sum(1.0 / (1.0 - z), axis=-1).real
        a1 = aa[:, 0]
        out[sel] = ((size - (size - a1) ** 2) / (2.0 * (size - a1)) + s) / lam[sel]
    return out[()]


def fixed_batch_roots_eq25(lam, b, dist, k, terms: int = 20) -> np.ndarray:
    """Eq 25's series roots Z_k (row 0) and the exact roots (row 1), shape (2, b − 1); scalars."""
    lam = float(LAM_PER_S.check(lam))
    size = int(LLM_BATCH.check(b))
    a = lam * float(mean_batch_time(size, dist, k))
    m = np.arange(1, terms + 1)
    c = np.exp(-a * m / size + (m - 1) * np.log(a * m / size) - gammaln(m + 1.0))
    omega = np.exp(2j * np.pi * np.arange(1, size) / size)
    series = (omega[:, None] ** m) @ c
    return np.vstack([series, _lambert_roots(np.asarray(a / size), size)])


# ---------------------------------------------------------------- dynamic batching

@dataclass(frozen=True)
class DynamicSolution:
    """Stationary means of dynamic batching with random batch times (seconds, requests)."""

    mean_wait: float          # before the request's batch starts
    mean_sojourn: float       # wait + the batch time of its batch
    mean_batch_size: float    # over batches
    utilization: float        # fraction of time a batch is running
    n_states: int             # truncation of the departure chain (0: not solved)
    stable: bool              # False: load at or above the stability limit, means are inf
    converged: bool = True    # False: stable, but the chain needs over 2048 states (inf)


def _unstable(b_max) -> DynamicSolution:
    return DynamicSolution(np.inf, np.inf, float(b_max), 1.0, 0, False)


def _batch_law_nodes(dist, sizes: np.ndarray):
    """Nodes and weights for expectations over L_b = Q(V^{1/b}), V uniform: (L array, weights).

    With V = e^{−y}, E[g(L_b)] = ∫_0^∞ g(Q(e^{−y/b})) e^{−y} dy (smooth in y for
    every b), by composite Gauss-Legendre on panels graded geometrically towards
    y = 0, where heavy upper tails of L_b live.
    """
    t, w0 = roots_legendre(_GL_NODES)
    edges = np.concatenate([[0.0], 10.0 ** np.arange(-10, 0), [0.5, 1, 2, 4, 8, 16, 40]])
    lo, hi = edges[:-1, None], edges[1:, None]
    y = (0.5 * (hi + lo) + 0.5 * (hi - lo) * t).ravel()
    w = (0.5 * (hi - lo) * w0).ravel() * np.exp(-y)
    w /= w.sum()                         # exact total mass: each row stays stochastic
    log_u = -y[None, :] / sizes[:, None]
    tail = -np.expm1(log_u)
    u = np.exp(log_u)
    x = np.asarray(dist.ppf(u), dtype=float)
    isf = getattr(dist, "isf", None)
    if callable(isf):
        x = np.where(u > 0.5, np.asarray(isf(tail), dtype=float), x)
    return x, w


def _dynamic_chain(lam: float, dist, k, b_max: float, n_states: int):
    """Stationary solution of the departure chain truncated at ``n_states`` states.

    State n = requests left waiting when a batch ends; the next batch takes
    B = min(max(n, 1), b_max) of them and A ~ Poisson(λH(B, L_B)) arrive during
    it (mixed over L_B).  Mass beyond the last state is put on it.  Returns
    (wait, sojourn, E[B], utilisation, mass in the top quarter).
    """
    k1, k2, k3, k4 = k
    n = np.arange(n_states)
    batch = np.minimum(np.maximum(n, 1), b_max).astype(np.int64)
    sizes = np.arange(1, batch.max() + 1)
    l_nodes, w = _batch_law_nodes(dist, sizes)
    h = k1 * sizes[:, None] + k2 + (k3 * sizes[:, None] + k4) * l_nodes
    m1, m2 = _max_moments(dist, sizes)
    eh = k1 * sizes + k2 + (k3 * sizes + k4) * m1
    eh2 = ((k1 * sizes + k2) ** 2 + 2.0 * (k1 * sizes + k2) * (k3 * sizes + k4) * m1
           + (k3 * sizes + k4) ** 2 * m2)
    j = np.arange(n_states)
    pmf = np.zeros((sizes.size, n_states))
    for g in range(w.size):                      # mixture over the nodes of L_B
        mean = lam * h[:, g:g + 1]
        pmf += w[g] * np.exp(j * np.log(mean) - mean - gammaln(j + 1.0))
    base = np.where(n == 0, 0, n - batch)
    cols = base[:, None] + j[None, :]                # row i: its batch's pmf shifted by base
    inside = cols < n_states
    p = np.zeros((n_states, n_states))
    rows = np.broadcast_to(n[:, None], cols.shape)
    p[rows[inside], cols[inside]] = pmf[batch - 1][inside]
    p[:, -1] += np.clip(1.0 - p.sum(axis=1), 0.0, None)   # mass beyond the truncation
    a = p.T - np.eye(n_states)
    a[-1, :] = 1.0
    rhs = np.zeros(n_states)
    rhs[-1] = 1.0
    q = np.linalg.solve(a, rhs)
    q = np.maximum(q, 0.0)
    q /= q.sum()
    ehb, eh2b = eh[batch - 1], eh2[batch - 1]
    cycle = q @ ehb + q[0] / lam
    area = q @ ((n - batch).clip(0) * ehb + 0.5 * lam * eh2b)
    eb = q @ batch
    wait = area / cycle / lam
    sojourn = wait + (q @ (batch * ehb)) / eb
    top = q[-max(n_states // 4, 1):].sum()
    return wait, sojourn, eb, (q @ ehb) / cycle, top


def dynamic_solution(lam: float, dist, k, b_max=None, max_states: int = _CHAIN_MAX
                     ) -> DynamicSolution:
    """Exact dynamic batching with random batch times H(B, L_B), one arrival rate.

    The departure chain (``_dynamic_chain``) is truncated at 64, 128, … states
    until the top quarter holds less than 1e-10 of the probability, at most
    2048 states (cost ~ states² × 136 quadrature nodes: well under a second at
    moderate load, ~15 s at 2048 states).  Loads at or above
    ``stability_limit('dynamic', ...)`` give ``inf`` with ``stable=False``; a
    stable load whose chain needs more states (very close to saturation) gives
    ``inf`` with ``converged=False`` (simulate there instead); ``max_states``
    lowers that ceiling to bound the time spent (a dashboard).  The mean wait follows by renewal
    reward over departure cycles (an idle period of mean 1/λ after n = 0, then a
    batch with E[area of waiting requests] = (n − B)·E[H_B] + λE[H_B²]/2).
    """
    lam = float(LAM_PER_S.check(lam))
    kk = check_k(k)
    _check_dist(dist)
    cap = check_b_max(b_max)
    if cap.ndim:
        raise ValueError("b_max must be a single value")
    cap = float(cap)
    if not _CHAIN_START <= int(max_states) <= _CHAIN_MAX:
        raise ValueError(f"max_states must be in [{_CHAIN_START}, {_CHAIN_MAX}], "
                         f"got {max_states!r}")
    if not np.isfinite(lam) or lam >= stability_limit("dynamic", dist, kk, b_max=b_max):
        return _unstable(cap)
    if lam == 0.0:
        h1 = float(mean_batch_time(1, dist, kk))
        return DynamicSolution(0.0, h1, 1.0, 0.0, 1, True)
    n_states = _CHAIN_START
    while n_states <= int(max_states):
        wait, soj, eb, util, top = _dynamic_chain(lam, dist, kk, cap, n_states)
        if top < _CHAIN_TOL:
            return DynamicSolution(float(wait), float(soj), float(eb), float(util), n_states, True)
        n_states *= 2
    return DynamicSolution(np.inf, np.inf, np.inf, 1.0, 0, True, converged=False)


def dynamic_wait(lam, dist, k, b_max=None):
    """Exact mean wait (s) before the batch starts under dynamic batching; broadcasts over lam.

    Batch times are random, H(B, L_B) with L_B the largest of the B token
    counts (eq 18), not H(B, E[L_B]).  ``inf`` at unstable loads (uncapped with
    a heavy-tailed law: practically every load; see the module docstring).
    """
    lam = LAM_PER_S.check(lam)
    flat = [dynamic_solution(float(x), dist, k, b_max).mean_wait for x in lam.ravel()]
    return np.asarray(flat).reshape(lam.shape)[()]


def dynamic_sojourn(lam, dist, k, b_max=None):
    """Exact mean wait + batch time (s) under dynamic batching; broadcasts over lam."""
    lam = LAM_PER_S.check(lam)
    flat = [dynamic_solution(float(x), dist, k, b_max).mean_sojourn for x in lam.ravel()]
    return np.asarray(flat).reshape(lam.shape)[()]


def linear_bound_coefficients(dist, k) -> tuple[float, float]:
    """(α1, β1) = (k1 + k3·l_max, k2 + k4·l_max) with l_max the top of the law's support (eq 20).

    For the uniform law on [0, m2], l_max = m2 as printed; H(b, L_b) ≤ α1·b + β1
    holds for every batch.  ``inf`` for laws of unbounded support.
    """
    k1, k2, k3, k4 = check_k(k)
    top = _upper_support(_check_dist(dist))
    # a zero coefficient contributes nothing, even for an unbounded law (not 0·inf = NaN)
    return k1 + (k3 * top if k3 else 0.0), k2 + (k4 * top if k4 else 0.0)


def dynamic_wait_bound(lam, dist, k):
    """Inoue's φ(λ, α1, β1) (eqs 41–43 with eq 20): bounds the wait + processing time, s.

    Valid for uncapped dynamic batching with a bounded token law (every batch
    time is below α1·b + β1); ``inf`` for unbounded laws and for λα1 ≥ 1.
    """
    a1, b1 = linear_bound_coefficients(dist, k)
    lam = LAM_PER_S.check(lam)
    if not (np.isfinite(a1) and np.isfinite(b1)):
        return np.full(lam.shape, np.inf)[()]
    return batching.phi(lam, a1, b1)


def yang_phi0(lam, alpha, beta):
    """Eq 16's φ0 as printed, λ(α+β)²/(2(1−λ²α²)): an upper bound of the *wait* (not latency)."""
    lam, alpha, beta = (np.asarray(batching.LAM.check(lam)), batching.ALPHA.check(alpha),
                        batching.TAU0.check(beta, "beta"))
    rho = lam * alpha
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = lam * (alpha + beta) ** 2 / (2.0 * (1.0 - rho ** 2))
    return np.where(batching._below_capacity(lam, alpha), val, np.inf)[()]


def yang_phi1(lam, alpha, beta):
    """Eq 16's φ1 as printed, (λαβ + λα² + β)/(2(1−λ²α²)): an upper bound of the wait."""
    lam, alpha, beta = (np.asarray(batching.LAM.check(lam)), batching.ALPHA.check(alpha),
                        batching.TAU0.check(beta, "beta"))
    rho = lam * alpha
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = (rho * beta + rho * alpha + beta) / (2.0 * (1.0 - rho ** 2))
    return np.where(batching._below_capacity(lam, alpha), val, np.inf)[()]


def yang_phi(lam, alpha, beta):
    """min(φ0, φ1) of eq 16: bounds the mean wait before the batch starts (not the latency)."""
    return np.minimum(yang_phi0(lam, alpha, beta), yang_phi1(lam, alpha, beta))


# ---------------------------------------------------------------- simulation

def simulate(strategy, lam, dist, k, b=None, b_max=None, n_jobs=100_000, seed=None, **options):
    """Simulate "dynamic", "fixed", "elastic" or "continuous" batching (seconds).

    The simulator lives in ``engine.llm_batching_sim`` (see ``simulate`` there
    for the keyword options: ``kv_capacity_tokens``, ``prompt_tokens``,
    ``batch_time``, ``warmup_jobs``, ``return_records``, ``backend``).  Returns
    an ``LLMSimResult`` with ``mean_wait``, ``mean_sojourn``, ``p99_sojourn``,
    ``ci95_wait``, ``ci95_sojourn`` and ``mean_batch_size``.
    """
    from .llm_batching_sim import simulate as run

    return run(strategy, lam, dist, k, b=b, b_max=b_max, n_jobs=n_jobs, seed=seed, **options)


# ---------------------------------------------------------------- comparisons

def best_fixed_batch_size(lam: float, dist, k, b_search: int = 64) -> int:
    """argmin over b ≤ b_search of the exact fixed-batching sojourn at λ (the paper's b*, §IV-C).

    0 when no b ≤ b_search is stable at λ.
    """
    b = np.arange(1, int(LLM_BATCH.check(b_search, "b_search")) + 1)
    soj = fixed_batch_sojourn(float(LAM_PER_S.check(lam)), b, dist, k)
    return int(b[np.argmin(soj)]) if np.isfinite(soj).any() else 0


def compare_strategies(lam: float, dist, k, b=None, *, n_jobs: int = 20_000, seed=0,
                       kv_capacity_tokens=None, prompt_tokens=0.0, b_search: int = 64) -> dict:
    """Mean wait and sojourn (s) of every strategy at one arrival rate, same law and k.

    Keys: ``dynamic`` (uncapped, exact chain), ``dynamic_capped`` (b_max = b),
    ``fixed`` (batch size b, exact M/D^b/1 with H(b, E[L_b])), ``fixed_realised``
    (the same server simulated with the batch's realised longest output), ``elastic``
    (uncapped, simulated) and ``continuous`` (simulated, KV cache as given).
    ``b`` defaults to ``best_fixed_batch_size``.  Values are dicts with
    ``mean_wait``, ``mean_sojourn``, ``b`` and ``method``; ``inf`` where unstable.
    """
    lam = float(LAM_PER_S.check(lam))
    b = best_fixed_batch_size(lam, dist, k, b_search) if b is None else int(LLM_BATCH.check(b))
    out = {}
    for key, cap in (("dynamic", None), ("dynamic_capped", b or None)):
        sol = dynamic_solution(lam, dist, k, cap)
        out[key] = dict(mean_wait=sol.mean_wait, mean_sojourn=sol.mean_sojourn,
                        b=np.inf if cap is None else cap, method="exact")
    if b:
        out["fixed"] = dict(mean_wait=float(fixed_batch_wait(lam, b, dist, k)),
                            mean_sojourn=float(fixed_batch_sojourn(lam, b, dist, k)), b=b,
                            method="exact")
    else:
        out["fixed"] = dict(mean_wait=np.inf, mean_sojourn=np.inf, b=0, method="exact")
    if b and lam < float(throughput(b, dist, k)):
        r = simulate("fixed", lam, dist, k, b=b, n_jobs=n_jobs, seed=seed)
        out["fixed_realised"] = dict(mean_wait=r.mean_wait, mean_sojourn=r.mean_sojourn, b=b,
                                     method="simulation")
    else:
        out["fixed_realised"] = dict(mean_wait=np.inf, mean_sojourn=np.inf, b=b,
                                     method="simulation")
    for key in ("elastic", "continuous"):
        limit = stability_limit(key, dist, k, kv_capacity_tokens=kv_capacity_tokens,
                                prompt_tokens=prompt_tokens)
        if lam >= limit:
            out[key] = dict(mean_wait=np.inf, mean_sojourn=np.inf, b=np.inf, method="simulation")
            continue
        r = simulate(key, lam, dist, k, n_jobs=n_jobs, seed=seed,
                     kv_capacity_tokens=kv_capacity_tokens, prompt_tokens=prompt_tokens)
        out[key] = dict(mean_wait=r.mean_wait, mean_sojourn=r.mean_sojourn,
                        b=r.mean_batch_size, method="simulation")
    return out


def paper_laws() -> dict:
    """The token laws of §V-C: uniform on [0, 1000] (Fig 5) and lognormal(7, 0.7) (Fig 6)."""
    from scipy import stats
    return {"uniform(0, 1000)": stats.uniform(0.0, 1000.0),
            "lognormal(7, 0.7)": stats.lognorm(0.7, scale=np.exp(7.0))}


def paper_comparison(k, loads=(0.2, 0.5, 0.8), *, n_jobs: int = 20_000, seed=0,
                     kv_capacity_tokens=None, prompt_tokens=0.0) -> list[dict]:
    """The §V-C comparison recomputed for coefficients ``k``, one row per (law, load, strategy).

    λ = load × μ[b_ref], b_ref the throughput-optimal batch size up to 64, for
    each law of ``paper_laws``.  Each row: law, lam, load, strategy, b,
    mean_wait, mean_sojourn, method; plus the law's throughput-optimal batch
    size up to 1024 (``b_throughput``).  The paper's claims, to set beside it:
    light tails: uncapped dynamic beats fixed; heavy tails: a finite b_max beats
    uncapped dynamic; elastic lowest always.
    """
    rows = []
    for name, dist in paper_laws().items():
        b_thr = optimal_batch_size(dist, k, 1024)
        lam_ref = float(throughput(min(b_thr, 64), dist, k))
        for load in loads:
            lam = load * lam_ref
            res = compare_strategies(lam, dist, k, n_jobs=n_jobs, seed=seed,
                                     kv_capacity_tokens=kv_capacity_tokens,
                                     prompt_tokens=prompt_tokens)
            for strategy, v in res.items():
                rows.append(dict(law=name, lam=lam, load=load, strategy=strategy,
                                 b_throughput=b_thr, **v))
    return rows


# ---------------------------------------------------------------- recommendations

B_MAX_CANDIDATES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def recommended_b_max(lam: float, dist, k, candidates=B_MAX_CANDIDATES,
                      max_load: float = 0.9, max_states: int = _CHAIN_MAX) -> tuple[int, float]:
    """(b_max, mean sojourn in s) minimising the exact capped dynamic-batching sojourn at λ.

    Only candidates with λ ≤ ``max_load``·μ[b_max] are solved (closer to
    saturation the chain needs thousands of states and the latency is large
    anyway); a chain needing more than ``max_states`` states counts as ``inf``.
    (0, inf) when no candidate qualifies.
    """
    lam = float(LAM_PER_S.check(lam))
    cands = np.asarray([int(c) for c in candidates])
    LLM_BATCH.check(cands, "candidates")
    if not 0.0 < max_load <= 1.0:
        raise ValueError(f"max_load must be in (0, 1], got {max_load!r}")
    mu = np.atleast_1d(throughput(cands, dist, k))
    best, best_soj = 0, np.inf
    for c in cands[lam <= max_load * mu]:
        soj = dynamic_solution(lam, dist, k, int(c), max_states).mean_sojourn
        if soj < best_soj:
            best, best_soj = int(c), float(soj)
    return best, best_soj


def best_strategy(values: dict) -> list[str]:
    """Per load, the name whose mean latency is smallest; "" where none is finite.

    ``values`` maps a strategy name to an array of mean latencies over the same
    loads (``inf`` or NaN: unstable or not computed there).
    """
    if not values:
        return []
    names = list(values)
    table = np.vstack([np.asarray(values[n], dtype=float).ravel() for n in names])
    table = np.where(np.isfinite(table), table, np.inf)
    idx = np.argmin(table, axis=0)
    ok = np.isfinite(table.min(axis=0))
    return [names[i] if good else "" for i, good in zip(idx, ok)]
