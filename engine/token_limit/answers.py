"""Answers: the queue at one token limit, the optimal limit (eqs 10-11), §V-B paper vs model."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import token_laws
from ..core.renamed import renamed_attribute
from ..core.units import s_from_ms
from ..core.domains import (A_S_PER_TOKEN, C_S, FINITE_N_MAX, LAM_PER_S, LIMIT_METHOD, LOSS_COST,
                            PATIENCE_S, PROFILE_A_S, PROFILE_C_S, THETA, check_n_max)
from .formulas import (clipped_token_moments, largest_stable_limit, mean_utility, mean_wait,
                       utilization)
from .patience import impatience


def _checked(lam, a, c):
    return LAM_PER_S.check(lam), A_S_PER_TOKEN.check(a), C_S.check(c)


@dataclass(frozen=True)
class LimitPoint:
    """The queue at one token limit (``n_max = inf``: no limit), with and without impatience."""

    n_max: float
    load: float                    # ρ = λE[S]
    capacity_per_s: float          # 1/E[S]: the largest stable λ at this limit
    stable_limit: float            # largest stable n_max at this λ (inf: any)
    mean_wait_s: float             # M/G/1 E[W], inf when unstable
    clipped_share: float           # P(n > n_max)
    mean_utility: float            # E[u | n_max]
    loss_fraction: float           # π(τ) with patience τ
    mean_wait_all_s: float         # E[W_q] with patience τ (lost users count τ)
    mean_wait_served_s: float      # E[W_qs] with patience τ

    # the names before the unit was added: read with a DeprecationWarning
    mean_wait = renamed_attribute("mean_wait_s")
    mean_wait_all = renamed_attribute("mean_wait_all_s")
    mean_wait_served = renamed_attribute("mean_wait_served_s")


def limit_point(lam, a, c, dist, n_max, patience, method="exact") -> LimitPoint:
    """Everything at one token limit ``n_max`` (None or inf: no limit); scalar arguments."""
    m = float(check_n_max(n_max))
    lam_, a_, c_ = (float(x) for x in _checked(lam, a, c))
    e1, _ = clipped_token_moments(dist, m)
    imp = impatience(lam, a, c, dist, m, patience, method)
    return LimitPoint(
        n_max=m, load=float(utilization(lam, a, c, dist, m)),
        capacity_per_s=float(1.0 / (a_ * float(e1) + c_)),
        stable_limit=largest_stable_limit(lam_, a_, c_, dist),
        mean_wait_s=float(mean_wait(lam, a, c, dist, m)),
        clipped_share=float(1.0 - token_laws.token_cdf(dist, m)) if np.isfinite(m) else 0.0,
        mean_utility=float(mean_utility(dist, m)),
        loss_fraction=float(imp.loss_fraction), mean_wait_all_s=float(imp.mean_wait_all_s),
        mean_wait_served_s=float(imp.mean_wait_served_s))


def profile_from_bench(result) -> tuple:
    """(a, c) in s of the latency profile S = a·n + c read off a ``vllm bench serve``
    result (``engine.measured.read_vllm_bench``): a = its mean TPOT (time per output
    token after the first), c = its mean TTFT (time to first token), each converted
    from ms; ``ValueError`` naming the one outside its domain (``PROFILE_A_S``,
    ``PROFILE_C_S``: the range a page takes)."""
    a = float(PROFILE_A_S.check(s_from_ms(result.mean_tpot_ms), "mean TPOT (s)"))
    c = float(PROFILE_C_S.check(s_from_ms(result.mean_ttft_ms), "mean TTFT (s)"))
    return a, c


# ------------------------------------------------------------ optimal limit (eqs 10-11)

@dataclass(frozen=True)
class OptimalLimit:
    """The best max-token limit and the objective curve it was picked from."""

    n_max: int                     # the maximiser (smallest one on ties)
    objective: float               # V1 or V2 there
    mean_utility: float            # E[u | n_max]
    mean_wait_s: float             # E[W] (V1) or E[W_q] (V2)
    loss_fraction: float           # π (0 for V1)
    objective_name: str            # "V1" or "V2"
    candidates: np.ndarray         # the n_max values evaluated
    objectives: np.ndarray         # the objective at each of them

    mean_wait = renamed_attribute("mean_wait_s")   # the old name, with a DeprecationWarning


def _v1(lam, a, c, dist, theta, n):
    u = np.asarray(mean_utility(dist, n))
    w = np.asarray(mean_wait(lam, a, c, dist, n))
    with np.errstate(invalid="ignore"):
        v = np.where(np.isfinite(w), theta * u - (1.0 - theta) * w, -np.inf)
    return v, u, w, np.zeros_like(w)


def _v2(lam, a, c, dist, theta, ell, tau, n, method, sign):
    u = np.asarray(mean_utility(dist, n))
    r = impatience(lam, a, c, dist, n, tau, method=method)
    w, loss = np.asarray(r.mean_wait_all_s), np.asarray(r.loss_fraction)
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
    lam, a, c = (float(x) for x in _checked(lam, a, c))
    theta = float(THETA.check(theta))
    if (loss_cost is None) != (patience is None):
        raise ValueError("loss_cost and patience must be given together (V2) or not at all (V1)")
    if candidates is not None:
        cand = np.unique(FINITE_N_MAX.check(candidates, "candidates").ravel())
    if loss_cost is None:
        if candidates is None:
            top = int(min(token_laws.token_quantile(dist, 1.0 - 1e-6), token_laws.MAX_TOKEN_GRID))
            cand = np.arange(1.0, top + 1.0)
        v, u, w, loss = _v1(lam, a, c, dist, theta, cand)
        name = "V1"
    else:
        ell = float(LOSS_COST.check(loss_cost))
        tau = float(PATIENCE_S.check(patience))
        LIMIT_METHOD.check(method)
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
                        mean_utility=float(u[best]), mean_wait_s=float(w[best]),
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
        from ..presets import token_latency_profiles
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
        PaperValue("E[W] at the V1 optimum", "s", 23.0, v1.mean_wait_s,
                   "the paper's 23 s is at its optimum 1600; see the next row"),
        PaperValue("E[W] at n_max = 1600", "s", 23.0, w1600,
                   "a = 0.02202 s/token, c = 0.781 s would give 23 s and −58.93 % "
                   "exactly; Table I's fit is ~5 % steeper"),
        PaperValue("E[W] change, n_max 1600 vs 3000", "%", -58.93,
                   percent_change(w1600, w3000), f"E[W](3000) = {w3000:.2f} s"),
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
                   percent_change(loss1300, loss3000), f"π(3000) = {loss3000:.4f}"),
    )


def percent_change(new: float, old: float) -> float:
    """The change from ``old`` to ``new`` in %, 100·(new/old − 1): −100 when only ``old`` is inf, inf when ``new`` is (an
    unstable queue has no finite change; inf/inf was NaN), 0 when both are 0."""
    if np.isinf(new):
        return float("inf")
    if np.isinf(old):
        return -100.0
    if old == 0:
        return 0.0 if new == 0 else float("inf")
    return 100.0 * (new / old - 1.0)
