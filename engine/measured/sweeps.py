"""Closed-loop concurrency sweeps from real tools' files: throughput and latency at N
requests in flight (perf_analyzer's ``--concurrency-range``, Model Analyzer's sweeps,
the DeepLearningExamples online tables).

Little's law ties the three columns: N = throughput/(client batch) × mean latency.
"""
from __future__ import annotations

from .formats import _kind
from .model_analyzer import _concurrency_sweeps as _model_analyzer_sweeps
from .parsing import _decode, _labelled, _pick
from .results import MeasuredConcurrencySweep
from .triton import _dle_sweeps, _perf_analyzer_sweep

_SWEEP_KINDS = ("triton_dle_table", "perf_analyzer", "model_analyzer")
_ELSEWHERE = {
    "model_analyzer_gpu": "this is Model Analyzer's metrics-model-gpu.csv: read "
                          "metrics-model-inference.csv for the sweeps",
    "dle_batch_table": "this is a by-batch table with no concurrency: read it with "
                       "read_batch_profile",
    "plain_csv": "this is a batch-size table with no concurrency: read it with "
                 "read_batch_profile",
    "azure_llm_csv": "this is a request trace: read it with read_trace",
    "plain_trace_csv": "this is a request trace: read it with read_trace",
}


def read_concurrency_sweeps(text) -> tuple:
    """Every concurrency sweep of a file, each a ``MeasuredConcurrencySweep`` sorted by
    concurrency: the DeepLearningExamples Triton online table (times in ms; one sweep
    per configuration), a perf_analyzer -f CSV (µs -> ms; mean latency = the sum of
    its components), a Model Analyzer metrics-model-inference.csv (one sweep per
    model config; mean latency by Little's law, the file has none).

    ``text``: the file's text (``str``, or ``bytes`` as UTF-8), never a path.
    Unreadable input: ``ValueError`` naming the line and column.
    """
    text = _decode(text)
    kind = _kind(text, _SWEEP_KINDS, _ELSEWHERE)
    if kind == "triton_dle_table":
        return _labelled(_dle_sweeps(text))
    if kind == "perf_analyzer":
        return _labelled(_perf_analyzer_sweep(text))
    return _labelled(_model_analyzer_sweeps(text))


def read_concurrency_sweep(text, *, table=None) -> MeasuredConcurrencySweep:
    """One concurrency sweep of a file (see ``read_concurrency_sweeps``): the one
    labelled ``table``, or the first (with a note naming the others).

    >>> s = read_concurrency_sweep("Concurrency,Inferences/Second\\n1,100\\n2,160\\n")
    >>> s.mean_latency_ms.tolist()
    [10.0, 12.5]
    """
    return _pick(read_concurrency_sweeps(text), table)
