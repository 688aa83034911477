"""Batch times of LLM batching (Yang et al. eqs 18, 23, 24): the longest output of a batch.

Argument checks shared by the package (``check_k``, ``check_dist``), the law of
L_b, the largest of b i.i.d. token counts (its moments and quadrature nodes),
the batch time H(b, l), and the throughput μ[b].  Times in seconds, lengths in
tokens.  Derivations: docs/models/llm_batching.md.
"""
from __future__ import annotations

import numpy as np
from scipy.special import roots_legendre

from ..core.domains import LLM_BATCH, LLM_K1, LLM_K2, LLM_K3, LLM_K4, LLM_MAX_TOKENS
from ..core.token_laws import EmpiricalTokens

_GRID = np.linspace(-41.0, 37.0, 6001)   # logit(u) nodes of the quantile grid
_GL_NODES = 8              # Gauss-Legendre nodes per panel for the law of L_b
_EMPIRICAL_BLOCK = 4_000_000      # batch sizes × distinct counts per block of work


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


def check_dist(dist):
    """``dist`` itself if it is a token-length law (``ppf`` and ``mean`` methods), else
    ``ValueError`` naming ``dist``."""
    for attr in ("ppf", "mean"):
        if not callable(getattr(dist, attr, None)):
            raise ValueError(f"dist must be a token-length law with a {attr}() method, "
                             f"got {dist!r}")
    return dist


def upper_support(dist) -> float:
    """The top of the token law's support, tokens (``inf`` when unbounded)."""
    support = getattr(check_dist(dist), "support", None)
    if callable(support):
        return float(support()[1])
    return float(dist.ppf(1.0))


# ---------------------------------------------------------------- the law of L_b

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


def max_token_moments(dist, b) -> tuple[np.ndarray, np.ndarray]:
    """(E[L_b], E[L_b²]) in tokens and tokens², L_b the largest of b i.i.d. counts (eq 23).

    Integrates 1 − F(x)^b between quantile nodes (Richardson-extrapolated
    trapezoids) with a power-law tail closure; a sample's law
    (``EmpiricalTokens``) is summed exactly between its jumps.
    """
    check_dist(dist)
    b = LLM_BATCH.check(b)
    if isinstance(dist, EmpiricalTokens):
        return _empirical_max_moments(dist, b)
    x, log_u, tail = _quantile_grid(dist)
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


def _empirical_max_moments(law: EmpiricalTokens, b: np.ndarray):
    """Exact (E[L_b], E[L_b²]) for a sample's law: over the distinct counts v_i with
    F_i = P(L ≤ v_i), E[L_b] = v_1 + Σ_{i<n} (v_{i+1} − v_i)(1 − F_i^b) (v² for E[L_b²])."""
    v = law.values
    upper = np.cumsum(law.probs[::-1])[::-1][1:]            # P(L > v_i), i < n
    log_f = np.log1p(-np.minimum(upper, 1.0))
    flat = b.ravel()
    m1, m2 = np.empty(flat.size), np.empty(flat.size)
    step = max(1, _EMPIRICAL_BLOCK // max(upper.size, 1))
    for lo in range(0, flat.size, step):
        g = -np.expm1(flat[lo:lo + step, None] * log_f)     # 1 − F_i^b, from the upper tail
        m1[lo:lo + step] = v[0] + g @ np.diff(v)
        m2[lo:lo + step] = v[0] ** 2 + g @ np.diff(v * v)
    return m1.reshape(b.shape), m2.reshape(b.shape)


def max_token_nodes(dist, sizes) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature for E[g(L_b)]: (nodes in tokens, shape (len(sizes), m); weights, shape m).

    L_b = Q(V^{1/b}) with V = e^{−y}: E[g(L_b)] = ∫_0^∞ g(Q(e^{−y/b})) e^{−y} dy by
    composite Gauss-Legendre on panels graded towards y = 0 (the upper tail of L_b).
    """
    check_dist(dist)
    sizes = LLM_BATCH.check(sizes, "sizes").reshape(-1)
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


# ---------------------------------------------------------------- batch times

def expected_max_tokens(dist, b):
    """E[L_b], the mean of the largest of b i.i.d. token counts (eq 23), tokens, for each b.

    Broadcasts over integer ``b`` ≥ 1; exact (a finite sum) for a sample's law.

    >>> from scipy import stats
    >>> round(float(expected_max_tokens(stats.uniform(0, 1000), 3)), 3)
    750.0
    """
    return max_token_moments(dist, b)[0][()]


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
