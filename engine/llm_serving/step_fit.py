"""A fitted ``StepCost`` (``StepCostFit``) and the fitting shared by every source of
step times: non-negative least squares on the columns the data identifies, R², and the
readers' helpers (a JSON key's choices, a tensor-parallel degree, a CSV table).

The sources themselves: ``published_fits`` (DistServe, Splitwise), ``measured_fits``
(vllm bench, a CSV of step times), ``aiconfigurator``; ``sources`` names them all.
Derivations: docs/models/llm_serving.md ("Sources of the step cost").
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
from scipy.optimize import nnls

from ..measured.parsing import decode_text, quote, read_csv_table
from .cost import StepCost

__all__ = ["StepCostFit"]

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

# ------------------------------------------------------------------------ file readers

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
                raise ValueError(f"{self.where(i, j)}: expected {what}, got {quote(cell)}")
            out[n] = v
        return out
