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

PROFILE_COLUMNS = {
    "batch_size": ("batch_size", "batch", "b"),
    "throughput_per_s": ("throughput_per_s", "throughput", "throughput_images_per_s",
                         "images_per_s", "jobs_per_s"),
    "power_w": ("power_w", "power", "board_power_w", "watts"),
}


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


def _numeric(frame: pd.DataFrame, column: str, label: str) -> np.ndarray:
    text = frame[column].fillna("").str.strip()
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 2           # +1 header, +1 one-based
        shown = repr(text.iloc[row - 2]) if text.iloc[row - 2] else "an empty cell"
        raise ValueError(f"column '{label}', row {row}: {shown} is not a finite number")
    if np.any(values <= 0):
        row = int(np.flatnonzero(values <= 0)[0]) + 2
        raise ValueError(f"column '{label}', row {row}: values must be positive")
    return values


def _find(frame: pd.DataFrame, names) -> str | None:
    for name in names:
        if name in frame.columns:
            return name
    return None


def parse_profile_csv(data: bytes | str) -> dict:
    """Batch-size profile: columns batch_size, throughput_per_s and optional power_w.

    Returns {"batch_size", "throughput_per_s", "power_w" (or None)} as float arrays
    sorted by batch size.  Raises ``ValueError`` naming the column and row.
    """
    frame = read_csv_table(data)
    cols = {key: _find(frame, names) for key, names in PROFILE_COLUMNS.items()}
    missing = [k for k in ("batch_size", "throughput_per_s") if cols[k] is None]
    if missing:
        raise ValueError(f"missing column(s) {', '.join(missing)}; found: "
                         f"{', '.join(frame.columns) or 'none'}")
    if len(frame) < 2:
        raise ValueError(f"need at least 2 rows to fit a line, got {len(frame)}")
    out = {key: _numeric(frame, col, key) for key, col in cols.items() if col is not None}
    b = out["batch_size"]
    if np.any(b != np.round(b)):
        raise ValueError("column 'batch_size': batch sizes must be whole numbers")
    if np.unique(b).size != b.size:
        raise ValueError("column 'batch_size': each batch size may appear only once")
    order = np.argsort(b)
    return {"batch_size": b[order], "throughput_per_s": out["throughput_per_s"][order],
            "power_w": out["power_w"][order] if "power_w" in out else None}


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
