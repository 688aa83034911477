"""Argument checks shared by the SLA model's modules (delays, probabilities)."""
from __future__ import annotations

import numpy as np

from ..core.domains import NET_DELAY, PROBABILITY


def check_delays(d1, d2, delta) -> tuple:
    """(d1, d2, Δ) as float arrays (s), each ≥ 0; ``ValueError`` naming the bad one."""
    return (NET_DELAY.check(d1, "d1"), NET_DELAY.check(d2, "d2"),
            NET_DELAY.check(delta, "delta"))


def check_probability(p, name: str) -> np.ndarray:
    """``p`` as a float array of probabilities in [0, 1]; ``ValueError`` naming ``name``."""
    return PROBABILITY.check(p, name)
