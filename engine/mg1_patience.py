"""The M/G/1 queue with deterministic patience (M/G/1+D), solved exactly.

A request whose wait would exceed its patience τ leaves after τ.  Times are in
seconds, λ in requests per second.  ``engine.token_limit`` applies it to LLM
requests whose service time is a·min(n, n_max) + c; the closed forms here
(M/M/1+D, M/D/1+D) are its anchors and its tests.

* ``ServiceLaw``: a service-time law given by atoms and probabilities.
* ``mm1_deterministic_patience``: M/M/1+D in closed form
  (Baccelli, Boyer & Hébuterne 1984).
* ``md1_deterministic_patience``: M/D/1+D by Erlang's series, and the Volterra
  scheme where the series loses accuracy.
* ``EXACT_LAM_TAU``: the largest λτ the exact solver takes.

How the exact M/G/1+D solution works.  The virtual waiting time V (the work
in the system) has an atom P0 = P(V = 0) and a density f on (0, ∞).  Level
crossing: the down-crossing rate of level x (f(x)) equals the up-crossing rate,
and only arrivals that see V ≤ τ join.  For x ≤ τ, integrating once gives a
Volterra equation of the second kind for the CDF W(x) = P(V ≤ x):

    W(x) = P0 + λ ∫_0^x W(y) P(S > x − y) dy,          0 ≤ x ≤ τ.

It is linear in P0: with g the solution for P0 = 1, W = P0·g on [0, τ].
Conservation of work (busy fraction = rate of accepted work, with PASTA)
gives 1 − P0 = λE[S]·(1 − π) and 1 − π = W(τ), hence
P0 = 1/(1 + λE[S]·g(τ)), π = 1 − P0·g(τ) (no stability condition needed),
E[W_q] = E[min(V, τ)] = ∫_0^τ (1 − W) and E[W_qs] = E[V; V ≤ τ]/(1 − π).
S is discrete (atoms a·k + c), so the kernel P(S > t) is a step function:
W is approximated by hat functions on a uniform grid and the kernel is
integrated *exactly* against them (product integration), through the
integrated tails E[min(S, t)] and ∫_0^t E[min(S, s)] ds, both closed sums over
the atoms.  The grid is doubled until π and E[W_q] change by less than
``rtol``; the result carries that change as ``error_estimate``.  Checks
(``tests/test_token_limit.py``): M/M/1+D (Baccelli-Boyer-Hébuterne 1984) and
M/D/1+D (Erlang's M/D/1 series) closed forms, and simulation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core.domains import A_S_PER_TOKEN, LAM_PER_S, PATIENCE_S

try:  # numba is optional: it makes the solver ~100x faster
    import numba
except ImportError:  # pragma: no cover - the plain-Python loop is tested explicitly
    numba = None


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


if numba is not None:
    _forward_fast = numba.njit(cache=True, nogil=True)(_forward)
    BACKEND = "numba"
else:  # pragma: no cover
    def _forward_fast(g, lam, w0, wm, ends):
        denom = 1.0 - lam * w0
        s = 1.0
        for i in range(1, g.size):
            acc = lam * ends[i] * g[0] + lam * np.dot(wm[i - 1:0:-1], g[1:i])
            g[i] = (s + acc) / denom
            if g[i] > 1e250:
                g[:i + 1] *= _RESCALE
                s *= _RESCALE
        return g, s
    BACKEND = "numpy"


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
    loop = _forward if backend == "numpy" else _forward_fast
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

    With ρ = λE[S], δ = 1/E[S] − λ, the virtual wait has density λP0 e^{−δx}
    on (0, τ), so g(x) = 1 + λx·(1 − e^{−δx})/(δx) and
    π = (1 − ρ)ρe^{−δτ}/(1 − ρ²e^{−δτ}).  Vectorised; any ρ ≥ 0.
    """
    lam = LAM_PER_S.check(lam)
    ms = A_S_PER_TOKEN.check(mean_service, "mean_service")
    tau = PATIENCE_S.check(patience)
    lam, ms, tau = np.broadcast_arrays(lam, ms, tau)
    rho = lam * ms
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        z = (1.0 - rho) / ms * tau          # NaN at ρ = 1, τ = inf: the τ = inf branch
        # scaled by s = e^{min(z, 0)} so that heavy overload does not overflow
        neg = z < 0
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
    """M/D/1+D exactly: (π, E[W_q], E[W_qs]) for a deterministic service time d.

    Below τ the virtual wait has the M/D/1 form P(V ≤ x) = P0·g(x) with
    Erlang's series g(x) = Σ_{k ≤ x/d} (−λ(x − kd))^k/k! e^{λ(x − kd)}, whose
    integral is Σ_k (e^{U}Σ_{j≤k}(−U)^j/j! − 1)/λ, U = λ(τ − kd).  The
    alternating series loses accuracy when λτ is large (error ~1e-9 at λτ = 12,
    ~1e-6 at 20); points with λτ > 12 are solved by the Volterra scheme instead,
    up to λτ = ``EXACT_LAM_TAU`` (beyond, ``ValueError``).  At most 120 terms of
    the series are summed: the rest are below 1e-60.
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
