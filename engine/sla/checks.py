"""Argument checks shared by the SLA model's modules (delays, probabilities)."""
from __future__ import annotations

import numpy as np

from ..core.domains import NET_DELAY


def check_delays(d1, d2, delta) -> tuple:
    """(d1, d2, Δ) as float arrays (s), each ≥ 0; ``ValueError`` naming the bad one."""
    return (NET_DELAY.check(d1, "d1"), NET_DELAY.check(d2, "d2"),
            NET_DELAY.check(delta, "delta"))


def check_probability(p, name: str) -> np.ndarray:
    """``p`` as a float array of probabilities in [0, 1]; ``ValueError`` naming ``name``."""
    p = np.asarray(p, dtype=float)
    if np.isnan(p).any() or np.any((p < 0) | (p > 1)):
        raise ValueError(f"{name} must be a probability in [0, 1]")
    return p
