"""Batch profiles from real tools' files: τ[b], the time of one batch by batch size.

``read_batch_profile(text)`` detects the format from the header (formats.py) and
returns a ``MeasuredBatchProfile``; ``.fit()`` gives τ[b] = αb + τ0 (Inoue 2021,
eq 25).  Formats and their assumptions: docs/models/measured.md, "Formats".
"""
from __future__ import annotations

from .formats import _kind
from .model_analyzer import _profiles as _model_analyzer_profiles
from .parsing import _decode, _labelled, _pick
from .results import MeasuredBatchProfile
from .tables import _dle_batch_profiles, _plain_profile
from .triton import _dle_profiles, _perf_analyzer_profile

_PROFILE_KINDS = ("model_analyzer", "perf_analyzer", "dle_batch_table", "triton_dle_table",
                  "plain_csv")
_ELSEWHERE = {
    "model_analyzer_gpu": "this is Model Analyzer's metrics-model-gpu.csv: read "
                          "metrics-model-inference.csv and pass this file as gpu_metrics_text",
    "azure_llm_csv": "this is a request trace: read it with read_trace",
    "plain_trace_csv": "this is a request trace: read it with read_trace",
}


def _all_profiles(text, gpu_metrics_text) -> tuple:
    text = _decode(text)
    kind = _kind(text, _PROFILE_KINDS, _ELSEWHERE)
    if gpu_metrics_text is not None and kind != "model_analyzer":
        raise ValueError("gpu_metrics_text applies to a Model Analyzer metrics-model-"
                         f"inference.csv only; this file is {kind}")
    if kind == "model_analyzer":
        found = _model_analyzer_profiles(text, gpu_metrics_text)
    elif kind == "perf_analyzer":
        found = _perf_analyzer_profile(text)
    elif kind == "dle_batch_table":
        found = _dle_batch_profiles(text)
    elif kind == "triton_dle_table":
        found = _dle_profiles(text)
    else:
        found = _plain_profile(text)
    return _labelled(found)


def read_batch_profile(text, *, table=None, gpu_metrics_text=None) -> MeasuredBatchProfile:
    """The batch profile of one table of a file (formats detected from the header).

    ``text``: the file's text (``str``, or ``bytes`` as UTF-8), never a path: a Model
    Analyzer metrics-model-inference.csv, a perf_analyzer -f CSV, a DeepLearningExamples
    by-batch or Triton table, or a plain CSV of batch size and throughput (per s) or
    batch time (ms).  ``table``: the label of one table (None: the first, with a note
    naming the others).  ``gpu_metrics_text``: Model Analyzer's metrics-model-gpu.csv,
    for ``power_w``.  Unreadable input: ``ValueError`` naming the line and column.

    >>> p = read_batch_profile("batch_size,throughput_per_s\\n1,500\\n8,2000\\n")
    >>> p.batch_time_ms.tolist(), p.source_format
    ([2.0, 4.0], 'plain_csv')
    """
    return _pick(_all_profiles(text, gpu_metrics_text), table)


def read_batch_profiles(text, *, gpu_metrics_text=None) -> tuple:
    """Every table of a file as a ``MeasuredBatchProfile`` (see ``read_batch_profile``),
    in the file's order."""
    return _all_profiles(text, gpu_metrics_text)
