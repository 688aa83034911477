"""LLM serving as vLLM, SGLang and TensorRT-LLM run it: continuous batching step by
step, chunked prefill within a token budget, a paged KV cache with preemption and a
prefix cache; TTFT and TPOT.

* ``StepCost``: the time of one scheduler step (``step_ms``), from typed numbers,
  published profiles or measured runs
* ``Scheduler``: ``max_num_seqs``, ``max_num_batched_tokens``, ``kv_cache_tokens``,
  ``block_size``, ``chunked_prefill``, ``prefix_caching``
* ``simulate_serving``: the compiled step-by-step simulator, open or closed loop
* ``ServingResult``: TTFT, TPOT, ITL, e2e and queue summaries, throughput, KV use,
  preemptions; ``ServingRecords`` per request

Derivations, rules and measured errors: docs/models/llm_serving.md.
"""
from .cost import StepCost, kv_bytes_per_token, kv_capacity_tokens
from .result import LatencySummary, ServingRecords, ServingResult, Timeline, summarize
from .scheduler import Scheduler
from .sim import simulate_serving

__all__ = ["StepCost", "Scheduler", "simulate_serving", "ServingResult", "ServingRecords",
           "LatencySummary", "Timeline", "summarize", "kv_capacity_tokens",
           "kv_bytes_per_token"]
from .capacity import (CapacityLimit, ServingApproximation, WorkloadMoments,
                       approximate_serving, capacity_limit, max_rate_per_s, workload_moments)

__all__ += ["max_rate_per_s", "capacity_limit", "CapacityLimit", "approximate_serving",
            "ServingApproximation", "workload_moments", "WorkloadMoments"]

from .sources import (StepCostFit, fit_step_cost_vllm_bench, step_cost_from_csv,
                      step_cost_from_distserve, step_cost_from_splitwise)
from .presets import ServingPreset, load_serving_preset, serving_presets

__all__ += ["StepCostFit", "step_cost_from_distserve", "step_cost_from_splitwise",
            "fit_step_cost_vllm_bench", "step_cost_from_csv", "ServingPreset", "serving_presets",
            "load_serving_preset"]
from .compare import Calibration, calibrate_step_cost, compare_replay, compare_vllm_bench, replay

__all__ += ["compare_replay", "compare_vllm_bench", "calibrate_step_cost", "Calibration", "replay"]
from .disaggregated import LINK_GB_PER_S, simulate_disaggregated, transfer_ms

__all__ += ["simulate_disaggregated", "transfer_ms", "LINK_GB_PER_S"]
from .slo import SloRate, largest_rate_meeting, meets_target

__all__ += ["largest_rate_meeting", "meets_target", "SloRate"]
