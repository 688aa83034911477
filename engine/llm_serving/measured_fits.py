"""Step costs fitted to measured runs: ``vllm bench serve --save-result`` summaries
and a CSV of measured step times.

* ``fit_step_cost_vllm_bench``: summaries at concurrency 1 (TPOT against the mean
  context, TTFT against the chunked prompt)
* ``step_cost_from_csv``: a CSV of measured step times (P, Q, D, K, step_ms)

Each returns a ``StepCostFit`` (``step_fit``); anything unreadable raises ``ValueError``
naming the run or the line and column.
Derivations: docs/models/llm_serving.md ("Sources of the step cost").
"""
from __future__ import annotations

import math

import numpy as np

from ..measured import VllmBenchResult, read_vllm_bench
from .cost import StepCost
from .step_fit import (StepCostFit, _bound_notes, _COST_FIELDS, _Csv, _nnls_fit, _r2, _text)

__all__ = ["fit_step_cost_vllm_bench", "step_cost_from_csv"]

# --------------------------------------------------------------------------- vllm bench

def _chunk_sums(prompt: float, budget: int) -> tuple[float, float, float]:
    """(chunk steps, Σ x_k, Σ x_k·e_k) of a prompt of ``prompt`` tokens computed alone
    in chunks of ``budget`` tokens (the last one shorter; e_k the chunk's end)."""
    n = max(1, math.ceil(prompt / budget - 1e-9))
    x = np.full(n, float(budget))
    x[-1] = prompt - budget * (n - 1)
    e = np.cumsum(x)
    return float(n), float(x.sum()), float(np.sum(x * e))


