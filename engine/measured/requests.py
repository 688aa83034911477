"""Measured serving runs request by request: when each request was sent, its prompt and
reply tokens, its time to first token and its end-to-end time.

Three formats, told apart by the first non-blank character of the text:

* ``[``: DistServe's ``.exp`` file: a Python literal list of dicts (single quotes) with
  each request's ``prompt_len``, ``output_len``, ``issue_time``, ``first_token_time``,
  ``complete_time`` (s, absolute), ``ttft_ms``, ``tpot_ms``, ``latency_ms``, then a
  ``{ ... }`` block of ``key: number`` lines.  The literal is read by a tokenizer that
  knows strings, numbers, None/True/False and ``[ ] { } : ,`` only: nothing is
  evaluated, a name or a call (``__import__('os')``) is refused where it stands.
* ``{``: a ``vllm bench serve --save-result --save-detailed`` JSON object: per-request
  arrays ``input_lens``, ``output_lens``, ``ttfts`` (s), ``itls`` (lists, s), and where
  the version writes them ``latencies`` (s), ``start_times`` (s, the client's clock),
  ``errors`` (a failed request has a non-empty one: dropped, counted in the notes).
* anything else: a CSV with a header naming the send time, prompt and reply tokens,
  TTFT and end-to-end time, each time with its unit in the name (``send time (s)``,
  ``ttft_ms``, ``e2e_ms``, ...).

The DistServe reader is engine/measured/distserve_exp.py; the checks every format
shares and the result they build, engine/measured/request_checks.py.
"""
from __future__ import annotations

import re

import numpy as np

from .distserve_exp import _distserve
from .parsing import (_decode, _first_line, _header, _key_line, quote, _read_csv, _shown_header,
                      read_json_object)
from .request_checks import _ROLES, TOLERANCE_S, _build, _number  # noqa: F401 (TOLERANCE_S)
from .results import RequestRecords

_FORMATS = ("DistServe .exp (a Python literal list of request dicts on the first line, "
            "then a { key: number } block); vllm bench serve --save-result --save-detailed "
            "JSON (input_lens, output_lens, ttfts, itls); a CSV with a send time (s), prompt "
            "and reply tokens, TTFT (ms) and end-to-end time (ms), units in the names")



# ------------------------------------------------------------ vllm bench --save-detailed

_VLLM_REQUIRED = ("input_lens", "output_lens", "ttfts")
_VLLM_ARRAYS = _VLLM_REQUIRED + ("itls", "latencies", "start_times", "errors",
                                 "generated_texts")
_VLLM_KEYS = {"send": "start_times", "input": "input_lens", "output": "output_lens",
              "ttft": "ttfts"}
_DETAILED = ("a vllm bench serve --save-result --save-detailed JSON object (per-request "
             "input_lens, output_lens, ttfts, itls or latencies; errors, start_times where "
             "saved)")


def _json_object(text: str) -> dict:
    return read_json_object(text, _DETAILED, extra_data=" (JSON lines are a trace: read_trace)")


def _vllm_summary(data: dict) -> dict:
    """The file's top-level numbers (``"request_rate": "inf"`` as inf)."""
    out = {k: _number(v) for k, v in data.items() if k not in _VLLM_ARRAYS}
    rate = data.get("request_rate")
    if isinstance(rate, str) and rate.strip().lower() in ("inf", "infinity"):
        out["request_rate"] = float("inf")
    return {k: v for k, v in out.items() if v is not None}


