"""The planner's checks of typed numbers and lists, each naming the field it checks
(``ValueError``): shared by the plan, its families and its files.

Every bound is a ``Domain`` of ``engine.core.domains`` and every check goes through
``Domain.check``; these functions add what a typed-in value needs besides its range (a
number, not text or a bool; an exact whole number; a list of them, sorted, without
repeats).  The keyword form of the older signature (``number_in(v, "name", low=0.0)``)
still works: it checks through a ``Domain`` made of those bounds.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.domains import LLM_K1, LLM_K2, LLM_K3, LLM_K4, PLAN_REPLICAS, Domain

MAX_REPLICAS = int(PLAN_REPLICAS.high)     # the most replicas a plan searches
K_DOMAINS = (LLM_K1, LLM_K2, LLM_K3, LLM_K4)   # H(b, l) = k1·b + k2 + k3·b·l + k4·l (eq 18)


def _domain(domain, name, rule: dict) -> tuple[Domain, str]:
    """(the domain, the name to report) of either signature: ``(domain, name=None)`` or
    the older ``(name, low=, high=, low_open=, whole=, allow_inf=)``."""
    if isinstance(domain, Domain):
        if rule:
            raise TypeError(f"bounds come from the domain, not {sorted(rule)}")
        return domain, name or domain.name
    label = domain
    low, high = rule.get("low"), rule.get("high")
    return Domain(label, "", low=-math.inf if low is None else float(low),
                  high=math.inf if high is None else float(high),
                  low_open=bool(rule.get("low_open")), integer=bool(rule.get("whole")),
                  allow_inf=bool(rule.get("allow_inf"))), label


def number_in(value, domain, name: str | None = None, **rule) -> float:
    """``value`` as a float in ``domain`` (``Domain.check``), else ``ValueError`` naming
    ``name`` (the domain's name when None)."""
    dom, name = _domain(domain, name, rule)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:                    # a Python int beyond any float
        raise ValueError(f"{name} must be a number within float range, got {value!r}") from None
    return float(dom.check(v, name))


def whole_in(value, domain, name: str | None = None, *args) -> int:
    """``value`` as an exact int in ``domain`` (an int, or a float with a whole value
    below 2**53, where floats hold every whole number), else ``ValueError`` naming it.
    The older form ``whole_in(value, name, low, high)`` still works."""
    if not isinstance(domain, Domain):                  # (value, name, low, high)
        low, high = (name, *args) if args else (name, None)
        domain, name = Domain(domain, "", low=float(low), high=float(high), integer=True), domain
    name = name or domain.name
    if isinstance(value, (float, np.floating)) and math.isfinite(value) \
            and value == round(value) and abs(value) < 2 ** 53:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    v = int(value)
    if not domain.low <= v <= domain.high or (domain.low_open and v == domain.low) \
            or (domain.high_open and v == domain.high):  # exact, beyond floats' whole numbers
        raise ValueError(f"{name} must be {domain.describe()}, got {v}")
    if abs(v) < 2 ** 53:              # beyond, a float would round: the exact test above
        domain.check(float(v), name)
    return v


def values_in(values, domain, name: str | None = None, **rule) -> tuple:
    """A non-empty tuple of numbers each in ``domain``, sorted, without repeats (ints for
    an integer domain)."""
    dom, name = _domain(domain, name, rule)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be a list of numbers, got {values!r}")
    items = [number_in(v, dom, name) for v in values]
    if not items:
        raise ValueError(f"{name} must hold at least one value")
    out = sorted(set(items))
    return tuple(int(v) for v in out) if dom.integer else tuple(out)


def k_in(values, name: str = "k_s") -> tuple:
    """LLM batch-time coefficients (k1 s/request, k2 s, k3 s/(token·request), k4 s/token)
    as 4 floats, each in its domain (k1 > 0, k2..k4 ≥ 0), else ``ValueError`` naming
    ``name`` and the coefficient."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be 4 numbers (k1, k2, k3, k4), got {values!r}")
    k = tuple(values)
    if len(k) != 4:
        raise ValueError(f"{name} must be 4 numbers (k1 > 0, k2, k3, k4 >= 0), got {values!r}")
    return tuple(number_in(v, dom, f"{name} {dom.name}") for v, dom in zip(k, K_DOMAINS))


__all__ = ["K_DOMAINS", "MAX_REPLICAS", "k_in", "number_in", "values_in", "whole_in"]
