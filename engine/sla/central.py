"""One central FIFO queue for n replicas under any arrival process: its mean wait before
service by the GI/G/n two-moment approximation (Allen–Cunneen, ``engine.core.two_moment``)
beside the dispatch simulator's ``central_queue`` policy.  Times in s, rates per s.
"""
from __future__ import annotations

from ..core.domains import MU, NET_DELAY
from ..core.service_laws import service_sampler
from ..core.two_moment import mean_wait_ggn

__all__ = ["service_scv", "central_mean_wait_s"]


def service_scv(service) -> float:
    """Squared coefficient of variation cs² = Var[S]/E[S]² of a service law (a scipy.stats
    law or anything with ``mean`` and ``var``; 0 for a number: deterministic)."""
    _, mean = service_sampler(service)           # checks the law (ValueError naming it)
    if not hasattr(service, "var"):
        return 0.0
    if mean <= 0:
        raise ValueError(f"service must have a mean time > 0, got {mean:g}")
    return float(service.var() / service.mean() ** 2)


def central_mean_wait_s(lam, mu, n, d1, arrival_scv, service):
    """Mean wait before service (s) of one central FIFO queue at n replicas, the trip d1
    included: d1 + E[W_q](λ, 1/μ, n, ca², cs²) by the GI/G/n approximation (Allen 1990
    eq 7.48), cs² of ``service`` (``service_scv``); ``inf`` where λ ≥ nμ.  Broadcasts."""
    mu = MU.check(mu)
    d1 = NET_DELAY.check(d1, "d1")
    return (d1 + mean_wait_ggn(lam, 1.0 / mu, n, arrival_scv, service_scv(service)))[()]
