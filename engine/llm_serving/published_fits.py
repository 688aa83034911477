"""Step costs from published step-time fits: DistServe's profiler JSON and the
Splitwise perf-model CSV.

* ``step_cost_from_distserve``: DistServe's profiler JSON (prefill a + b·Σl + c·Σl²,
  decode a + b·Σcontext + c·batch in two batch ranges)
* ``step_cost_from_splitwise``: the Splitwise perf-model CSV (prefill time of a batch
  of equal prompts, time of a decode step, batch 1-64, prompt 128-8192), fitted by
  non-negative least squares

Each returns a ``StepCostFit`` (``step_fit``); each reads the file's text, never a path.
Derivations: docs/models/llm_serving.md ("Sources of the step cost").
"""
from __future__ import annotations

import json
import math

import numpy as np

from ..core.domains import DECODE_FIT
from ..measured.parsing import line_of, quote, read_json_object
from .cost import StepCost
from .step_fit import StepCostFit, _bound_notes, _Csv, _nnls_fit, _pick, _r2, _text, _tp_key

__all__ = ["step_cost_from_distserve", "step_cost_from_splitwise"]

# --------------------------------------------------------------------------- DistServe

_DS_DECODE = ("decoding_smallbs", "decoding_largebs")
_DS_KEYS = ("prefill", *_DS_DECODE, "decoding_large_small_bs_threshold")


def _key_line(text: str, path) -> int:
    """Line of the last key of ``path`` found after each earlier one (1 when absent)."""
    at = 0
    for key in path:
        found = text.find(json.dumps(str(key)), at)
        if found < 0:
            break
        at = found
    return line_of(text, at)


def _ds_coefficients(text, entry, path, key) -> list:
    value = entry.get(key)
    line = _key_line(text, (*path, key))
    where = f"line {line}, field {' → '.join((*path, key))}"
    if key not in entry:
        raise ValueError(f"line {_key_line(text, path)}, field {' → '.join(path)}: no "
                         f"{key!r} key (expected {', '.join(_DS_KEYS)})")
    if key == "decoding_large_small_bs_threshold":
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < 1 or value != int(value):
            raise ValueError(f"{where}: expected a whole number ≥ 1 (a batch size), got "
                             f"{quote(value)}")
        return [int(value)]
    if not isinstance(value, list) or len(value) != 3:
        raise ValueError(f"{where}: expected a list of 3 numbers [a, b, c], got {quote(value)}")
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{where}[{i}]: expected a finite number, got {quote(v)}")
        if v < 0:
            raise ValueError(f"{where}[{i}]: expected a number ≥ 0 (a step time's "
                             f"coefficient), got {v!r}")
    return [float(v) for v in value]


