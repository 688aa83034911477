"""DistServe's ``.exp`` request file: a Python literal list of dicts (single quotes)
with each request's ``prompt_len``, ``output_len``, ``issue_time``,
``first_token_time``, ``complete_time`` (s, absolute), ``ttft_ms``, ``tpot_ms``,
``latency_ms``, then a ``{ ... }`` block of ``key: number`` lines.  The literal is read
by a tokenizer that knows strings, numbers, None/True/False and ``[ ] { } : ,`` only:
nothing is evaluated, a name or a call (``__import__('os')``) is refused where it
stands.  Called by ``read_request_records`` (engine/measured/requests.py)."""
from __future__ import annotations

import ast
import re
import warnings

import numpy as np

from .parsing import line_of, quote
from .request_checks import TOLERANCE_S, _build, _first, _number, _refuse, _with_notes
from .results import RequestRecords

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
    return f"line {line_of(text, at)}, column {at - text.rfind(chr(10), 0, at)}"


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
        got = "the end of the text (a truncated file?)" if kind == "end" else quote(tok)
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
                self.fail(at, f"{context}not a readable number: {quote(tok)}")
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
            self.fail(at, f"{context}not a readable string: {quote(tok)}")


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
    line_no = line_of(text, offset)
    for k, raw in enumerate(text[offset:].split("\n")):
        number, line = line_no + k, raw.strip()
        if not line:
            continue
        if state == "after":
            raise ValueError(f"line {number}: text after the summary block: {quote(line)}")
        if state == "before":
            if not line.startswith("{"):
                raise ValueError(f"line {number}: expected the summary block '{{ key: number "
                                 f"... }}' after the request list, got {quote(line)}")
            state, line = "inside", line[1:].strip()
        if line.endswith("}"):
            state, line = "after", line[:-1].strip()
        for entry in filter(None, (e.strip() for e in line.split(","))):
            m = _SUMMARY_ENTRY.fullmatch(entry)
            if m is None:
                raise ValueError(f"line {number}: expected 'key: number' in the summary "
                                 f"block, got {quote(entry)}")
            key, value = m.group(1).strip(), m.group(2)
            try:
                summary[key] = float(value)
            except ValueError:
                raise ValueError(f"line {number}, key {key!r}: expected a number in the "
                                 f"summary block, got {quote(value)}") from None
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
                                 f"{quote(fields[key][0])}")
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
                                 f"{quote(float(given[i]))}")
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
