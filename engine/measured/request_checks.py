"""What every request-records reader shares: the per-request checks (finite, ordered
times; whole token counts) and the sorted, frozen ``RequestRecords`` built from a
file's per-request floats.  The readers: engine/measured/requests.py (vllm bench JSON,
CSV, the dispatch) and engine/measured/distserve_exp.py (DistServe ``.exp``)."""
from __future__ import annotations

import dataclasses

import numpy as np

from .parsing import _frozen, quote
from .results import RequestRecords

TOLERANCE_S = 1e-6          # float noise allowed where one time must not precede another
_TOL_MS = 1e3 * TOLERANCE_S
_ROLES = ("send", "input", "output", "ttft", "e2e")


def _first(mask: np.ndarray) -> int | None:
    """Index of the first True of ``mask``, or None."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _refuse(mask, where, role: str, what: str, values: np.ndarray) -> None:
    """``ValueError`` at the first row of ``mask``: where it is, what was expected, the value."""
    i = _first(mask)
    if i is not None:
        raise ValueError(f"{where(i, role)}: expected {what}, got {quote(float(values[i]))}")


def _build(values: dict, where, *, source: str, summary: dict, notes: list,
           send_name: str, has_send: bool = True) -> RequestRecords:
    """The checked, sorted result from per-request floats in file order.

    ``values``: role ("send" s, "input", "output" tokens, "ttft", "e2e" ms) -> floats;
    ``where(i, role)``: 'line L, ...' of row ``i``'s value of ``role``, for a message.
    Each row: finite non-negative times, positive whole token counts, the first token
    not before the send and the end not before the first token (``TOLERANCE_S``)."""
    send, inputs, outputs, ttft, e2e = (np.asarray(values[r], dtype=float) for r in _ROLES)
    if ttft.size == 0:
        raise ValueError("no request in the file; expected one at least")
    with np.errstate(invalid="ignore", over="ignore"):
        if has_send:
            _refuse(~np.isfinite(send) | (send < 0), where, "send",
                    "a finite non-negative send time (s)", send)
        for role, tokens in (("input", inputs), ("output", outputs)):
            _refuse(~np.isfinite(tokens) | (tokens < 1) | (tokens != np.round(tokens))
                    | (tokens > 2.0 ** 53), where, role, "a positive whole number of tokens",
                    tokens)
        _refuse(~np.isfinite(ttft) | (ttft < -_TOL_MS), where, "ttft",
                "a finite time to first token ≥ 0 ms (the first token cannot come before "
                "the send)", ttft)
        _refuse(~np.isfinite(e2e) | (e2e < ttft - _TOL_MS), where, "e2e",
                "a finite end-to-end time no shorter than the time to first token (the "
                "last token cannot come before the first)", e2e)
    ttft = np.maximum(ttft, 0.0)
    e2e = np.maximum(e2e, ttft)
    n = ttft.size
    if has_send:
        order = np.argsort(send, kind="stable")
        if np.any(np.diff(send) < 0):
            notes.append(f"the file is not in send order: requests sorted by {send_name}, "
                         f"each keeping its own numbers")
        with np.errstate(over="ignore", invalid="ignore"):
            arrival = send[order] - send[order][0]
            first_token = arrival + ttft[order] / 1e3
            finish = arrival + e2e[order] / 1e3
        bad = _first(~np.isfinite(finish) | ~np.isfinite(first_token))
        if bad is not None:
            raise ValueError(f"{where(int(order[bad]), 'e2e')}: the request ends too far "
                             f"from the first send (a time that is not finite)")
    else:
        order = np.arange(n)
        arrival = first_token = finish = np.full(n, np.nan)
    inputs, outputs, ttft, e2e = inputs[order], outputs[order], ttft[order], e2e[order]
    tpot = np.full(n, np.nan)
    several = outputs >= 2
    tpot[several] = (e2e[several] - ttft[several]) / (outputs[several] - 1)
    span = f", sent over {arrival[-1]:g} s" if has_send else ""
    notes.insert(0, f"{n} requests: prompts {int(inputs.min())}-{int(inputs.max())} tokens, "
                    f"outputs {int(outputs.min())}-{int(outputs.max())} tokens{span}")
    if not several.all():
        notes.append(f"{int(n - several.sum())} of {n} requests generated one token: their "
                     f"tpot_ms is NaN (no time between tokens)")
    return RequestRecords(
        arrival_s=_frozen(arrival), input_tokens=_frozen(inputs, np.int64),
        output_tokens=_frozen(outputs, np.int64), ttft_ms=_frozen(ttft), e2e_ms=_frozen(e2e),
        tpot_ms=_frozen(tpot), first_token_s=_frozen(first_token), finish_s=_frozen(finish),
        source=source, summary=summary, notes=tuple(notes))


def _number(value) -> float | None:
    """A JSON or literal number as a float (inf when too large), None for anything else
    (bool, str, None, lists)."""
    if type(value) not in (int, float):
        return None
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _with_notes(result: RequestRecords, notes: list) -> RequestRecords:
    """``result`` with ``notes`` (a list the caller extended after building)."""
    return dataclasses.replace(result, notes=tuple(notes))
