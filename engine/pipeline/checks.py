"""Argument checks shared by the pipeline's solvers, rates and simulator."""
from __future__ import annotations

from ..core.domains import PIPE_BLOCKING

BLOCKING = PIPE_BLOCKING.values


def single_integer(value, domain) -> int:
    """``value`` as one integer in ``domain`` (an ``engine.core.domains.Domain``), or
    ``ValueError`` naming the parameter (an array, a fraction or an out-of-range value)."""
    arr = domain.check(value)
    if arr.ndim:
        raise ValueError(f"{domain.name} must be a single integer, got shape {arr.shape}")
    return int(arr)


def blocking_rule(blocking) -> str:
    """``blocking`` if it is one of ``BLOCKING`` ("before", "after"), else ``ValueError``."""
    return PIPE_BLOCKING.check(blocking)
