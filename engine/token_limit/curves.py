"""Curves over the token limit n_max for the plots of §V-B, Kingman's approximate wait
under other arrivals, and the token law's summary."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import token_laws
from ..core.domains import FINITE_N_MAX, check_n_max
from ..core.renamed import renamed_attribute
from ..core.two_moment import mean_wait_gg1
from .formulas import (clipped_token_moments, largest_stable_limit, mean_requested_tokens,
                       mean_utility, mean_wait, service_moments, utilization)
from .patience import Impatience, impatience


@dataclass(frozen=True)
class LimitCurves:
    """Everything the plots of §V-B need on a grid of token limits ``n_max``."""

    n_max: np.ndarray
    load: np.ndarray               # ρ(n_max) = λE[S] (may exceed 1)
    stable_limit: float            # largest stable n_max without impatience
    mean_wait_s: np.ndarray        # M/G/1 E[W] (inf where ρ ≥ 1), eq 1
    clipped_share: np.ndarray      # P(n > n_max): answers cut short
    mean_utility: np.ndarray       # E[u | n_max], eq 10
    patience_s: float              # τ of the impatience curves
    exact: Impatience              # exact M/G/1+D
    interpolation: Impatience      # De Kok-Tijms (eqs 6-8)

    # the names before the unit was added: read with a DeprecationWarning
    mean_wait = renamed_attribute("mean_wait_s")
    patience = renamed_attribute("patience_s")


def limit_curves(lam, a, c, dist, n_max, patience) -> LimitCurves:
    """Waits, loads, loss fractions and utilities over the token limits ``n_max``.

    Both impatience models are solved (exact and the paper's interpolation), so
    the plots can show how far the interpolation is off.  Scalar ``lam``, ``a``,
    ``c``, ``patience``; ``n_max`` a 1-d grid of finite limits.
    """
    m = FINITE_N_MAX.check(n_max).ravel()
    return LimitCurves(
        n_max=m, load=np.asarray(utilization(lam, a, c, dist, m)),
        stable_limit=largest_stable_limit(lam, a, c, dist),
        mean_wait_s=np.asarray(mean_wait(lam, a, c, dist, m)),
        clipped_share=1.0 - np.asarray(token_laws.token_cdf(dist, m)),
        mean_utility=np.asarray(mean_utility(dist, m)), patience_s=float(patience),
        exact=impatience(lam, a, c, dist, m, patience, "exact"),
        interpolation=impatience(lam, a, c, dist, m, patience, "interpolation"))


def limit_grid(low_tokens: int, high_tokens: int, n_points: int = 33) -> np.ndarray:
    """About ``n_points`` (at least 2) whole token limits evenly from ``low_tokens`` to
    ``high_tokens`` (both kept; rounded, duplicates dropped), for curves over n_max."""
    low = float(check_n_max(low_tokens))
    high = float(FINITE_N_MAX.check(high_tokens, "high_tokens"))
    if not low <= high:
        raise ValueError(f"high_tokens must be ≥ low_tokens, got {low:g}, {high:g}")
    return np.unique(np.round(np.linspace(low, high, max(int(n_points), 2))))


def approx_mean_wait(lam, a, c, dist, n_max, scv_arrival):
    """Kingman's GI/G/1 approximation of the mean wait (s, no one gives up) at the token
    limits ``n_max``: E[W] ≈ (ca² + cs²)/2 · ρ/(1 − ρ) · E[S] for arrivals of
    inter-arrival SCV ca² = ``scv_arrival`` at ``lam`` per s, with E[S], E[S²] from the
    clipped token moments (eqs 2-5) and cs² = max(E[S²]/E[S]² − 1, 0).  Exact (eq 1,
    Pollaczek–Khinchine) at ca² = 1; inf where ρ ≥ 1 (``core.two_moment.mean_wait_gg1``)."""
    e1, e2 = clipped_token_moments(dist, np.asarray(n_max, dtype=float))
    es, es2 = service_moments(a, c, np.asarray(e1), np.asarray(e2))
    cs2 = np.maximum(es2 / (es * es) - 1.0, 0.0)
    return np.asarray(mean_wait_gg1(lam, es, scv_arrival, cs2), dtype=float)


NO_LIMIT_MAX_TOKENS = 2_000_000    # a law reaching further is not compared with "no limit"


@dataclass(frozen=True)
class TokenLawSummary:
    """What a page shows of a token law: its mean and histogram, in tokens."""

    mean_tokens: float             # E[n] without a limit (``mean_requested_tokens``)
    summable: bool                 # top of the law ≤ ``NO_LIMIT_MAX_TOKENS``: "no limit" computable
    edges: np.ndarray              # histogram bin edges (tokens)
    probs: np.ndarray              # probability of each bin
    k: np.ndarray                  # token counts where the CDF is given
    cdf: np.ndarray                # P(n ≤ k)

    @property
    def bin_centers_tokens(self) -> np.ndarray:
        """The middle of each histogram bin (tokens)."""
        return 0.5 * (self.edges[1:] + self.edges[:-1])

    @property
    def bin_widths_tokens(self) -> np.ndarray:
        """The width of each histogram bin (tokens)."""
        return np.diff(self.edges)


def token_law_summary(dist, n_cdf_points: int = 200,
                      no_limit_max_tokens: float = NO_LIMIT_MAX_TOKENS) -> TokenLawSummary:
    """The mean E[n] (exact), a histogram (``token_laws.binned_pmf``) and the CDF on
    ``n_cdf_points`` counts up to its top; ``summable`` says whether the law's top
    (its (1 − 1e-15)-quantile) is within ``no_limit_max_tokens``."""
    try:
        summable = token_laws.grid_top(dist) <= no_limit_max_tokens
    except ValueError:
        summable = False
    edges, probs = token_laws.binned_pmf(dist)
    k = np.unique(np.round(np.linspace(1.0, edges[-1], int(n_cdf_points))))
    return TokenLawSummary(mean_tokens=mean_requested_tokens(dist), summable=bool(summable),
                           edges=edges, probs=probs, k=k,
                           cdf=np.asarray(token_laws.token_cdf(dist, k), float))
