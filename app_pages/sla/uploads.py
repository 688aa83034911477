"""Parsing a load trace (CSV upload or pasted text) for the autoscaling-SLA page.

Two shapes are accepted, both with a header row:

* ``time_s,rate_per_s``: one row per interval (its start time in s and the
  measured requests/s), start times strictly increasing and evenly spaced;
* ``timestamp_s``: one arrival time (s) per row, sorted, binned into the
  page's interval.

Pure functions: they return clean arrays or raise ``ValueError`` with a
message fit to show next to the input.
"""
from __future__ import annotations

import numpy as np

from engine.sla import trace_rates
from ui.uploads import find_column, numeric_column, read_csv_table

TIME_COLUMNS = ("time_s", "time", "t", "start_s")
RATE_COLUMNS = ("rate_per_s", "rate", "requests_per_s", "rps", "lambda")
MAX_INTERVALS = 10_000
MIN_INTERVAL_S = 1.0        # finer traces make the provisioning window (delay / interval) huge
STAMP_COLUMNS = ("timestamp_s", "timestamp", "arrival_s", "arrival")


def parse_trace_csv(data: bytes | str, interval_s: float) -> dict:
    """{"rate_per_s": array, "interval_s": float, "kind": "rates" | "timestamps"}."""
    frame = read_csv_table(data)
    time_col, rate_col = find_column(frame, TIME_COLUMNS), find_column(frame, RATE_COLUMNS)
    stamp_col = find_column(frame, STAMP_COLUMNS)
    if len(frame) < 2:
        raise ValueError(f"need at least 2 rows, got {len(frame)}")
    if time_col and rate_col:
        t = numeric_column(frame, time_col, positive=False)
        rate = numeric_column(frame, rate_col, positive=False)
        step = np.diff(t)
        if np.any(step <= 0):
            i = int(np.flatnonzero(step <= 0)[0]) + 1
            raise ValueError(f"column '{time_col}' must be sorted, strictly increasing: row "
                             f"{i + 2} ({t[i]:g} s) does not follow row {i + 1} ({t[i - 1]:g} s)")
        if np.ptp(step) > 1e-6 * step.mean():
            raise ValueError(f"column '{time_col}': intervals must be evenly spaced "
                             f"(found steps from {step.min():g} s to {step.max():g} s)")
        if step[0] < MIN_INTERVAL_S:
            raise ValueError(f"column '{time_col}': intervals of {step[0]:g} s are too short; "
                             f"at least {MIN_INTERVAL_S:g} s (average the rates over longer "
                             "intervals)")
        return {"rate_per_s": rate, "interval_s": float(step[0]), "kind": "rates"}
    if stamp_col:
        stamps = numeric_column(frame, stamp_col, positive=False)
        down = np.flatnonzero(np.diff(stamps) < 0)
        if down.size:
            i = int(down[0]) + 1
            raise ValueError(f"column '{stamp_col}' must be sorted: row {i + 2} "
                             f"({stamps[i]:g} s) is earlier than row {i + 1} ({stamps[i - 1]:g} s)")
        span = np.floor(stamps[-1] / interval_s) + 1            # intervals, before binning
        if span > MAX_INTERVALS:
            shown = f"{span:,.0f}" if span < 1e12 else f"{span:.3g}"
            raise ValueError(f"column '{stamp_col}': the timestamps span {shown} intervals "
                             f"of {interval_s:g} s; at most {MAX_INTERVALS:,} (raise the interval)")
        try:
            rate = trace_rates(stamps, interval_s, kind="timestamps")
        except ValueError as err:
            raise ValueError(f"column '{stamp_col}': {err}") from None
        return {"rate_per_s": rate, "interval_s": float(interval_s), "kind": "timestamps"}
    raise ValueError("expected columns time_s,rate_per_s (one row per interval) or "
                     f"timestamp_s (one row per request); found: {', '.join(frame.columns)}")
