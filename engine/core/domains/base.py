"""The ``Domain`` declaration: the valid range of one real parameter, checked at one
boundary (``Domain.check``), and ``check_limit`` for an optional limit."""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np


@dataclass(frozen=True)
class Domain:
    """Valid range of one real parameter.

    ``low``/``high`` bound the domain; ``low_open``/``high_open`` exclude the
    bound itself.  ``allow_inf`` admits +inf (e.g. an arrival rate beyond any
    capacity, which is *unstable*, not invalid).  ``typical`` is the range a
    user or a property test normally explores.
    """

    name: str
    unit: str
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    allow_inf: bool = False
    typical: tuple[float, float] = (0.0, 1.0)
    description: str = ""

    def describe(self) -> str:
        lo = "(" if self.low_open else "["
        hi = ")" if self.high_open or self.high == math.inf else "]"
        kind = "an integer" if self.integer else "a number"
        return f"{kind} in {lo}{self.low:g}, {self.high:g}{hi}"

    def check(self, value, name: str | None = None) -> np.ndarray:
        """Return ``value`` as a float array, or raise ``ValueError`` naming it."""
        name = name or self.name
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}") from None
        if np.isnan(arr).any():
            raise ValueError(f"{name} must be {self.describe()}, got NaN")
        bad = np.zeros(arr.shape, dtype=bool)
        if not self.allow_inf:
            bad |= np.isinf(arr)
        else:
            bad |= arr == -np.inf
        finite = np.isfinite(arr)
        bad |= (arr < self.low) | (arr > self.high)
        if self.low_open:
            bad |= arr == self.low
        if self.high_open:
            bad |= arr == self.high
        if self.integer:
            bad |= finite & (arr != np.round(arr))
        if bad.any():
            example = arr[bad].flat[0] if arr.ndim else float(arr)
            raise ValueError(f"{name} must be {self.describe()}, got {example:g}")
        return arr


def check_limit(domain: Domain, value) -> np.ndarray:
    """An optional limit as a float array where ``inf`` means none (``None`` accepted,
    alone or inside a list), checked against ``domain``."""
    if value is None:
        return np.asarray(np.inf)
    if isinstance(value, (list, tuple)):
        value = [np.inf if v is None else v for v in value]
    return domain.check(value)
