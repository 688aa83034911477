"""Text in, checked columns out: the shared parsing of the measurement readers.

Every reader takes a file's text (``str``, or ``bytes`` decoded as UTF-8), never a path.
Anything unreadable raises ``ValueError`` naming the line (1-based) and, for a CSV, the
column (its name and 1-based number) and what was expected.  The helpers here are
private to ``engine.measured``; the readers convert units at their boundary.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
from dataclasses import dataclass

import numpy as np

_SHOWN = 60                   # characters of a bad value or header quoted in a message


def quote(value) -> str:
    """``repr`` of a bad value, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def line_of(text: str, offset: int) -> int:
    """1-based line of the character at ``offset`` of ``text``."""
    return text.count("\n", 0, max(offset, 0)) + 1


def _key_line(text: str, key: str) -> int:
    """1-based line where ``"key"`` first appears in the JSON text (1 if not found)."""
    at = text.find(f'"{key}"')
    return line_of(text, at) if at >= 0 else 1


def decode_text(text, name: str = "text", expected: str = "a CSV or JSON text file") -> str:
    """``text`` as a ``str``: bytes decoded as UTF-8 (a leading BOM dropped), no NUL
    character, not blank; ``ValueError`` naming ``name``, the line and what was
    ``expected`` otherwise.  The one decoding of every reader of a file's text."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        nul = raw.find(b"\x00")
        if nul >= 0:
            line = raw.count(b"\n", 0, nul) + 1
            raise ValueError(f"{name}: line {line}: holds a NUL byte: "
                             f"binary data, not {expected}")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw.count(b"\n", 0, err.start) + 1
            raise ValueError(f"{name}: line {line}: not UTF-8 text (byte {err.start + 1} "
                             f"cannot be decoded); expected {expected}") from None
    elif not isinstance(text, str):
        raise ValueError(f"{name}: expected the file's text (str or bytes), got "
                         f"{type(text).__name__}")
    text = text.removeprefix("\ufeff")
    nul = text.find("\x00")
    if nul >= 0:
        raise ValueError(f"{name}: line {line_of(text, nul)}: holds a NUL character: binary "
                         f"data, not {expected}")
    if not text.strip():
        raise ValueError(f"{name}: the text is empty; expected {expected}")
    return text


_decode = decode_text


def read_json_object(text: str, expected: str, *, extra_data: str = "") -> dict:
    """The JSON object a decoded ``text`` (``decode_text``) holds; ``ValueError`` naming
    the line and column of the first syntax error, or line 1 for a text nested too deeply
    or a JSON value other than an object, each ending in what the reader ``expected``.
    ``extra_data``: a hint added where a whole value is followed by more (JSON lines).
    The one JSON reading of every reader of a JSON file.

    >>> read_json_object('{"completed": 6}', "a summary")
    {'completed': 6}
    >>> read_json_object('{"completed": 6, "x": }', "a summary")
    Traceback (most recent call last):
    ...
    ValueError: line 1, column 23: not JSON (Expecting value); expected a summary
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        hint = extra_data if err.msg == "Extra data" else ""
        raise ValueError(f"line {err.lineno}, column {err.colno}: not JSON ({err.msg}){hint}; "
                         f"expected {expected}") from None
    except (ValueError, RecursionError):
        raise ValueError(f"line 1: not JSON (nested too deeply or unreadable); expected "
                         f"{expected}") from None
    if not isinstance(data, dict):
        raise ValueError(f"line 1: expected {expected}, got a JSON {type(data).__name__}")
    return data


def _first_line(text: str) -> tuple[int, str]:
    """(1-based number, content) of the first non-blank line of ``text``."""
    start = len(text) - len(text.lstrip())
    start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
    ends = [e for e in (text.find("\n", start), text.find("\r", start)) if e >= 0]
    line = text[start:min(ends)] if ends else text[start:]
    return line_of(text, start), line


def _header(text: str) -> tuple[int, tuple[str, ...]]:
    """(line, column names stripped) of the first non-blank line read as a CSV row."""
    number, line = _first_line(text)
    try:
        row = next(csv.reader([line]), [])
    except csv.Error as err:
        raise ValueError(f"line {number}: not a CSV header ({err})") from None
    return number, tuple(c.strip() for c in row)


def _shown_header(names) -> str:
    """The header's names for a message, cut to a readable length."""
    text = ", ".join(names)
    return text if len(text) <= 4 * _SHOWN else text[:4 * _SHOWN] + "…"


def _normal(name: str) -> str:
    """A column name compared loosely: stripped, lower case, spaces as underscores."""
    return "_".join(name.strip().lower().split())


