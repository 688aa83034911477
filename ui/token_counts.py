"""Parsing an uploaded or pasted table of output-token counts (one per request).

Pure functions (no Streamlit): the empirical token law of the counts, or
``ValueError`` with a message fit to show next to the input.  Used by the
shared token-law input (``ui.token_law_input``) of both LLM pages.

``read_token_sample`` takes a plain table of counts (``parse_token_counts``) or a
request trace (``engine.measured.read_trace``: the Azure LLM trace CSV, Mooncake JSON
lines, a plain CSV of arrival times with an output-token column), whose generated
tokens become the sample; it says which format it read and what it assumed.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
import io
import re

import pandas as pd

from engine.core.token_laws import (MAX_TOKEN_GRID, EmpiricalTokens, invalid_token_count,
                                    nonzero_token_counts)
from engine.measured import read_trace
from engine.measured.formats import ARRIVAL_NAMES, OUTPUT_TOKEN_NAMES
from ui.uploads import decode_text, normalise_columns

MAX_TOKEN_ROWS = 200_000
TOKEN_COLUMNS = ("output_tokens", "tokens", "n_tokens", "token_count", "completion_tokens", "n")
TRACE_FORMATS = {"azure_llm_csv": "an Azure LLM trace CSV",
                 "mooncake_jsonl": "a JSON-lines trace (Mooncake format)",
                 "plain_csv": "a CSV trace of arrival times"}
_AZURE = {"timestamp", "contexttokens", "generatedtokens"}


def _loose(name: str) -> str:
    return "_".join(name.strip().lower().split())


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, without its leading blanks."""
    return re.split(r"[\r\n]", text.lstrip(), maxsplit=1)[0]


def header_names(text: str) -> set[str]:
    """The loose names (stripped, lower case, spaces as underscores) of the first
    non-blank line of ``text`` read as a CSV header (empty if it is not one)."""
    try:
        return {_loose(c) for c in next(csv.reader([first_line(text)]), [])}
    except csv.Error:
        return set()


def is_trace_only_format(text: str) -> bool:
    """Whether ``text`` is in a format only ``read_trace`` reads: JSON (lines), or a CSV
    whose header is the Azure LLM trace's (TIMESTAMP with a token column)."""
    if first_line(text).startswith(("{", "[")):
        return True
    names = header_names(text)
    return "timestamp" in names and bool(names & (_AZURE - {"timestamp"}))


def is_request_trace(text: str) -> bool:
    """Whether ``text`` is a request trace ``read_trace`` takes whole: JSON (lines),
    the Azure LLM trace header, or arrival times beside an output-token column."""
    if is_trace_only_format(text):
        return True
    names = header_names(text)
    return bool(names & {_loose(n) for n in ARRIVAL_NAMES}
                and names & {_loose(n) for n in OUTPUT_TOKEN_NAMES})


@dataclass(frozen=True)
class TokenSample:
    """The output-token law of an upload, with what was read: ``source_format``
    ("token_counts" or a ``RequestTrace`` format) and ``notes`` in plain words."""

    law: EmpiricalTokens
    source_format: str
    notes: tuple = ()

    @property
    def description(self) -> str:
        """One sentence (or a few) saying what was read, for a caption."""
        n = self.law.n_samples
        if self.source_format == "token_counts":
            return f"Read as a table of token counts: {n:,} counts."
        return f"Read as {TRACE_FORMATS[self.source_format]}: " + "; ".join(self.notes) + "."


def duration_text(seconds: float) -> str:
    """A time span in s, min or h, three digits."""
    if seconds >= 7200:
        return f"{seconds / 3600:.3g} h"
    if seconds >= 120:
        return f"{seconds / 60:.3g} min"
    return f"{seconds:.3g} s"


def trace_token_sample(text: str, max_rows: int = MAX_TOKEN_ROWS) -> TokenSample:
    """The generated (output) tokens of a request trace as a sample; requests with 0
    generated tokens are left out (a token law counts from 1), with a note."""
    trace = read_trace(text)
    tokens = trace.output_tokens
    if tokens is None:
        raise ValueError(f"this trace ({TRACE_FORMATS[trace.source_format]}) has no output-token "
                         f"column: expected one of {', '.join(OUTPUT_TOKEN_NAMES)} "
                         "(or output_length in JSON lines)")
    if tokens.size > max_rows:
        raise ValueError(f"{tokens.size:,} requests; at most {max_rows:,} are accepted")
    notes = [f"{trace.n_requests:,} requests over {duration_text(trace.duration_s)}, their "
             "generated (output) tokens taken as the sample", *trace.notes]
    tokens, zero = nonzero_token_counts(tokens)
    if zero:
        notes.append(f"{zero:,} request{'s' * (zero != 1)} with 0 generated tokens left out "
                     "(a token law counts from 1 token)")
    if tokens.size < 2:
        raise ValueError(f"need at least 2 requests with output tokens, got {tokens.size}")
    big = tokens > MAX_TOKEN_GRID
    if big.any():
        raise ValueError(f"an output-token count of {int(tokens[big][0]):,}; at most "
                         f"{MAX_TOKEN_GRID:,} are accepted")
    law = EmpiricalTokens.from_counts(tokens, name="output tokens")
    return TokenSample(law, trace.source_format, tuple(notes))


def read_token_sample(data: bytes | str, max_rows: int = MAX_TOKEN_ROWS) -> TokenSample:
    """Output-token counts from an upload or paste: a request trace (``is_request_trace``)
    through ``engine.measured.read_trace``, anything else as a table of counts
    (``parse_token_counts``).  ``ValueError`` with a message fit to show."""
    text = decode_text(data)
    if is_request_trace(text):
        return trace_token_sample(text, max_rows)
    return TokenSample(parse_token_counts(text, max_rows), "token_counts")


def parse_token_counts(data: bytes | str, max_rows: int = MAX_TOKEN_ROWS) -> EmpiricalTokens:
    """Token counts from a CSV: a column named like ``output_tokens`` (or the only column).

    A headerless single column of numbers is accepted too.  Counts must be whole
    numbers ≥ 1; at least 2 rows, at most ``max_rows``.
    """
    data = decode_text(data)
    first = data.strip().splitlines()[0].split(",")[0].strip()
    try:
        float(first)
        header = None
    except ValueError:
        header = 0
    try:
        frame = pd.read_csv(io.StringIO(data), dtype=str, header=header, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"not a readable CSV table ({str(err).splitlines()[0]})") from None
    frame = normalise_columns(frame)
    column = next((c for c in TOKEN_COLUMNS if c in frame.columns), None)
    if column is None:
        if len(frame.columns) != 1:
            raise ValueError(f"no token-count column: expected one of {', '.join(TOKEN_COLUMNS)} "
                             f"(or a single column); found: {', '.join(frame.columns)}")
        column = frame.columns[0]
    if len(frame) > max_rows:
        raise ValueError(f"{len(frame)} rows; at most {max_rows} are accepted")
    if len(frame) < 2:
        raise ValueError(f"need at least 2 token counts, got {len(frame)}")
    raw = frame[column].fillna("").str.strip()
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    offset = 2 if header is not None else 1
    problem = invalid_token_count(values)
    if problem is not None:
        i, why = problem
        if why == "nan":
            raise ValueError(f"column '{column}', row {i + offset}: {raw.iloc[i]!r} is not a "
                             f"number")
        raise ValueError(f"column '{column}', row {i + offset}: {raw.iloc[i]!r}; token counts "
                         f"must be whole numbers ≥ 1 (at most {MAX_TOKEN_GRID:,})")
    return EmpiricalTokens.from_counts(values, name=f"column '{column}'")
