"""The engine's one unit converter: times (ms, s, hours) and rates (per ms, per s).

Models keep the unit their paper uses (the dynamic-batching and pipeline papers work
in milliseconds, the queueing-with-tokens and dispatch models in seconds); every public
name that carries a dimension says its unit (``_ms``, ``_s``, ``_per_s``, ``_per_ms``,
``_tokens``, ``_w``, ``_usd_per_hour``), and a conversion between them is one of these
functions (all broadcast like ufuncs; a scalar in gives a scalar out).

>>> float(s_from_ms(250))
0.25
>>> float(per_s_from_per_ms(0.5))
500.0
"""
from __future__ import annotations

import numpy as np

MS_PER_S = 1000.0
S_PER_HOUR = 3600.0

__all__ = ["MS_PER_S", "S_PER_HOUR", "s_from_ms", "ms_from_s", "hours_from_s", "s_from_hours",
           "per_s_from_per_ms", "per_ms_from_per_s"]


def _float(x) -> np.ndarray:
    return np.asarray(x, dtype=float)


def s_from_ms(t_ms):
    """A time in ms as seconds."""
    return (_float(t_ms) / MS_PER_S)[()]


def ms_from_s(t_s):
    """A time in s as milliseconds."""
    return (_float(t_s) * MS_PER_S)[()]


def hours_from_s(t_s):
    """A time in s as hours."""
    return (_float(t_s) / S_PER_HOUR)[()]


def s_from_hours(t_hours):
    """A time in hours as seconds."""
    return (_float(t_hours) * S_PER_HOUR)[()]


def per_s_from_per_ms(rate_per_ms):
    """A rate per ms as a rate per s (×1000)."""
    return (_float(rate_per_ms) * MS_PER_S)[()]


def per_ms_from_per_s(rate_per_s):
    """A rate per s as a rate per ms (÷1000)."""
    return (_float(rate_per_s) / MS_PER_S)[()]
