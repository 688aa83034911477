"""Parsing and validating user-supplied tables (CSV uploads or pasted text).

Pure functions (no Streamlit): they return clean numpy columns or raise
``ValueError`` with a message fit to show next to the input.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

MAX_UPLOAD_BYTES = 2_000_000          # also the app's upload cap (see .streamlit/config.toml)
MAX_ROWS = 10_000

def decode_text(data: bytes | str, max_bytes: int = MAX_UPLOAD_BYTES) -> str:
    """Uploaded bytes (or pasted text) as text: size cap, UTF-8, not empty."""
    if isinstance(data, bytes):
        if len(data) > max_bytes:
            raise ValueError(f"file is {len(data) / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.1f} MB")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError("file is not UTF-8 text (save it as CSV, UTF-8)") from None
    if len(data) > max_bytes:
        raise ValueError(f"text is longer than {max_bytes / 1e6:.1f} MB")
    if not data.strip():
        raise ValueError("the table is empty")
    return data


def read_csv_table(data: bytes | str, max_bytes: int = MAX_UPLOAD_BYTES) -> pd.DataFrame:
    """A CSV as a DataFrame of strings, with clear errors for the usual mistakes."""
    data = decode_text(data, max_bytes)
    try:
        frame = pd.read_csv(io.StringIO(data), dtype=str, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"not a readable CSV table ({str(err).splitlines()[0]})") from None
    if len(frame) > MAX_ROWS:
        raise ValueError(f"{len(frame)} rows; at most {MAX_ROWS} are accepted")
    return normalise_columns(frame)


def normalise_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Column names stripped, lower case, spaces as underscores; ``ValueError`` if
    two names become one ("Batch Size" and "batch_size")."""
    names = [str(c).strip().lower().replace(" ", "_") for c in frame.columns]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise ValueError(f"column '{twice}' appears twice (names ignore case and spaces)")
    frame.columns = names
    return frame


def numeric_column(frame: pd.DataFrame, column: str, label: str | None = None,
                   positive: bool = True) -> np.ndarray:
    """A text column of finite numbers, positive (or, with ``positive=False``, not
    negative), as floats; otherwise ``ValueError`` naming ``label`` (the column's name
    by default) and the first bad row (rows counted as in a spreadsheet: header 1)."""
    label = label or column
    text = frame[column].fillna("").str.strip()
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        shown = repr(text.iloc[i]) if text.iloc[i] else "an empty cell or NaN"
        raise ValueError(f"column '{label}', row {i + 2}: {shown} is not a finite number")
    low = values <= 0 if positive else values < 0
    if low.any():
        i = int(np.flatnonzero(low)[0])
        rule = "must be positive" if positive else "must not be negative"
        raise ValueError(f"column '{label}', row {i + 2}: values {rule}")
    return values


def find_column(frame: pd.DataFrame, names) -> str | None:
    """The first of ``names`` that is a column of ``frame``, or None."""
    for name in names:
        if name in frame.columns:
            return name
    return None


def neutralise_cell(value):
    """Make a CSV cell safe to open in a spreadsheet (no formula injection)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def to_safe_csv(frame: pd.DataFrame) -> bytes:
    """CSV bytes of ``frame`` with formula-looking text cells neutralised.

    Lines end in CRLF (RFC 4180), so a cell holding a bare CR is quoted: unquoted,
    a spreadsheet would start a new row there and evaluate what follows.
    """
    safe = frame.copy()
    safe.columns = [neutralise_cell(c) for c in safe.columns]
    for col in safe.columns:
        if safe[col].dtype == object or pd.api.types.is_string_dtype(safe[col]):
            safe[col] = safe[col].map(neutralise_cell)
    return safe.to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def keep_last_valid(upload, parse, state_key: str, what: str = "trace"):
    """The uploaded file read by ``parse(data, name)`` (an object with a ``name``), kept in
    ``st.session_state[state_key]``; a file that cannot be read shows why, and the last
    valid one stays in use, saying so (nothing the user gave is lost)."""
    import streamlit as st

    from ui import share

    last = st.session_state.get(state_key)
    if upload is None:
        return last
    try:
        got = parse(upload.getvalue(), upload.name)
    except ValueError as err:
        st.error(f"{what.capitalize()} not used: {err}", icon=":material/error:")
        if last is not None:
            st.info(share.inert(f"Still using the last valid {what}: {last.name}."))
        return last
    st.session_state[state_key] = got
    return got

