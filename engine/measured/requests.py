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
"""
from __future__ import annotations

import ast
import dataclasses
import json
import re
import warnings

import numpy as np

from .parsing import (_decode, _first_line, _frozen, _header, _line_of, _quote, _read_csv,
                      _shown_header)
from .results import RequestRecords

TOLERANCE_S = 1e-6          # float noise allowed where one time must not precede another
_TOL_MS = 1e3 * TOLERANCE_S
_ROLES = ("send", "input", "output", "ttft", "e2e")
_FORMATS = ("DistServe .exp (a Python literal list of request dicts on the first line, "
            "then a { key: number } block); vllm bench serve --save-result --save-detailed "
            "JSON (input_lens, output_lens, ttfts, itls); a CSV with a send time (s), prompt "
            "and reply tokens, TTFT (ms) and end-to-end time (ms), units in the names")


# ------------------------------------------------------------ shared: checks and result

def _first(mask: np.ndarray) -> int | None:
    """Index of the first True of ``mask``, or None."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _refuse(mask, where, role: str, what: str, values: np.ndarray) -> None:
    """``ValueError`` at the first row of ``mask``: where it is, what was expected, the value."""
    i = _first(mask)
    if i is not None:
        raise ValueError(f"{where(i, role)}: expected {what}, got {_quote(float(values[i]))}")


def _build(values: dict, where, *, source: str, summary: dict, notes: list,
           send_name: str, has_send: bool = True) -> RequestRecords:
    """The checked, sorted result from per-request floats in file order.

    ``values``: role ("send" s, "input", "output" tokens, "ttft", "e2e" ms) -> floats;
    ``where(i, role)``: 'line L, ...' of row ``i``'s value of ``role``, for a message.
    Each row: finite non-negative times, positive whole token counts, the first token
    not before the send and the end not before the first token (``TOLERANCE_S``)."""
    send, inputs, outputs, ttft, e2e = (np.asarray(values[r], dtype=float) for r in _ROLES)
    if ttft.size == 0:
        raise ValueError("no request in the file; expected one at least")
    with np.errstate(invalid="ignore", over="ignore"):
        if has_send:
            _refuse(~np.isfinite(send) | (send < 0), where, "send",
                    "a finite non-negative send time (s)", send)
        for role, tokens in (("input", inputs), ("output", outputs)):
            _refuse(~np.isfinite(tokens) | (tokens < 1) | (tokens != np.round(tokens))
                    | (tokens > 2.0 ** 53), where, role, "a positive whole number of tokens",
                    tokens)
        _refuse(~np.isfinite(ttft) | (ttft < -_TOL_MS), where, "ttft",
                "a finite time to first token ≥ 0 ms (the first token cannot come before "
                "the send)", ttft)
        _refuse(~np.isfinite(e2e) | (e2e < ttft - _TOL_MS), where, "e2e",
                "a finite end-to-end time no shorter than the time to first token (the "
                "last token cannot come before the first)", e2e)
    ttft = np.maximum(ttft, 0.0)
    e2e = np.maximum(e2e, ttft)
    n = ttft.size
    if has_send:
        order = np.argsort(send, kind="stable")
        if np.any(np.diff(send) < 0):
            notes.append(f"the file is not in send order: requests sorted by {send_name}, "
                         f"each keeping its own numbers")
        with np.errstate(over="ignore", invalid="ignore"):
            arrival = send[order] - send[order][0]
            first_token = arrival + ttft[order] / 1e3
            finish = arrival + e2e[order] / 1e3
        bad = _first(~np.isfinite(finish) | ~np.isfinite(first_token))
        if bad is not None:
            raise ValueError(f"{where(int(order[bad]), 'e2e')}: the request ends too far "
                             f"from the first send (a time that is not finite)")
    else:
        order = np.arange(n)
        arrival = first_token = finish = np.full(n, np.nan)
    inputs, outputs, ttft, e2e = inputs[order], outputs[order], ttft[order], e2e[order]
    tpot = np.full(n, np.nan)
    several = outputs >= 2
    tpot[several] = (e2e[several] - ttft[several]) / (outputs[several] - 1)
    span = f", sent over {arrival[-1]:g} s" if has_send else ""
    notes.insert(0, f"{n} requests: prompts {int(inputs.min())}-{int(inputs.max())} tokens, "
                    f"outputs {int(outputs.min())}-{int(outputs.max())} tokens{span}")
    if not several.all():
        notes.append(f"{int(n - several.sum())} of {n} requests generated one token: their "
                     f"tpot_ms is NaN (no time between tokens)")
    return RequestRecords(
        arrival_s=_frozen(arrival), input_tokens=_frozen(inputs, np.int64),
        output_tokens=_frozen(outputs, np.int64), ttft_ms=_frozen(ttft), e2e_ms=_frozen(e2e),
        tpot_ms=_frozen(tpot), first_token_s=_frozen(first_token), finish_s=_frozen(finish),
        source=source, summary=summary, notes=tuple(notes))


