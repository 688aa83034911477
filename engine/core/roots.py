"""Vectorised root finding for monotone functions: doubling then bisection.

Every solver of the engine that inverts a CDF or searches for the fewest servers
does it elementwise over whole arrays at once: one call of the function per step
for all cells, cells that are done left unchanged.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

LIMIT = 2.0 ** 40          # searches give up (inf) beyond this


def smallest_reaching(f: Callable, target, shape, tol: float = 1e-9, start: float = 1e-3,
                      limit: float = LIMIT) -> np.ndarray:
    """Smallest x ≥ 0 with f(x) ≥ target, elementwise, to relative ``tol``.

    ``f`` maps an array of ``shape`` to an array of ``shape`` and does not decrease
    in x (a CDF).  Doubles from ``start`` until f reaches the target, then bisects;
    ``inf`` where f stays below the target up to ``limit``.
    """
    lo = np.zeros(shape)
    hi = np.full(shape, float(start))
    while True:
        short = f(hi) < target
        if not short.any() or np.all(hi[short] > limit):
            break
        lo, hi = np.where(short, hi, lo), np.where(short, 2.0 * hi, hi)
    reach = f(hi) >= target
    hi = np.where(reach, hi, lo)
    while np.any(hi - lo > tol * np.maximum(hi, 1e-6)):
        mid = 0.5 * (lo + hi)
        good = f(mid) >= target
        lo, hi = np.where(good, lo, mid), np.where(good, mid, hi)
    return np.where(reach, hi, np.inf)


def smallest_integer(ok: Callable, lo, feasible, limit: float = LIMIT) -> np.ndarray:
    """Smallest whole n > lo with ok(n) true, elementwise (``lo`` ≥ 0, whole).

    ``ok`` maps an array of candidate n (the shape of ``lo``) to booleans and, once
    true, stays true as n grows.  Doubles from lo + 1, then bisects.  ``inf`` where
    ``feasible`` is false or no n up to ``limit`` is ok.
    """
    lo = np.where(feasible, np.asarray(lo, dtype=float), 0.0)
    hi = lo + 1.0
    pending = np.asarray(feasible, dtype=bool).copy()
    while True:
        grow = pending & ~ok(hi) & (hi < limit)
        if not grow.any():
            break
        lo, hi = np.where(grow, hi, lo), np.where(grow, 2.0 * hi, hi)
    found = pending & ok(hi)
    while True:
        active = found & (hi - lo > 1.0)
        if not active.any():
            break
        mid = np.where(active, np.floor((lo + hi) / 2.0), hi)
        good = ok(mid)
        hi, lo = np.where(active & good, mid, hi), np.where(active & ~good, mid, lo)
    return np.where(found, hi, np.inf)


def largest_satisfying(ok: Callable, lo, hi, rtol: float = 1e-12,
                       max_steps: int = 200) -> np.ndarray:
    """Largest x in [lo, hi] with ok(x) true, elementwise, by bisection to relative ``rtol``.

    ``ok`` is true at ``lo``, and once false stays false as x grows.  Returns the
    last point known to satisfy it (``lo`` where nothing above it does).
    """
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    for _ in range(int(max_steps)):
        mid = 0.5 * (lo + hi)
        good = ok(mid)
        lo, hi = np.where(good, mid, lo), np.where(good, hi, mid)
        if np.all(hi - lo <= rtol * hi):
            break
    return lo
