"""Parsing a load trace (CSV upload or pasted text) for the autoscaling-SLA page.

Accepted, each told from its first line:

* ``time_s,rate_per_s``: one row per interval (its start time in s and the
  measured requests/s), start times strictly increasing and evenly spaced;
* ``timestamp_s``: one arrival time (s) per row, sorted, binned from 0 s into the
  page's interval;
* a request trace read by ``engine.measured.read_trace``: the Azure LLM trace CSV
  (``TIMESTAMP,ContextTokens,GeneratedTokens``) or JSON lines with ``timestamp`` in
  ms (the Mooncake format); arrival times counted from the first request, binned
  into the page's interval.

Pure functions: they return clean arrays or raise ``ValueError`` with a message
fit to show next to the input.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

from engine.measured import read_trace
from engine.sla import trace_rates
from ui.token_counts import duration_text, header_names, is_trace_only_format
from ui.uploads import decode_text, find_column, normalise_columns, numeric_column, read_csv_table

TIME_COLUMNS = ("time_s", "time", "t", "start_s")
RATE_COLUMNS = ("rate_per_s", "rate", "requests_per_s", "rps", "lambda")
MAX_INTERVALS = 10_000
MIN_INTERVAL_S = 1.0        # finer traces make the provisioning window (delay / interval) huge
STAMP_COLUMNS = ("timestamp_s", "timestamp", "arrival_s", "arrival")
FORMATS = {"rates": "rates per interval (time_s, rate_per_s)",
           "timestamps": "a CSV of arrival times (timestamp_s)",
           "azure_llm_csv": "an Azure LLM trace CSV",
           "mooncake_jsonl": "a JSON-lines trace (Mooncake format)",
           "plain_csv": "a CSV trace of arrival times"}


def _stamp_table(text: str) -> pd.DataFrame:
    """A CSV of arrival times as a DataFrame of strings (no row cap: the upload's size
    cap bounds it; a real trace has tens of thousands of requests)."""
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"not a readable CSV table ({str(err).splitlines()[0]})") from None
    return normalise_columns(frame)


def _binned(stamps: np.ndarray, interval_s: float, column: str) -> np.ndarray:
    """Requests/s per interval of sorted arrival times (s) from 0 s; the timestamps may
    span at most ``MAX_INTERVALS`` intervals."""
    span = np.floor(stamps[-1] / interval_s) + 1            # intervals, before binning
    if span > MAX_INTERVALS:
        shown = f"{span:,.0f}" if span < 1e12 else f"{span:.3g}"
        raise ValueError(f"{column}: the timestamps span {shown} intervals "
                         f"of {interval_s:g} s; at most {MAX_INTERVALS:,} (raise the interval)")
    try:
        return trace_rates(stamps, interval_s, kind="timestamps")
    except ValueError as err:
        raise ValueError(f"{column}: {err}") from None


def _from_request_trace(text: str, interval_s: float) -> dict:
    trace = read_trace(text)
    rate = _binned(np.asarray(trace.arrival_s), interval_s, "arrival times")
    return {"rate_per_s": rate, "interval_s": float(interval_s), "kind": "timestamps",
            "format": trace.source_format, "n_requests": trace.n_requests,
            "duration_s": trace.duration_s, "notes": tuple(trace.notes)}


def _from_rates(frame: pd.DataFrame, time_col: str, rate_col: str) -> dict:
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
    return {"rate_per_s": rate, "interval_s": float(step[0]), "kind": "rates",
            "format": "rates", "notes": ()}


def _from_stamps(frame: pd.DataFrame, stamp_col: str, interval_s: float) -> dict:
    stamps = numeric_column(frame, stamp_col, positive=False)
    down = np.flatnonzero(np.diff(stamps) < 0)
    if down.size:
        i = int(down[0]) + 1
        raise ValueError(f"column '{stamp_col}' must be sorted: row {i + 2} "
                         f"({stamps[i]:g} s) is earlier than row {i + 1} ({stamps[i - 1]:g} s)")
    rate = _binned(stamps, interval_s, f"column '{stamp_col}'")
    return {"rate_per_s": rate, "interval_s": float(interval_s), "kind": "timestamps",
            "format": "timestamps", "n_requests": int(stamps.size),
            "duration_s": float(stamps[-1] - stamps[0]), "notes": ()}


def parse_trace_csv(data: bytes | str, interval_s: float) -> dict:
    """{"rate_per_s": array, "interval_s": float, "kind": "rates" | "timestamps",
    "format": a key of ``FORMATS``, "notes": tuple of str}, plus "n_requests" and
    "duration_s" (s, first to last arrival) for arrival times."""
    text = decode_text(data)
    if is_trace_only_format(text):
        return _from_request_trace(text, interval_s)
    names = header_names(text)
    stamp_only = not (names & set(TIME_COLUMNS) and names & set(RATE_COLUMNS)) \
        and names & set(STAMP_COLUMNS)
    frame = _stamp_table(text) if stamp_only else read_csv_table(text)
    time_col, rate_col = find_column(frame, TIME_COLUMNS), find_column(frame, RATE_COLUMNS)
    stamp_col = find_column(frame, STAMP_COLUMNS)
    if len(frame) < 2:
        raise ValueError(f"need at least 2 rows, got {len(frame)}")
    if time_col and rate_col:
        return _from_rates(frame, time_col, rate_col)
    if stamp_col:
        return _from_stamps(frame, stamp_col, interval_s)
    raise ValueError("expected columns time_s,rate_per_s (one row per interval), "
                     "timestamp_s (one row per request), or a request trace (the Azure LLM "
                     "trace CSV: TIMESTAMP, ContextTokens, GeneratedTokens; JSON lines with "
                     f"timestamp in ms); found: {', '.join(frame.columns)}")


def trace_description(parsed: dict) -> str:
    """What was read, in one or two sentences for a caption."""
    n_bins, interval = parsed["rate_per_s"].size, parsed["interval_s"]
    what = f"Read as {FORMATS[parsed['format']]}: "
    if parsed["kind"] == "rates":
        return what + f"{n_bins:,} intervals of {interval:g} s."
    text = (what + f"{parsed['n_requests']:,} requests over {duration_text(parsed['duration_s'])}"
            f", binned into {n_bins:,} intervals of {interval:g} s.")
    return text + (f" Notes: {'; '.join(parsed['notes'])}." if parsed["notes"] else "")
