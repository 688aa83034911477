"""Where a ``StepCost`` comes from: published step-time fits and measured runs.

* ``step_cost_from_distserve``: DistServe's profiler JSON (prefill a + b·Σl + c·Σl²,
  decode a + b·Σcontext + c·batch in two batch ranges)
* ``step_cost_from_splitwise``: the Splitwise perf-model CSV (prefill time of a batch
  of equal prompts, time of a decode step, batch 1-64, prompt 128-8192), fitted by
  non-negative least squares
* ``fit_step_cost_vllm_bench``: ``vllm bench serve --save-result`` summaries at
  concurrency 1 (TPOT against the mean context, TTFT against the chunked prompt)
* ``step_cost_from_csv``: a CSV of measured step times (P, Q, D, K, step_ms)

Each returns a ``StepCostFit``: the cost, R² and residuals per term group, the fields
the data could not identify (held at 0), and notes on what was assumed.  Every reader
takes the file's text (``str`` or UTF-8 ``bytes``), never a path; anything it cannot
read raises ``ValueError`` naming the line and the column or field.
Derivations: docs/models/llm_serving.md ("Sources of the step cost").
"""
from __future__ import annotations

from .measured_fits import fit_step_cost_vllm_bench, step_cost_from_csv
from .published_fits import step_cost_from_distserve, step_cost_from_splitwise
from .step_fit import StepCostFit

__all__ = ["StepCostFit", "step_cost_from_distserve", "step_cost_from_splitwise",
           "fit_step_cost_vllm_bench", "step_cost_from_csv"]
