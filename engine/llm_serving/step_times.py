"""A ``StepCost`` fitted to plain arrays of prompt-step and decode-step times (pure
numpy; any source: AIConfigurator's estimates, a profiler's table, a measurement).

``fit_step_cost_from_step_times`` fits the prefill law (``prefill_base_ms``,
``prefill_ms_per_token``, ``prefill_ms_per_token_sq``) to the prompt steps and the decode
law (``base_ms``, ``decode_ms_per_seq``, ``context_ms_per_token``) to the decode steps
by non-negative least squares (``step_fit``).
Derivations: docs/models/llm_serving.md ("AIConfigurator bridge").
"""
from __future__ import annotations

import numpy as np

from ..core.domains import SERVING_TOKENS, STEP_BATCH, STEP_CONTEXT_TOKENS, STEP_TIME_MS
from .cost import StepCost
from .step_fit import StepCostFit, _bound_notes, _nnls_fit, _r2

__all__ = ["fit_step_cost_from_step_times"]

_PREFILL_NAMES = ["prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq"]
_DECODE_NAMES = ["base_ms", "decode_ms_per_seq", "context_ms_per_token"]


def _group(name: str, arrays, parts, optional_first: bool):
    """The arrays of one group (``prefill`` or ``decode``) as equal-length float arrays,
    each checked against its domain; ``ValueError`` naming the group and the part."""
    if isinstance(arrays, (str, bytes)) or not isinstance(arrays, (tuple, list)):
        want = " or ".join(f"({', '.join(p for p, _ in parts[k:])})"
                           for k in ((0, 1) if optional_first else (0,)))
        raise ValueError(f"{name} must be a tuple of arrays {want}, got "
                         f"{type(arrays).__name__}")
    if optional_first and len(arrays) == len(parts) - 1:
        arrays = (1, *arrays)
    if len(arrays) != len(parts):
        raise ValueError(f"{name} must hold {len(parts)} arrays "
                         f"({', '.join(p for p, _ in parts)}), got {len(arrays)}")
    out = []
    for (part, domain), values in zip(parts, arrays):
        label = f"{name} {part}"
        if isinstance(values, (bool, np.bool_, str, bytes)) or (
                isinstance(values, (list, tuple, np.ndarray))
                and any(isinstance(v, (bool, np.bool_, str, bytes))
                        for v in np.ravel(np.asarray(values, dtype=object)))):
            raise ValueError(f"{label} must be {domain.describe()} (or an array of them), "
                             f"got {values!r}"[:300])
        out.append(np.ravel(domain.check(values, label)).astype(float))
    try:
        out = np.broadcast_arrays(*out)
    except ValueError:
        raise ValueError(f"{name}: the arrays ({', '.join(p for p, _ in parts)}) have "
                         f"lengths {', '.join(str(a.size) for a in out)}, which do not "
                         f"match") from None
    if out[0].size == 0:
        raise ValueError(f"{name}: no step times given (empty arrays)")
    return [np.array(a, dtype=float) for a in out]


def _error_note(group: str, meas, fit, where) -> str:
    rel = np.abs(meas - fit) / meas
    i = int(np.argmax(rel))
    rms = 100 * np.sqrt(np.mean(rel ** 2))
    return (f"{group}: largest error {100 * rel[i]:.3g} % (rms {rms:.2g} %), at {where(i)}: "
            f"{meas[i]:.4g} ms given, {fit[i]:.4g} ms fitted")


