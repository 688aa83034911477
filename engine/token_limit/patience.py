"""User impatience: the M/G/1 queue with deterministic patience (M/G/1+D), eqs 6-9.

``ServiceLaw`` (service-time atoms), the exact product-integration Volterra
solver, the M/M/1+D and M/D/1+D closed forms that anchor the paper's
interpolation, and ``impatience`` (exact or De Kok-Tijms) for clipped LLM requests.  Times in seconds, λ in requests per second.  The method
and its checks: docs/models/token_limit.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import token_laws
from ..core.domains import (A_S_PER_TOKEN, C_S, LAM_PER_S, LIMIT_METHOD, PATIENCE_S,
                            check_n_max)
from ..core.jit import BACKEND, choose, compiled
from ..core.renamed import renamed_attribute
from .formulas import clipped_token_moments, mean_wait, service_moments


@dataclass(frozen=True)
class ServiceLaw:
    """A service-time law given by its atoms (seconds) and their probabilities."""

    atoms: np.ndarray
    probs: np.ndarray

    @classmethod
    def deterministic(cls, d: float) -> "ServiceLaw":
        return cls(np.array([float(d)]), np.array([1.0]))

    @property
    def mean(self) -> float:
        return float(np.dot(self.probs, self.atoms))

    @classmethod
    def clipped(cls, a: float, c: float, dist, n_max: float) -> "ServiceLaw":
        """S = a·min(n, n_max) + c in seconds for the token law ``dist`` (the law's tail
        beyond its grid goes to the top atom)."""
        top = token_laws.grid_top(dist, np.asarray(n_max))
        k = np.arange(1, top + 1, dtype=float)
        p = token_laws.token_pmf(dist, k)
        p[-1] += max(0.0, 1.0 - p.sum())
        keep = p > 0
        return cls(a * k[keep] + c, p[keep] / p[keep].sum())

    def integrated_tails(self, t: np.ndarray):
        """I1(t) = E[min(S, t)] and I2(t) = ∫_0^t I1 = E[t²/2 ∧ (S t − S²/2)]."""
        cp = np.concatenate([[0.0], np.cumsum(self.probs)])
        c1 = np.concatenate([[0.0], np.cumsum(self.probs * self.atoms)])
        c2 = np.concatenate([[0.0], np.cumsum(self.probs * self.atoms ** 2)])
        i = np.searchsorted(self.atoms, t, side="right")
        above = np.maximum(1.0 - cp[i], 0.0)
        return c1[i] + t * above, t * c1[i] - 0.5 * c2[i] + 0.5 * t * t * above


_RESCALE = 1e-250       # g is rescaled by this whenever it would overflow


def _forward(g, lam, w0, wm, ends):
    """Forward substitution of the product-integration scheme (g[0] = 1 given).

    Returns (s·g, s): an overloaded queue with a long patience makes g grow like
    e^(θx), so g is rescaled on the way (s starts at 1) instead of overflowing.
    """
    n = g.size
    denom = 1.0 - lam * w0
    s = 1.0
    for i in range(1, n):
        acc = lam * ends[i] * g[0]
        for j in range(1, i):
            acc += lam * wm[i - j] * g[j]
        g[i] = (s + acc) / denom
        if g[i] > 1e250:
            for j in range(i + 1):
                g[j] *= _RESCALE
            s *= _RESCALE
    return g, s


def _forward_numpy(g, lam, w0, wm, ends):
    """``_forward`` with the inner sum as a numpy dot (the loop without numba)."""
    denom = 1.0 - lam * w0
    s = 1.0
    for i in range(1, g.size):
        acc = lam * ends[i] * g[0] + lam * np.dot(wm[i - 1:0:-1], g[1:i])
        g[i] = (s + acc) / denom
        if g[i] > 1e250:
            g[:i + 1] *= _RESCALE
            s *= _RESCALE
    return g, s


_forward_fast = compiled(_forward) if BACKEND == "numba" else _forward_numpy


def _volterra(lam: float, tau: float, law, n: int, backend=None, return_scale=False):
    """g on the grid x_i = iτ/n (W = P0·g on [0, τ]) and ∫_0^τ g (trapezoid, exact for hats).

    With ``return_scale`` also s: the returned g and integral are s times the true
    ones (s < 1 only where g would overflow).  The scheme needs λτ/n ≤ 1 (stable).
    """
    h = tau / n
    t = h * np.arange(n + 2)
    i1, i2 = law.integrated_tails(t)
    w0 = i2[1] / h                                                  # half hat at t = 0
    wm = np.empty(n + 1)
    wm[0] = w0
    wm[1:] = (i2[2:n + 2] - 2.0 * i2[1:n + 1] + i2[0:n]) / h       # full hats at t = mh
    ends = np.zeros(n + 1)
    ends[1:] = i1[1:n + 1] - (i2[1:n + 1] - i2[0:n]) / h           # half hat of y = 0
    g = np.ones(n + 1)
    loop = choose(backend, _forward_fast, _forward)
    g, scale = loop(g, float(lam), float(w0), wm, ends)
    integral = h * (g.sum() - 0.5 * (g[0] + g[-1]))
    return (g, integral, scale) if return_scale else (g, integral)


def _mg1d_from_g(lam, tau, mean_s, g_tau, integral, scale=1.0):
    """(π, E[W_q], E[W_qs], P0) from g(τ) and ∫_0^τ g (see the module docstring).

    ``g_tau`` and ``integral`` may carry a common factor ``scale`` (``_forward``);
    every result is a ratio in which it cancels.  Where π rounds to 1, E[W_qs] is
    taken as τ − ∫g/g(τ), the same quantity without the division by 1 − π = 0.
    """
    rho = lam * mean_s
    denom = scale + rho * g_tau
    p0 = scale / denom
    loss = np.clip(1.0 - g_tau / denom, 0.0, 1.0)                   # 1 − P0·g(τ)
    w_all = np.clip(tau - integral / denom, 0.0, tau)               # τ − P0·∫g
    with np.errstate(divide="ignore", invalid="ignore"):
        served = np.where(loss < 1.0, tau - (tau - w_all) / (1.0 - loss),
                          tau - integral / g_tau)
    return loss, w_all, served[()], p0


EXACT_LAM_TAU = 1 << 14      # largest λτ the exact M/G/1+D solver takes (grid ≥ λτ points)


def _solve_mg1d(lam: float, tau: float, law, rtol: float = 1e-6, n0: int = 1024,
                n_cap: int = 1 << 15, backend=None):
    """Solve M/G/1+D by grid doubling until π and E[W_q]/τ change by < rtol.

    Returns (π, E[W_q], E[W_qs], P0, last change, grid size).  Both π and
    E[W_q]/τ lie in [0, 1], so ``rtol`` bounds their error on that scale.  The
    grid starts with at least λτ points (the scheme is unstable with fewer, and
    gave sign-alternating nonsense); λτ above ``EXACT_LAM_TAU`` raises ``ValueError``.
    """
    if lam == 0.0:
        return 0.0, 0.0, 0.0, 1.0, 0.0, 0
    if lam * tau > EXACT_LAM_TAU:
        raise ValueError(f"lam·patience = {lam * tau:g} arrivals within the patience: the "
                         f"exact M/G/1+D solver takes at most {EXACT_LAM_TAU}")
    n = max(n0, 1 << int(np.ceil(np.log2(max(lam * tau, 1.0)))))
    prev = None
    while True:
        g, integral, scale = _volterra(lam, tau, law, n, backend, return_scale=True)
        cur = _mg1d_from_g(lam, tau, law.mean, g[-1], integral, scale)
        if prev is not None:
            err = max(abs(cur[0] - prev[0]), abs(cur[1] - prev[1]) / tau)
            if err < rtol or 2 * n > n_cap:
                return (*cur, err, n)
        prev = cur
        n *= 2


# ------------------------------------------------------------ closed forms

def _phi(z):
    """(1 − e^{−z})/z, 1 at z = 0."""
    small = np.abs(z) < 1e-8
    zz = np.where(small, 1.0, z)
    return np.where(small, 1.0 - 0.5 * z, -np.expm1(-zz) / zz)


def _psi(z):
    """(z − 1 + e^{−z})/z², 1/2 at z = 0."""
    small = np.abs(z) < 1e-3
    zz = np.where(small, 1.0, z)
    return np.where(small, 0.5 - z / 6.0 + z * z / 24.0 - z ** 3 / 120.0,
                    (zz + np.expm1(-zz)) / (zz * zz))


def mm1_deterministic_patience(lam, mean_service, patience):
    """M/M/1+D exactly (Baccelli, Boyer & Hébuterne 1984): (π, E[W_q], E[W_qs]).

    Mean service time ``mean_service`` (s), patience τ (s); any ρ = λE[S] ≥ 0.
    π = (1 − ρ)ρe^{−δτ}/(1 − ρ²e^{−δτ}), δ = 1/E[S] − λ.  Vectorised.
    """
    lam = LAM_PER_S.check(lam)
    ms = A_S_PER_TOKEN.check(mean_service, "mean_service")
    tau = PATIENCE_S.check(patience)
    lam, ms, tau = np.broadcast_arrays(lam, ms, tau)
    rho = lam * ms
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        z = (1.0 - rho) / ms * tau          # NaN at ρ = 1, τ = inf: the τ = inf branch
        # scaled by s = e^{z} where z < −1e-3, so that heavy overload does not overflow;
        # nearer ρ = 1 the series of _phi and _psi (the scaled form cancels there)
        neg = z < -1e-3
        zn = np.where(neg, z, -1.0)
        s = np.where(neg, np.exp(np.minimum(z, 0.0)), 1.0)
        g = np.where(neg, s + lam * tau * np.expm1(zn) / zn, 1.0 + lam * tau * _phi(z))
        big = np.where(neg, tau * s + lam * tau * tau * (zn * s - s + 1.0) / (zn * zn),
                       tau + lam * tau * tau * _psi(z))
        den = s + rho * g
        loss = np.where(np.isinf(tau), 0.0, (s + (rho - 1.0) * g) / den)
        w_all = np.where(np.isinf(tau), rho * ms / (1.0 - rho), tau - big / den)
        w_all = np.where(np.isinf(tau) & (rho >= 1.0), np.inf, w_all)
        served = np.where(np.isinf(tau), w_all, tau - (tau - w_all) / (1.0 - loss))
    loss, w_all, served = _saturated(lam, tau, loss, w_all, served)
    loss = np.clip(loss, 0.0, 1.0)
    return loss[()], w_all[()], served[()]


def _saturated(lam, tau, loss, w_all, served):
    """λ = inf: every request finds the server saturated and waits its whole patience
    (all are lost) or, without patience, forever (as ``impatience`` has it)."""
    lam_inf, fin_tau = np.isinf(lam), np.isfinite(tau)
    loss = np.where(lam_inf, np.where(fin_tau, 1.0, 0.0), loss)
    w_all = np.where(lam_inf, np.where(fin_tau, tau, np.inf), w_all)
    return loss, w_all, np.where(lam_inf, w_all, served)


_ERLANG_TERMS = 120


def md1_deterministic_patience(lam, service, patience):
    """M/D/1+D exactly: (π, E[W_q], E[W_qs]) for a deterministic service time d (s).

    Erlang's M/D/1 series for the virtual wait below τ where λτ ≤ 12, the
    product-integration solver beyond (up to λτ = ``EXACT_LAM_TAU``, then
    ``ValueError``).  The alternating series' rounding error is about machine
    ε times the sum of its absolute terms (docs/models/token_limit.md).
    Vectorised over ``lam``, ``service``, ``patience``.
    """
    lam = LAM_PER_S.check(lam)
    d = A_S_PER_TOKEN.check(service, "service")
    tau = PATIENCE_S.check(patience)
    lam, d, tau = (x.astype(float) for x in np.broadcast_arrays(lam, d, tau))
    shape = lam.shape
    lam, d, tau = lam.ravel(), d.ravel(), tau.ravel()
    loss, w_all, served = np.zeros(lam.shape), np.zeros(lam.shape), np.zeros(lam.shape)
    inf_tau = np.isinf(tau)
    rho = lam * d
    with np.errstate(divide="ignore", invalid="ignore"):
        pk = np.where(rho < 1.0, lam * d * d / (2.0 * (1.0 - rho)), np.inf)
        series = ~inf_tau & (lam * np.where(inf_tau, 0.0, tau) <= 12.0) & (lam > 0)
    w_all[inf_tau] = served[inf_tau] = pk[inf_tau]
    if series.any():
        la, dd, ta = lam[series], d[series], tau[series]
        g = np.zeros(la.shape)
        big = np.zeros(la.shape)
        # terms k > 120 are below (λτ)^k/k!·e^(λτ) < 1e-60 (λτ ≤ 12); summing all
        # ⌊τ/d⌋ of them took O((τ/d)²) time and overflowed to NaN
        kmax = int(min(np.max(np.floor(ta / dd)), _ERLANG_TERMS))
        fact = 1.0
        for k in range(kmax + 1):
            fact *= max(k, 1)
            on = k * dd <= ta
            u = np.where(on, la * (ta - k * dd), 0.0)
            g += np.where(on, (-u) ** k / fact * np.exp(u), 0.0)
            # Σ_{j≤k} (−u)^j/j!, term by term in the same order as a loop over j
            terms = np.cumprod((-u)[:, None] / np.arange(1.0, k + 1.0), axis=1)
            part = np.cumsum(np.concatenate([np.ones((la.size, 1)), terms], axis=1),
                             axis=1)[:, -1]
            big += np.where(on, (np.exp(u) * part - 1.0) / la, 0.0)
        out = _mg1d_from_g(la, ta, dd, g, big)
        loss[series], w_all[series], served[series] = out[0], out[1], out[2]
    for i in np.flatnonzero(~inf_tau & ~series & (lam > 0) & np.isfinite(lam)):
        out = _solve_mg1d(float(lam[i]), float(tau[i]), ServiceLaw.deterministic(d[i]))
        loss[i], w_all[i], served[i] = out[0], out[1], out[2]
    loss, w_all, served = _saturated(lam, tau, loss, w_all, served)
    return (np.clip(loss, 0.0, 1.0).reshape(shape)[()], w_all.reshape(shape)[()],
            served.reshape(shape)[()])


# ------------------------------------------------------------ impatience (eqs 6-9)

@dataclass(frozen=True)
class Impatience:
    """Deterministic patience τ: loss fraction and mean waits in seconds (arrays)."""

    loss_fraction: np.ndarray      # π(τ), fraction of requests that leave unserved
    mean_wait_all_s: np.ndarray    # E[W_q], lost requests counted with τ (eq 7)
    mean_wait_served_s: np.ndarray  # E[W_qs], served requests only (eq 9)
    zeta2: np.ndarray              # squared coefficient of variation of S (eq 8)
    load: np.ndarray               # offered load ρ = λE[S] (may exceed 1)
    method: str
    error_estimate: np.ndarray | None = None   # exact: change under grid refinement

    # the names before the unit was added: read with a DeprecationWarning
    mean_wait_all = renamed_attribute("mean_wait_all_s")
    mean_wait_served = renamed_attribute("mean_wait_served_s")


def impatience(lam, a, c, dist, n_max, patience, method="exact", *, rtol=1e-6):
    """M/G/1 + deterministic patience with S = a·min(n, n_max) + c (eqs 6-9).

    A request whose wait would exceed ``patience`` τ (seconds) leaves after τ:
    it counts τ in ``mean_wait_all`` and is not served.  ``method="exact"``
    solves the M/G/1+D queue (module docstring; converged to ``rtol``);
    ``method="interpolation"`` is the paper's De Kok-Tijms formula
    π ≈ (1 − ζ²)π^det + ζ²π^exp, E[W_q] likewise (eqs 6-8), with exact
    M/D/1+D and M/M/1+D anchors of the same mean service time; E[W_qs] then
    follows from eq 9.  ``patience=inf`` is the plain M/G/1 queue (``inf``
    means when ρ ≥ 1).  Vectorised over ``lam``, ``a``, ``c``, ``n_max``,
    ``patience`` (the exact method solves one queue per point).  λ·patience
    above ``EXACT_LAM_TAU`` arrivals raises ``ValueError`` (the exact solver's
    grid; the interpolation's M/D/1+D anchor uses it too).
    """
    LIMIT_METHOD.check(method)
    lam, a, c = LAM_PER_S.check(lam), A_S_PER_TOKEN.check(a), C_S.check(c)
    m = check_n_max(n_max)
    tau = PATIENCE_S.check(patience)
    e1, e2 = clipped_token_moments(dist, m)
    lam, a, c, m, tau, e1, e2 = np.broadcast_arrays(lam, a, c, m, tau, np.asarray(e1),
                                                    np.asarray(e2))
    es, es2 = service_moments(a, c, e1, e2)
    zeta2 = (es2 - es * es) / (es * es)
    rho = lam * es
    err = None
    if method == "interpolation":
        lam_inf = np.isinf(lam)
        lam = np.where(lam_inf, 0.0, lam)
        det = md1_deterministic_patience(lam, es, tau)
        exp = mm1_deterministic_patience(lam, es, tau)
        wt = np.minimum(zeta2, 1.0)         # beyond ζ² = 1 the M/M/1+D anchor is used
        loss = np.clip((1.0 - wt) * det[0] + wt * exp[0], 0.0, 1.0)
        with np.errstate(invalid="ignore"):
            w_all = (1.0 - wt) * det[1] + wt * exp[1]
        w_all = np.where(np.isinf(tau), mean_wait(lam, a, c, dist, m), np.clip(w_all, 0.0, tau))
        with np.errstate(invalid="ignore", divide="ignore"):
            served = np.where(np.isinf(tau), w_all, (w_all - tau * loss) / (1.0 - loss))
        served = np.where(np.isfinite(served), served, w_all)
        fin_tau = np.isfinite(tau)
        loss = np.where(lam_inf & fin_tau, 1.0, loss)
        w_all = np.where(lam_inf, np.where(fin_tau, tau, np.inf), w_all)
        served = np.where(lam_inf, w_all, served)
        lam = np.where(lam_inf, np.inf, lam)
    else:
        shape = lam.shape
        flat = [x.ravel() for x in (lam, a, c, m, tau)]
        loss, w_all, served, err = (np.zeros(lam.size) for _ in range(4))
        pk = np.asarray(mean_wait(lam, a, c, dist, m)).ravel()
        laws = {}
        for i in range(lam.size):
            la, ai, ci, mi, ti = (float(x[i]) for x in flat)
            if np.isinf(ti):
                w_all[i] = served[i] = pk[i]
                continue
            if np.isinf(la):                    # everyone finds the server saturated
                loss[i], w_all[i], served[i] = 1.0, ti, ti
                continue
            key = (ai, ci, mi)
            if key not in laws:
                laws[key] = ServiceLaw.clipped(ai, ci, dist, mi)
            loss[i], w_all[i], served[i], _, err[i], _ = _solve_mg1d(la, ti, laws[key], rtol)
        loss, w_all, served, err = (x.reshape(shape) for x in (loss, w_all, served, err))
    return Impatience(loss_fraction=np.asarray(loss)[()],
                      mean_wait_all_s=np.asarray(w_all)[()],
                      mean_wait_served_s=np.asarray(served)[()], zeta2=zeta2[()], load=rho[()],
                      method=method, error_estimate=None if err is None else err[()])
