"""The ``Domain`` declaration: the valid range of one real parameter, checked at one
boundary (``Domain.check``); ``Choice``: the words one parameter may take
(``Choice.check``); and ``check_limit`` for an optional limit."""
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


@dataclass(frozen=True)
class Choice:
    """The values one parameter may take, a fixed set of words (a method, a policy, a
    law's kind).  ``check`` returns the value, or raises ``ValueError`` naming the
    parameter and listing the allowed values, as ``Domain.check`` does for a range.

    >>> Choice("blocking", ("before", "after")).check("after")
    'after'
    >>> Choice("blocking", ("before", "after")).check("later", "mode")
    Traceback (most recent call last):
    ...
    ValueError: mode must be one of 'before', 'after', got 'later'
    """

    name: str
    values: tuple
    description: str = ""

    def describe(self) -> str:
        return "one of " + ", ".join(
            f"{v:g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else repr(v)
            for v in self.values)

    def __contains__(self, value) -> bool:
        if isinstance(value, np.ndarray):
            return False
        try:
            return any(isinstance(value, str) == isinstance(v, str) and bool(value == v)
                       for v in self.values)
        except (TypeError, ValueError):           # an odd type: none of the values
            return False

    def check(self, value, name: str | None = None):
        """Return ``value``, or raise ``ValueError`` naming it (``name`` or the declared
        name) and the allowed values."""
        if value not in self:
            raise ValueError(f"{name or self.name} must be {self.describe()}, got {value!r}")
        return value


def check_limit(domain: Domain, value) -> np.ndarray:
    """An optional limit as a float array where ``inf`` means none (``None`` accepted,
    alone or inside a list), checked against ``domain``."""
    if value is None:
        return np.asarray(np.inf)
    if isinstance(value, (list, tuple)):
        value = [np.inf if v is None else v for v in value]
    return domain.check(value)