def _vllm_detailed(text: str) -> RequestRecords:
    data = _json_object(text)
    missing = [k for k in _VLLM_REQUIRED if k not in data]
    if missing and not any(k in data for k in _VLLM_ARRAYS) and "completed" in data:
        raise ValueError("line 1: a vllm bench serve --save-result summary without "
                         "per-request arrays (input_lens, output_lens, ttfts, itls): the run "
                         "was saved without --save-detailed; read_vllm_bench reads the summary")
    if missing:
        raise ValueError(f"line 1: no key {missing[0]!r}; expected {_DETAILED}")
    e2e_key = "latencies" if "latencies" in data else "itls"
    if e2e_key not in data:
        raise ValueError("line 1: no key 'itls' nor 'latencies': the end-to-end time of a "
                         "request is unknown; expected " + _DETAILED)
    present = [k for k in (*_VLLM_REQUIRED, e2e_key, "start_times", "errors") if k in data]
    n = None
    for key in present:
        if not isinstance(data[key], list):
            raise ValueError(f"line {_key_line(text, key)}, key {key!r}: expected a list "
                             f"(one entry per request), got {quote(data[key])}")
        if n is None:
            n = len(data[key])
        elif len(data[key]) != n:
            raise ValueError(f"line {_key_line(text, key)}, key {key!r}: {len(data[key])} "
                             f"entries, but 'input_lens' has {n}; expected one per request")
    errors = data.get("errors") or [None] * n
    failed = [i for i, e in enumerate(errors) if e not in (None, "")]
    kept = np.array([i for i in range(n) if errors[i] in (None, "")], dtype=np.int64)
    notes: list = []
    if failed:
        notes.append(f"{len(failed)} of {n} requests failed (a non-empty 'errors' entry): "
                     f"dropped; the first, request index {failed[0]}: "
                     f"{quote(errors[failed[0]])}")
    if kept.size == 0:
        raise ValueError(f"line {_key_line(text, 'errors')}, key 'errors': every one of the "
                         f"{n} requests failed; no request to read")

    def at(i: int, key: str) -> str:
        return f"line {_key_line(text, key)}, key {key!r}, request index {i}"

    def column(key: str) -> np.ndarray:
        values = data[key]
        out = np.empty(kept.size)
        for j, i in enumerate(kept):
            value = _number(values[i])
            if value is None:
                raise ValueError(f"{at(int(i), key)}: expected a number, got "
                                 f"{quote(values[i])}")
            out[j] = value
        return out

    inputs, outputs, ttft_s = column("input_lens"), column("output_lens"), column("ttfts")
    if e2e_key == "latencies":
        e2e_s = column("latencies")
        notes.append("e2e_ms: the file's latencies (s → ms), as vLLM's own TPOT uses")
    else:
        e2e_s = np.empty(kept.size)
        for j, i in enumerate(kept):
            itl = data["itls"][i]
            gaps = [_number(g) for g in itl] if isinstance(itl, list) else [None]
            if any(g is None or not np.isfinite(g) or g < 0 for g in gaps):
                raise ValueError(f"{at(int(i), 'itls')}: expected a list of non-negative "
                                 f"times (s), got {quote(itl)}")
            e2e_s[j] = ttft_s[j] + float(np.sum(gaps))
        notes.append("e2e_ms = ttft + the sum of the request's itls (no latencies saved)")
    has_send = "start_times" in data
    if has_send:
        send = column("start_times")
        notes.append("arrival_s: start_times (the client's clock, s) − the first start time")
    else:
        send = np.full(kept.size, np.nan)
        notes.append("send times not saved (no start_times in the file): arrival_s, "
                     "first_token_s and finish_s are NaN, in the file's order; a replay "
                     "needs them")
    completed = data.get("completed")
    if type(completed) is int and completed != kept.size:
        notes.append(f"the summary says completed: {completed}, {kept.size} requests read")
    values = {"send": send, "input": inputs, "output": outputs, "ttft": ttft_s * 1e3,
              "e2e": e2e_s * 1e3}
    keys = {**_VLLM_KEYS, "e2e": e2e_key}
    return _build(values, lambda j, role: at(int(kept[j]), keys[role]),
                  source="vllm-bench-detailed", summary=_vllm_summary(data), notes=notes,
                  send_name="start_times", has_send=has_send)


# ------------------------------------------------------------ plain CSV

_TIME_BASES = {
    "send": ("arrival", "arrival_time", "send", "send_time", "sent", "issue_time",
             "timestamp", "start_time", "request_time"),
    "ttft": ("ttft", "time_to_first_token"),
    "e2e": ("e2e", "e2el", "e2e_latency", "end_to_end", "end_to_end_latency", "latency",
            "request_latency")}
_UNITS = {"s": "s", "sec": "s", "secs": "s", "seconds": "s",
          "ms": "ms", "msec": "ms", "milliseconds": "ms"}
_TOKEN_NAMES = {
    "input": ("input_tokens", "prompt_tokens", "prompt_len", "prompt_length", "input_len",
              "input_length", "context_tokens", "num_prompt_tokens"),
    "output": ("output_tokens", "reply_tokens", "output_len", "output_length",
               "generated_tokens", "completion_tokens", "num_output_tokens", "reply_len")}
_CSV_WORDS = {"send": "the send time (arrival_s, send_s, issue_time_s, timestamp_s, ...; "
                      "s or ms)",
              "input": "the prompt tokens (input_tokens, prompt_tokens, prompt_len, ...)",
              "output": "the reply tokens (output_tokens, reply_tokens, output_len, ...)",
              "ttft": "the time to first token (ttft_ms or ttft_s)",
              "e2e": "the end-to-end time (e2e_ms, latency_ms, end_to_end_ms, ...; ms or s)"}
