"""Request traces: when each request arrived and its prompt and generated tokens.

Formats: the Azure LLM inference trace CSV (``TIMESTAMP,ContextTokens,GeneratedTokens``,
datetimes with 7 fractional digits), JSON lines with ``timestamp`` in ms and
``input_length``/``output_length`` (the Mooncake trace), and a plain CSV of arrival
times in seconds with optional token columns.  Parsing is vectorised (numpy datetime64
in ns keeps every digit of the Azure timestamps).
"""
from __future__ import annotations

import json
import re

import numpy as np

from .formats import ARRIVAL_NAMES, INPUT_TOKEN_NAMES, OUTPUT_TOKEN_NAMES, _detect, _expected
from .parsing import (_decode, _first_line, _frozen, _header, quote, _read_csv,
                      _shown_header, _Table)
from .results import RequestTrace

_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,9})?", re.ASCII)
_YEARS = (1700, 2200)                  # inside datetime64[ns]'s range (1678-2262)
_MOONCAKE = "JSON lines with timestamp (ms), input_length, output_length"
_KINDS = ("azure_llm_csv", "plain_trace_csv")


def _datetimes_s(table: _Table, j: int) -> np.ndarray:
    """Column ``j`` of 'YYYY-MM-DD hh:mm:ss.fffffff' datetimes as seconds after the
    first row's (ns resolution: no fractional digit is lost)."""
    cells = table.strings(j)
    ok = np.fromiter(map(bool, map(_DATETIME.fullmatch, cells)), dtype=bool, count=len(cells))
    if ok.all():
        years = np.array(cells, dtype="U4").astype(np.int64)
        ok = (years >= _YEARS[0]) & (years <= _YEARS[1])
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise ValueError(f"{table.where(i, j)}: expected a date and time "
                         f"'YYYY-MM-DD hh:mm:ss.fffffff' (years {_YEARS[0]}-{_YEARS[1]}), "
                         f"got {quote(cells[i])}")
    try:
        stamps = np.array(cells, dtype="datetime64[ns]")
    except ValueError:
        i = _first_bad_datetime(cells)
        raise ValueError(f"{table.where(i, j)}: expected a valid date and time, got "
                         f"{quote(cells[i])}") from None
    return (stamps - stamps[0]).astype(np.int64) / 1e9


def _first_bad_datetime(cells: list) -> int:
    """Index of the first cell numpy cannot parse as a datetime."""
    for i, cell in enumerate(cells):
        try:
            np.datetime64(cell, "ns")
        except ValueError:
            return i
    return 0


def _tokens(table: _Table, names) -> np.ndarray | None:
    """A token-count column (non-negative whole numbers) as int64, or None if absent."""
    j = table.index(names, required=False)
    if j is None:
        return None
    return table.numbers(j, minimum="non-negative", whole=True).astype(np.int64)


def _csv_trace(text: str, kind: str) -> tuple:
    """(arrival_s unsorted, input tokens, output tokens, notes) of a CSV trace."""
    table = _read_csv(text)
    if kind == "azure_llm_csv":
        arrival = _datetimes_s(table, table.index("TIMESTAMP"))
        return (arrival, _tokens(table, ("ContextTokens",)), _tokens(table, ("GeneratedTokens",)),
                ["TIMESTAMP parsed to the ns; arrival_s counted from the first request",
                 "input_tokens = ContextTokens (prompt), output_tokens = GeneratedTokens"])
    j = table.index(ARRIVAL_NAMES)
    arrival = table.numbers(j, minimum="non-negative")
    return (arrival, _tokens(table, INPUT_TOKEN_NAMES), _tokens(table, OUTPUT_TOKEN_NAMES),
            [f"arrival_s: the column {table.header[j]} (seconds)"])


def _json_lines(text: str) -> tuple:
    """(records, 1-based line of each) of a JSON-lines text; ``ValueError`` naming the
    first line that is not a JSON object."""
    lines = text.split("\n")
    numbers = [i + 1 for i, line in enumerate(lines) if line.strip()]
    body = [lines[i - 1] for i in numbers]
    try:
        records = json.loads("[" + ",".join(body) + "]")
        good = len(records) == len(body) and all(type(r) is dict for r in records)
    except (ValueError, RecursionError):
        good = False
    if good:
        return records, numbers
    for number, line in zip(numbers, body):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as err:
            raise ValueError(f"line {number}: not a JSON object ({str(err)[:80]}); expected "
                             f"{_MOONCAKE}") from None
        if type(record) is not dict:
            raise ValueError(f"line {number}: expected a JSON object "
                             f"({_MOONCAKE}), got {type(record).__name__}")
    raise ValueError(f"line {numbers[0]}: expected one JSON object per line ({_MOONCAKE})")