def _number(value) -> float | None:
    """A JSON or literal number as a float (inf when too large), None for anything else
    (bool, str, None, lists)."""
    if type(value) not in (int, float):
        return None
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


# ------------------------------------------------------------ DistServe .exp

_SPACE = re.compile(r"[ \t\r\n\f\v]*")
_TOKEN = re.compile(r"""[ \t\r\n\f\v]*(?:
    (?P<str>'(?:[^'\\\r\n]|\\.)*'|"(?:[^"\\\r\n]|\\.)*")
   |(?P<num>[-+]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][-+]?\d[\d_]*)?)
   |(?P<name>[^\W\d]\w*)
   |(?P<punct>[\[\]{}:,])
   |(?P<end>\Z))""", re.VERBOSE)
_NAMES = {"None": None, "null": None, "True": True, "true": True, "False": False,
          "false": False, "inf": float("inf"), "nan": float("nan")}
_DS_TIMES = ("issue_time", "first_token_time", "complete_time")
_DS_REQUIRED = ("prompt_len", "output_len") + _DS_TIMES
_DS_KEYS = {"send": "issue_time", "input": "prompt_len", "output": "output_len",
            "ttft": "ttft_ms", "e2e": "latency_ms"}
_SUMMARY_ENTRY = re.compile(r"""['"]?([A-Za-z_][\w.\- ]*?)['"]?\s*:\s*(.*?)\s*""")


def _where(text: str, at: int) -> str:
    """'line L, column C' of offset ``at``."""
    return f"line {_line_of(text, at)}, column {at - text.rfind(chr(10), 0, at)}"


class _Lexer:
    """Tokens of a Python literal: (kind, text, offset), kind one of str, num, name,
    punct, end.  Nothing is evaluated: a string token is unquoted by itself alone."""

    def __init__(self, text: str, pos: int):
        self.text, self.pos = text, pos
        self.scanner = _TOKEN.scanner(text, pos)   # each match() goes on from the last
        self.context = ""          # where the parser is ('request index 3, key ...: ')
        self.strings: dict = {}    # a quoted token -> its string (keys repeat)

    def fail(self, at: int, message: str):
        raise ValueError(f"{_where(self.text, at)}: {message}")

    def next(self) -> tuple:
        m = self.scanner.match()
        if m is None:
            at = _SPACE.match(self.text, self.pos).end()
            if self.text[at] in "'\"":
                self.fail(at, f"{self.context}a string not closed on its line (a truncated "
                              f"file?)")
            self.fail(at, f"{self.context}unexpected character {self.text[at]!r} (the "
                          f"request list holds numbers and quoted strings only)")
        self.pos = m.end()
        kind = m.lastgroup
        return kind, m.group(kind), m.start(kind)

    def expect(self, token: tuple, wanted: str, context: str):
        kind, tok, at = token
        got = "the end of the text (a truncated file?)" if kind == "end" else _quote(tok)
        self.fail(at, f"{context}expected {wanted}, got {got}")

    def value(self, token: tuple, context: str):
        """The Python value of a scalar token; ``ValueError`` at it otherwise."""
        kind, tok, at = token
        if kind == "num":
            try:
                if any(c in tok for c in ".eE"):
                    return float(tok)
                return int(tok)
            except ValueError:
                self.fail(at, f"{context}not a readable number: {_quote(tok)}")
        if kind == "str":
            return self.string(token, context)
        if kind == "name":
            if tok in _NAMES:
                return _NAMES[tok]
            follow = _SPACE.match(self.text, self.pos).end()
            call = follow < len(self.text) and self.text[follow] == "("
            self.fail(at, f"{context}{tok!r} is {'a function call' if call else 'a name'}, "
                          f"not a literal value: refused, not evaluated")
        if kind == "punct" and tok in ("[", "{"):
            self.fail(at, f"{context}a nested list or dict is not a request field value")
        self.expect(token, "a value (a number or a quoted string)", context)

    def string(self, token: tuple, context: str) -> str:
        kind, tok, at = token
        if tok in self.strings:
            return self.strings[tok]
        if "\\" not in tok:                    # no escape: the text between the quotes
            self.strings[tok] = tok[1:-1]
            return tok[1:-1]
        try:
            with warnings.catch_warnings():    # an invalid escape ('\d') only warns
                warnings.simplefilter("ignore")
                return ast.literal_eval(tok)   # one quoted string token alone: no code
        except (SyntaxError, ValueError):
            self.fail(at, f"{context}not a readable string: {_quote(tok)}")


