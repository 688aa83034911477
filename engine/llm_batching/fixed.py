"""Fixed batching (Yang et al. §IV-C): the M/D^b/1 queue with H = H(b, E[L_b]).

The exact mean wait from the b − 1 roots of z^b = e^{λH(z−1)} in the unit disc
(Lambert W and Newton steps), and eq 25 as printed with its series roots, which
is not the mean wait (docs/models/llm_batching.md, erratum 2).  Seconds.
"""
from __future__ import annotations

import numpy as np
from scipy.special import gammaln, lambertw

from ..core.domains import LAM_PER_S, LLM_BATCH
from .batch_times import mean_batch_time

_NEWTON_STEPS = 4


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
    cycles; docs/models/llm_batching.md).  b = 1 gives M/D/1.  ``inf`` for
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
    (docs/models/llm_batching.md).  ``inf`` where λH ≥ b or λ = 0.
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
