"""Curves of the blocking tandem over the load and over K or c, for the pipeline page's
charts: the load grids (fractions of the exact capacity λ* = θA2·1), the exact curve
joined from pieces solved apart, the simulated points' summary, capacity against the
buffer K or the number of units c, and the what-if capacities.  Rates per ms, times in
ms (the engine's unit for the pipeline); the page converts with ``engine.core.units``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import PIPE_C, PIPE_K, PIPE_VARY
from .checks import single_integer
from .exact import TandemMeasures, capacity, solve_phases

EXACT_FRACTIONS = (0.02, 0.98)     # the exact curve: from 2 % to 98 % of λ*
NAIVE_X_MAX = 1.15                 # the naive decomposition runs to 1.15 λ*
K_FAMILY = (1, 2, 4, 8, 16, 32, 64)
C_FAMILY = (1, 2, 4, 8, 16, 32, 64, 128)


def exact_load_chunks_per_ms(capacity_per_ms: float, n_points: int = 25,
                             n_chunks: int = 5) -> tuple[tuple[float, ...], ...]:
    """The exact curve's loads λ = λ*·linspace(0.02, 0.98, ``n_points``) (jobs per ms),
    in ``n_chunks`` consecutive pieces (each solved and memoised apart, so a progress
    bar can move between them)."""
    lam = float(capacity_per_ms) * np.linspace(*EXACT_FRACTIONS, int(n_points))
    return tuple(tuple(float(x) for x in part) for part in np.array_split(lam, int(n_chunks)))


def naive_loads_per_ms(capacity_per_ms: float, x_max: float = NAIVE_X_MAX,
                       n_points: int = 200) -> np.ndarray:
    """The naive decomposition's loads: λ*·linspace(0.005, ``x_max``, ``n_points``)."""
    return float(capacity_per_ms) * np.linspace(0.005, float(x_max), int(n_points))


def loads_at_fractions_per_ms(capacity_per_ms: float, fractions) -> tuple[float, ...]:
    """The loads f·λ* (jobs per ms) at the ``fractions`` f of the exact capacity."""
    return tuple(float(f) * float(capacity_per_ms) for f in fractions)


def joined_tandem(parts) -> TandemMeasures:
    """One ``TandemMeasures`` of the measures of ``parts`` (each a ``TandemMeasures`` on
    consecutive loads), concatenated in order."""
    parts = list(parts)
    return TandemMeasures(*(np.concatenate([np.atleast_1d(getattr(p, f)) for p in parts])
                            for f in TandemMeasures.__dataclass_fields__))


@dataclass(frozen=True)
class TandemCurves:
    """The exact tandem on a grid below the capacity and the naive decomposition on a
    denser grid to ``NAIVE_X_MAX``·λ*; loads per ms."""

    lam_per_ms: np.ndarray         # the exact curve's loads
    exact: TandemMeasures
    lam_dense_per_ms: np.ndarray   # the naive decomposition's loads
    naive: TandemMeasures
    capacity_per_ms: float         # λ* (exact)


def tandem_curves(chunks, parts, naive: TandemMeasures, lam_dense_per_ms,
                  capacity_per_ms: float) -> TandemCurves:
    """``TandemCurves`` from the exact pieces ``parts`` solved at the load ``chunks``
    (``exact_load_chunks_per_ms``) and the naive decomposition at ``lam_dense_per_ms``."""
    lam = np.array([x for chunk in chunks for x in chunk], dtype=float)
    return TandemCurves(lam, joined_tandem(parts), np.asarray(lam_dense_per_ms, dtype=float),
                        naive, float(capacity_per_ms))


@dataclass(frozen=True)
class TandemSimSweep:
    """Simulated runs at several loads (per ms): throughput, mean time in the pipeline
    and the 95 % half-width of that mean (ms)."""

    lam_per_ms: np.ndarray
    throughput_per_ms: np.ndarray
    w_total_ms: np.ndarray
    ci95_ms: np.ndarray


def tandem_sim_sweep(lam_per_ms, results) -> TandemSimSweep:
    """``TandemSimSweep`` of the runs ``results`` (``TandemSimResult``) at ``lam_per_ms``."""
    results = list(results)
    return TandemSimSweep(np.asarray(lam_per_ms, dtype=float),
                          np.array([r.throughput_per_ms for r in results], dtype=float),
                          np.array([r.w_total_ms for r in results], dtype=float),
                          np.array([r.ci95_ms for r in results], dtype=float))


def family_cases(vary: str, K, c, mu_cpu, mu_mem, mu_cu, blocking="before",
                 max_phases: int = 3_000) -> tuple[tuple[int, int], ...]:
    """The (K, c) pairs of a capacity-against-K (``vary="K"``) or -against-c (``"c"``)
    chart: ``K_FAMILY`` (``C_FAMILY``) with the current value, one more and twice it,
    ascending, less those whose exact solve has more than ``max_phases`` phases
    (``solve_phases``; the cost grows as its cube)."""
    PIPE_VARY.check(vary)
    K, c = single_integer(K, PIPE_K), single_integer(c, PIPE_C)
    now, family = (K, K_FAMILY) if vary == "K" else (c, C_FAMILY)
    values = sorted(set(family) | {now, now + 1, 2 * now})
    cases = [(v, c) if vary == "K" else (K, v) for v in values]
    return tuple((k, u) for k, u in cases
                 if solve_phases(mu_cpu, mu_mem, mu_cu, k, u, blocking) <= max_phases)


@dataclass(frozen=True)
class CapacityFamily:
    """The exact capacity λ* (jobs per ms) at several values of K or of c."""

    values: np.ndarray
    capacity_per_ms: np.ndarray


def capacity_family(vary: str, cases, capacities) -> CapacityFamily:
    """``CapacityFamily`` of the ``capacities`` solved at the (K, c) ``cases``
    (``family_cases``), the varied value first."""
    at = 0 if vary == "K" else 1
    return CapacityFamily(np.array([case[at] for case in cases], dtype=float),
                          np.asarray(list(capacities), dtype=float))


def what_if_capacities(mu_cpu, mu_mem, mu_cu, K, c, blocking="before",
                       max_phases: int = 3_000) -> dict:
    """The exact capacity λ* (θA2·1, jobs per ms) with room for one more job (K + 1),
    twice the room (2K), one more unit (c + 1) and twice the units (2c), each unit as
    fast as now; None where the phase space is beyond ``max_phases``."""
    K, c = single_integer(K, PIPE_K), single_integer(c, PIPE_C)
    cases = {"K + 1": (K + 1, c), "2K": (2 * K, c), "c + 1 units": (K, c + 1),
             "2c units": (K, 2 * c)}
    return {name: float(capacity(mu_cpu, mu_mem, mu_cu, k, u, blocking))
            if solve_phases(mu_cpu, mu_mem, mu_cu, k, u, blocking) <= max_phases else None
            for name, (k, u) in cases.items()}