def _request_list(text: str, start: int) -> tuple:
    """(requests: one dict key -> (value, offset) each, their offsets, end offset) of
    the literal list starting at ``start``."""
    lex = _Lexer(text, start)
    lex.next()                                             # the '[' detected by the caller
    requests, starts = [], []
    token = lex.next()
    while token[1] != "]" or token[0] != "punct":
        index = len(requests)
        if token[1] != "{" or token[0] != "punct":
            lex.expect(token, "'{' opening a request's dict or ']'",
                       f"request index {index}: ")
        starts.append(token[2])
        fields: dict = {}
        lex.context = context = f"request index {index}: "
        token = lex.next()
        while token[1] != "}" or token[0] != "punct":
            lex.context = context = f"request index {index}: "
            if token[0] != "str":
                lex.expect(token, "a quoted key or '}'", context)
            key = lex.string(token, context)
            lex.context = context = f"request index {index}, key {key!r}: "
            sep = lex.next()
            if sep[1] != ":" or sep[0] != "punct":
                lex.expect(sep, "':'", context)
            value_token = lex.next()
            value = lex.value(value_token, context)
            if key in fields:
                lex.fail(token[2], f"{context}appears twice in one request")
            fields[key] = (value, value_token[2])
            lex.context = context = f"request index {index}, after key {key!r}: "
            token = lex.next()
            if token[1] == "," and token[0] == "punct":
                token = lex.next()
            elif token[1] != "}" or token[0] != "punct":
                lex.expect(token, "',' or '}'", context)
        requests.append(fields)
        lex.context = f"after request index {index}: "
        token = lex.next()
        if token[1] == "," and token[0] == "punct":
            token = lex.next()
        elif token[1] != "]" or token[0] != "punct":
            lex.expect(token, "',' or ']' after a request", f"request index {index}: ")
    return requests, starts, lex.pos


def _summary(text: str, offset: int, notes: list) -> dict:
    """The ``{ key: number }`` block after the request list, as floats."""
    summary: dict = {}
    state = "before"
    line_no = _line_of(text, offset)
    for k, raw in enumerate(text[offset:].split("\n")):
        number, line = line_no + k, raw.strip()
        if not line:
            continue
        if state == "after":
            raise ValueError(f"line {number}: text after the summary block: {_quote(line)}")
        if state == "before":
            if not line.startswith("{"):
                raise ValueError(f"line {number}: expected the summary block '{{ key: number "
                                 f"... }}' after the request list, got {_quote(line)}")
            state, line = "inside", line[1:].strip()
        if line.endswith("}"):
            state, line = "after", line[:-1].strip()
        for entry in filter(None, (e.strip() for e in line.split(","))):
            m = _SUMMARY_ENTRY.fullmatch(entry)
            if m is None:
                raise ValueError(f"line {number}: expected 'key: number' in the summary "
                                 f"block, got {_quote(entry)}")
            key, value = m.group(1).strip(), m.group(2)
            try:
                summary[key] = float(value)
            except ValueError:
                raise ValueError(f"line {number}, key {key!r}: expected a number in the "
                                 f"summary block, got {_quote(value)}") from None
    if state == "inside":
        raise ValueError(f"line {line_no + text[offset:].count(chr(10))}: the summary block "
                         f"is not closed by '}}' (a truncated file?)")
    if state == "before":
        notes.append("no summary block after the request list")
    return summary


