"""The GPU batching page's profile upload: a CSV of batch size, throughput and power."""
from __future__ import annotations

import numpy as np

from ui.uploads import find_column, numeric_column, read_csv_table

PROFILE_COLUMNS = {
    "batch_size": ("batch_size", "batch", "b"),
    "throughput_per_s": ("throughput_per_s", "throughput", "throughput_images_per_s",
                         "images_per_s", "jobs_per_s"),
    "power_w": ("power_w", "power", "board_power_w", "watts"),
}


def parse_profile_csv(data: bytes | str) -> dict:
    """Batch-size profile: columns batch_size, throughput_per_s and optional power_w.

    Returns {"batch_size", "throughput_per_s", "power_w" (or None)} as float arrays
    sorted by batch size.  Raises ``ValueError`` naming the column and row.
    """
    frame = read_csv_table(data)
    cols = {key: find_column(frame, names) for key, names in PROFILE_COLUMNS.items()}
    missing = [k for k in ("batch_size", "throughput_per_s") if cols[k] is None]
    if missing:
        raise ValueError(f"missing column(s) {', '.join(missing)}; found: "
                         f"{', '.join(frame.columns) or 'none'}")
    if len(frame) < 2:
        raise ValueError(f"need at least 2 rows to fit a line, got {len(frame)}")
    out = {key: numeric_column(frame, col, key) for key, col in cols.items() if col is not None}
    b = out["batch_size"]
    if np.any(b != np.round(b)):
        raise ValueError("column 'batch_size': batch sizes must be whole numbers")
    if np.unique(b).size != b.size:
        raise ValueError("column 'batch_size': each batch size may appear only once")
    order = np.argsort(b)
    return {"batch_size": b[order], "throughput_per_s": out["throughput_per_s"][order],
            "power_w": out["power_w"][order] if "power_w" in out else None}
