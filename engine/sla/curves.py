"""Curves against the replica count n and against time at one n, as the autoscaling page
draws them: P(R ≤ RT) by eq 7 (with and without the retry correction) and by one central
M/M/n queue, the share late 1 − P(R ≤ RT), the p-th percentile wait (eq 1 as printed, its
quantile, M/M/n) and the response-time CDFs at one n.  Times in s (and ms where a key
says so), rates per s.  docs/models/sla.md.
"""
from __future__ import annotations

import numpy as np

from ..core.domains import MU, N_BACKENDS, REPLICA_ANSWER, REPLICA_TOP, RESPONSE_TARGET
from ..core.units import ms_from_s
from .cdfs import (mmn_response_cdf, mmn_response_percentile, mmn_waiting_percentile,
                   resolved_miss, response_cdf, retry_busy_probability, utilization,
                   waiting_percentile)
from .checks import check_delays
from .replicas import stable_replicas

CURVE_POINTS = 160              # replica counts on the analytic curves at most
FIX_POINTS = 20                 # points of the retry-corrected curve
FIX_MAX_N = 400                 # the correction's chain grows with n: skipped beyond
FIX_MAX_C_MU = 50.0             # c·μ beyond this: tries decorrelate, correction = eq 7
CDF_POINTS = 240                # times on the response-time CDF

__all__ = ["CURVE_POINTS", "FIX_POINTS", "FIX_MAX_N", "FIX_MAX_C_MU", "CDF_POINTS",
           "replica_grid", "curve_top", "correction_applies", "replica_curves",
           "cdf_curves", "resolved_curve"]


def replica_grid(lam, mu, top) -> np.ndarray:
    """Replica counts from the first stable one, ⌊λ/μ⌋ + 1, to ``top`` (at least 5
    more): every count where they are at most ``CURVE_POINTS``, else ``CURVE_POINTS``
    counts evenly spread and rounded to whole numbers.  λ and ``top`` finite."""
    lo = float(stable_replicas(lam, mu))
    top = float(REPLICA_TOP.check(top))
    if not np.isfinite(lo):
        raise ValueError("lam must be finite to lay out a replica grid")
    lo, hi = int(lo), max(int(top), int(lo) + 5)
    if hi - lo + 1 <= CURVE_POINTS:
        return np.arange(lo, hi + 1, dtype=float)
    return np.unique(np.round(np.linspace(lo, hi, CURVE_POINTS)))


def curve_top(*answers) -> float:
    """The largest replica count the curves reach: 1.25 × the largest finite answer
    (fewest replicas by eq 7, M/M/n, for a steady state) + 10."""
    known = np.array([float(a) for a in answers], dtype=float)
    known = known[np.isfinite(known)]
    if known.size == 0:
        raise ValueError("answers must hold at least one finite replica count")
    REPLICA_ANSWER.check(known, "answers")
    return float(known.max() * 1.25 + 10)


def correction_applies(mu, d1, d2, delta, n=1) -> bool:
    """Whether the retry correction (``retry_busy_probability``) is worth computing: it
    differs from eq 7 only for 0 < c·μ ≤ ``FIX_MAX_C_MU`` (c = d1 + d2 + Δ), and its
    busy-count chain is kept to n ≤ ``FIX_MAX_N``."""
    mu = float(MU.check(mu))
    d1, d2, delta = (float(v) for v in check_delays(d1, d2, delta))
    n = float(np.max(N_BACKENDS.check(n)))
    return bool(0.0 < (d1 + d2 + delta) * mu <= FIX_MAX_C_MU and n <= FIX_MAX_N)


def replica_curves(lam, mu, rt, percentile, d1, d2, delta, service, top) -> dict:
    """Analytic curves over ``replica_grid(λ, μ, top)``: P(R ≤ RT) by eq 7
    (``within_eq7``), with the retry correction of eq 2 (``within_fix`` at up to
    ``FIX_POINTS`` counts, None where ``correction_applies`` does not hold) and by
    M/M/n (``within_mmn``); the share late 1 − P(R ≤ RT) (``miss_*``, nan below
    ``MISS_RESOLUTION``); the p-th percentile wait in ms by eq 1 as printed
    (``omega_printed_ms``), by its geometric quantile (``omega_ms``) and by M/M/n
    (``omega_mmn_ms``)."""
    n = replica_grid(lam, mu, top)
    d = (d1, d2, delta)
    out = {"n": n,
           "within_eq7": np.asarray(response_cdf(rt, lam, mu, n, *d, service), float),
           "within_mmn": np.asarray(mmn_response_cdf(rt, lam, mu, n), float),
           "omega_printed_ms": ms_from_s(waiting_percentile(percentile, lam, mu, n, *d,
                                                            printed=True)),
           "omega_ms": ms_from_s(waiting_percentile(percentile, lam, mu, n, *d)),
           "omega_mmn_ms": ms_from_s(mmn_waiting_percentile(percentile, lam, mu, n)),
           "n_fix": None, "within_fix": None, "miss_fix": None}
    if correction_applies(mu, *d, n[-1]):
        n_fix = np.unique(n[np.round(np.linspace(0, n.size - 1, FIX_POINTS)).astype(int)])
        q = retry_busy_probability(lam, mu, n_fix, *d)
        out["n_fix"] = n_fix
        out["within_fix"] = np.asarray(response_cdf(rt, lam, mu, n_fix, *d, service,
                                                    p_retry_busy=q), float)
        out["miss_fix"] = resolved_miss(out["within_fix"])
    out["miss_eq7"] = resolved_miss(out["within_eq7"])
    out["miss_mmn"] = resolved_miss(out["within_mmn"])
    return out


def cdf_curves(lam, mu, n, rt, d1, d2, delta, service, simulated=None) -> dict:
    """Response-time CDFs at n replicas over ``CDF_POINTS`` times ``t`` from 0 to
    max(3·RT, 1.2 × M/M/n's p99.9) (``t_ms`` the same in ms): eq 7 (``eq7``), eq 7 with
    the retry correction (``fix``, None where ``correction_applies`` does not hold),
    M/M/n (``mmn``) and, given a ``simulated`` run (``DispatchSimResult``), its fraction
    within each t (``sim``)."""
    rt = float(RESPONSE_TARGET.check(rt))
    n = int(N_BACKENDS.check(n))
    d = (d1, d2, delta)
    hi = 3.0 * rt
    if utilization(lam, mu, n) < 1.0:
        hi = max(hi, float(mmn_response_percentile(99.9, lam, mu, n)) * 1.2)
    t = np.linspace(0.0, hi, CDF_POINTS)
    q = retry_busy_probability(lam, mu, n, *d) if correction_applies(mu, *d, n) else None
    return {"t": t, "t_ms": ms_from_s(t),
            "eq7": np.asarray(response_cdf(t, lam, mu, n, *d, service), float),
            "fix": None if q is None else np.asarray(response_cdf(
                t, lam, mu, n, *d, service, p_retry_busy=q), float),
            "mmn": np.asarray(mmn_response_cdf(t, lam, mu, n), float),
            "sim": None if simulated is None else simulated.fraction_within(t)}


def resolved_curve(n, miss) -> tuple:
    """(n, share late) at the resolved points only (finite shares), as tuples: a
    hashable curve to keep as a baseline (no nan)."""
    n, miss = np.asarray(n, float).ravel(), np.asarray(miss, float).ravel()
    if n.shape != miss.shape:
        raise ValueError("miss must have one value per n")
    keep = np.isfinite(miss)
    return tuple(n[keep].tolist()), tuple(miss[keep].tolist())