def _json_column(records: list, lines: list, key: str, *, required: bool,
                 whole: bool) -> np.ndarray | None:
    """``key`` of every record as floats (finite, non-negative; ``whole`` numbers);
    None when no record has it and not ``required``."""
    values = [r.get(key) for r in records]
    if not required and all(v is None for v in values):
        return None
    numeric = [type(v) in (int, float) for v in values]
    try:
        arr = np.array([v if ok else np.nan for v, ok in zip(values, numeric)], dtype=float)
    except OverflowError:
        arr = np.array([float(v) if ok and abs(v) < 1e308 else np.nan
                        for v, ok in zip(values, numeric)], dtype=float)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(arr) | (arr < 0)
        if whole:
            bad |= (arr != np.round(arr)) | (arr > 2.0 ** 53)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = "a non-negative whole number" if whole else "a non-negative number"
        got = "no such key" if key not in records[i] else quote(values[i])
        raise ValueError(f"line {lines[i]}, key {key!r}: expected {what}, got {got}")
    return arr


def _jsonl_trace(text: str) -> tuple:
    """(arrival_s, input tokens, output tokens, notes) of a Mooncake JSON-lines trace."""
    records, lines = _json_lines(text)
    stamps = _json_column(records, lines, "timestamp", required=True, whole=False)
    tokens = [_json_column(records, lines, k, required=False, whole=True)
              for k in ("input_length", "output_length")]
    return (stamps / 1000.0, *(None if t is None else t.astype(np.int64) for t in tokens),
            ["timestamp in ms converted to s; coarse timestamps kept as they are"])


def read_trace(text) -> RequestTrace:
    """A request trace: arrival times (s, sorted, from 0) and token counts.

    ``text``: the file's text (``str``, or ``bytes`` as UTF-8), never a path: the Azure
    LLM trace CSV, Mooncake-style JSON lines (``timestamp`` in ms, ``input_length``,
    ``output_length``), or a plain CSV with timestamp_s (s) and optional input_tokens,
    output_tokens.  A file not in time order is sorted (tokens kept with their request,
    with a note).  Needs 2 requests at least.  Unreadable input: ``ValueError`` naming
    the line (and column or key).

    >>> t = read_trace("timestamp_s,output_tokens\\n5.0,10\\n5.5,20\\n7.0,30\\n")
    >>> t.arrival_s.tolist(), t.mean_rate_per_s
    ([0.0, 0.5, 2.0], 1.0)
    """
    text = _decode(text)
    number, line = _first_line(text)
    if line.lstrip().startswith("["):
        raise ValueError(f"line {number}: a JSON array; expected {_MOONCAKE} (one JSON "
                         f"object per line), or a CSV: {_expected(_KINDS)}")
    if line.lstrip().startswith("{"):
        arrival, inputs, outputs, notes = _jsonl_trace(text)
        fmt = "mooncake_jsonl"
    else:
        number, header = _header(text)
        kind = _detect(header)
        if kind not in _KINDS:
            raise ValueError(f"line {number}: unknown columns ({_shown_header(header)}); "
                             f"expected one of these formats: {_expected(_KINDS)}; "
                             f"{_MOONCAKE}")
        arrival, inputs, outputs, notes = _csv_trace(text, kind)
        fmt = "azure_llm_csv" if kind == "azure_llm_csv" else "plain_csv"
    if arrival.size < 2:
        raise ValueError(f"expected at least 2 requests, got {arrival.size}")
    order = np.argsort(arrival, kind="stable")
    if np.any(np.diff(arrival) < 0):
        notes.append("the file is not in time order: requests sorted by arrival, tokens kept "
                     "with their request")
    arrival = arrival[order]
    with np.errstate(all="ignore"):
        arrival = arrival - arrival[0]
    if not np.all(np.isfinite(arrival)):
        raise ValueError("arrival times too extreme (their span is not finite)")
    ties = int(np.sum(np.diff(arrival) == 0))
    if ties:
        notes.append(f"{ties} of {arrival.size} requests arrive at the same time as the one "
                     f"before (the file's timestamps are that coarse): kept as they are")
    return RequestTrace(
        arrival_s=_frozen(arrival),
        input_tokens=None if inputs is None else _frozen(inputs[order], np.int64),
        output_tokens=None if outputs is None else _frozen(outputs[order], np.int64),
        source_format=fmt, notes=tuple(notes))
