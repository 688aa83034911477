"""Max-output-token clipping, user impatience and the optimal limit (Yang et al. §III).

Requests arrive as a Poisson process of rate λ (per second) at one LLM server
that serves them one at a time, first come first served.  A request asks for n
output tokens (a law of ``engine.token_laws``: n = max(1, ⌈X⌉)); with the limit
n_max it receives min(n, n_max) and takes S = a·min(n, n_max) + c seconds
(§II-B, the fit of Table I).  Times are in seconds, λ in requests per second,
a in seconds per token.

* ``clipped_token_moments``: E[min(n, n_max)], E[min(n, n_max)²] (eqs 2-3).
* ``mean_wait``: M/G/1 mean queueing delay (Pollaczek-Khinchine, eqs 1, 4, 5).
* ``impatience``: deterministic patience τ, a request whose wait would exceed τ
  leaves after τ (eqs 6-9): ``method="exact"`` solves the M/G/1+D queue,
  ``method="interpolation"`` is the paper's De Kok-Tijms two-moment formula.
* ``optimal_limit``: the n_max maximising V1 (eq 10) or V2 (eq 11).
* ``simulate_token_queue``: the exact sample path, validating all of these.
* ``paper_comparison``: §V-B's numbers beside this model's.
* ``limit_curves``, ``limit_point``, ``largest_stable_limit``, ``objective_v1/v2``:
  everything a dashboard plots over n_max, or answers at one limit.

The exact M/G/1+D solver (a Volterra equation for the virtual waiting time,
product integration on a grid doubled to ``rtol``) and its closed-form anchors
live in ``engine.mg1_patience``; the names are re-exported here.

Errata and remarks on the paper:

* Eq 5 is right (Var S = a²·Var n); eq 2-3 are the moments of min(n, n_max),
  computed here as Σ_{k<m} P(n > k) and Σ_{k<m} (2k+1) P(n > k).
* Eq 11 prints V2 = θE[u] **+** (1 − θ)E[W] − ℓπ, which rewards delay.  The
  sensible objective, implemented here, is V2 = θE[u] − (1 − θ)E[W] − ℓπ, with
  E[W] = E[W_q] (all requests, eq 7); ``printed_sign=True`` gives the printed one.
* Eqs 6-8 (De Kok-Tijms) are an approximation, valid for 0 ≤ ζ² ≤ 1 (the
  paper says so).  Extrapolating beyond ζ² = 1 gives impossible values (a
  lost fraction near 0 with every wait at τ), so there the M/M/1+D anchor is
  used as is; ``zeta2`` reports the true value.  The exact solution shows how
  far the interpolation is off (``impatience(method=...)``).
* §V-B's numbers rest on a fit of S = a·n + c the paper does not publish.
  ``paper_comparison`` computes each with the Table I fit (a = 0.023087
  s/token, c = 0.490 s, R² = 0.991; ρ = 0.82 at λ = 1/40 without limit):

  - the token shares are properties of lognormal(7, 0.7) alone and agree
    (P(n ≤ 1600) = 70.53 %, P(n ≤ 1300) = 59.60 %, paper 70.53 % and 59 %);
  - E[W] at n_max = 1600 is 26.2 s (paper 23 s) and −61.3 % against 3000
    (paper −58.93 %).  a = 0.02202 s/token, c = 0.781 s reproduce both
    numbers exactly, i.e. the paper's fit is ~5 % flatter than Table I's;
  - the V1 optimum (eq 10) is 1252 tokens (1300 on multiples of 100), not
    1600, and with the (a, c) that reproduce the paper's delays it is 1325.
    Eq 10 gives 1600 only with a ≈ 0.020 s/token (c = 0) or λ ≈ 1/50 s⁻¹, so
    the paper's optimum and its delays cannot both come from eq 10 as printed;
  - the loss fraction at n_max = 1300 is 0.128 (exact; 0.125 by the paper's
    interpolation; paper 0.12), −55.8 % against 3000 (paper −56.36 %);
  - the V2 optimum with the sensible sign is 394 tokens (loss 7e-6): at
    θ = 0.95 a second of delay costs 0.05, as much as 5 % of utility, so a
    short limit wins.  The printed sign gives 1500 (exact) or 1600
    (interpolation) on multiples of 100 with loss ≈ 0.17; neither is the
    paper's 1300 with loss 0.12.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import mg1_patience, token_laws
from .mg1_patience import (EXACT_LAM_TAU, _solve_mg1d, _volterra,  # noqa: F401 (re-exported)
                           md1_deterministic_patience, mm1_deterministic_patience)
from .core.domains import (A_S_PER_TOKEN, C_S, LAM_PER_S, LOSS_COST, N_JOBS, PATIENCE_S, THETA,
                     WARMUP, check_n_max)

try:  # numba is optional: it makes the simulator ~100x faster
    import numba
except ImportError:  # pragma: no cover - the plain-Python loops are tested explicitly
    numba = None


# ------------------------------------------------------------ token moments




def _token_sums(dist, top: int):
    """Cumulative sums over k = 0..top−1 of P(n > k) and (2k + 1)·P(n > k)."""
    k = np.arange(top, dtype=float)
    sf = np.ones(top)
    if top > 1:
        sf[1:] = np.clip(dist.sf(k[1:]), 0.0, 1.0)
    s1 = np.concatenate([[0.0], np.cumsum(sf)])
    s2 = np.concatenate([[0.0], np.cumsum((2.0 * k + 1.0) * sf)])
    return s1, s2


def clipped_token_moments(dist, n_max):
    """(E[min(n, n_max)], E[min(n, n_max)²]) of the requested tokens n (eqs 2-3).

    ``n_max=None`` (or inf) means no limit: the sums then stop at the
    (1 − 1e-15)-quantile of an unbounded law.  Vectorised over ``n_max``.
    Uses E[min(n, m)] = Σ_{k<m} P(n > k), E[min(n, m)²] = Σ_{k<m} (2k+1) P(n > k)
    (summation by parts of eqs 2-3).
    """
    m = check_n_max(n_max)
    top = token_laws.grid_top(dist, m)
    s1, s2 = _token_sums(dist, top)
    idx = np.minimum(m, top).astype(np.int64)
    return s1[idx][()], s2[idx][()]


EXACT_SPAN = 200_000               # tokens beyond the largest limit summed term by term


def _inverse_tail(dist, k0: int, law_top: float) -> float:
    """E[1/n; n > k0] = S(k0)/(k0 + 1) − Σ_{k>k0} S(k)/(k(k + 1)), S(k) = P(n > k).

    The sum (weights ~1/k²) is exact up to k0 + ``EXACT_SPAN`` and beyond by
    the trapezoid rule on a geometric grid up to the top of the law (relative
    error of that remote part ~1e-7; it is itself below S(k0 + EXACT_SPAN)/EXACT_SPAN).
    """
    sf = lambda k: np.clip(np.asarray(dist.sf(np.asarray(k, float)), float), 0.0, 1.0)
    s0 = float(sf(float(k0)))
    if s0 == 0.0:
        return 0.0
    j = int(min(law_top, k0 + EXACT_SPAN))
    k = np.arange(k0 + 1, j + 1, dtype=float)
    rest = float(np.sum(sf(k) / (k * (k + 1.0)))) if k.size else 0.0
    if law_top > j:
        x = np.geomspace(float(j), float(law_top), 4001)
        f = sf(x) / (x * (x + 1.0))
        rest += float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(x))) - 0.5 * f[0]
    return max(s0 / (k0 + 1.0) - rest, 0.0)


def mean_utility(dist, n_max):
    """E[u | n_max] = E[min(n, n_max)/n], the mean share of the requested tokens served (eq 10).

    u(n) = 1 for n ≤ n_max and n_max/n above, so E[u] = P(n ≤ n_max) + n_max·E[1/n; n > n_max].
    Exact sums up to the largest finite ``n_max``; beyond it E[1/n; n > K] by
    summation by parts (``_inverse_tail``), so a heavy tail costs no more than a
    light one.  Vectorised over ``n_max``.
    """
    m = check_n_max(n_max)
    law_top = token_laws.law_top(dist)
    finite = m[np.isfinite(m)]
    top = int(min(law_top, max(float(finite.max()) if finite.size else 1.0, 1.0),
                  token_laws.MAX_TOKEN_GRID))
    k = np.arange(1, top + 1, dtype=float)
    pmf = token_laws.token_pmf(dist, k)
    full = np.concatenate([[0.0], np.cumsum(pmf)])                   # Σ_{k≤m} p_k
    part = np.concatenate([[0.0], np.cumsum(pmf / k)])               # Σ_{k≤m} p_k/k
    tail = _inverse_tail(dist, top, law_top)                          # Σ_{k>top} p_k/k
    idx = np.minimum(np.where(np.isfinite(m), m, top), top).astype(np.int64)
    with np.errstate(invalid="ignore"):
        u = full[idx] + np.where(np.isfinite(m), m, 0.0) * (part[-1] - part[idx] + tail)
    return np.where(m >= law_top, 1.0, np.clip(u, 0.0, 1.0))[()]


def _service_moments(a, c, e1, e2):
    """E[S], E[S²] of S = a·min(n, n_max) + c (eqs 4-5)."""
    es = a * e1 + c
    return es, es * es + a * a * np.maximum(e2 - e1 * e1, 0.0)


def _check_rates(lam, a, c):
    return LAM_PER_S.check(lam), A_S_PER_TOKEN.check(a), C_S.check(c)


def mean_wait(lam, a, c, dist, n_max):
    """M/G/1 FCFS mean queueing delay E[W] = λE[S²]/(2(1 − ρ)) in seconds (eqs 1, 4, 5).

    S = a·min(n, n_max) + c, ρ = λE[S]; ``inf`` when ρ ≥ 1.  Vectorised over
    ``lam``, ``a``, ``c`` and ``n_max`` (None or inf: no limit).
    """
    lam, a, c = _check_rates(lam, a, c)
    e1, e2 = clipped_token_moments(dist, n_max)
    es, es2 = _service_moments(a, c, np.asarray(e1), np.asarray(e2))
    rho = lam * es
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        w = lam * es2 / (2.0 * (1.0 - rho))
        # λ < 1/E[S] too: (1/E[S])·E[S] can round below 1, and λ = 1/E[S] is unstable
        stable = (rho < 1.0) & (lam < 1.0 / es) & np.isfinite(lam)
    return np.where(stable, np.where(lam > 0, w, 0.0), np.inf)[()]


def utilization(lam, a, c, dist, n_max):
    """Offered load ρ = λE[S] (eq 1's ρ = λ/μ); the server is unstable for ρ ≥ 1."""
    lam, a, c = _check_rates(lam, a, c)
    e1, _ = clipped_token_moments(dist, n_max)
    return (lam * (a * np.asarray(e1) + c))[()]


# ------------------------------------------------------------ M/G/1 + D, exact

@dataclass(frozen=True)
class ServiceLaw(mg1_patience.ServiceLaw):
    """A service-time law given by its atoms (seconds) and their probabilities,
    and the clipped token law's: S = a·min(n, n_max) + c."""

    @classmethod
    def clipped(cls, a: float, c: float, dist, n_max: float) -> "ServiceLaw":
        """S = a·min(n, n_max) + c (the law's tail beyond its grid goes to the top atom)."""
        top = token_laws.grid_top(dist, np.asarray(n_max))
        k = np.arange(1, top + 1, dtype=float)
        p = token_laws.token_pmf(dist, k)
        p[-1] += max(0.0, 1.0 - p.sum())
        keep = p > 0
        return cls(a * k[keep] + c, p[keep] / p[keep].sum())



# ------------------------------------------------------------ impatience (eqs 6-9)

@dataclass(frozen=True)
class Impatience:
    """Deterministic patience τ: loss fraction and mean waits in seconds (arrays)."""

    loss_fraction: np.ndarray      # π(τ), fraction of requests that leave unserved
    mean_wait_all: np.ndarray      # E[W_q], lost requests counted with τ (eq 7)
    mean_wait_served: np.ndarray   # E[W_qs], served requests only (eq 9)
    zeta2: np.ndarray              # squared coefficient of variation of S (eq 8)
    load: np.ndarray               # offered load ρ = λE[S] (may exceed 1)
    method: str
    error_estimate: np.ndarray | None = None   # exact: change under grid refinement


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
    if method not in ("exact", "interpolation"):
        raise ValueError(f"method must be 'exact' or 'interpolation', got {method!r}")
    lam, a, c = _check_rates(lam, a, c)
    m = check_n_max(n_max)
    tau = PATIENCE_S.check(patience)
    e1, e2 = clipped_token_moments(dist, m)
    lam, a, c, m, tau, e1, e2 = np.broadcast_arrays(lam, a, c, m, tau, np.asarray(e1),
                                                    np.asarray(e2))
    es, es2 = _service_moments(a, c, e1, e2)
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
    return Impatience(loss_fraction=np.asarray(loss)[()], mean_wait_all=np.asarray(w_all)[()],
                      mean_wait_served=np.asarray(served)[()], zeta2=zeta2[()], load=rho[()],
                      method=method, error_estimate=None if err is None else err[()])


# ------------------------------------------------------------ simulation

def _sim_loop(gaps, service, tau, wait, served):
    """Workload recursion of the FCFS queue with patience τ (inf: none).

    Request k sees the work V in system; it joins iff V ≤ τ (waits V, adds its
    service), else it leaves after τ.  Fills ``wait`` (τ for a lost request)
    and ``served``; returns the total accepted work.
    """
    v = 0.0
    work = 0.0
    for k in range(gaps.size):
        v = max(0.0, v - gaps[k])
        if v <= tau:
            wait[k] = v
            served[k] = 1.0
            v += service[k]
            work += service[k]
        else:
            wait[k] = tau
            served[k] = 0.0
    return work


_sim_loop_fast = numba.njit(cache=True, nogil=True)(_sim_loop) if numba is not None else _sim_loop


@dataclass(frozen=True)
class TokenQueueSimResult:
    """Summary of one simulated run (after the warm-up), times in seconds."""

    mean_wait_all: float          # E[W_q]: lost requests count τ
    ci95_wait_all: float          # half-width of its 95% CI (batch means)
    mean_wait_served: float       # E[W_qs] (τ when every counted request left)
    ci95_wait_served: float
    loss_fraction: float          # π(τ)
    ci95_loss: float
    mean_service: float           # mean S over all requests (served or not)
    utilization: float            # busy fraction
    n_jobs: int
    ci_reliable: bool = True      # False: run too short for its load, CI too narrow


def simulate_token_queue(lam, a, c, dist, n_max=None, patience=None, n_jobs=200_000, seed=None,
                         *, warmup_jobs=None, backend: str | None = None) -> TokenQueueSimResult:
    """Simulate the clipped M/G/1 queue (with deterministic patience) from empty.

    Poisson arrivals of rate ``lam``; n = max(1, ⌈X⌉), X ~ ``dist``; service
    a·min(n, n_max) + c.  ``patience=None`` (or inf): everyone waits.
    ``warmup_jobs`` (default n_jobs // 10) are left out.  ``seed``: anything
    ``numpy.random.default_rng`` accepts.  ``backend``: "numba" or "numpy".
    """
    from .core.stats import N_GROUPS as _GROUPS, ci95_half_width as _ci_half_width

    lam = float(LAM_PER_S.check(lam))
    if not 0.0 < lam < np.inf:
        raise ValueError(f"lam must be a positive finite rate to simulate, got {lam:g}")
    a, c = float(A_S_PER_TOKEN.check(a)), float(C_S.check(c))
    m = check_n_max(n_max)
    if m.ndim:
        raise ValueError("n_max must be a single value to simulate")
    tau = np.inf if patience is None else PATIENCE_S.check(patience)
    if np.ndim(tau):
        raise ValueError("patience must be a single value to simulate")
    n = int(N_JOBS.check(n_jobs))
    warmup = n // 10 if warmup_jobs is None else int(WARMUP.check(warmup_jobs))
    warmup = min(warmup, n - 1)
    loops = {None: _sim_loop_fast, "numba": _sim_loop_fast, "numpy": _sim_loop}
    if backend not in loops:
        raise ValueError(f"backend must be 'numba' or 'numpy', got {backend!r}")
    rng = np.random.default_rng(seed)
    gaps = rng.standard_exponential(n) / lam
    tokens = np.minimum(token_laws.sample_tokens(dist, n, rng), float(m))
    service = a * tokens + c
    wait, served = np.empty(n), np.empty(n)
    loops[backend](gaps, service, float(tau), wait, served)
    counted = n - warmup
    w, s = wait[warmup:], served[warmup:]
    edges = (np.arange(_GROUPS + 1) * counted // _GROUPS)[:-1]
    ci_all, reliable = _ci_half_width(np.add.reduceat(w, edges), counted)
    ci_loss, _ = _ci_half_width(np.add.reduceat(1.0 - s, edges), counted)
    n_served = s.sum()
    if n_served:
        w_served = float(np.dot(w, s) / n_served)
        # the served mean is a ratio: its CI from the batch means of w·1{served} − W̄_s·1{served}
        resid = w * s - w_served * s
        ci_served, _ = _ci_half_width(np.add.reduceat(resid, edges), counted)
    else:       # every counted request left: the served wait's limit as π → 1 is τ
        w_served, ci_served = float(tau), float("inf")
    horizon = gaps[warmup + 1:].sum() if n - warmup > 1 else 0.0
    busy = float(np.dot(service[warmup:], s))
    return TokenQueueSimResult(
        mean_wait_all=float(w.mean()), ci95_wait_all=ci_all,
        mean_wait_served=w_served, ci95_wait_served=float(ci_served * counted / max(n_served, 1.0)),
        loss_fraction=float(1.0 - s.mean()), ci95_loss=ci_loss,
        mean_service=float(service[warmup:].mean()),
        utilization=float(min(1.0, busy / horizon)) if horizon > 0 else 1.0,
        n_jobs=int(counted), ci_reliable=reliable)


# ------------------------------------------------------------ optimal limit (eqs 10-13)

@dataclass(frozen=True)
class OptimalLimit:
    """The best max-token limit and the objective curve it was picked from."""

    n_max: int                     # the maximiser (smallest one on ties)
    objective: float               # V1 or V2 there
    mean_utility: float            # E[u | n_max]
    mean_wait: float               # E[W] (V1) or E[W_q] (V2), seconds
    loss_fraction: float           # π (0 for V1)
    objective_name: str            # "V1" or "V2"
    candidates: np.ndarray         # the n_max values evaluated
    objectives: np.ndarray         # the objective at each of them


def _v1(lam, a, c, dist, theta, n):
    u = np.asarray(mean_utility(dist, n))
    w = np.asarray(mean_wait(lam, a, c, dist, n))
    with np.errstate(invalid="ignore"):
        v = np.where(np.isfinite(w), theta * u - (1.0 - theta) * w, -np.inf)
    return v, u, w, np.zeros_like(w)


def _v2(lam, a, c, dist, theta, ell, tau, n, method, sign):
    u = np.asarray(mean_utility(dist, n))
    r = impatience(lam, a, c, dist, n, tau, method=method)
    w, loss = np.asarray(r.mean_wait_all), np.asarray(r.loss_fraction)
    # an unstable queue without patience (E[W_q] = inf) is infeasible, as in V1,
    # whatever θ (θ = 1 would otherwise give 0·inf = NaN)
    with np.errstate(invalid="ignore"):
        v = np.where(np.isfinite(w), theta * u + sign * (1.0 - theta) * w - ell * loss,
                     -np.inf)
    return v, u, w, loss


def optimal_limit(lam, a, c, dist, theta, loss_cost=None, patience=None, *, method="exact",
                  candidates=None, printed_sign=False) -> OptimalLimit:
    """The n_max maximising V1 (eq 10) or, given ``loss_cost`` ℓ and ``patience`` τ, V2 (eq 11).

    V1 = θE[u|n_max] − (1 − θ)E[W] with the M/G/1 E[W] (``-inf`` where unstable);
    V2 = θE[u|n_max] − (1 − θ)E[W_q] − ℓπ with the impatience model (``method``).
    The paper prints "+ (1 − θ)E[W]" in eq 11, which rewards delay;
    ``printed_sign=True`` evaluates that printed V2 instead.
    ``candidates``: the n_max values to compare (integers ≥ 1).  By default V1 is
    evaluated at every integer up to the law's (1 − 1e-6)-quantile; V2 on a
    33-point grid refined around its best point (± 2 grid steps) down to every integer
    (coarse to fine, up to the (1 − 1e-4)-quantile).  Scalar arguments only.
    """
    lam, a, c = (float(x) for x in _check_rates(lam, a, c))
    theta = float(THETA.check(theta))
    if (loss_cost is None) != (patience is None):
        raise ValueError("loss_cost and patience must be given together (V2) or not at all (V1)")
    if candidates is not None:
        cand = np.unique(check_n_max(candidates).ravel())
        if not np.all(np.isfinite(cand)):
            raise ValueError("candidates must be finite token limits")
    if loss_cost is None:
        if candidates is None:
            top = int(min(token_laws.token_quantile(dist, 1.0 - 1e-6), token_laws.MAX_TOKEN_GRID))
            cand = np.arange(1.0, top + 1.0)
        v, u, w, loss = _v1(lam, a, c, dist, theta, cand)
        name = "V1"
    else:
        ell = float(LOSS_COST.check(loss_cost))
        tau = float(PATIENCE_S.check(patience))
        if method not in ("exact", "interpolation"):
            raise ValueError(f"method must be 'exact' or 'interpolation', got {method!r}")
        sign = 1.0 if printed_sign else -1.0
        name = "V2"
        if candidates is not None:
            v, u, w, loss = _v2(lam, a, c, dist, theta, ell, tau, cand, method, sign)
        else:
            top = float(min(token_laws.token_quantile(dist, 1.0 - 1e-4), 1 << 20))
            seen: dict[float, tuple] = {}
            lo, hi = 1.0, max(top, 2.0)
            while True:
                pts = np.unique(np.round(np.linspace(lo, hi, 33))) if hi - lo > 32 else \
                    np.arange(lo, hi + 1.0)
                new = np.array([p for p in pts if p not in seen])
                if new.size:
                    out = _v2(lam, a, c, dist, theta, ell, tau, new, method, sign)
                    for i, p in enumerate(new):
                        seen[float(p)] = tuple(float(x[i]) for x in out)
                vals = np.array([seen[float(p)][0] for p in pts])
                b = int(np.argmax(vals))
                if hi - lo <= 32:
                    break
                lo, hi = pts[max(b - 2, 0)], pts[min(b + 2, pts.size - 1)]
            cand = np.array(sorted(seen))
            v, u, w, loss = (np.array([seen[p][k] for p in cand]) for k in range(4))
    best = int(np.argmax(v))
    return OptimalLimit(n_max=int(cand[best]), objective=float(v[best]),
                        mean_utility=float(u[best]), mean_wait=float(w[best]),
                        loss_fraction=float(loss[best]), objective_name=name,
                        candidates=cand, objectives=v)


# ------------------------------------------------------------ §V-B, paper vs model

@dataclass(frozen=True)
class PaperValue:
    """One number of §V-B beside the same quantity computed by this model."""

    quantity: str
    unit: str
    paper: float
    model: float
    note: str


def paper_comparison(a=None, c=None, *, method="exact") -> tuple[PaperValue, ...]:
    """§V-B's numbers (Fig 4d and text) beside this model's, for the page to show.

    Setting of §V-B: n from lognormal(7, 0.7); λ = 1/40 s⁻¹, θ = 119/120 for V1;
    λ = 1/25 s⁻¹, τ = 60 s, θ = 0.95, ℓ = 4 for V2.  ``a``, ``c`` default to the
    Table I fit S = a·n + c (``presets/llm/a100_llama2_7b_table1.toml``).
    ``method``: the impatience model used for V2 and the loss fractions.
    """
    if a is None or c is None:
        from .presets import token_latency_profiles
        f = token_latency_profiles()["a100_llama2_7b_table1"].fit()
        a = f.a_s_per_token if a is None else a
        c = f.c_s if c is None else c
    a, c = float(A_S_PER_TOKEN.check(a)), float(C_S.check(c))
    dist = token_laws.lognormal(7.0, 0.7)
    lam1, lam2, tau, theta1, theta2, ell = 1 / 40, 1 / 25, 60.0, 119 / 120, 0.95, 4.0
    hundreds = np.arange(100.0, 4001.0, 100.0)
    v1 = optimal_limit(lam1, a, c, dist, theta1)
    v1_100 = optimal_limit(lam1, a, c, dist, theta1, candidates=hundreds)
    w1600, w3000 = (float(x) for x in mean_wait(lam1, a, c, dist, [1600, 3000]))
    v2 = optimal_limit(lam2, a, c, dist, theta2, ell, tau, method=method)
    v2_printed = optimal_limit(lam2, a, c, dist, theta2, ell, tau, method=method,
                               candidates=hundreds, printed_sign=True)
    loss1300, loss3000 = (float(x) for x in
                          impatience(lam2, a, c, dist, [1300, 3000], tau, method).loss_fraction)
    fit = f"S = {a:.5f}·n + {c:.3f} s"
    return (
        PaperValue("optimal n_max, V1 (λ = 1/40, θ = 119/120)", "tokens", 1600, v1.n_max,
                   f"every integer searched, {fit}; on multiples of 100 the optimum is "
                   f"{v1_100.n_max}. Eq 10 puts it at 1600 only for a ≈ 0.020 s/token "
                   "(c = 0) or λ ≈ 1/50 s⁻¹: not with the delays the paper reports"),
        PaperValue("E[W] at the V1 optimum", "s", 23.0, v1.mean_wait,
                   "the paper's 23 s is at its optimum 1600; see the next row"),
        PaperValue("E[W] at n_max = 1600", "s", 23.0, w1600,
                   "a = 0.02202 s/token, c = 0.781 s would give 23 s and −58.93 % "
                   "exactly; Table I's fit is ~5 % steeper"),
        PaperValue("E[W] change, n_max 1600 vs 3000", "%", -58.93,
                   _change(w1600, w3000), f"E[W](3000) = {w3000:.2f} s"),
        PaperValue("requests asking ≤ 1600 tokens", "%", 70.53,
                   100.0 * float(token_laws.token_cdf(dist, 1600)),
                   "a property of lognormal(7, 0.7) alone"),
        PaperValue("requests asking ≤ 1300 tokens", "%", 59.0,
                   100.0 * float(token_laws.token_cdf(dist, 1300)),
                   "a property of lognormal(7, 0.7) alone"),
        PaperValue("optimal n_max, V2 (λ = 1/25, τ = 60 s, θ = 0.95, ℓ = 4)", "tokens", 1300,
                   v2.n_max, f"V2 with −(1 − θ)E[W_q] ({method}): delay costs 0.05 per s, "
                   f"so a short limit wins (loss {v2.loss_fraction:.2g})"),
        PaperValue("optimal n_max, V2 as printed (+(1 − θ)E[W])", "tokens", 1300,
                   v2_printed.n_max,
                   f"multiples of 100; loss there {v2_printed.loss_fraction:.3f}: the printed "
                   "sign rewards delay, so it cannot be the paper's intent"),
        PaperValue("loss fraction at n_max = 1300", "", 0.12, loss1300, f"{method} M/G/1+D"),
        PaperValue("loss fraction change, n_max 1300 vs 3000", "%", -56.36,
                   _change(loss1300, loss3000), f"π(3000) = {loss3000:.4f}"),
    )


def _change(new: float, old: float) -> float:
    """100·(new/old − 1) in %: −100 when only ``old`` is inf, inf when ``new`` is (an
    unstable queue has no finite change; inf/inf was NaN), 0 when both are 0."""
    if np.isinf(new):
        return float("inf")
    if np.isinf(old):
        return -100.0
    if old == 0:
        return 0.0 if new == 0 else float("inf")
    return 100.0 * (new / old - 1.0)


# ------------------------------------------------------------ curves over n_max (plots)

def largest_stable_limit(lam, a, c, dist) -> float:
    """Largest n_max with ρ = λ(a·E[min(n, n_max)] + c) < 1 (no impatience).

    ``inf`` when even no limit is stable, 0 when no limit is: a lone one-token
    answer (a + c seconds) already fills the server.  E[min(n, m)] = Σ_{k<m} P(n > k)
    is summed in doubling chunks until ρ reaches 1, so a heavy tail that
    overloads the server early costs little.  Scalar arguments.
    """
    lam, a, c = (float(x) for x in _check_rates(lam, a, c))
    top = int(min(token_laws.law_top(dist), token_laws.MAX_TOKEN_GRID))
    start, total, chunk = 0, 0.0, 4096
    while start < top:
        k = np.arange(start, min(start + chunk, top), dtype=float)
        sf = np.clip(np.asarray(dist.sf(k), float), 0.0, 1.0)
        if start == 0:
            sf[0] = 1.0                                   # P(n > 0) = 1: n ≥ 1
        rho = lam * (a * (total + np.cumsum(sf)) + c)     # ρ at n_max = k + 1
        if rho[-1] >= 1.0:
            return _settle(lam, a, c, dist, int(k[np.argmax(rho >= 1.0)]))
        total += float(sf.sum())
        start += k.size
        chunk *= 2
    return float("inf")


def _settle(lam, a, c, dist, m: int) -> float:
    """``m`` (the first unstable n_max − 1 by the running sum) moved to where
    ``utilization``, which sums in another order, agrees: ρ(m) < 1 ≤ ρ(m + 1).
    The two sums differ in the last bit, which decides a limit where ρ ≈ 1."""
    while m >= 1 and utilization(lam, a, c, dist, m) >= 1.0:
        m -= 1
    while utilization(lam, a, c, dist, m + 1) < 1.0:
        m += 1
    return float(m)


@dataclass(frozen=True)
class LimitCurves:
    """Everything the plots of §V-B need on a grid of token limits ``n_max``."""

    n_max: np.ndarray
    load: np.ndarray               # ρ(n_max) = λE[S] (may exceed 1)
    stable_limit: float            # largest stable n_max without impatience
    mean_wait: np.ndarray          # M/G/1 E[W] in s (inf where ρ ≥ 1), eq 1
    clipped_share: np.ndarray      # P(n > n_max): answers cut short
    mean_utility: np.ndarray       # E[u | n_max], eq 10
    patience: float                # τ of the impatience curves (s)
    exact: Impatience              # exact M/G/1+D
    interpolation: Impatience      # De Kok-Tijms (eqs 6-8)


def limit_curves(lam, a, c, dist, n_max, patience) -> LimitCurves:
    """Waits, loads, loss fractions and utilities over the token limits ``n_max``.

    Both impatience models are solved (exact and the paper's interpolation), so
    the plots can show how far the interpolation is off.  Scalar ``lam``, ``a``,
    ``c``, ``patience``; ``n_max`` a 1-d grid of finite limits.
    """
    m = check_n_max(n_max).ravel()
    if not np.all(np.isfinite(m)):
        raise ValueError("n_max must be finite token limits for curves")
    return LimitCurves(
        n_max=m, load=np.asarray(utilization(lam, a, c, dist, m)),
        stable_limit=largest_stable_limit(lam, a, c, dist),
        mean_wait=np.asarray(mean_wait(lam, a, c, dist, m)),
        clipped_share=1.0 - np.asarray(token_laws.token_cdf(dist, m)),
        mean_utility=np.asarray(mean_utility(dist, m)), patience=float(patience),
        exact=impatience(lam, a, c, dist, m, patience, "exact"),
        interpolation=impatience(lam, a, c, dist, m, patience, "interpolation"))


def objective_v1(mean_utility, mean_wait, theta):
    """V1 = θE[u] − (1 − θ)E[W] (eq 10); ``-inf`` where E[W] is infinite (unstable)."""
    theta = THETA.check(theta)
    u, w = np.asarray(mean_utility, float), np.asarray(mean_wait, float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(w), theta * u - (1.0 - theta) * w, -np.inf)[()]


def objective_v2(mean_utility, mean_wait_all, loss_fraction, theta, loss_cost,
                 printed_sign=False):
    """V2 = θE[u] − (1 − θ)E[W_q] − ℓπ (eq 11 with the sensible sign; module docstring).

    ``printed_sign=True`` gives the paper's printed + (1 − θ)E[W_q].
    """
    theta, ell = THETA.check(theta), LOSS_COST.check(loss_cost)
    sign = 1.0 if printed_sign else -1.0
    return (theta * np.asarray(mean_utility, float)
            + sign * (1.0 - theta) * np.asarray(mean_wait_all, float)
            - ell * np.asarray(loss_fraction, float))[()]


@dataclass(frozen=True)
class LimitPoint:
    """The queue at one token limit (``n_max = inf``: no limit), with and without impatience."""

    n_max: float
    load: float                    # ρ = λE[S]
    capacity_per_s: float          # 1/E[S]: the largest stable λ at this limit
    stable_limit: float            # largest stable n_max at this λ (inf: any)
    mean_wait: float               # M/G/1 E[W] (s), inf when unstable
    clipped_share: float           # P(n > n_max)
    mean_utility: float            # E[u | n_max]
    loss_fraction: float           # π(τ) with patience τ
    mean_wait_all: float           # E[W_q] with patience τ (lost users count τ)
    mean_wait_served: float        # E[W_qs] with patience τ


def limit_point(lam, a, c, dist, n_max, patience, method="exact") -> LimitPoint:
    """Everything at one token limit ``n_max`` (None or inf: no limit); scalar arguments."""
    m = float(check_n_max(n_max))
    lam_, a_, c_ = (float(x) for x in _check_rates(lam, a, c))
    e1, _ = clipped_token_moments(dist, m)
    imp = impatience(lam, a, c, dist, m, patience, method)
    return LimitPoint(
        n_max=m, load=float(utilization(lam, a, c, dist, m)),
        capacity_per_s=float(1.0 / (a_ * float(e1) + c_)),
        stable_limit=largest_stable_limit(lam_, a_, c_, dist),
        mean_wait=float(mean_wait(lam, a, c, dist, m)),
        clipped_share=float(1.0 - token_laws.token_cdf(dist, m)) if np.isfinite(m) else 0.0,
        mean_utility=float(mean_utility(dist, m)),
        loss_fraction=float(imp.loss_fraction), mean_wait_all=float(imp.mean_wait_all),
        mean_wait_served=float(imp.mean_wait_served))
