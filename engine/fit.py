"""Least-squares fits of measured profiles to the models' linear laws.

``fit_batch_profile`` turns a throughput table (batch size → jobs/s, optional
board power) into the batch-time law τ[b] = αb + τ0 (Inoue 2021, eq 25) and the
energy law c[b] = βb + c0 (eq 17).  Times come out in milliseconds, energies in
joules.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LinearFit:
    """y ≈ slope·x + intercept by ordinary least squares."""

    slope: float
    intercept: float
    r2: float
    residuals: np.ndarray     # y − fitted, in the unit of y


def linear_fit(x, y) -> LinearFit:
    """Ordinary least squares of y on x with R² = 1 − SS_res/SS_tot.

    ``x``, ``y``: 1-d sequences of finite numbers of one length (``ValueError``
    naming the bad one otherwise).
    """
    x = _column(x, "x", positive=False)
    y = _column(y, "y", x.size, "x", positive=False)
    design = np.column_stack([x, np.ones_like(x)])
    (slope, intercept), *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - (slope * x + intercept)
    ss_tot = np.sum((y - y.mean()) ** 2)
    r2 = 1.0 - np.sum(residuals ** 2) / ss_tot if ss_tot > 0 else 1.0
    return LinearFit(float(slope), float(intercept), float(r2), residuals)


def _positive_column(values, name: str, n: int | None = None,
                     reference: str = "batch_size") -> np.ndarray:
    """``values`` as a 1-d float array of finite positive numbers (``n`` of them,
    like the ``reference`` column), or ``ValueError`` naming the column."""
    return _column(values, name, n, reference)


def _column(values, name: str, n: int | None = None, reference: str = "batch_size",
            positive: bool = True) -> np.ndarray:
    """``values`` as a 1-d float array of finite (``positive``) numbers, or ``ValueError``."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d sequence")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} has {arr.size} values, {reference} has {n}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if positive and np.any(arr <= 0):
        raise ValueError(f"{name} must be positive, got {arr[arr <= 0][0]:g}")
    return arr


@dataclass(frozen=True)
class BatchProfileFit:
    """Fitted batch-time (and energy) law of a measured throughput profile."""

    batch_size: np.ndarray
    batch_time_ms: np.ndarray      # τ[b] = 1000·b / throughput
    alpha_ms: float                # slope of τ[b], ms per job
    tau0_ms: float                 # intercept of τ[b], ms
    r2: float
    residuals_ms: np.ndarray
    energy_j: np.ndarray | None = None     # c[b] = power · τ[b]
    beta_j: float | None = None            # slope of c[b], J per job
    c0_j: float | None = None              # intercept of c[b], J
    r2_energy: float | None = None
    residuals_j: np.ndarray | None = None

    def batch_time(self, b):
        """Fitted τ[b] = αb + τ0 in ms (eq 25)."""
        return self.alpha_ms * np.asarray(b, dtype=float) + self.tau0_ms

    def throughput_per_s(self, b):
        """Fitted throughput μ[b] = b/τ[b] in jobs/s (eq 26)."""
        b = np.asarray(b, dtype=float)
        return 1000.0 * b / self.batch_time(b)


def fit_batch_profile(batch_size, throughput_per_s, power_w=None) -> BatchProfileFit:
    """Fit τ[b] = αb + τ0 (ms) to b/throughput, and c[b] = βb + c0 (J) to power·τ[b].

    Inoue 2021 §3.3 and eq 17.  With Table 1 this gives α = 0.1438 ms,
    τ0 = 1.8874 ms, R² = 0.99975 (V100) and α = 0.5833 ms, τ0 = 1.4284 ms,
    R² = 0.99986 (P4).  Raises ``ValueError`` naming a bad column (non-positive,
    non-finite, mismatched lengths, fewer than 2 distinct batch sizes).
    """
    b = _positive_column(batch_size, "batch_size")
    if np.unique(b).size < 2:
        raise ValueError("batch_size needs at least 2 distinct values to fit a line")
    if np.any(b != np.round(b)):
        raise ValueError("batch_size must be whole numbers")
    thr = _positive_column(throughput_per_s, "throughput_per_s", b.size)
    with np.errstate(over="ignore", under="ignore"):
        tau = 1000.0 * (b / thr)
    _finite(tau, "throughput_per_s", "batch times b/throughput")
    time_fit = _fit_named(b, tau, "'batch_size', 'throughput_per_s'")
    extra = {}
    if power_w is not None:
        power = _positive_column(power_w, "power_w", b.size)
        with np.errstate(over="ignore", under="ignore"):
            energy = power * (tau / 1000.0)
        _finite(energy, "power_w", "energies per batch power × batch time")
        energy_fit = _fit_named(b, energy, "'batch_size', 'power_w'")
        extra = dict(energy_j=energy, beta_j=energy_fit.slope, c0_j=energy_fit.intercept,
                     r2_energy=energy_fit.r2, residuals_j=energy_fit.residuals)
    return BatchProfileFit(batch_size=b, batch_time_ms=tau, alpha_ms=time_fit.slope,
                           tau0_ms=time_fit.intercept, r2=time_fit.r2,
                           residuals_ms=time_fit.residuals, **extra)


