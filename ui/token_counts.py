"""Parsing an uploaded or pasted table of output-token counts (one per request).

Pure functions (no Streamlit): the empirical token law of the counts, or
``ValueError`` with a message fit to show next to the input.  Used by the
shared token-law input (``ui.token_law_input``) of both LLM pages.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

from engine.core.token_laws import MAX_TOKEN_GRID, EmpiricalTokens
from ui.uploads import decode_text, normalise_columns

MAX_TOKEN_ROWS = 200_000
TOKEN_COLUMNS = ("output_tokens", "tokens", "n_tokens", "token_count", "completion_tokens", "n")


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
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"column '{column}', row {i + offset}: {raw.iloc[i]!r} is not a number")
    bad = (values < 1) | (values != np.round(values)) | (values > MAX_TOKEN_GRID)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"column '{column}', row {i + offset}: {raw.iloc[i]!r}; token counts "
                         f"must be whole numbers ≥ 1 (at most {MAX_TOKEN_GRID:,})")
    return EmpiricalTokens.from_counts(values, name=f"column '{column}'")
