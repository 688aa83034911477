"""Readers of real tools' files: text in, frozen results out, units in the names.

* ``read_batch_profile`` / ``read_batch_profiles``: τ[b], the time of one batch by
  batch size (Model Analyzer, perf_analyzer -f, DeepLearningExamples tables, plain CSV)
* ``read_concurrency_sweep`` / ``read_concurrency_sweeps``: closed-loop throughput and
  latency by concurrency (DeepLearningExamples online table, perf_analyzer, Model Analyzer)
* ``read_trace``: request arrival times (s) and token counts (Azure LLM trace CSV,
  Mooncake JSON lines, plain CSV)
* ``read_vllm_bench``: a ``vllm bench serve --save-result`` summary
* ``read_request_records``: a serving run request by request (send time, tokens, TTFT,
  end-to-end time): DistServe ``.exp``, ``vllm bench serve --save-detailed`` JSON, CSV
* ``predict_online`` / ``compare_online``: the online (closed-loop) run of a Triton
  server predicted from its offline batch table, beside a measured one
  (``identify_online_terms``: its separated terms; ``read_server_breakdown``: a
  concurrency-2 run that measures the two the table cannot);
  ``compare_model_analyzer``: a Model Analyzer sweep against the closed-loop model

Each reader takes the file's text (``str`` or UTF-8 ``bytes``), never a path, detects
the format and raises ``ValueError`` naming the line and column of anything it cannot
read.  Formats, units and assumptions: docs/models/measured.md.
"""
from .profiles import read_batch_profile, read_batch_profiles
from .requests import read_request_records
from .results import (MeasuredBatchProfile, MeasuredConcurrencySweep, RequestRecords,
                      RequestTrace, VllmBenchResult)
from .sweeps import read_concurrency_sweep, read_concurrency_sweeps
from .traces import read_trace
from .vllm import read_vllm_bench

__all__ = ["read_batch_profile", "read_batch_profiles", "read_concurrency_sweep",
           "read_concurrency_sweeps", "read_trace", "read_vllm_bench", "read_request_records",
           "MeasuredBatchProfile", "MeasuredConcurrencySweep", "RequestTrace",
           "VllmBenchResult", "RequestRecords"]

# ---- model vs measurement (engine/measured/online.py)
from .online import (ModelAnalyzerComparison, OnlineComparison, OnlinePrediction,
                     compare_model_analyzer, compare_online, compare_profile_online,
                     cycle_latency_quantile_ms, predict_online, predict_profile_online,
                     transfer_time_ms)

__all__ += ["predict_online", "predict_profile_online", "transfer_time_ms", "compare_online",
            "compare_profile_online", "compare_model_analyzer", "cycle_latency_quantile_ms",
            "OnlinePrediction", "OnlineComparison", "ModelAnalyzerComparison"]

# ---- the separated terms of that prediction (engine/measured/online_terms.py)
from .online_terms import (OnlineTerms, ServerBreakdown, identify_online_terms,
                           read_server_breakdown, sharing_factor)

__all__ += ["identify_online_terms", "read_server_breakdown", "sharing_factor", "OnlineTerms",
            "ServerBreakdown"]
