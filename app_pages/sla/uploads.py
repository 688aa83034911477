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

import pandas as pd

from engine.measured import read_trace
from engine.sla import binned_rates, even_interval_s
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


def _from_request_trace(text: str, interval_s: float) -> dict:
    trace = read_trace(text)
    rate = binned_rates(trace.arrival_s, interval_s, max_intervals=MAX_INTERVALS)
    return {"rate_per_s": rate, "interval_s": float(interval_s), "kind": "timestamps",
            "format": trace.source_format, "n_requests": trace.n_requests,
            "duration_s": trace.duration_s, "notes": tuple(trace.notes)}


def _from_rates(frame: pd.DataFrame, time_col: str, rate_col: str) -> dict:
    t = numeric_column(frame, time_col, positive=False)
    rate = numeric_column(frame, rate_col, positive=False)
    interval = even_interval_s(t, min_interval_s=MIN_INTERVAL_S, name=f"column '{time_col}'",
                               first_row=2)
    return {"rate_per_s": rate, "interval_s": interval, "kind": "rates",
            "format": "rates", "notes": ()}


def _from_stamps(frame: pd.DataFrame, stamp_col: str, interval_s: float) -> dict:
    stamps = numeric_column(frame, stamp_col, positive=False)
    rate = binned_rates(stamps, interval_s, max_intervals=MAX_INTERVALS,
                        name=f"column '{stamp_col}'", first_row=2)
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
