"""Inputs from outside, for the fuzz tests: every upload parser with a valid table
and a check of what it returns, a named table of the usual mistakes and attacks,
hypothesis strategies that mix them, and garbage values for share links.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from engine.core.token_laws import EmpiricalTokens
from app_pages.batching import profile_input
from app_pages.batching.uploads import parse_profile_csv
from app_pages.sla.uploads import MAX_INTERVALS, MIN_INTERVAL_S, parse_trace_csv
from ui.token_counts import parse_token_counts

FORMULA = "=cmd|' /C calc'!A0"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
MD_IMAGE = "![x](http://example.invalid/t.png)"      # Markdown: an image fetched on display
BIG = 50_000_000                                       # a 50 MB upload
TRACE_INTERVAL_S = 300.0


# ---------------------------------------------------------------- parsed objects

def check_profile(out: dict) -> None:
    b, thr, power = out["batch_size"], out["throughput_per_s"], out["power_w"]
    assert b.ndim == 1 and b.size >= 2 and thr.shape == b.shape
    assert np.all(np.isfinite(b)) and np.all(b > 0) and np.all(b == np.round(b))
    assert np.all(np.diff(b) > 0), "sorted, each batch size once"
    assert np.all(np.isfinite(thr)) and np.all(thr > 0)
    assert power is None or (power.shape == b.shape and np.all(np.isfinite(power))
                             and np.all(power > 0))


def check_counts(law: EmpiricalTokens, least: int = 2) -> None:
    assert isinstance(law, EmpiricalTokens) and law.n_samples >= least
    assert np.all(np.isfinite(law.values)) and np.all(law.values >= 1)
    assert np.all(law.values == np.round(law.values))
    assert abs(law.probs.sum() - 1.0) < 1e-9 and np.all(law.probs > 0)


def check_trace(out: dict) -> None:
    rate = out["rate_per_s"]
    assert rate.ndim == 1 and 1 <= rate.size <= MAX_INTERVALS
    assert np.all(np.isfinite(rate)) and np.all(rate >= 0)
    assert np.isfinite(out["interval_s"]) and out["interval_s"] >= MIN_INTERVAL_S
    assert out["kind"] in ("rates", "timestamps")


def llm_batching_counts(data: bytes | str) -> EmpiricalTokens:
    """What app_pages/llm_batching/ does with its token-count input: the shared token-law
    input (``ui.token_law_input``) parses it with ``parse_token_counts``."""
    return parse_token_counts(data)


@dataclass(frozen=True)
class Upload:
    """One upload parser: how to call it, a valid table for it, a check of what it
    returns, and how its messages name the place of a bad cell (the last cell of
    the second data row, which is line 3 of the file)."""

    name: str
    parse: Callable
    good: str
    check: Callable
    where: str                       # regex the message of a bad cell matches


UPLOADS = {
    "batch profile": Upload(
        "batch profile", parse_profile_csv,
        "batch_size,throughput_per_s,power_w\n1,476,120\n2,880,109\n4,1500,130\n8,2200,150\n",
        check_profile, r"column 'power_w', row 3"),
    "token counts": Upload(
        "token counts", parse_token_counts, "output_tokens\n120\n300\n800\n1500\n",
        check_counts, r"column 'output_tokens', row 3"),
    "trace rates": Upload(
        "trace rates", lambda data: parse_trace_csv(data, TRACE_INTERVAL_S),
        "time_s,rate_per_s\n0,420\n300,515\n600,640\n900,580\n", check_trace,
        r"column 'rate_per_s', row 3"),
    "trace timestamps": Upload(
        "trace timestamps", lambda data: parse_trace_csv(data, TRACE_INTERVAL_S),
        "timestamp_s\n0.5\n12.25\n340\n901\n", check_trace, r"column 'timestamp_s'.*row 3"),
    "LLM batching token counts": Upload(
        "LLM batching token counts", llm_batching_counts, "tokens\n512\n130\n977\n64\n",
        check_counts, r"row 3|value 2"),
}


# ---------------------------------------------------------------- named nasty cases

def _lines(good: str) -> list[str]:
    return good.strip("\n").split("\n")


def _with_cell(value: str) -> Callable[[str], bytes]:
    """The valid table with the last cell of its second data row replaced."""
    def make(good: str) -> bytes:
        lines = _lines(good)
        cells = lines[2].split(",")
        cells[-1] = value
        lines[2] = ",".join(cells)
        return ("\n".join(lines) + "\n").encode()
    return make


@functools.lru_cache(maxsize=1)
def _fifty_mb_rows() -> bytes:
    return b"1,476,120\n" * (BIG // 10 + 1)


def _fifty_mb(good: str) -> bytes:
    """The table's header over 50 MB of rows (built once: only its size matters)."""
    return (_lines(good)[0] + "\n").encode() + _fifty_mb_rows()


