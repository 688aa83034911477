"""The GPU batching page's uploads: the plain profile CSV (batch size, throughput, power)
and the helpers that route a tool's files to ``engine.measured``'s readers."""
from __future__ import annotations

import hashlib

from engine.batching.profile import sorted_profile
from ui.uploads import decode_text, find_column, numeric_column, read_csv_table

PROFILE_COLUMNS = {
    "batch_size": ("batch_size", "batch", "b"),
    "throughput_per_s": ("throughput_per_s", "throughput", "throughput_images_per_s",
                         "images_per_s", "jobs_per_s"),
    "power_w": ("power_w", "power", "board_power_w", "watts"),
}
# Model Analyzer's metrics-model-gpu.csv: told apart from the inference file by its header
GPU_METRICS_COLUMNS = ("model config path", "gpu power usage (w)")
INFERENCE_COLUMN = "throughput (infer/sec)"


class NotAPlainProfile(ValueError):
    """The table lacks the plain profile's columns (it may be another tool's file)."""


def parse_profile_csv(data: bytes | str) -> dict:
    """Batch-size profile: columns batch_size, throughput_per_s and optional power_w.

    Returns {"batch_size", "throughput_per_s", "power_w" (or None)} as float arrays
    sorted by batch size (``engine.batching.profile.sorted_profile``).  Raises ``ValueError``
    naming the column and row (``NotAPlainProfile`` when a required column is missing).
    """
    frame = read_csv_table(data)
    cols = {key: find_column(frame, names) for key, names in PROFILE_COLUMNS.items()}
    missing = [k for k in ("batch_size", "throughput_per_s") if cols[k] is None]
    if missing:
        raise NotAPlainProfile(f"missing column(s) {', '.join(missing)}; found: "
                               f"{', '.join(frame.columns) or 'none'}")
    if len(frame) < 2:
        raise ValueError(f"need at least 2 rows to fit a line, got {len(frame)}")
    out = {key: numeric_column(frame, col, key) for key, col in cols.items() if col is not None}
    return sorted_profile(out["batch_size"], out["throughput_per_s"], out.get("power_w"))


def text_digest(text: str | None) -> str | None:
    """A short fingerprint of a text (the memo key of what is read from it)."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def is_gpu_metrics(text: str) -> bool:
    """Whether ``text`` is Model Analyzer's metrics-model-gpu.csv (GPU power by config and
    concurrency) rather than a table of throughputs: told from its first line."""
    first = text.lstrip("\ufeff").split("\n", 1)[0].lower()
    return all(c in first for c in GPU_METRICS_COLUMNS) and INFERENCE_COLUMN not in first


def profile_files(files: list[tuple[str, bytes]]) -> tuple[str, str, str | None]:
    """The uploaded profile files as (file name, text, Model Analyzer GPU metrics text or
    None): one table, plus at most one metrics-model-gpu.csv recognised by its header.
    Each file is decoded with the upload size cap; ``ValueError`` names the file."""
    texts = []
    for name, data in files:
        try:
            texts.append((name, decode_text(data)))
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
    gpu = [(n, t) for n, t in texts if is_gpu_metrics(t)]
    main = [(n, t) for n, t in texts if not is_gpu_metrics(t)]
    if len(main) != 1 or len(gpu) > 1:
        shown = ", ".join(n for n, _ in texts)
        raise ValueError(f"upload one table (and, for Model Analyzer, its "
                         f"metrics-model-gpu.csv beside metrics-model-inference.csv); got "
                         f"{len(texts)} file(s): {shown}" if main or len(gpu) > 1 else
                         f"{gpu[0][0]} is Model Analyzer's metrics-model-gpu.csv (power "
                         "only): upload its metrics-model-inference.csv with it")
    return main[0][0], main[0][1], gpu[0][1] if gpu else None
