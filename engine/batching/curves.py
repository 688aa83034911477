"""Curves of the dynamic-batching model over a load grid, for plots and reports.

One call computes everything a view needs at once (exact values, bounds, energy),
vectorised over the grid.  Loads are fractions of the capacity, so a curve can
approach saturation without crossing it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .formulas import (capacity, efficiency_from_batch_size, energy_efficiency_bound, phi0,
                       phi1, utilization_bound)
from .means import mean_latency, stationary
from ..core.renamed import renamed_attribute, renamed_keywords
from ..core.domains import (BETA, C0, CURVE_MAX_FRACTION as MAX_FRACTION,
                            CURVE_POINTS as N_POINTS, check_b_max)


@dataclass(frozen=True)
class LoadCurves:
    """Exact values and bounds on a grid of arrival rates ``lam_per_ms``, times in ms; the
    names without a unit still read the fields, with a ``DeprecationWarning``."""

    lam_per_ms: np.ndarray
    capacity_per_ms: float        # largest stable λ
    mean_latency_ms: np.ndarray   # exact E[W]
    mean_wait_ms: np.ndarray
    mean_batch_size: np.ndarray
    utilization: np.ndarray
    utilization_bound: np.ndarray  # min(1, λ(α + τ0)), Lemma 5
    phi0_ms: np.ndarray
    phi1_ms: np.ndarray
    phi_ms: np.ndarray
    energy_efficiency_per_j: np.ndarray | None        # jobs/J (eq 19)
    energy_efficiency_bound_per_j: np.ndarray | None  # eq 40

    lam = renamed_attribute("lam_per_ms")
    capacity = renamed_attribute("capacity_per_ms")
    mean_latency = renamed_attribute("mean_latency_ms")
    mean_wait = renamed_attribute("mean_wait_ms")
    phi0 = renamed_attribute("phi0_ms")
    phi1 = renamed_attribute("phi1_ms")
    phi = renamed_attribute("phi_ms")
    energy_efficiency = renamed_attribute("energy_efficiency_per_j")
    energy_efficiency_bound = renamed_attribute("energy_efficiency_bound_per_j")


@renamed_keywords(alpha="alpha_ms", tau0="tau0_ms", beta="beta_j", c0="c0_j")
def load_curves(alpha_ms, tau0_ms, b_max=None, beta_j=None, c0_j=None, n_points=None,
                max_fraction=None) -> LoadCurves:
    """Everything on ``n_points`` loads from 0.5% to ``max_fraction`` of capacity.

    Defaults: 200 points to 99% for b_max = ∞ (one vectorised series), 100 points
    to 97% for a finite b_max (one banded solve per point).  Energy needs β and c0.
    """
    alpha, tau0, beta, c0 = alpha_ms, tau0_ms, beta_j, c0_j
    finite = bool(np.isfinite(check_b_max(b_max)))
    n_points = int(N_POINTS.check((100 if finite else 200) if n_points is None else n_points))
    max_fraction = float(MAX_FRACTION.check(
        (0.97 if finite else 0.99) if max_fraction is None else max_fraction))
    energy = beta is not None and c0 is not None
    if energy:
        beta, c0 = float(BETA.check(beta, "beta_j")), float(C0.check(c0, "c0_j"))
    cap = float(capacity(alpha, tau0, b_max))
    lam = cap * np.linspace(0.005, max_fraction, n_points)
    st = stationary(lam, alpha, tau0, b_max)
    low, high = phi0(lam, alpha, tau0), phi1(lam, alpha, tau0)
    return LoadCurves(
        lam_per_ms=lam, capacity_per_ms=cap, mean_latency_ms=st.mean_latency_ms,
        mean_wait_ms=st.mean_wait_ms, mean_batch_size=st.mean_batch_size,
        utilization=st.utilization, utilization_bound=utilization_bound(lam, alpha, tau0),
        phi0_ms=low, phi1_ms=high, phi_ms=np.minimum(low, high),
        energy_efficiency_per_j=efficiency_from_batch_size(st.mean_batch_size, beta, c0)
        if energy else None,
        energy_efficiency_bound_per_j=energy_efficiency_bound(lam, alpha, tau0, beta, c0)
        if energy else None)


@renamed_keywords(alpha="alpha_ms", tau0="tau0_ms")
def b_max_family(alpha_ms, tau0_ms, b_values, n_points=60, max_fraction=0.99):
    """[(b_max, λ grid, exact E[W])] for each finite b_max, up to its own capacity."""
    alpha, tau0 = alpha_ms, tau0_ms
    n_points = int(N_POINTS.check(n_points))
    max_fraction = float(MAX_FRACTION.check(max_fraction))
    out = []
    for b in b_values:
        cap = float(capacity(alpha, tau0, int(b)))
        lam = cap * np.linspace(0.01, max_fraction, n_points)
        out.append((int(b), lam, mean_latency(lam, alpha, tau0, int(b))))
    return out
