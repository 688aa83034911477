"""A measured batch profile (throughput, and optionally power, at each batch size) as the
model reads it: checked and sorted arrays, and the batch sizes its fit is drawn at.

The fit itself (τ[b] = αb + τ0 from b/throughput, eqs 25-26; c[b] = βb + c0 from power·τ[b],
eq 17) is ``engine.fit.fit_batch_profile``.

>>> p = sorted_profile([4, 1, 2], [1500.0, 500.0, 900.0])
>>> p["batch_size"].tolist(), p["throughput_per_s"].tolist(), p["power_w"]
([1.0, 2.0, 4.0], [500.0, 900.0, 1500.0], None)
>>> batch_size_grid(4, 5).tolist()
[1.0, 2.0, 4.0, 6.0]
"""
from __future__ import annotations

import numpy as np

from ..core.domains import BATCH_SIZE_B, PRESET_VALUE

__all__ = ["sorted_profile", "batch_size_grid"]


def sorted_profile(batch_size, throughput_per_s, power_w=None) -> dict:
    """{"batch_size", "throughput_per_s", "power_w" (or None)} as float arrays sorted by
    batch size.  ``ValueError`` naming the column: batch sizes must be whole, positive
    and distinct, the columns of one length with at least 2 rows (a line needs two)."""
    b = np.atleast_1d(np.asarray(batch_size, dtype=float))
    if b.ndim != 1 or b.size < 2:
        raise ValueError(f"need at least 2 rows to fit a line, got {b.size}")
    if not np.all(b == np.round(b)):
        raise ValueError("column 'batch_size': batch sizes must be whole numbers")
    b = BATCH_SIZE_B.check(b, "batch_size")
    if np.unique(b).size != b.size:
        raise ValueError("column 'batch_size': each batch size may appear only once")
    cols = {"throughput_per_s": throughput_per_s, "power_w": power_w}
    out = {}
    for name, values in cols.items():
        if values is None:
            continue
        v = PRESET_VALUE.check(np.asarray(values, dtype=float), name)
        if v.shape != b.shape:
            raise ValueError(f"column '{name}' has {v.size} values for {b.size} batch sizes")
        out[name] = v
    order = np.argsort(b)
    return {"batch_size": b[order], "throughput_per_s": out["throughput_per_s"][order],
            "power_w": out["power_w"][order] if "power_w" in out else None}


def batch_size_grid(largest, n_points=120) -> np.ndarray:
    """Whole batch sizes from 1 to 1.5 × ``largest``, about evenly spaced on a log axis
    (the sizes a fitted throughput curve μ[b] = b/(αb + τ0), eq 26, is drawn at)."""
    top = float(BATCH_SIZE_B.check(largest, "largest"))
    return np.unique(np.round(np.geomspace(1.0, top * 1.5, int(n_points))))