def step_cost_from_distserve(text, model, tensor_parallel, *, decode: str = "joint",
                             context_tokens: tuple = (128, 2048),
                             typical_context: float = 1000.0) -> StepCostFit:
    """The step cost of one model and tensor-parallel degree in DistServe's profiler
    JSON (``profiler-a100-80g.{vllm,distserve}.json``): {model: {TP: {...}}}.

    ``"prefill": [a, b, c]`` = a + b·Σl + c·Σl² ms over the step's prompts l gives
    ``prefill_base_ms`` = a, ``prefill_ms_per_token`` = b, ``prefill_ms_per_token_sq``
    = c exactly (Q = l² for whole prompts).  The decode step is a + b·Σcontext +
    c·batch ms in two pieces, ``decoding_smallbs`` below
    ``decoding_large_small_bs_threshold`` T and ``decoding_largebs`` from it; a
    ``StepCost`` has one linear law:

    * ``decode="joint"`` (default): one law base_ms + context_ms_per_token·K +
      decode_ms_per_seq·D fitted to the two pieces sampled over batch 1..2T and
      per-request contexts spread evenly over ``context_tokens`` (K = batch ×
      context), by non-negative least squares of the relative error (a 20 ms step
      and a 200 ms one weigh alike); R² (in ms) and residuals against the pieces;
    * ``decode="small"`` / ``"large"``: that piece as published.

    Either way the notes give the largest difference between the two published pieces
    over batch 1..2T at ``typical_context`` tokens per request.  ``frontend_ms`` is
    not in the profile (measured offline, no API server): held at 0.

    ``model``: a key of the file (``"facebook/opt-13b"``; case and the ``owner/``
    prefix may be left out); ``tensor_parallel``: its degree.  ``ValueError`` naming
    the choices for an unknown one, the line for malformed JSON, the line and field for
    a missing, non-numeric or negative coefficient.
    """
    text = _text(text, "DistServe profiler JSON")
    DECODE_FIT.check(decode)
    lo, hi = (float(c) for c in context_tokens)
    if not (math.isfinite(lo) and math.isfinite(hi) and 1 <= lo < hi):
        raise ValueError(f"context_tokens must be (low, high) with 1 ≤ low < high, got "
                         f"{context_tokens!r}")
    if not (isinstance(typical_context, (int, float)) and math.isfinite(typical_context)
            and typical_context > 0):
        raise ValueError(f"typical_context must be a positive number, got {typical_context!r}")
    data = read_json_object(text, "a JSON object {model: {TP: {...}}} (DistServe's profiler "
                                  "JSON)")
    if not data:
        raise ValueError("line 1: expected a JSON object {model: {TP: {...}}}, got an empty "
                         "object")
    name = _pick(data, model, "model")
    models = data[name]
    if not isinstance(models, dict):
        raise ValueError(f"line {_key_line(text, (name,))}, field {name}: expected an object "
                         f"{{TP: {{...}}}}, got {quote(models)}")
    tp = _tp_key(tensor_parallel)
    if tp not in models:
        raise ValueError(f"unknown tensor_parallel {tp} for model {name}; the file has: "
                         f"{', '.join(models) or 'none'}")
    entry = models[tp]
    path = (name, tp)
    if not isinstance(entry, dict):
        raise ValueError(f"line {_key_line(text, path)}, field {name} → {tp}: expected an "
                         f"object with {', '.join(_DS_KEYS)}, got {quote(entry)}")
    pa, pb, pc = _ds_coefficients(text, entry, path, "prefill")
    small = _ds_coefficients(text, entry, path, "decoding_smallbs")
    large = _ds_coefficients(text, entry, path, "decoding_largebs")
    (threshold,) = _ds_coefficients(text, entry, path, "decoding_large_small_bs_threshold")

    batch = np.arange(1, 2 * threshold + 1, dtype=float)
    per_req = np.linspace(lo, hi, 16)
    d_grid, c_grid = (g.ravel() for g in np.meshgrid(batch, per_req, indexing="ij"))
    k_grid = d_grid * c_grid

    def piece(coef, d, k):
        return coef[0] + coef[1] * k + coef[2] * d

    published = np.where(d_grid < threshold, piece(small, d_grid, k_grid),
                         piece(large, d_grid, k_grid))
    notes = [f"prefill copied exactly: prefill_base_ms = {pa:.6g}, prefill_ms_per_token = "
             f"{pb:.6g}, prefill_ms_per_token_sq = {pc:.6g} (Σl² is Q for whole prompts)"]
    held, bound = ["frontend_ms"], []
    if decode == "joint":
        x = np.column_stack([np.ones_like(d_grid), d_grid, k_grid])
        coef, fitted, dropped, bound = _nnls_fit(
            x, published, ["base_ms", "decode_ms_per_seq", "context_ms_per_token"],
            ["context_ms_per_token", "decode_ms_per_seq", "base_ms"],
            weights=1.0 / np.maximum(published, max(float(published.max()), 1.0) * 1e-9))
        held += dropped
        base, per_seq, per_ctx = (coef["base_ms"], coef["decode_ms_per_seq"],
                                  coef["context_ms_per_token"])
        notes.append(f"decode: chose one linear law fitted (non-negative least squares of "
                     f"the relative error) to both published pieces, sampled at batch "
                     f"1..{2 * threshold} × 16 "
                     f"per-request contexts {lo:g}..{hi:g} tokens ({d_grid.size} points; "
                     f"small-batch piece below batch {threshold}, large-batch piece from it)")
    else:
        base, per_ctx, per_seq = small if decode == "small" else large
        fitted = piece((base, per_ctx, per_seq), d_grid, k_grid)
        notes.append(f"decode: chose the published {decode}-batch piece as it is "
                     f"(decoding_{decode}bs); residuals are against both pieces over batch "
                     f"1..{2 * threshold}, per-request contexts {lo:g}..{hi:g} tokens")
    residuals = published - fitted
    rel = np.divide(np.abs(residuals), published, out=np.zeros_like(published),
                    where=published > 0)
    notes.append(f"decode: largest difference from the published two-piece law "
                 f"{np.abs(residuals).max():.3g} ms (and at most {100 * rel.max():.2g} % of a "
                 f"step) over that range")
    d_typ = batch
    gap = np.abs(piece(small, d_typ, d_typ * typical_context)
                 - piece(large, d_typ, d_typ * typical_context))
    worst = int(np.argmax(gap))
    notes.append(f"decode: the two published pieces differ by up to {gap[worst]:.3g} ms "
                 f"(at batch {int(d_typ[worst])}) over batch 1..{2 * threshold} at "
                 f"{typical_context:g} context tokens per request")
    notes += _bound_notes(bound, "decode")
    notes.append("frontend_ms held at 0: the profile is measured offline (one batch, no API "
                 "server); the served engine's steps are slower and its first token waits "
                 "for the HTTP and tokenizer path")
    label = f"DistServe profiler · {name} · TP {tp}"
    cost = StepCost(base_ms=base, prefill_base_ms=pa, prefill_ms_per_token=pb,
                    prefill_ms_per_token_sq=pc, decode_ms_per_seq=per_seq,
                    context_ms_per_token=per_ctx, frontend_ms=0.0, label=label)
    return StepCostFit(cost=cost, r2={"decode": _r2(published, fitted)},
                       residuals_ms={"decode": residuals}, held_at_zero=tuple(held),
                       n_points=d_grid.size, notes=tuple(notes),
                       source=f"DistServe profiler JSON: model {name}, tensor_parallel {tp}")


