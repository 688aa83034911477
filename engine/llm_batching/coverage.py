"""Which strategies are stable where, and how each strategy's latency is known there.

One source of truth for a page's caption, tables, charts and best-strategy
answer: per strategy and load, the mean latency (s) and how it is known —
``exact``, ``simulated``, ``unstable`` (at or above the strategy's capacity)
or ``not computed`` with the reason.  Requests per second, seconds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.renamed import renamed_attribute

EXACT, SIMULATED, UNSTABLE, NOT_COMPUTED = "exact", "simulated", "unstable", "not computed"
CHAINS = ("dynamic", "capped")          # strategies with an exact chain (solved up to a share)
NO_EXACT = ("elastic", "continuous")    # strategies known only by simulation


def curve_grid(lam_max: float, limit: float, points: int) -> np.ndarray:
    """``points`` loads up to ``lam_max`` (requests/s) and, when the capacity ``limit``
    is inside the axis, ``points // 2`` more up to just below it: every stable
    stretch of a curve gets points, however short."""
    grid = np.linspace(lam_max / points, lam_max, int(points))
    if 0 < limit < lam_max:
        n = max(points // 2, 2)
        grid = np.union1d(grid, np.linspace(limit / n, 0.995 * limit, n))
    return grid


def chain_loads(coarse, limit: float, share: float, points: int = 6) -> np.ndarray:
    """Loads where an exact chain is solved for a chart: the comparison loads below
    ``share`` of the capacity and ``points`` loads up to that share (at most the axis)."""
    coarse = np.asarray(coarse, float)
    top = min(share * limit, float(coarse[-1]))
    if top <= 0:
        return coarse[:0]
    return np.union1d(coarse[coarse < share * limit], np.linspace(top / points, top, points))


@dataclass(frozen=True, eq=False)
class StrategyMap:
    """Per strategy (in ``order``) and load of ``lam_per_s`` (requests/s): ``latency_s``
    (s, NaN when not known), ``method`` (EXACT, SIMULATED, UNSTABLE, NOT_COMPUTED) and
    ``reason`` (why not computed, or ""); ``limits_per_s``: each strategy's capacity.
    The names without a unit (``lam``, ``limits``, ``latency``) still read the fields,
    with a ``DeprecationWarning``."""

    lam_per_s: np.ndarray
    order: tuple
    labels: dict
    limits_per_s: dict
    latency_s: dict
    method: dict
    reason: dict

    lam = renamed_attribute("lam_per_s")
    limits = renamed_attribute("limits_per_s")
    latency = renamed_attribute("latency_s")

    def stable(self, lam: float) -> list[str]:
        """Strategies whose capacity exceeds ``lam`` (requests/s), in order."""
        return [s for s in self.order if lam < self.limits_per_s[s]]

    def best(self) -> list[str]:
        """Per load, the strategy with the smallest known mean latency ("" if none known)."""
        table = np.vstack([np.where(np.isfinite(self.latency_s[s]), self.latency_s[s], np.inf)
                           for s in self.order])
        idx = np.argmin(table, axis=0)
        return [self.order[i] if np.isfinite(table[i, j]) else "" for j, i in enumerate(idx)]

    def verdicts(self) -> list[str]:
        """Per load, the answer in words: the fastest strategy known, the stable ones not
        computed, or "none stable" only where every strategy is unstable."""
        out = []
        for j, best in enumerate(self.best()):
            missing = [self.labels[s] for s in self.order if self.method[s][j] == NOT_COMPUTED]
            if best:
                out.append(self.labels[best] + (f" (not computed: {', '.join(missing)})"
                                                if missing else ""))
            elif missing:
                out.append("not computed (stable: " + ", ".join(missing) + ")")
            else:
                out.append("none stable")
        return out

    def categories(self) -> list[str]:
        """Per load, one short class for a chart: a strategy label, "not computed" or
        "none stable"."""
        return [self.labels[b] if b else ("none stable" if v == "none stable" else NOT_COMPUTED)
                for b, v in zip(self.best(), self.verdicts())]

    def known_until(self, strategy: str) -> float:
        """Last load (requests/s) where ``strategy``'s latency is known (0: nowhere)."""
        known = np.flatnonzero(np.isfinite(self.latency_s[strategy]))
        return float(self.lam_per_s[known[-1]]) if known.size else 0.0

    def end_note(self, strategy: str) -> str:
        """Why the strategy's curve ends where it does (or is not drawn), in words."""
        cap = self.limits_per_s[strategy]
        reasons = [r for m, r in zip(self.method[strategy], self.reason[strategy])
                   if m == NOT_COMPUTED]
        if reasons:
            return reasons[0]
        if cap <= self.lam_per_s[-1]:
            return f"cannot keep up from {cap:.3g} requests/s (its capacity)"
        return "stable across the axis"


def _reason(strategy, lam, limit, *, share, states, simulate_on, sim_load, converged):
    if strategy in NO_EXACT:
        if not simulate_on:
            return "no exact model: turn on the simulation"
        return (f"simulated only up to {sim_load:.0%} of capacity ({limit:.3g} requests/s)"
                if lam >= sim_load * limit else "not simulated")
    if strategy in CHAINS:
        if lam >= share[strategy] * limit:
            return (f"exact chain solved only up to {share[strategy]:.0%} of capacity "
                    f"({limit:.3g} requests/s)")
        if not converged:
            return f"exact chain needs over {states[strategy]} states here"
    return "not computed"


def strategy_map(lam, order, labels: dict, limits: dict, exact: dict, simulated: dict | None,
                 *, share: dict, states: dict, sim_load: float = 0.95) -> StrategyMap:
    """The map of ``order``'s strategies over loads ``lam`` (requests/s).

    ``exact``: strategy -> mean latency per load (NaN/inf: not solved), for the
    strategies with an exact model; ``simulated``: the same from simulation (None:
    simulation off), preferred where finite.  ``share``: per chain strategy, the
    share of capacity up to which its chain is solved; ``states``: its state ceiling.
    """
    lam = np.asarray(lam, float)
    latency, method, reason = {}, {}, {}
    for s in order:
        ex = np.asarray(exact.get(s, np.full(lam.size, np.nan)), float)
        sim = np.full(lam.size, np.nan) if simulated is None else np.asarray(simulated[s], float)
        lat, meth, why = np.full(lam.size, np.nan), [], []
        for i, x in enumerate(lam):
            if x >= limits[s]:
                meth.append(UNSTABLE)
                why.append("")
            elif np.isfinite(sim[i]):
                lat[i] = sim[i]
                meth.append(SIMULATED)
                why.append("")
            elif np.isfinite(ex[i]):
                lat[i] = ex[i]
                meth.append(EXACT)
                why.append("")
            else:
                meth.append(NOT_COMPUTED)
                why.append(_reason(s, x, limits[s], share=share, states=states,
                                   simulate_on=simulated is not None, sim_load=sim_load,
                                   converged=s not in CHAINS or x >= share[s] * limits[s]))
        latency[s], method[s], reason[s] = lat, meth, why
    return StrategyMap(lam, tuple(order), dict(labels), dict(limits), latency, method, reason)
