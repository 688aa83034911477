"""LLM serving as vLLM, SGLang and TensorRT-LLM run it: continuous batching step by
step, chunked prefill within a token budget, a paged KV cache with preemption and a
prefix cache; TTFT and TPOT.

* ``StepCost``: the time of one scheduler step (``step_ms``), from typed numbers,
  published profiles or measured runs (``sources``: DistServe, Splitwise, vllm bench,
  CSV; ``presets``)
* ``Scheduler``: ``max_num_seqs``, ``max_num_batched_tokens``, ``kv_cache_tokens``,
  ``block_size``, ``chunked_prefill``, ``prefix_caching``
* ``simulate_serving``: the compiled step-by-step simulator, open or closed loop;
  ``simulate_disaggregated``: prefill and decode on separate instances;
  ``simulate_fleet``: replicas behind a dispatcher (random, round robin)
* ``ServingResult``: TTFT, TPOT, ITL, e2e and queue summaries, throughput, KV use,
  preemptions; ``ServingRecords`` per request
* ``max_rate_per_s`` (capacity), ``approximate_serving`` (means without simulation),
  ``approximate_percentiles`` (TTFT, TPOT, e2e percentiles without simulation),
  ``largest_rate_meeting`` (a TTFT and TPOT target, by simulation)
* ``compare_replay``, ``calibrate_step_cost``, ``compare_vllm_bench``: the model
  against real servers' runs
* ``trace_tokens``: a trace's prompts and replies, request by request (``TraceTokens``);
  ``load_axis_top_per_s``, ``rate_step_per_s``: a load axis's round end and step

Derivations, rules and measured errors: docs/models/llm_serving.md.
"""
from .capacity import (CapacityLimit, ServingApproximation, ServingPercentiles,
                       WorkloadMoments, approximate_percentiles, approximate_serving,
                       capacity_limit, max_rate_per_s, workload_moments)
from .compare import (Calibration, calibrate_step_cost, compare_replay, compare_vllm_bench,
                      replay)
from .cost import StepCost, kv_bytes_per_token, kv_capacity_tokens
from .disaggregated import LINK_GB_PER_S, simulate_disaggregated, transfer_ms
from .fleet import DISPATCH, simulate_fleet
from .presets import ServingPreset, load_serving_preset, serving_presets
from .result import LatencySummary, ServingRecords, ServingResult, Timeline, summarize
from .scheduler import Scheduler
from .sim import simulate_serving
from .slo import SloRate, largest_rate_meeting, meets_target
from .measured_fits import fit_step_cost_vllm_bench, step_cost_from_csv
from .published_fits import step_cost_from_distserve, step_cost_from_splitwise
from .step_fit import StepCostFit
from .workload import TraceTokens, load_axis_top_per_s, rate_step_per_s, trace_tokens

__all__ = [
    "StepCost", "Scheduler", "simulate_serving", "simulate_disaggregated", "simulate_fleet",
    "DISPATCH", "ServingResult",
    "ServingRecords", "LatencySummary", "Timeline", "summarize", "kv_capacity_tokens",
    "kv_bytes_per_token", "transfer_ms", "LINK_GB_PER_S",
    "max_rate_per_s", "capacity_limit", "CapacityLimit", "approximate_serving",
    "ServingApproximation", "approximate_percentiles", "ServingPercentiles",
    "workload_moments", "WorkloadMoments",
    "largest_rate_meeting", "meets_target", "SloRate",
    "StepCostFit", "step_cost_from_distserve", "step_cost_from_splitwise",
    "fit_step_cost_vllm_bench", "step_cost_from_csv", "ServingPreset", "serving_presets",
    "load_serving_preset",
    "compare_replay", "compare_vllm_bench", "calibrate_step_cost", "Calibration", "replay",
    "TraceTokens", "trace_tokens", "load_axis_top_per_s", "rate_step_per_s"]