# ---------------------------------------------------------------------------- Splitwise

_SW_TEXT = ("model", "hardware")
_SW_WHOLE = ("prompt_size", "batch_size", "token_size", "tensor_parallel")
_SW_TIMES = ("prompt_time", "token_time", "e2e_time")


def step_cost_from_splitwise(text, model, hardware, tensor_parallel, *,
                             drop_broken: bool = True) -> StepCostFit:
    """The step cost fitted to the Splitwise perf-model CSV (``data/perf_model.csv``
    of splitwise-sim: ``model, hardware, prompt_size, batch_size, token_size, …,
    prompt_time, token_time, e2e_time, tensor_parallel``, times in ms) for one model,
    hardware and tensor-parallel degree.

    Each row is a batch of ``batch_size`` b prompts of ``prompt_size`` l tokens, then
    decode steps up to ``token_size`` tokens.  Two non-negative least-squares fits
    over the rows (every repetition):

    * prefill: ``prompt_time`` = prefill_base_ms + prefill_ms_per_token·(b·l) +
      prefill_ms_per_token_sq·(b·l²);
    * decode: ``token_time`` = base_ms + decode_ms_per_seq·b + context_ms_per_token·(b ×
      context), context = l + n/2 the mean over the decode steps, with n the tokens
      generated: ``token_size``, or fewer where ``e2e_time`` shows the generation
      stopped early (n = 1 + (e2e_time − prompt_time)/token_time, within 1..token_size).

    ``drop_broken``: leave out a sweep point whose mean prefill is shorter than at a
    smaller batch of the same prompts (the TP 2 batch-64 points: not a batch of 64
    prompts).  ``frontend_ms`` is not measured (held at 0).  Unknown model, hardware or
    degree: ``ValueError`` listing the file's choices; an unreadable cell:
    ``ValueError`` naming its line and column.
    """
    name = "Splitwise perf-model CSV"
    table = _Csv(_text(text, name), name)
    col = {c: table.index([c]) for c in (*_SW_TEXT, *_SW_WHOLE, *_SW_TIMES)}
    models = table.strings(col["model"])
    hards = table.strings(col["hardware"])
    tps_all = table.numbers(col["tensor_parallel"], positive=True, whole=True)
    m = _pick(dict.fromkeys(models), model, "model")
    h = _pick(dict.fromkeys(x for x, y in zip(hards, models) if y == m), hardware, "hardware",
              f" for model {m}")
    tp = _tp_key(tensor_parallel)
    avail = sorted({int(t) for t, x, y in zip(tps_all, models, hards) if x == m and y == h})
    if int(tp) not in avail:
        raise ValueError(f"unknown tensor_parallel {tp} for model {m} on {h}; the file has: "
                         f"{', '.join(map(str, avail))}")
    rows = [i for i in range(len(table.rows))
            if models[i] == m and hards[i] == h and int(tps_all[i]) == int(tp)]
    v = {c: table.numbers(col[c], positive=True, whole=True, rows=rows)
         for c in ("prompt_size", "batch_size", "token_size")}
    v.update({c: table.numbers(col[c], positive=c != "e2e_time", rows=rows) for c in _SW_TIMES})
    lines = np.array([table.lines[i] for i in rows])
    notes = []
    keep = np.ones(len(rows), bool)
    if drop_broken:
        point = list(zip(v["prompt_size"], v["token_size"], v["batch_size"]))
        means = {}
        for p, t in zip(point, v["prompt_time"]):
            means.setdefault(p, []).append(t)
        means = {p: float(np.mean(ts)) for p, ts in means.items()}
        for p, mean in means.items():
            smaller = [(q, mq) for q, mq in means.items()
                       if q[:2] == p[:2] and q[2] < p[2] and mq > mean]
            if smaller:
                q, mq = max(smaller, key=lambda s: s[1])
                bad = np.array([pt == p for pt in point])
                keep &= ~bad
                notes.append(
                    f"dropped the point batch {int(p[2])}, prompt {int(p[0])}, "
                    f"{int(p[1])} tokens (lines {', '.join(map(str, lines[bad]))}): its mean "
                    f"prefill {mean:.4g} ms is shorter than {mq:.4g} ms at batch {int(q[2])}, "
                    f"so it cannot be a batch of {int(p[2])} prompts")
    b, l, tok = v["batch_size"][keep], v["prompt_size"][keep], v["token_size"][keep]
    prompt, step, e2e = v["prompt_time"][keep], v["token_time"][keep], v["e2e_time"][keep]
    if b.size == 0:
        raise ValueError(f"{name}: no rows left for {m} on {h} at TP {tp}")

    x_pre = np.column_stack([np.ones_like(b), b * l, b * l * l])
    pre, pre_fit, pre_held, pre_bound = _nnls_fit(
        x_pre, prompt, ["prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq"],
        ["prefill_ms_per_token_sq", "prefill_base_ms", "prefill_ms_per_token"])
    generated = np.clip(1.0 + (e2e - prompt) / step, 1.0, tok)
    early = generated < tok - 0.5
    context = l + generated / 2.0
    x_dec = np.column_stack([np.ones_like(b), b, b * context])
    dec, dec_fit, dec_held, dec_bound = _nnls_fit(
        x_dec, step, ["base_ms", "decode_ms_per_seq", "context_ms_per_token"],
        ["context_ms_per_token", "decode_ms_per_seq", "base_ms"])
    if early.any():
        notes.append(f"decode context: {int(early.sum())} of {b.size} rows stopped generating "
                     f"before token_size (e2e_time − prompt_time < (token_size − 1) × "
                     f"token_time): their tokens generated are taken from e2e_time")
    notes += _bound_notes(pre_bound, "prefill") + _bound_notes(dec_bound, "decode")
    for group, meas, fit in (("prefill", prompt, pre_fit), ("decode", step, dec_fit)):
        rel = np.abs(meas - fit) / meas
        i = int(np.argmax(rel))
        rms = 100 * np.sqrt(np.mean(rel ** 2))
        notes.append(f"{group}: largest error {100 * rel[i]:.3g} % (rms {rms:.2g} %), at "
                     f"batch {int(b[i])}, prompt {int(l[i])}: {meas[i]:.4g} ms measured, "
                     f"{fit[i]:.4g} ms fitted")
    if h.endswith("-pcap"):
        base_hw = h[:-len("-pcap")]
        notes.append(f"{h} rows are derived, not measured: prompt_time = 1.3 × {base_hw} "
                     f"exactly, token_time and e2e_time identical (a power-capped H100 "
                     f"assumed by the Splitwise authors); e2e_time was not re-derived, so "
                     f"the tokens generated read from it come out short")
    notes.append("frontend_ms held at 0: the rows time the model's steps, not a served "
                 "request's path from the client")
    notes.append(f"{b.size} rows (each repetition; the base point prompt 512, batch 1, "
                 f"128 tokens is in all three sweeps) fitted twice: prefill and decode")
    held = ["frontend_ms", *pre_held, *dec_held]
    label = f"Splitwise · {m} · {h} · TP {tp}"
    cost = StepCost(base_ms=dec["base_ms"], decode_ms_per_seq=dec["decode_ms_per_seq"],
                    context_ms_per_token=dec["context_ms_per_token"],
                    prefill_base_ms=pre["prefill_base_ms"],
                    prefill_ms_per_token=pre["prefill_ms_per_token"],
                    prefill_ms_per_token_sq=pre["prefill_ms_per_token_sq"], frontend_ms=0.0,
                    label=label)
    return StepCostFit(cost=cost,
                       r2={"prefill": _r2(prompt, pre_fit), "decode": _r2(step, dec_fit)},
                       residuals_ms={"prefill": prompt - pre_fit, "decode": step - dec_fit},
                       held_at_zero=tuple(held), n_points=b.size, notes=tuple(notes),
                       source=f"Splitwise perf-model CSV: model {m}, hardware {h}, "
                              f"tensor_parallel {tp}")
