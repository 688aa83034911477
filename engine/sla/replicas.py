"""Fewest replicas meeting a percentile SLA: by Swayam's eq 7, by one central M/M/n
queue, read off simulated fractions, and the fewest with a steady state."""
from __future__ import annotations

import numpy as np

from ..core.domains import LAM, MU, N_BACKENDS, PERCENTILE, RESPONSE_TARGET
from ..core.roots import smallest_integer
from ..core.service_laws import service_cdf
from .cdfs import mmn_response_cdf, response_cdf
from .checks import check_delays, check_probability


def offered_load(lam, mu):
    """Offered load a = λ/μ (Erlangs): the replicas busy on average, λ per s, μ per s."""
    lam, mu = LAM.check(lam), MU.check(mu)
    return (lam / mu)[()]


def stable_replicas(lam, mu):
    """Fewest backends with a steady state, ⌊λ/μ⌋ + 1 (λ < nμ), λ per s, μ per s per backend."""
    lam, mu = LAM.check(lam), MU.check(mu)
    n = np.floor(lam / mu) + 1.0
    with np.errstate(invalid="ignore"):
        short = n * mu <= lam          # λ/μ rounded below a whole number: one more
    return np.where(short, n + 1.0, n)[()]


def min_backends(lam, mu, rt, percentile, d1, d2, delta, service, *, p_retry_busy=None):
    """Fewest backends n with P(R ≤ RT) ≥ percentile/100 by eq 7 (``response_cdf``).

    P(R ≤ RT) grows with n, so the smallest n is found by doubling and bisection
    (``engine.core.roots.smallest_integer``), vectorised over all arguments.  ``inf``
    where no n meets it (CDF_exe(RT − d1) < percentile/100: even an idle backend is
    too slow).  λ = 0 needs one backend if an idle one meets the SLA.
    """
    lam, mu = LAM.check(lam), MU.check(mu)
    rt, pc = RESPONSE_TARGET.check(rt), PERCENTILE.check(percentile) / 100.0
    d1, d2, delta = check_delays(d1, d2, delta)
    lam, mu, rt, pc, d1, d2, delta = np.broadcast_arrays(lam, mu, rt, pc, d1, d2, delta)
    prb = None if p_retry_busy is None else np.broadcast_to(
        check_probability(p_retry_busy, "p_retry_busy"), lam.shape)

    def ok(n):
        return response_cdf(rt, lam, mu, n, d1, d2, delta, service,
                            p_retry_busy=prb) >= pc

    feasible = (service_cdf(service)(rt - d1) >= pc) & np.isfinite(lam)
    # ρ ≥ 1 at n = ⌊λ/μ⌋: the answer lies above it
    return smallest_integer(ok, np.floor(lam / mu), feasible)[()]


def erlang_c_min_servers(lam, mu, rt, percentile):
    """Fewest servers n of one central M/M/n queue with P(R ≤ rt) ≥ percentile/100.

    ``inf`` where even unlimited servers miss it (1 − e^(−μ·rt) < percentile/100).
    Doubling and bisection from n = ⌊λ/μ⌋ + 1 (P(R ≤ rt) grows with n).
    """
    lam, mu = LAM.check(lam), MU.check(mu)
    rt, pc = RESPONSE_TARGET.check(rt), PERCENTILE.check(percentile) / 100.0
    lam, mu, rt, pc = np.broadcast_arrays(lam, mu, rt, pc)
    feasible = (-np.expm1(-mu * rt) >= pc) & np.isfinite(lam)

    def ok(n):
        return mmn_response_cdf(rt, lam, mu, n) >= pc

    return smallest_integer(ok, np.floor(lam / mu), feasible)[()]


def fewest_meeting(n, within, percentile):
    """Smallest n of a grid whose fraction within RT reaches percentile/100
    (e.g. simulated ``fraction_within`` at each n); ``inf`` if none on the grid.
    P(R ≤ RT) grows with n, so the first n that meets it is the answer provided
    the grid starts low enough and is contiguous."""
    n = np.asarray(N_BACKENDS.check(n, "n"), dtype=float).ravel()
    within = check_probability(np.ravel(within), "within")
    if within.shape != n.shape:
        raise ValueError("within must have one value per n")
    pc = float(PERCENTILE.check(percentile)) / 100.0
    ok = within >= pc
    return float(n[ok].min()) if ok.any() else float("inf")