def fit_step_cost_vllm_bench(runs, *, max_num_batched_tokens: int = 2048) -> StepCostFit:
    """The step cost fitted to ``vllm bench serve --save-result`` summaries (the files'
    texts, or ``VllmBenchResult``) at concurrency 1, where one request runs alone.

    Per run: prompt l = total_input_tokens / completed, reply o = total_output_tokens /
    completed (a run may generate fewer tokens than asked).

    * TPOT: a lone request's decode steps (D = 1, context l + 1 … l + o − 1), so
      TPOT = base_ms + decode_ms_per_seq + context_ms_per_token·(l + o/2): fitted by
      non-negative least squares over the runs' ``mean_tpot_ms``.  base_ms and
      decode_ms_per_seq are not separable at D = 1: all of it goes to base_ms,
      decode_ms_per_seq is held at 0.
    * TTFT: the prompt runs alone in ⌈l/B⌉ prompt-only chunk steps (B =
      ``max_num_batched_tokens``), chunk k of x_k tokens ending at e_k:
      TTFT = frontend_ms + Σ_k (prefill_base_ms + a·x_k + a_sq·x_k·e_k), fitted by
      non-negative least squares over the runs' ``median_ttft_ms`` (``mean_ttft_ms``
      where a run has no median).  prefill_base_ms is identified only where the chunk
      count is not proportional to the prompt (prompts that are not whole multiples of
      B); otherwise it is held at 0 and the per-chunk cost lands in a.

    R² and residuals per run, in the order of the concurrency-1 runs given.
    ``ValueError`` when no run has ``max_concurrency`` 1, or a run is unreadable
    (naming the run and the line).
    """
    budget = max_num_batched_tokens
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"max_num_batched_tokens must be a whole number ≥ 1, got {budget!r}")
    if isinstance(runs, (str, bytes, bytearray, VllmBenchResult)):
        runs = [runs]
    try:
        runs = list(runs)
    except TypeError:
        raise ValueError(f"runs must be a list of vllm bench serve --save-result texts, got "
                         f"{type(runs).__name__}") from None
    results = []
    for i, run in enumerate(runs):
        if isinstance(run, VllmBenchResult):
            results.append(run)
            continue
        try:
            results.append(read_vllm_bench(run))
        except ValueError as err:
            raise ValueError(f"run {i}: {err}") from None
    if not results:
        raise ValueError("no runs given: expected vllm bench serve --save-result summaries")
    lone = [(i, r) for i, r in enumerate(results) if r.max_concurrency == 1]
    if not lone:
        seen = sorted({str(r.max_concurrency) for r in results})
        raise ValueError(f"no run at concurrency 1 (max_concurrency == 1): the runs have "
                         f"max_concurrency {', '.join(seen)}; at higher concurrency requests "
                         f"share steps and the step cost is not separable this way")
    for i, r in lone:
        if r.completed < 1 or r.total_input_tokens < 1 or r.total_output_tokens < 1:
            raise ValueError(f"run {i}: no completed requests or no tokens (completed "
                             f"{r.completed}, total_input_tokens {r.total_input_tokens}, "
                             f"total_output_tokens {r.total_output_tokens})")
    prompt = np.array([r.total_input_tokens / r.completed for _, r in lone])
    reply = np.array([r.total_output_tokens / r.completed for _, r in lone])
    tpot = np.array([r.mean_tpot_ms for _, r in lone])
    used_median = [r.median_ttft_ms is not None for _, r in lone]
    ttft = np.array([r.median_ttft_ms if r.median_ttft_ms is not None else r.mean_ttft_ms
                     for _, r in lone])
    notes = [f"concurrency-1 runs used: {', '.join(str(i) for i, _ in lone)} of {len(results)} "
             f"(mean prompt {', '.join(f'{p:.6g}' for p in prompt)} tokens; mean reply "
             f"{', '.join(f'{o:.4g}' for o in reply)} tokens)"]

    context = prompt + reply / 2.0
    x_dec = np.column_stack([np.ones_like(context), context])
    dec, dec_fit, dec_held, dec_bound = _nnls_fit(
        x_dec, tpot, ["base_ms", "context_ms_per_token"], ["context_ms_per_token", "base_ms"])
    notes.append("decode: base_ms holds base_ms + decode_ms_per_seq: at concurrency 1 every "
                 "decode step has D = 1, so the two are not separable; decode_ms_per_seq "
                 "held at 0 (runs at higher concurrency share steps with prompt chunks and "
                 "do not separate it either without a simulation)")

    sums = np.array([_chunk_sums(p, budget) for p in prompt])
    x_pre = np.column_stack([np.ones(len(prompt)), sums])
    pnames = ["frontend_ms", "prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq"]
    pre, pre_fit, pre_held, pre_bound = _nnls_fit(
        x_pre, ttft, pnames,
        ["prefill_base_ms", "prefill_ms_per_token_sq", "frontend_ms", "prefill_ms_per_token"])
    if "prefill_base_ms" in pre_held:
        notes.append(f"prefill: prefill_base_ms held at 0: the chunk counts "
                     f"({', '.join(f'{n:g}' for n in sums[:, 0])}) are (nearly) the prompts / "
                     f"{budget}, so a per-chunk cost cannot be told from a per-token one; it "
                     f"is inside prefill_ms_per_token (exact for full {budget}-token chunks)")
    if all(used_median):
        notes.append("TTFT: median_ttft_ms of each run, not the mean: request 0 of every "
                     "run is a prefix-cache hit (vllm bench serve sends it alone first as a "
                     "test), which the median leaves out; the fit assumes the median request "
                     "computes its whole prompt (a later run hitting prompts an earlier run "
                     "computed would make the prompt terms look cheaper)")
    else:
        missing = [str(i) for (i, _), u in zip(lone, used_median) if not u]
        notes.append(f"TTFT: median_ttft_ms where present, mean_ttft_ms for runs "
                     f"{', '.join(missing)} (no median in the file): a mean mixes in any "
                     f"prefix-cache hit (request 0 of a vllm bench serve run is one)")
    notes.append(f"TTFT: chunked prefill with a budget of {budget} tokens per step; prompt "
                 f"steps alone (no decode in them), so each starts from prefill_base_ms")
    notes += _bound_notes(dec_bound, "decode") + _bound_notes(pre_bound, "prefill")
    n_runs = len(lone)
    k_dec = 2 - len(dec_held)
    k_pre = 4 - len(pre_held)
    for group, k in (("decode", k_dec), ("prefill", k_pre)):
        if n_runs <= k:
            notes.append(f"{group}: {n_runs} runs for {k} coefficients: the fit passes "
                         f"through every run, R² = 1 says nothing")
    held = sorted({"decode_ms_per_seq", *dec_held, *pre_held}, key=_COST_FIELDS.index)
    label = f"vllm bench serve · {n_runs} concurrency-1 runs"
    models = {r.model_id for _, r in lone if r.model_id}
    if len(models) == 1:
        label += f" · {models.pop()}"
    cost = StepCost(base_ms=dec["base_ms"], context_ms_per_token=dec["context_ms_per_token"],
                    decode_ms_per_seq=0.0, prefill_base_ms=pre["prefill_base_ms"],
                    prefill_ms_per_token=pre["prefill_ms_per_token"],
                    prefill_ms_per_token_sq=pre["prefill_ms_per_token_sq"],
                    frontend_ms=pre["frontend_ms"], label=label)
    return StepCostFit(cost=cost, r2={"prefill": _r2(ttft, pre_fit), "decode": _r2(tpot, dec_fit)},
                       residuals_ms={"prefill": ttft - pre_fit, "decode": tpot - dec_fit},
                       held_at_zero=tuple(held), n_points=n_runs, notes=tuple(notes),
                       source=f"vllm bench serve --save-result: {n_runs} concurrency-1 runs, "
                              f"chunked prefill budget {budget}")


