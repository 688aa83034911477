"""The planner's checks of typed numbers and lists, each naming the field it checks
(``ValueError``): shared by the plan, its families and its files."""
from __future__ import annotations

import math

import numpy as np

MAX_REPLICAS = 10_000             # the most replicas a plan searches


def number_in(value, name: str, *, low=None, high=None, low_open=False, whole=False,
            allow_inf=False) -> float:
    """``value`` as a float in its range, else ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:                    # a Python int beyond any float
        raise ValueError(f"{name} must be a number within float range, got {value!r}") from None
    if math.isnan(v) or (math.isinf(v) and not (allow_inf and v > 0)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low:g}, got {v:g}")
    if high is not None and v > high:
        raise ValueError(f"{name} must be <= {high:g}, got {v:g}")
    if whole and math.isfinite(v) and v != round(v):
        raise ValueError(f"{name} must be a whole number, got {v:g}")
    return v


def whole_in(value, name: str, low: int, high: int) -> int:
    """``value`` as an exact int in [low, high] (an int, or a float with a whole value
    below 2**53, where floats hold every whole number), else ``ValueError`` naming it."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) \
            and value == round(value) and abs(value) < 2 ** 53:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name} must be a whole number in [{low}, {high}], got {value!r}")
    return int(value)


def values_in(values, name: str, **rule) -> tuple:
    """A non-empty tuple of numbers each within ``rule``, sorted, without repeats."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be a list of numbers, got {values!r}")
    items = [number_in(v, name, **rule) for v in values]
    if not items:
        raise ValueError(f"{name} must hold at least one value")
    out = sorted(set(items))
    return tuple(int(v) for v in out) if rule.get("whole") else tuple(out)


__all__ = ["number_in", "whole_in", "values_in"]