@dataclass(frozen=True)
class _Table:
    """A CSV's header and data rows (blank lines skipped), with each row's line."""

    header: tuple[str, ...]
    rows: list
    lines: np.ndarray            # 1-based line of each data row
    header_line: int

    def index(self, names, *, required: bool = True) -> int | None:
        """Index of the first column whose loose name (``_normal``) is one of ``names``."""
        names = [names] if isinstance(names, str) else list(names)
        loose = [_normal(h) for h in self.header]
        for name in map(_normal, names):
            if name in loose:
                return loose.index(name)
        if required:
            raise ValueError(f"line {self.header_line}: no column "
                             f"{' or '.join(map(repr, names))}; the header has: "
                             f"{_shown_header(self.header)}")
        return None

    def strings(self, j: int) -> list:
        """The cells of column ``j`` (stripped)."""
        return [r[j].strip() for r in self.rows]

    def where(self, i: int, j: int) -> str:
        """'line L, column C (name)' of row ``i``, column ``j``, for a message."""
        return f"line {int(self.lines[i])}, column {j + 1} ({self.header[j]})"

    def numbers(self, j: int, *, minimum: str = "positive", whole: bool = False) -> np.ndarray:
        """Column ``j`` as floats, each finite and ``minimum`` ("positive" or
        "non-negative"), whole numbers with ``whole``; ``ValueError`` naming the first
        bad cell's line and column and what was expected."""
        cells = self.strings(j)
        what = f"a {minimum} {'whole number' if whole else 'number'}"
        try:
            values = np.array(cells, dtype=float)
        except (ValueError, OverflowError):
            values = np.array([_to_float(c) for c in cells], dtype=float)
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(values) | ((values <= 0) if minimum == "positive" else (values < 0))
            if whole:
                bad |= (values != np.round(values)) | (values > 2.0 ** 53)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{self.where(i, j)}: expected {what}, got {quote(cells[i])}")
        return values


def _to_float(cell: str) -> float:
    """``float(cell)``, NaN where it is not a number (the caller reports it)."""
    try:
        return float(cell)
    except (ValueError, OverflowError):
        return float("nan")


def _read_csv(text: str, name: str = "") -> _Table:
    """``text`` (already decoded) as a ``_Table``: the first non-blank line is the header,
    blank lines are skipped, every data row has the header's width; ``ValueError``
    naming the line otherwise (``name`` prefixes each message)."""
    prefix = f"{name}: " if name else ""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows, lines = [], []
    try:
        if '"' in text:                         # a quoted cell may span lines: track them
            last = 0
            for row in reader:
                rows.append(row)
                lines.append(last + 1)
                last = reader.line_num
        else:                                   # one row per line: the line is its index
            rows = list(reader)
            lines = range(1, len(rows) + 1)
    except csv.Error as err:
        raise ValueError(f"{prefix}line {reader.line_num}: not a readable CSV row "
                         f"({err})") from None
    keep = [i for i, r in enumerate(rows) if any(c.strip() for c in r)]
    if not keep:
        raise ValueError(f"{prefix}the text is empty; expected a CSV table")
    lines = np.asarray(lines, dtype=np.int64)[keep]
    rows = [rows[i] for i in keep]
    header = tuple(c.strip() for c in rows[0])
    header_line = int(lines[0])
    rows, lines = rows[1:], lines[1:]
    if not rows:
        raise ValueError(f"{prefix}line {header_line}: only a header, no data "
                         f"rows (a truncated file?); the header has: {_shown_header(header)}")
    width = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    wrong = np.flatnonzero(width != len(header))
    if wrong.size:
        i = int(wrong[0])
        raise ValueError(f"{prefix}line {int(lines[i])}: expected {len(header)} columns "
                         f"({_shown_header(header)}), got {int(width[i])} (a truncated or "
                         f"garbled row?)")
    return _Table(header=header, rows=rows, lines=lines, header_line=header_line)


read_csv_table = _read_csv          # the one CSV reading of every reader of a table


def _frozen(values, dtype=float) -> np.ndarray:
    """A read-only copy of ``values`` (results are frozen, their arrays too)."""
    arr = np.array(values, dtype=dtype)
    arr.flags.writeable = False
    return arr


def _groups(keys: list) -> dict:
    """Row indices of each distinct key, keys in order of first appearance."""
    out: dict = {}
    for i, key in enumerate(keys):
        out.setdefault(key, []).append(i)
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


def _no_duplicates(values: np.ndarray, table: _Table, rows: np.ndarray, j: int,
                   what: str) -> None:
    """``ValueError`` at the first row of ``rows`` whose value in ``values`` repeats."""
    _, first = np.unique(values, return_index=True)
    if first.size != values.size:
        dup = np.setdiff1d(np.arange(values.size), first)[0]
        i = int(rows[dup])
        raise ValueError(f"{table.where(i, j)}: {what} {values[dup]:g} appears twice; "
                         f"expected one row per {what}")


def _labelled(results: list) -> tuple:
    """``results`` with unique labels (a repeated one gets ' (2)', ...) and ``tables``
    set to every label of the file."""
    seen: dict = {}
    labels = []
    for r in results:
        seen[r.label] = seen.get(r.label, 0) + 1
        labels.append(r.label if seen[r.label] == 1 else f"{r.label} ({seen[r.label]})")
    return tuple(dataclasses.replace(r, label=lab, tables=tuple(labels))
                 for r, lab in zip(results, labels))


def _pick(results: tuple, table):
    """The result labelled ``table`` (None: the first, noting the others);
    ``ValueError`` naming ``table`` and listing the labels otherwise."""
    labels = results[0].tables
    if table is None:
        first = results[0]
        if len(labels) > 1:
            others = "; ".join(labels[1:])
            first = dataclasses.replace(first, notes=first.notes + (
                f"the file holds {len(labels)} tables: read the first, {labels[0]!r}; the "
                f"others (pass table=...): {others}",))
        return first
    if not isinstance(table, str) or table not in labels:
        raise ValueError(f"table {quote(table)} is not in the file; its tables: "
                         f"{'; '.join(labels)}")
    return results[labels.index(table)]