def fit_step_cost_from_step_times(prefill, decode, *, label: str = "step times",
                                  source: str = "step times given as arrays") -> StepCostFit:
    """The ``StepCost`` fitted to prompt-step and decode-step times (pure numpy).

    ``prefill = (batch, prompt_tokens, ms)`` (or ``(prompt_tokens, ms)``: batch 1): steps
    computing ``batch`` b whole prompts of l tokens each and nothing else, so P = b·l and
    Q = b·l²::

        ms = prefill_base_ms + prefill_ms_per_token·(b·l) + prefill_ms_per_token_sq·(b·l²)

    ``decode = (batch, context_tokens, ms)``: steps of b decoding requests with c context
    tokens each (prompt + tokens so far), D = b and K = b·c::

        ms = base_ms + decode_ms_per_seq·b + context_ms_per_token·(b·c)

    Arrays broadcast (a scalar batch serves all steps).  Each group is fitted by
    non-negative least squares of the relative error (a 7 ms step and a 200 ms one weigh
    alike); ``r2`` and ``residuals_ms`` (given − fitted, ms, in the order given) per
    group.  A term the grid does not identify is held at 0 and named in
    ``held_at_zero``; ``frontend_ms`` is not a step's time (held at 0).  Noise-free
    times of a ``StepCost`` give it back, with R² = 1.

    ``ValueError`` naming the group and the part: a batch not a whole number ≥ 1, a
    token count below 1, a time not > 0, arrays of lengths that do not match, no steps.
    """
    if not isinstance(label, str) or not isinstance(source, str):
        raise ValueError(f"label and source must be text, got {label!r} and {source!r}")
    pb, pl, pms = _group("prefill", prefill, (("batch", STEP_BATCH),
                                              ("prompt_tokens", SERVING_TOKENS),
                                              ("ms", STEP_TIME_MS)), True)
    db, dc, dms = _group("decode", decode, (("batch", STEP_BATCH),
                                            ("context_tokens", STEP_CONTEXT_TOKENS),
                                            ("ms", STEP_TIME_MS)), False)
    x_pre = np.column_stack([np.ones_like(pb), pb * pl, pb * pl * pl])
    pre, pre_fit, pre_held, pre_bound = _nnls_fit(
        x_pre, pms, _PREFILL_NAMES,
        ["prefill_ms_per_token_sq", "prefill_base_ms", "prefill_ms_per_token"],
        weights=1.0 / pms)
    x_dec = np.column_stack([np.ones_like(db), db, db * dc])
    dec, dec_fit, dec_held, dec_bound = _nnls_fit(
        x_dec, dms, _DECODE_NAMES, ["context_ms_per_token", "decode_ms_per_seq", "base_ms"],
        weights=1.0 / dms)
    notes = [f"prefill: {pms.size} prompt-only steps of b whole prompts of l tokens (P = "
             f"b·l, Q = b·l²), batches {_listed(pb)}, prompts {_listed(pl)} tokens; "
             f"non-negative least squares of the relative error",
             f"decode: {dms.size} decode-only steps of b requests at c context tokens each "
             f"(D = b, K = b·c), batches {_listed(db)}, contexts {_listed(dc)} tokens; "
             f"non-negative least squares of the relative error"]
    for name in (*pre_held, *dec_held):
        notes.append(f"{name} held at 0: the grid does not identify it (its column is zero "
                     f"or within 0.1 % of a combination of the others)")
    notes += _bound_notes(pre_bound, "prefill") + _bound_notes(dec_bound, "decode")
    notes.append(_error_note("prefill", pms, pre_fit,
                             lambda i: f"batch {pb[i]:g}, prompt {pl[i]:g}"))
    notes.append(_error_note("decode", dms, dec_fit,
                             lambda i: f"batch {db[i]:g}, context {dc[i]:g}"))
    for group, n, k in (("prefill", pms.size, 3 - len(pre_held)),
                        ("decode", dms.size, 3 - len(dec_held))):
        if n <= k:
            notes.append(f"{group}: {n} steps for {k} coefficients: the fit passes through "
                         f"every step, R² = 1 says nothing")
    notes.append("frontend_ms held at 0: a step's time holds no client path (HTTP, "
                 "tokenizer)")
    cost = StepCost(**pre, **dec, frontend_ms=0.0, label=label)
    return StepCostFit(cost=cost, r2={"prefill": _r2(pms, pre_fit), "decode": _r2(dms, dec_fit)},
                       residuals_ms={"prefill": pms - pre_fit, "decode": dms - dec_fit},
                       held_at_zero=("frontend_ms", *pre_held, *dec_held),
                       n_points=pms.size + dms.size, notes=tuple(notes), source=source)


def _listed(values) -> str:
    vals = sorted({float(v) for v in np.ravel(values)})
    text = ", ".join(f"{v:g}" for v in vals[:12])
    return text + (f" … ({len(vals)} values)" if len(vals) > 12 else "")