# ---------------------------------------------------------------------------------- CSV

_CSV_COLUMNS = {"prompt_tokens": ("prompt_tokens", "P"),
                "prompt_tokens_sq": ("prompt_tokens_sq", "Q"),
                "decoding": ("decoding", "D"),
                "context_tokens": ("context_tokens", "K"),
                "step_ms": ("step_ms",)}


def step_cost_from_csv(text) -> StepCostFit:
    """The step cost fitted to a CSV of measured step times, one step a row::

        prompt_tokens,prompt_tokens_sq,decoding,context_tokens,step_ms
        2048,4194304,0,0,212.5
        0,0,32,40960,24.1

    (P, Q, D, K of ``StepCost.step_ms``; the short names P, Q, D, K work too;
    ``prompt_tokens_sq`` may be left out: Q = P², each step's prompt tokens one whole
    prompt computed at once).  Non-negative least squares of every term: ``base_ms`` on
    steps with D > 0, ``prefill_base_ms`` on prompt-only steps (P > 0, D = 0).  A term
    the rows do not identify is held at 0 (``held_at_zero``); with no prompt-only step
    ``prefill_base_ms`` is ``base_ms`` (StepCost's default).  R² and residuals per
    group: "prefill" (prompt-only steps) and "decode" (steps with D > 0).
    ``frontend_ms`` is not a step's: held at 0.

    ``ValueError`` naming the line and column of a missing column, a non-numeric,
    negative or fractional (P, D, K) cell, or a step computing nothing (P = D = 0).
    """
    name = "step-time CSV"
    table = _Csv(_text(text, name), name)
    col = {k: table.index(v, required=k != "prompt_tokens_sq") for k, v in _CSV_COLUMNS.items()}
    p = table.numbers(col["prompt_tokens"], whole=True)
    d = table.numbers(col["decoding"], whole=True)
    k = table.numbers(col["context_tokens"], whole=True)
    y = table.numbers(col["step_ms"])
    notes = []
    if col["prompt_tokens_sq"] is None:
        q = p * p
        notes.append("no prompt_tokens_sq column: Q = P² (each step's prompt tokens taken as "
                     "one whole prompt computed at once)")
    else:
        q = table.numbers(col["prompt_tokens_sq"])
    empty = np.flatnonzero((p == 0) & (d == 0))
    if empty.size:
        i = int(empty[0])
        raise ValueError(f"{table.where(i, col['prompt_tokens'])}: a step with "
                         f"prompt_tokens 0 and decoding 0 computes nothing (its time is 0 "
                         f"by definition); leave the row out")
    bad = np.flatnonzero((d == 0) & (k > 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{table.where(i, col['context_tokens'])}: context_tokens "
                         f"{k[i]:g} with decoding 0: K sums the decoding requests' contexts")
    bad = np.flatnonzero((p == 0) & (q > 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{table.where(i, col['prompt_tokens_sq'])}: prompt_tokens_sq "
                         f"{q[i]:g} with prompt_tokens 0")
    dec_rows = d > 0
    pre_rows = ~dec_rows
    names = ["base_ms", "prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq",
             "decode_ms_per_seq", "context_ms_per_token"]
    x = np.column_stack([dec_rows.astype(float), pre_rows.astype(float), p, q, d, k])
    coef, fitted, held, bound = _nnls_fit(
        x, y, names, ["prefill_ms_per_token_sq", "context_ms_per_token", "prefill_base_ms",
                      "base_ms", "decode_ms_per_seq", "prefill_ms_per_token"])
    held_out = [h for h in held if not (h == "prefill_base_ms" and not pre_rows.any())]
    if not pre_rows.any():
        coef["prefill_base_ms"] = coef["base_ms"]
        notes.append("no prompt-only step (P > 0, D = 0): prefill_base_ms = base_ms "
                     "(StepCost's default)")
    for h in held_out:
        notes.append(f"{h} held at 0: the rows do not identify it (its column is zero or "
                     f"within 1 % of a combination of the others)")
    notes += _bound_notes(bound, "fit")
    notes.append("frontend_ms held at 0: a step time does not hold the client's path")
    cost = StepCost(**coef, frontend_ms=0.0, label="measured step times (CSV)")
    r2, res = {}, {}
    for group, rows in (("prefill", pre_rows), ("decode", dec_rows)):
        if rows.any():
            r2[group] = _r2(y[rows], fitted[rows])
            res[group] = y[rows] - fitted[rows]
    return StepCostFit(cost=cost, r2=r2, residuals_ms=res,
                       held_at_zero=("frontend_ms", *held_out), n_points=y.size,
                       notes=tuple(notes), source=f"CSV of {y.size} measured step times")