def _fit_named(x: np.ndarray, y: np.ndarray, columns: str) -> LinearFit:
    """``linear_fit`` whose overflow (values near the float limit) names the columns."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = linear_fit(x, y)
    if not (np.isfinite(f.slope) and np.isfinite(f.intercept) and np.isfinite(f.r2)):
        raise ValueError(f"{columns}: the values are too extreme to fit a line")
    return f


def _finite(values: np.ndarray, column: str, what: str) -> None:
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{column}: the {what} overflow (values too extreme to fit)")


# ---- LLM request latency by token counts (Yang et al. §II-B, Table I)

@dataclass(frozen=True)
class TokenLatencyFit:
    """S = a·n_out (+ b·n_in) + c in seconds, fitted by least squares."""

    a_s_per_token: float               # per output token
    c_s: float                         # per request
    r2: float
    residuals_s: np.ndarray
    b_s_per_input_token: float | None = None   # only with an input-token term

    def latency_s(self, output_tokens, input_tokens=None):
        """Fitted request latency in seconds."""
        s = self.a_s_per_token * np.asarray(output_tokens, dtype=float) + self.c_s
        if self.b_s_per_input_token is not None:
            if input_tokens is None:
                raise ValueError("input_tokens is needed by a fit with an input-token term")
            s = s + self.b_s_per_input_token * np.asarray(input_tokens, dtype=float)
        return s


def fit_token_latency(output_tokens, seconds) -> TokenLatencyFit:
    """Least squares of S = a·n + c on output tokens n (Yang et al. §II-B, the paper's model).

    With Table I (7 distinct rows) a = 0.023087 s/token, c = 0.490 s, R² = 0.9909.
    Raises ``ValueError`` naming a bad column (non-positive, non-finite,
    mismatched lengths, fewer than 2 distinct token counts).
    """
    n = _positive_column(output_tokens, "output_tokens")
    if np.unique(n).size < 2:
        raise ValueError("output_tokens needs at least 2 distinct values to fit a line")
    s = _positive_column(seconds, "seconds", n.size, "output_tokens")
    f = linear_fit(n, s)
    return TokenLatencyFit(a_s_per_token=f.slope, c_s=f.intercept, r2=f.r2,
                           residuals_s=f.residuals)


def fit_token_latency_with_input(output_tokens, input_tokens, seconds) -> TokenLatencyFit:
    """Least squares of S = a·n_out + b·n_in + c (the optional input-token term).

    With Table I: a = 0.023034 s/output token, b = 0.00308 s/input token,
    c = −0.076 s.  Needs at least 2 distinct values of each token count and
    3 rows.
    """
    n = _positive_column(output_tokens, "output_tokens")
    m = _positive_column(input_tokens, "input_tokens", n.size, "output_tokens")
    s = _positive_column(seconds, "seconds", n.size, "output_tokens")
    if np.unique(n).size < 2 or np.unique(m).size < 2:
        raise ValueError("output_tokens and input_tokens each need at least 2 distinct values")
    design = np.column_stack([n, m, np.ones_like(n)])
    if np.linalg.matrix_rank(design) < 3:
        raise ValueError("output_tokens and input_tokens are collinear: the fit is not determined")
    (a, b, c), *_ = np.linalg.lstsq(design, s, rcond=None)
    residuals = s - design @ np.array([a, b, c])
    ss_tot = np.sum((s - s.mean()) ** 2)
    r2 = 1.0 - np.sum(residuals ** 2) / ss_tot if ss_tot > 0 else 1.0
    return TokenLatencyFit(a_s_per_token=float(a), c_s=float(c), r2=float(r2),
                           residuals_s=residuals, b_s_per_input_token=float(b))
