"""The simulated points of the token-limit charts: which runs a sweep over token limits
makes (``sim_plan``: without impatience only where the load ρ = λE[S] is below a
bound, with patience τ everywhere) and their summary (``limit_sim_sweep``), and one
limit's runs beside Kingman's approximate wait (``traffic_point``).  The runs themselves
are ``simulate_token_queue``; times in seconds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.renamed import renamed_attribute
from .formulas import utilization
from .sim import TokenQueueSimResult

SIM_MAX_LOAD = 0.95       # no simulation without impatience this close to saturation


def sim_plan(lam, a, c, dist, limits, patience, max_load: float = SIM_MAX_LOAD,
             stream: int | None = None) -> tuple[tuple[float, float | None, int], ...]:
    """The runs of a sweep over the token ``limits``: (n_max, patience, seed stream) for
    each limit whose load ρ(n_max) = λE[S] is below ``max_load`` without impatience
    (patience None), then for every limit with ``patience`` τ; the stream is the
    limit's index, or ``stream`` for all."""
    limits = tuple(float(n) for n in limits)
    loads = np.atleast_1d(np.asarray(utilization(lam, a, c, dist, np.array(limits))))
    at = (lambda i: i) if stream is None else (lambda i: int(stream))
    plain = [(n, None, at(i)) for i, (n, rho) in enumerate(zip(limits, loads))
             if rho < max_load]
    return tuple(plain + [(n, patience, at(i)) for i, n in enumerate(limits)])


@dataclass(frozen=True)
class LimitSimSweep:
    """Simulated points over the limits: without impatience (where stable enough) and
    with patience τ; waits in seconds with their 95 % half-widths.  The names without a
    unit still read the fields, with a ``DeprecationWarning``."""

    plain_n: np.ndarray            # limits simulated without impatience (tokens)
    plain_wait_s: np.ndarray       # E[W] there
    plain_ci_s: np.ndarray
    n: np.ndarray                  # limits simulated with patience τ (tokens)
    served_wait_s: np.ndarray      # E[W_qs]
    served_ci_s: np.ndarray
    loss: np.ndarray               # π(τ)
    loss_ci: np.ndarray

    plain_wait = renamed_attribute("plain_wait_s")
    plain_ci = renamed_attribute("plain_ci_s")
    served_wait = renamed_attribute("served_wait_s")
    served_ci = renamed_attribute("served_ci_s")


def limit_sim_sweep(plan, results) -> LimitSimSweep:
    """``LimitSimSweep`` of the runs ``results`` (``TokenQueueSimResult``) of ``plan``
    (``sim_plan``), in its order."""
    runs = list(zip(plan, results))
    plain = [(n, r) for (n, tau, _), r in runs if tau is None]
    patient = [(n, r) for (n, tau, _), r in runs if tau is not None]

    def column(rows, read):
        return np.array([read(n, r) for n, r in rows], dtype=float)

    return LimitSimSweep(plain_n=column(plain, lambda n, r: n),
                         plain_wait_s=column(plain, lambda n, r: r.mean_wait_all_s),
                         plain_ci_s=column(plain, lambda n, r: r.ci95_wait_all_s),
                         n=column(patient, lambda n, r: n),
                         served_wait_s=column(patient, lambda n, r: r.mean_wait_served_s),
                         served_ci_s=column(patient, lambda n, r: r.ci95_wait_served_s),
                         loss=column(patient, lambda n, r: r.loss_fraction),
                         loss_ci=column(patient, lambda n, r: r.ci95_loss))


@dataclass(frozen=True)
class TrafficPoint:
    """The chosen arrivals at one limit: Kingman's approximation of the mean wait (s), and
    simulations without impatience (None where the load is too near capacity) and with
    patience τ.  ``approx_wait`` (no unit) still reads ``approx_wait_s``, with a
    ``DeprecationWarning``."""

    approx_wait_s: float
    plain: TokenQueueSimResult | None
    patient: TokenQueueSimResult

    approx_wait = renamed_attribute("approx_wait_s")


def traffic_point(approx_wait: float, plan, results) -> TrafficPoint:
    """``TrafficPoint`` of one limit's ``plan`` (``sim_plan`` of one limit) and its runs."""
    runs = list(zip(plan, results))
    plain = [r for (_, tau, _), r in runs if tau is None]
    patient = [r for (_, tau, _), r in runs if tau is not None]
    if len(patient) != 1 or len(plain) > 1:
        raise ValueError("plan must be the runs of one limit (sim_plan of one limit)")
    return TrafficPoint(float(approx_wait), plain[0] if plain else None, patient[0])