_COLUMNS: dict = {}          # loose name -> (role, unit or None)
for _role, _bases in _TIME_BASES.items():
    for _base in _bases:
        _COLUMNS[_base] = (_role, None)
        _COLUMNS.update({f"{_base}_{u}": (_role, unit) for u, unit in _UNITS.items()})
for _role, _names in _TOKEN_NAMES.items():
    _COLUMNS.update({name: (_role, "tokens") for name in _names})


def _loose(name: str) -> str:
    """A header name compared loosely: lower case, every run of other characters than
    letters and digits as one underscore ('TTFT (ms)' -> 'ttft_ms')."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _csv_columns(header: tuple, line: int) -> dict:
    """role -> (column index, unit) of a CSV header; ``ValueError`` naming the line (and
    column) for unknown columns, a time without its unit, a role twice or missing."""
    found: dict = {}
    for j, name in enumerate(header):
        role, unit = _COLUMNS.get(_loose(name), (None, None))
        if role is None:
            continue
        if unit is None:
            raise ValueError(f"line {line}, column {j + 1} ({name}): a time without its "
                             f"unit in the name; name it {_loose(name)}_s or "
                             f"{_loose(name)}_ms")
        if role in found:
            other = header[found[role][0]]
            raise ValueError(f"line {line}, column {j + 1} ({name}): a second column for "
                             f"{_CSV_WORDS[role].split(' (')[0]} besides {other!r}; keep one")
        found[role] = (j, unit)
    if not found:
        raise ValueError(f"line {line}: unknown columns ({_shown_header(header)}); expected "
                         f"one of these formats: {_FORMATS}")
    for role in _ROLES:
        if role not in found:
            raise ValueError(f"line {line}: no column for {_CSV_WORDS[role]}; the header "
                             f"has: {_shown_header(header)}")
    return found


def _csv(text: str) -> RequestRecords:
    line, header = _header(text)
    _csv_columns(header, line)            # the header alone first: unknown columns fail fast
    table = _read_csv(text)
    found = _csv_columns(table.header, table.header_line)
    values = {}
    for role, (j, unit) in found.items():
        if unit == "tokens":
            values[role] = table.numbers(j, minimum="positive", whole=True)
            continue
        cells = table.numbers(j, minimum="non-negative")
        if role == "send":
            values[role] = cells if unit == "s" else cells / 1e3
        else:
            values[role] = cells if unit == "ms" else cells * 1e3
    used = {j for j, _ in found.values()}
    notes = [f"{role_word}: the column {table.header[found[role][0]]!r}" + (
        f" ({found[role][1]})" if found[role][1] != "tokens" else "")
        for role, role_word in (("send", "arrival_s"), ("input", "input_tokens"),
                                ("output", "output_tokens"), ("ttft", "ttft_ms"),
                                ("e2e", "e2e_ms"))]
    ignored = [h for j, h in enumerate(table.header) if j not in used]
    if ignored:
        notes.append(f"columns not read (tpot_ms, first_token_s and finish_s are "
                     f"recomputed): {_shown_header(ignored)}")
    return _build(values, lambda i, role: table.where(i, found[role][0]), source="csv",
                  summary={}, notes=notes, send_name=repr(table.header[found["send"][0]]))


# ------------------------------------------------------------ the reader

def read_request_records(text) -> RequestRecords:
    """A measured serving run request by request, sorted by send time.

    ``text``: the file's text (``str``, or ``bytes`` as UTF-8), never a path: DistServe's
    ``.exp`` (a Python literal list on the first line, read without evaluating
    anything, then a ``{ key: number }`` summary), a ``vllm bench serve --save-result
    --save-detailed`` JSON, or a CSV with a send time, prompt and reply tokens, TTFT and
    end-to-end time (units in the column names).  Each request: finite non-negative
    times, positive whole token counts, the first token not before the send and the
    last not before the first (1e-6 s of float noise allowed).  Unreadable input:
    ``ValueError`` naming the line (and column, key, or request index).

    >>> r = read_request_records("send_s,prompt_tokens,reply_tokens,ttft_ms,e2e_ms\\n"
    ...                          "10.5,100,5,40,120\\n10.0,200,1,50,50\\n")
    >>> r.arrival_s.tolist(), r.input_tokens.tolist(), r.tpot_ms.tolist()
    ([0.0, 0.5], [200, 100], [nan, 20.0])
    >>> r.finish_s.tolist(), r.source
    ([0.05, 0.62], 'csv')
    """
    text = _decode(text)
    _, line = _first_line(text)
    head = line.lstrip()[:1]
    if head == "[":
        return _distserve(text, len(text) - len(text.lstrip()))
    if head == "{":
        return _vllm_detailed(text)
    return _csv(text)
