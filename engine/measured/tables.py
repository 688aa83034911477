"""Batch-size tables: the NVIDIA DeepLearningExamples by-batch inference tables and a
plain CSV of batch size against throughput or batch time.

Both measure one batch of b inputs at a time, so the time of one batch is
τ[b] = 1000·b / throughput ms (throughput in inputs per second), or the batch time
column itself.
"""
from __future__ import annotations

import numpy as np

from .formats import (BATCH_SIZE_NAMES, BATCH_TIME_NAMES, P99_NAMES, POWER_NAMES,
                      THROUGHPUT_NAMES)
from .parsing import _frozen, _groups, _no_duplicates, _normal, _read_csv, _Table
from .results import MeasuredBatchProfile


def _batch_times(b: np.ndarray, thr: np.ndarray, what: str) -> np.ndarray:
    """τ[b] = 1000·b / throughput (ms); ``ValueError`` where it is not finite."""
    with np.errstate(all="ignore"):
        tau = 1000.0 * (b / thr)
    if not np.all(np.isfinite(tau) & (tau > 0)):
        raise ValueError(f"{what}: values too extreme (1000·b/throughput is not a finite "
                         f"positive time)")
    return tau


def _sorted_rows(table: _Table, rows: np.ndarray, b: np.ndarray, jb: int) -> np.ndarray:
    """``rows`` sorted by batch size, each batch size once, at least 2 of them."""
    rows = rows[np.argsort(b[rows], kind="stable")]
    _no_duplicates(b[rows], table, rows, jb, "batch size")
    if rows.size < 2:
        raise ValueError(f"line {int(table.lines[rows[0]])}: expected at least 2 batch sizes "
                         f"to fit τ[b], got 1")
    return rows


def _column_with(table: _Table, word: str) -> int | None:
    """The first column whose loose name contains ``word``."""
    return next((j for j, h in enumerate(table.header) if word in _normal(h)), None)


def _dle_batch_profiles(text: str) -> list:
    """One profile per (gpu, table) of a DeepLearningExamples by-batch table."""
    table = _read_csv(text)
    jb = table.index("batch_size")
    b = table.numbers(jb, whole=True)
    jt = _column_with(table, "throughput")
    if jt is None:
        raise ValueError(f"line {table.header_line}: no throughput column (a name holding "
                         f"'throughput'); the header has: {', '.join(table.header)}")
    thr = table.numbers(jt)
    jp = _column_with(table, "p99")
    p99 = table.numbers(jp) if jp is not None else None
    gpu, name = table.strings(table.index("gpu")), table.strings(table.index("table"))
    out = []
    for (g, t), rows in _groups(list(zip(gpu, name))).items():
        rows = _sorted_rows(table, rows, b, jb)
        notes = [f"τ[b] = 1000·b / {table.header[jt]} (inputs per second): one batch of b "
                 f"at a time"]
        if p99 is not None:
            notes.append(f"p99_latency_ms: the column {table.header[jp]}")
        out.append(MeasuredBatchProfile(
            batch_size=_frozen(b[rows]),
            batch_time_ms=_frozen(_batch_times(b[rows], thr[rows], table.header[jt])),
            power_w=None, p99_latency_ms=None if p99 is None else _frozen(p99[rows]),
            source_format="dle_batch_table", notes=tuple(notes), label=f"{g} · {t}",
            tables=()))
    return out


def _plain_profile(text: str) -> list:
    """A plain CSV: batch size and throughput (per s) or batch time (ms), optional
    power (W) and p99 latency (ms)."""
    table = _read_csv(text)
    jb = table.index(BATCH_SIZE_NAMES)
    b = table.numbers(jb, whole=True)
    jt = table.index(BATCH_TIME_NAMES, required=False)
    jx = table.index(THROUGHPUT_NAMES, required=False)
    notes = []
    if jt is not None:
        tau = table.numbers(jt)
        notes.append(f"batch_time_ms: the column {table.header[jt]} (ms per batch)")
        if jx is not None:
            notes.append(f"the column {table.header[jx]} is not used: the batch time is")
    else:
        tau = _batch_times(b, table.numbers(jx), table.header[jx])
        notes.append(f"τ[b] = 1000·b / {table.header[jx]} (per second)")
    jw = table.index(POWER_NAMES, required=False)
    jp = table.index(P99_NAMES, required=False)
    rows = _sorted_rows(table, np.arange(b.size), b, jb)
    return [MeasuredBatchProfile(
        batch_size=_frozen(b[rows]), batch_time_ms=_frozen(tau[rows]),
        power_w=None if jw is None else _frozen(table.numbers(jw)[rows]),
        p99_latency_ms=None if jp is None else _frozen(table.numbers(jp)[rows]),
        source_format="plain_csv", notes=tuple(notes), label="profile", tables=())]
