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

from dataclasses import dataclass
import json
import math

import numpy as np
from scipy.optimize import nnls

from ..measured import VllmBenchResult, read_vllm_bench
from ..measured.parsing import decode_text, read_csv_table
from .cost import StepCost

__all__ = ["StepCostFit", "step_cost_from_distserve", "step_cost_from_splitwise",
           "fit_step_cost_vllm_bench", "step_cost_from_csv"]

_COST_FIELDS = ("base_ms", "prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq",
                "decode_ms_per_seq", "context_ms_per_token", "frontend_ms")
_IDENTIFIABLE = 1e-3    # a column whose part outside the others' span is under 0.1 % of it:
#                         its coefficient is not identified by the data (held at 0)
_SHOWN = 60


@dataclass(frozen=True, eq=False)
class StepCostFit:
    """A ``StepCost`` from a source, with how well it fits.

    ``r2``: term group ("prefill", "decode") → R² of the fit against the source's
    numbers; ``residuals_ms``: term group → measured − fitted (ms, read-only arrays, in
    the source's order); ``held_at_zero``: ``StepCost`` fields the source does not
    identify, set to 0; ``n_points``: measurements (or sampled points) fitted;
    ``notes``: what was assumed, chosen or dropped; ``source``: where the numbers come
    from.
    """

    cost: StepCost
    r2: dict
    residuals_ms: dict
    held_at_zero: tuple
    n_points: int
    notes: tuple
    source: str

    def __post_init__(self):
        if not isinstance(self.cost, StepCost):
            raise ValueError(f"cost must be a StepCost, got {type(self.cost).__name__}")
        object.__setattr__(self, "r2", {str(k): float(v) for k, v in dict(self.r2).items()})
        object.__setattr__(self, "residuals_ms", {str(k): _frozen(v) for k, v in
                                                  dict(self.residuals_ms).items()})
        object.__setattr__(self, "held_at_zero", tuple(self.held_at_zero))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "n_points", int(self.n_points))


# ------------------------------------------------------------------------------- helpers

def _frozen(values) -> np.ndarray:
    arr = np.array(values, dtype=float)
    arr.flags.writeable = False
    return arr


def _quote(value) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, max(offset, 0)) + 1


def _text(text, name: str) -> str:
    """``text`` as a ``str`` (``engine.measured.parsing.decode_text``)."""
    return decode_text(text, name, "a text file")


