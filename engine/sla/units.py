"""Unit conversions at the SLA model's boundary: the engine works in seconds, pages
show milliseconds and hours."""
from __future__ import annotations

import numpy as np

MS_PER_S = 1000.0
S_PER_HOUR = 3600.0


def s_from_ms(t_ms):
    """A time in ms as seconds (broadcasts)."""
    return (np.asarray(t_ms, dtype=float) / MS_PER_S)[()]


def ms_from_s(t_s):
    """A time in s as milliseconds (broadcasts)."""
    return (np.asarray(t_s, dtype=float) * MS_PER_S)[()]


def hours_from_s(t_s):
    """A time in s as hours (broadcasts)."""
    return (np.asarray(t_s, dtype=float) / S_PER_HOUR)[()]