@dataclass(frozen=True)
class Case:
    """A named bad (or awkward) file.  ``valid``: True if every parser must accept
    it, False if every parser must refuse it, None if either is right (it
    depends on the parser's columns).  ``says``: a regex the refusal matches,
    with ``{where}`` standing for the parser's way to name a bad cell."""

    make: Callable[[str], bytes]
    valid: bool | None
    says: str


CASES = {
    "wrong columns": Case(lambda g: b"size,speed\n1,100\n2,200\n", None,
                          r"column|found"),
    "NaN cell": Case(_with_cell("nan"), False, "{where}"),
    "empty cell": Case(_with_cell(""), None, "{where}"),      # one column: a blank line
    "inf cell": Case(_with_cell("inf"), False, "{where}"),
    "-inf cell": Case(_with_cell("-inf"), False, "{where}"),
    "negative cell": Case(_with_cell("-5"), False, "{where}"),
    "formula cell": Case(_with_cell(FORMULA), False, "{where}"),
    "script cell": Case(_with_cell(SCRIPT), False, "{where}"),
    "NUL in a cell": Case(_with_cell("3\x00"), False, "{where}"),
    "huge number": Case(_with_cell("1e308"), None, "{where}|span|sorted"),
    "overflowing number": Case(_with_cell("1e999"), False, "{where}"),
    "zero cell": Case(_with_cell("0"), None, "{where}"),
    "empty file": Case(lambda g: b"", False, "empty"),
    "blank lines": Case(lambda g: b"\n  \n\t\n", False, "empty"),
    "header only": Case(lambda g: (_lines(g)[0] + "\n").encode(), False,
                        r"at least|empty|got 0"),
    "one row": Case(lambda g: "\n".join(_lines(g)[:2]).encode(), None, r"at least 2"),
    "50 MB": Case(_fifty_mb, False, r"file is \d+\.\d MB; the limit is 2\.0 MB"),
    "non-UTF-8 (Latin-1)": Case(lambda g: g.replace("\n", "\n# café\n", 1).encode("latin-1"),
                                False, "UTF-8"),
    "non-UTF-8 (UTF-16)": Case(lambda g: g.encode("utf-16"), False, "UTF-8"),
    "binary": Case(lambda g: bytes(range(256)) * 4, False, "UTF-8"),
    "unterminated quote": Case(_with_cell('"476'), False, r"readable|{where}"),
    "HTML column name": Case(lambda g: g.replace(_lines(g)[0].split(",")[0], IMG, 1).encode(),
                             None, r"column|found"),
    "duplicate column": Case(lambda g: g.replace(
        "\n", "," + _lines(g)[0].split(",")[0].upper().replace("_", " ") + "\n", 1).encode(),
        None, r"appears twice"),
    "semicolons": Case(lambda g: g.replace(",", ";").encode(), None, r"column|found|row"),
    "CRLF line ends": Case(lambda g: g.replace("\n", "\r\n").encode(), True, ""),
    "CR line ends": Case(lambda g: g.replace("\n", "\r").encode(), True, ""),
    "UTF-8 BOM": Case(lambda g: b"\xef\xbb\xbf" + g.encode(), True, ""),
    "spaces around cells": Case(lambda g: g.replace(",", " , ").encode(), True, ""),
}


# ---------------------------------------------------------------- hypothesis strategies

COLUMN_NAMES = ("batch_size", "throughput_per_s", "power_w", "Batch Size", " batch_size ", "b",
                "output_tokens", "tokens", "n", "time_s", "rate_per_s", "timestamp_s", "t",
                "rate", "Rate Per S", "x", "", SCRIPT, IMG, FORMULA, "a,b", '"q"')
NASTY_CELLS = ("", " ", "nan", "NaN", "inf", "-inf", "1e999", "-1", "0", "1", "2", "2.5", "3",
               "1e308", "1e-308", "-0", "1_000", "0x10", FORMULA, SCRIPT, IMG, MD_IMAGE, '"',
               '""', "1,2", "\x00", "１２", "٣", "\t7")
_TEXT = st.characters(blacklist_categories=("Cs",))   # no lone surrogates: not valid UTF-8