def _distserve(text: str, start: int) -> RequestRecords:
    requests, starts, end = _request_list(text, start)
    if not requests:
        raise ValueError(f"{_where(text, start)}: the request list is empty; expected one "
                         f"request at least")
    notes: list = []
    summary = _summary(text, end, notes)

    def at(i: int, key: str) -> str:
        field = requests[i].get(key)
        return (f"{_where(text, field[1] if field else starts[i])}, request index {i}, "
                f"key {key!r}")

    columns = {}
    for key in _DS_REQUIRED + ("ttft_ms", "latency_ms", "tpot_ms"):
        column = np.full(len(requests), np.nan)
        for i, fields in enumerate(requests):
            if key not in fields:
                if key in _DS_REQUIRED:
                    raise ValueError(f"{_where(text, starts[i])}, request index {i}: no key "
                                     f"{key!r}; the request has: {', '.join(fields) or 'no key'}")
                continue
            value = _number(fields[key][0])
            if value is None:
                raise ValueError(f"{at(i, key)}: expected a number, got "
                                 f"{_quote(fields[key][0])}")
            column[i] = value
        columns[key] = column
    issue, first, done = (columns[k] for k in _DS_TIMES)
    with np.errstate(invalid="ignore", over="ignore"):
        for key in _DS_TIMES:
            _refuse(~np.isfinite(columns[key]) | (columns[key] < 0), at, key,
                    "a finite non-negative time (s)", columns[key])
        noise = TOLERANCE_S + 4 * np.spacing(np.maximum(np.abs(issue), np.abs(done)))
        _refuse(first < issue - noise, at, "first_token_time",
                "a first token not before issue_time (s)", first)
        _refuse(done < first - noise, at, "complete_time",
                "a completion not before first_token_time (s)", done)
        for key, later in (("ttft_ms", first), ("latency_ms", done)):
            given, value = columns[key], (later - issue) * 1e3
            i = _first(~np.isnan(given) & ~(np.abs(given - value) <= 1e3 * noise))
            if i is not None:
                stamp = "first_token_time" if key == "ttft_ms" else "complete_time"
                raise ValueError(f"{at(i, key)}: expected ({stamp} − issue_time)·1000 = "
                                 f"{float(value[i])!r} ms (within {TOLERANCE_S:g} s), got "
                                 f"{_quote(float(given[i]))}")
            columns[key] = np.where(np.isnan(given), value, given)
    notes.append("ttft_ms, e2e_ms: the file's ttft_ms, latency_ms (checked against its "
                 "timestamps: (first_token_time − issue_time)·1000, (complete_time − "
                 "issue_time)·1000, the differences filling any missing one); arrival_s: "
                 "issue_time − the first issue_time")
    values = {"send": issue, "input": columns["prompt_len"], "output": columns["output_len"],
              "ttft": columns["ttft_ms"], "e2e": columns["latency_ms"]}
    result = _build(values, lambda i, role: at(i, _DS_KEYS[role]), source="distserve",
                    summary=summary, notes=notes, send_name="issue_time")
    _tpot_note(result, columns, notes)
    count = summary.get("num_requests")
    if count is not None and count != len(requests):
        notes.append(f"the summary says num_requests: {count:g}, the list holds "
                     f"{len(requests)} requests")
    return _with_notes(result, notes)


def _tpot_note(result: RequestRecords, columns: dict, notes: list) -> None:
    """Compare the file's tpot_ms with the derived one (notes only)."""
    file_tpot = columns["tpot_ms"]
    if np.isnan(file_tpot).all():
        return
    order = np.argsort(columns["issue_time"], kind="stable")
    given = file_tpot[order]
    mine = result.tpot_ms
    both = ~np.isnan(given) & ~np.isnan(mine)
    if not both.any():
        return
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(mine[both] - given[both]) / np.maximum(np.abs(given[both]), 1e-300)
    off = int(np.sum(rel > 1e-6))
    if off:
        notes.append(f"the file's tpot_ms differs from (e2e − ttft)/(output − 1) by more than "
                     f"1e-6 (relative) for {off} of {int(both.sum())} requests (largest "
                     f"{float(rel.max()):.3g}): tpot_ms here is the derived one")
    else:
        notes.append(f"the file's tpot_ms equals (e2e − ttft)/(output − 1) within 1e-6 "
                     f"(relative) for all {int(both.sum())} requests of 2 tokens or more")


def _with_notes(result: RequestRecords, notes: list) -> RequestRecords:
    """``result`` with ``notes`` (a list the caller extended after building)."""
    return dataclasses.replace(result, notes=tuple(notes))


# ------------------------------------------------------------ vllm bench --save-detailed

_VLLM_REQUIRED = ("input_lens", "output_lens", "ttfts")
_VLLM_ARRAYS = _VLLM_REQUIRED + ("itls", "latencies", "start_times", "errors",
                                 "generated_texts")
_VLLM_KEYS = {"send": "start_times", "input": "input_lens", "output": "output_lens",
              "ttft": "ttfts"}
_DETAILED = ("a vllm bench serve --save-result --save-detailed JSON object (per-request "
             "input_lens, output_lens, ttfts, itls or latencies; errors, start_times where "
             "saved)")


def _key_line(text: str, key: str) -> int:
    """1-based line where ``"key"`` first appears in the JSON text (1 if not found)."""
    at = text.find(f'"{key}"')
    return _line_of(text, at) if at >= 0 else 1


def _json_object(text: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        hint = " (JSON lines are a trace: read_trace)" if err.msg == "Extra data" else ""
        raise ValueError(f"line {err.lineno}, column {err.colno}: not JSON ({err.msg}){hint}; "
                         f"expected {_DETAILED}") from None
    except (ValueError, RecursionError):
        raise ValueError(f"line 1: not JSON (nested too deeply or unreadable); expected "
                         f"{_DETAILED}") from None
    if not isinstance(data, dict):
        raise ValueError(f"line 1: expected {_DETAILED}, got a JSON {type(data).__name__}")
    return data


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
                             f"(one entry per request), got {_quote(data[key])}")
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
                     f"{_quote(errors[failed[0]])}")
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
                                 f"{_quote(values[i])}")
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
                                 f"times (s), got {_quote(itl)}")
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
