"""``vllm bench serve --save-result`` summaries: one JSON object per run.

Times are in ms in the file (``*_ms`` keys), the run's ``duration`` in s, throughputs
per s.  ``"request_rate": "inf"`` (every prompt sent at once) is a string; ``label``
and ``request_goodput`` may be null.
"""
from __future__ import annotations

import math
import re

from .parsing import _decode, _key_line, quote, read_json_object
from .results import VllmBenchResult

_METRIC = re.compile(r"(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)_ms")
_REQUIRED = ("completed", "request_throughput", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
             "p99_tpot_ms", "total_input_tokens", "total_output_tokens")
_SMALL_RUN = 100          # fewer requests: the p99 is about the maximum


class _Fields:
    """Checked access to the keys of one parsed JSON object."""

    def __init__(self, text: str, data: dict):
        self.text, self.data = text, data

    def number(self, key: str, *, required: bool = False, whole: bool = False,
               positive: bool = False):
        """``data[key]`` as a finite number ≥ 0 (> 0 with ``positive``; an int with
        ``whole``); None when absent or null and not ``required``."""
        value = self.data.get(key)
        if value is None and not required:
            return None
        ok = type(value) in (int, float) and (type(value) is int or math.isfinite(value))
        if ok and whole:
            ok = type(value) is int or value == int(value)
        if ok:
            ok = value > 0 if positive else value >= 0
        if not ok:
            what = f"{'a positive' if positive else 'a non-negative'} " + (
                "whole number" if whole else "number")
            got = "no such key" if key not in self.data else quote(value)
            raise ValueError(f"line {_key_line(self.text, key)}, key {key!r}: expected "
                             f"{what}, got {got}")
        return int(value) if whole else float(value)


def _rate(fields: _Fields):
    """``request_rate`` per s: a number, or inf for the string "inf"; None if absent."""
    value = fields.data.get("request_rate")
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
        return math.inf
    if type(value) is float and value == math.inf:
        return math.inf
    return fields.number("request_rate", positive=True)


def read_vllm_bench(text) -> VllmBenchResult:
    """One ``vllm bench serve --save-result`` JSON summary (ms, s, per s as in the file).

    ``text``: the file's text (``str``, or ``bytes`` as UTF-8), never a path.  Needs
    completed, request_throughput, mean/p99 TTFT and TPOT and the token totals;
    everything else is optional (``date`` is kept as the file's string, else None).
    Unreadable input: ``ValueError`` naming the line and the key.

    >>> r = read_vllm_bench('{"completed": 6, "request_throughput": 0.5, "mean_ttft_ms": 90,'
    ...                     ' "p99_ttft_ms": 120, "mean_tpot_ms": 17, "p99_tpot_ms": 18,'
    ...                     ' "total_input_tokens": 600, "total_output_tokens": 60,'
    ...                     ' "request_rate": "inf", "max_concurrency": 1}')
    >>> r.request_rate_per_s, r.mean_tpot_ms, r.max_concurrency
    (inf, 17.0, 1)
    """
    text = _decode(text)
    data = read_json_object(text, "a vllm bench serve --save-result JSON object (one run's "
                                  "summary)")
    f = _Fields(text, data)
    got = {k: f.number(k, required=True, whole=k.startswith(("completed", "total_")))
           for k in _REQUIRED}
    cap = f.number("max_concurrency", whole=True, positive=True)
    prompts = f.number("num_prompts", whole=True)
    percentiles = {k: f.number(k) for k in data if _METRIC.fullmatch(k)}
    model = data.get("model_id")
    date = data.get("date")
    notes = []
    n = got["completed"]
    if prompts is not None and n < prompts:
        notes.append(f"{prompts - n} of {prompts} requests did not complete")
    if n < _SMALL_RUN:
        notes.append(f"{n} requests only: a p99 is about their maximum")
    if n:
        notes.append(f"mean output tokens per request: total_output_tokens / completed = "
                     f"{got['total_output_tokens'] / n:g} (a run may generate fewer than "
                     f"asked: use the totals)")
    return VllmBenchResult(
        max_concurrency=cap, completed=n, request_throughput_per_s=got["request_throughput"],
        mean_ttft_ms=got["mean_ttft_ms"], p99_ttft_ms=got["p99_ttft_ms"],
        mean_tpot_ms=got["mean_tpot_ms"], p99_tpot_ms=got["p99_tpot_ms"],
        total_input_tokens=got["total_input_tokens"],
        total_output_tokens=got["total_output_tokens"],
        median_ttft_ms=percentiles.get("median_ttft_ms"),
        median_tpot_ms=percentiles.get("median_tpot_ms"),
        mean_itl_ms=percentiles.get("mean_itl_ms"),
        median_itl_ms=percentiles.get("median_itl_ms"),
        p99_itl_ms=percentiles.get("p99_itl_ms"),
        duration_s=f.number("duration"), num_prompts=prompts, request_rate_per_s=_rate(f),
        output_throughput_per_s=f.number("output_throughput"),
        model_id=model if isinstance(model, str) else None,
        percentiles_ms={k: v for k, v in percentiles.items() if v is not None},
        notes=tuple(notes), date=date if isinstance(date, str) else None)
