"""Measurement readers (engine.measured): a real request trace read and 10 MB of junk
refused, each beside a bare ``csv.reader`` pass over the same text in the same run.

* ``read_trace`` on the Azure conversation trace (19,366 rows, read from
  ../shared/real-data when it is there, else a synthetic trace of the same format and
  size).  Goal: ≤ 1 s, an upload that feels instant.
* ``read_batch_profile`` refusing a Model Analyzer header over 10 MB of random junk, the
  slowest refusal of tests/measured/test_readers.py (every row is read before the
  width check names line 2).  Goal: ≤ 5 s.

The tests count these readers' work (calls a line, passes over the text); the times
are here, never in a test.
"""
import csv
import io
from pathlib import Path

import numpy as np

from benchmarks.harness import Row, best_time
from engine import measured

AZURE_CONV = Path(__file__).resolve().parents[2] / "shared" / "real-data" / \
    "trace_azure_llm_2023_conv.csv"
MA_HEADER = ("Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,"
             "Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms)\n")


def _azure_text() -> tuple[str, str]:
    """(the conversation trace's text, where it came from)."""
    if AZURE_CONV.is_file():
        return AZURE_CONV.read_bytes().decode("utf-8"), "Azure conv trace"
    rng = np.random.default_rng(1)
    n = 19_366
    start = np.datetime64("2023-11-16T18:15:46.6805900", "ns")
    stamps = start + np.cumsum(rng.exponential(0.18e9, n)).astype("timedelta64[ns]")
    rows = [f"{str(s).replace('T', ' ')[:27]},{i},{o}" for s, i, o in
            zip(stamps, rng.integers(1, 8000, n), rng.integers(1, 800, n))]
    return ("TIMESTAMP,ContextTokens,GeneratedTokens\r\n" + "\r\n".join(rows),
            "synthetic Azure-format trace")


def _junk() -> str:
    """The Model Analyzer header over the 10 MB of junk of the reader tests."""
    rng = np.random.default_rng(7)
    alphabet = np.frombuffer(b"abcxyz0123456789,.;:\"'{}[] \n", dtype=np.uint8)
    return MA_HEADER + rng.choice(alphabet, 10_000_000).tobytes().decode()


def _bare_csv(text: str) -> None:
    list(csv.reader(io.StringIO(text, newline="")))


def _refuse(text: str) -> None:
    try:
        measured.read_batch_profile(text)
    except ValueError:
        return
    raise AssertionError("10 MB of junk was read as a batch profile")


def run() -> list[Row]:
    trace, source = _azure_text()
    ours = best_time(lambda: measured.read_trace(trace), repeat=5)
    bare = best_time(lambda: _bare_csv(trace), repeat=5)
    junk = _junk()
    refused = best_time(lambda: _refuse(junk), repeat=3)
    bare_junk = best_time(lambda: _bare_csv(junk), repeat=3)
    return [
        Row(f"read_trace, {source}", ours * 1e3, "ms", "csv.reader ms", bare * 1e3,
            bare / ours, "<= 1 s", ours <= 1.0),
        Row("read_batch_profile refusing 10 MB of junk", refused, "s", "csv.reader s",
            bare_junk, bare_junk / refused, "<= 5 s", refused <= 5.0),
    ]