def _r2(y: np.ndarray, fitted: np.ndarray) -> float:
    """1 − SS_res/SS_tot (1 for an exact fit of constant data, NaN for no data)."""
    if y.size == 0:
        return math.nan
    ss_res = float(np.sum((y - fitted) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    if ss_tot <= 1e-24 * max(1.0, float(np.sum(y * y))):
        return 1.0 if ss_res <= 1e-18 * max(1.0, float(np.sum(y * y))) else 0.0
    return 1.0 - ss_res / ss_tot


def _outside_share(x: np.ndarray, j: int, cols: list) -> float:
    """Norm of column j's part outside the span of ``cols`` (all unit-scaled), as a share
    of column j's norm (0 for a zero column)."""
    if not np.any(x[:, j]):
        return 0.0
    others = [c for c in cols if c != j]
    if not others:
        return 1.0
    a = x[:, others]
    coef, *_ = np.linalg.lstsq(a, x[:, j], rcond=None)
    return float(np.linalg.norm(x[:, j] - a @ coef) / np.linalg.norm(x[:, j]))


def _identified(x: np.ndarray, hold_first) -> list:
    """Columns of ``x`` the data identifies: repeatedly, among the columns with under
    ``_IDENTIFIABLE`` of their norm outside the others' span, hold the first in
    ``hold_first`` (an order over all columns), until none is left."""
    norms = np.linalg.norm(x, axis=0)
    scaled = x / np.where(norms > 0, norms, 1.0)
    keep = list(range(x.shape[1]))
    while keep:
        weak = [j for j in keep if _outside_share(scaled, j, keep) < _IDENTIFIABLE]
        if not weak:
            break
        keep.remove(next(j for j in hold_first if j in weak))
    return keep


def _nnls_fit(x: np.ndarray, y: np.ndarray, names, hold_first, weights=None):
    """Non-negative least squares of y on the identified columns of x (each row's
    residual times ``weights``, if given).

    Returns (coefficients by name, fitted values, names held at 0 as not identified,
    names fitted at their bound 0 with the free least-squares value)."""
    order = [names.index(n) for n in hold_first]
    keep = _identified(x, order)
    coef = np.zeros(x.shape[1])
    bound = []
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    if keep:
        a = x[:, keep] * w[:, None]
        scale = np.linalg.norm(a, axis=0)
        sol, _ = nnls(a / scale, y * w, maxiter=50 * a.shape[1] + 100)
        coef[keep] = sol / scale
        free, *_ = np.linalg.lstsq(a / scale, y * w, rcond=None)
        free = free / scale
        for i, j in enumerate(keep):
            if coef[j] == 0.0 and free[i] < 0:
                bound.append((names[j], float(free[i])))
    held = [names[j] for j in range(x.shape[1]) if j not in keep]
    return dict(zip(names, coef.tolist())), x @ coef, held, bound


def _bound_notes(bound, group: str) -> list:
    return [f"{group}: {name} fitted at its bound 0 (the free least-squares value is "
            f"{value:.4g}: negative, which a step time may not have)" for name, value in bound]


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
    return _line_of(text, at)


def _pick(choices, wanted, what: str, where: str = "") -> str:
    """The key of ``choices`` meaning ``wanted`` (exactly, or ignoring case and an
    ``owner/`` prefix); ``ValueError`` listing the choices otherwise."""
    choices = list(choices)
    if wanted in choices:
        return wanted
    loose = str(wanted).strip().lower()
    for c in choices:
        if c.lower() == loose or c.lower().rsplit("/", 1)[-1] == loose.rsplit("/", 1)[-1]:
            return c
    raise ValueError(f"unknown {what} {wanted!r}{where}; the file has: "
                     f"{', '.join(map(str, choices)) or 'none'}")


def _tp_key(tensor_parallel) -> str:
    tp = tensor_parallel
    if isinstance(tp, str) and tp.strip().isdigit():
        tp = int(tp.strip())
    if isinstance(tp, bool) or not isinstance(tp, (int, float, np.integer, np.floating)) \
            or not math.isfinite(tp) or tp < 1 or tp != int(tp):
        raise ValueError(f"tensor_parallel must be a whole number ≥ 1, got {tensor_parallel!r}")
    return str(int(tp))


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
                             f"{_quote(value)}")
        return [int(value)]
    if not isinstance(value, list) or len(value) != 3:
        raise ValueError(f"{where}: expected a list of 3 numbers [a, b, c], got {_quote(value)}")
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{where}[{i}]: expected a finite number, got {_quote(v)}")
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
    if decode not in ("joint", "small", "large"):
        raise ValueError(f"decode must be 'joint', 'small' or 'large', got {decode!r}")
    lo, hi = (float(c) for c in context_tokens)
    if not (math.isfinite(lo) and math.isfinite(hi) and 1 <= lo < hi):
        raise ValueError(f"context_tokens must be (low, high) with 1 ≤ low < high, got "
                         f"{context_tokens!r}")
    if not (isinstance(typical_context, (int, float)) and math.isfinite(typical_context)
            and typical_context > 0):
        raise ValueError(f"typical_context must be a positive number, got {typical_context!r}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"line {err.lineno}, column {err.colno}: not JSON ({err.msg}); "
                         f"expected DistServe's profiler JSON {{model: {{TP: {{...}}}}}}") from None
    except (ValueError, RecursionError):
        raise ValueError("line 1: not JSON (nested too deeply or unreadable)") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"line 1: expected a JSON object {{model: {{TP: {{...}}}}}}, got "
                         f"{_quote(data) if not isinstance(data, dict) else 'an empty object'}")
    name = _pick(data, model, "model")
    models = data[name]
    if not isinstance(models, dict):
        raise ValueError(f"line {_key_line(text, (name,))}, field {name}: expected an object "
                         f"{{TP: {{...}}}}, got {_quote(models)}")
    tp = _tp_key(tensor_parallel)
    if tp not in models:
        raise ValueError(f"unknown tensor_parallel {tp} for model {name}; the file has: "
                         f"{', '.join(models) or 'none'}")
    entry = models[tp]
    path = (name, tp)
    if not isinstance(entry, dict):
        raise ValueError(f"line {_key_line(text, path)}, field {name} → {tp}: expected an "
                         f"object with {', '.join(_DS_KEYS)}, got {_quote(entry)}")
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


# ------------------------------------------------------------------------------ CSV tables

def _loose(name: str) -> str:
    return "_".join(name.strip().lower().split())


class _Csv:
    """A CSV's header and data rows (blank lines skipped) with each row's line."""

    def __init__(self, text: str, name: str):
        self.name = name
        table = read_csv_table(text, name)          # engine.measured's CSV reading
        self.header = list(table.header)
        self.header_line = table.header_line
        self.rows, self.lines = table.rows, [int(x) for x in table.lines]

    def index(self, names, required: bool = True):
        loose = [_loose(h) for h in self.header]
        for n in names:
            if _loose(n) in loose:
                return loose.index(_loose(n))
        if required:
            raise ValueError(f"{self.name}: line {self.header_line}: no column "
                             f"{' or '.join(map(repr, names))}; the header has: "
                             f"{', '.join(self.header)[:4 * _SHOWN]}")
        return None

    def where(self, i: int, j: int) -> str:
        return f"{self.name}: line {self.lines[i]}, column {j + 1} ({self.header[j]})"

    def strings(self, j: int) -> list:
        return [r[j].strip() for r in self.rows]

    def numbers(self, j: int, *, positive: bool = False, whole: bool = False,
                rows=None) -> np.ndarray:
        rows = range(len(self.rows)) if rows is None else rows
        out = np.empty(len(rows))
        what = (f"a {'positive' if positive else 'non-negative'} "
                f"{'whole number' if whole else 'number'}")
        for n, i in enumerate(rows):
            cell = self.rows[i][j].strip()
            try:
                v = float(cell)
            except (ValueError, OverflowError):
                v = math.nan
            ok = math.isfinite(v) and (v > 0 if positive else v >= 0)
            if ok and whole:
                ok = v == round(v) and v <= 2.0 ** 53
            if not ok:
                raise ValueError(f"{self.where(i, j)}: expected {what}, got {_quote(cell)}")
            out[n] = v
        return out


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