cells = st.one_of(st.sampled_from(NASTY_CELLS), st.integers(-10, 10**7).map(str),
                  st.floats(allow_nan=True, allow_infinity=True).map(repr),
                  st.text(_TEXT, max_size=6))


@st.composite
def csv_texts(draw, names=COLUMN_NAMES) -> str:
    """A CSV-like text: a header (or none) from ``names``, ragged rows of nasty
    cells, any separator and line ending."""
    header = draw(st.lists(st.sampled_from(names), min_size=1, max_size=4))
    rows = draw(st.lists(st.lists(cells, max_size=len(header) + 1), max_size=8))
    sep = draw(st.sampled_from([",", ",", ",", ";", "\t"]))
    end = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    lines = ([sep.join(header)] if draw(st.booleans()) else []) + [sep.join(r) for r in rows]
    return end.join(lines) + draw(st.sampled_from(["", end]))


numbers = st.one_of(st.integers(-3, 3000), st.floats(-1e6, 1e9), st.floats(allow_nan=True),
                    st.sampled_from([1e308, -1e308, 5e-324, 1e-300, 0.0, 1.0, 2.0]))


@st.composite
def numeric_tables(draw, header: tuple) -> str:
    """``header`` columns of numbers (extremes and signs included): deeper into
    each parser's validation than random text goes."""
    n = draw(st.integers(0, 12))
    cols = [draw(st.lists(numbers, min_size=n, max_size=n)) for _ in header]
    if draw(st.booleans()):                                   # sorted, like a real trace
        cols = [sorted(c, key=lambda v: (v != v, v)) for c in cols]
    rows = [",".join(repr(c[i]) for c in cols) for i in range(n)]
    return "\n".join([",".join(header)] + rows) + "\n"


def uploads_for(upload: Upload):
    """Text or bytes for one parser: random CSV-like text, numeric tables with its
    own columns, mutations of its valid table, raw bytes."""
    header = tuple(_lines(upload.good)[0].split(","))
    texts = st.one_of(csv_texts(), numeric_tables(header),
                      st.builds(lambda g, cut, junk: g[:cut] + junk + g[cut:],
                                st.just(upload.good), st.integers(0, len(upload.good)),
                                st.text(_TEXT, max_size=8)))
    return st.one_of(texts, texts.map(str.encode), st.binary(max_size=300))


@st.composite
def editor_tables(draw) -> pd.DataFrame:
    """What the profile table editor hands back: the three numeric columns, cells
    NaN (empty), negative, zero, huge or tiny, rows added or deleted."""
    n = draw(st.integers(0, 8))
    col = lambda: draw(st.lists(st.one_of(numbers, st.just(np.nan)), min_size=n, max_size=n))
    return pd.DataFrame({"batch_size": col(), "throughput_per_s": col(), "power_w": col()},
                        dtype=float)


def validated_editor_profile(frame: pd.DataFrame):
    """The profile editor's parser (app_pages/batching/profile_input.py): table → validated profile."""
    return profile_input.validated_profile(profile_input.table_columns(frame), "edited table")


# ---------------------------------------------------------------- share-link garbage

GARBAGE_KINDS = ("markdown text", "NaN", "inf", "out of range", "huge string", "script", "img")


def garbage(field, kind: str) -> str:
    """A bad URL value of ``kind`` for a ``share.Field``."""
    if kind == "markdown text":
        return MD_IMAGE
    if kind == "NaN":
        return "NaN"
    if kind == "inf":
        return "inf"
    if kind == "huge string":           # every field at once stays under Streamlit's
        return "9" * 10_000             # 512 KB limit on a query string (see the test)
    if kind == "script":
        return SCRIPT
    if kind == "img":
        return IMG
    # out of range
    if field.kind is bool:
        return "2"
    if field.kind is str:
        return str(field.default).upper() + " " if field.choices else "../../etc/passwd"
    if field.high is not None:
        return f"{field.high * 10 + 1:g}"
    if field.low is not None:
        return f"{field.low - 1:g}"
    return "0.5" if field.kind is int else "1e400"


def _punctuation(c: str) -> bool:
    return c.isascii() and not c.isalnum() and c.isprintable() and c != " "


def markdown_escaped(text: str) -> bool:
    """Every ASCII punctuation character of ``text`` is backslash-escaped (so
    Markdown shows it as typed: no link, image, HTML, emphasis or directive)."""
    i = 0
    while i < len(text):
        if text[i] == "\\":
            if i + 1 == len(text) or not _punctuation(text[i + 1]):
                return False
            i += 2
        elif _punctuation(text[i]):
            return False
        else:
            i += 1
    return True
