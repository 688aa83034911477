"""Two-moment approximations of the mean wait in GI/G/1 and GI/G/n FIFO queues.

The mean wait in queue E[W_q] (same time unit as ``mean_service``; ``rate`` per that
unit) from the load and the squared coefficients of variation (SCV) of the
inter-arrival times (ca²) and of the service times (cs²) only:

* GI/G/1 (Kingman 1961; Allen 1990, eq 7.47):
  E[W_q] ≈ (ca² + cs²)/2 · ρ/(1 − ρ) · E[S],  ρ = λE[S];
* GI/G/n (Allen & Cunneen; Allen 1990, eq 7.48; Whitt 1993):
  E[W_q] ≈ C(n, a) · (ca² + cs²)/2 · E[S]/(n(1 − ρ)),  a = λE[S], ρ = a/n,
  with C(n, a) the Erlang-C probability of waiting in M/M/n.

These are APPROXIMATIONS.  They are exact only in the cases named: GI/G/1 with
ca² = 1 (Poisson arrivals) is the Pollaczek–Khinchine formula of M/G/1, exact for any
service law (M/M/1 and M/D/1 included); GI/G/n with ca² = cs² = 1 is Erlang C for
M/M/n, exact (and n = 1 reduces to the GI/G/1 formula).  Elsewhere they are
heavy-traffic interpolations: they ignore every moment beyond the second and any
correlation between inter-arrival times (an MMPP's burstiness over long windows), so
for bursty traffic they can be far off (docs/models/token_limit.md and
docs/models/sla.md give the errors measured against the simulators).

Both broadcast like ufuncs; ``inf`` where ρ ≥ 1 (no steady state); ``ValueError``
naming the parameter outside its domain.

References: J.F.C. Kingman, "The single server queue in heavy traffic", Proc.
Cambridge Phil. Soc. 57 (1961); A.O. Allen, Probability, Statistics and Queueing
Theory, 2nd ed. (1990), §7; W. Whitt, "Approximations for the GI/G/m queue",
Production and Operations Management 2 (1993).

>>> float(mean_wait_gg1(0.5, 1.0, 1.0, 1.0))     # M/M/1: ρ/(1 − ρ)·E[S]
1.0
>>> float(mean_wait_gg1(0.5, 1.0, 1.0, 0.0))     # M/D/1: half of it (P-K)
0.5
>>> round(float(mean_wait_ggn(1.5, 1.0, 2, 1.0, 1.0)), 6)   # M/M/2: C = 9/14, /(2·0.25)
1.285714
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from .domains import Domain

RATE = Domain("rate", "arrivals per time unit", low=0.0, allow_inf=True, typical=(0.0, 10.0),
              description="mean arrival rate λ of the arrival process")
MEAN_SERVICE = Domain("mean_service", "time", low=0.0, low_open=True, typical=(0.01, 10.0),
                      description="mean service time E[S] (the time unit of the result)")
N_SERVERS = Domain("n_servers", "servers", low=1.0, integer=True, typical=(1, 200),
                   description="number of servers sharing one FIFO queue")
SCV_ARRIVAL = Domain("scv_arrival", "", low=0.0, typical=(0.0, 20.0),
                     description="squared coefficient of variation ca² of the inter-arrival "
                                 "times (Poisson: 1)")
SCV_SERVICE = Domain("scv_service", "", low=0.0, typical=(0.0, 5.0),
                     description="squared coefficient of variation cs² of the service times "
                                 "(exponential: 1, deterministic: 0)")


def _erlang_c(n, a):
    """Erlang C, the M/M/n probability of waiting, for a < n (elsewhere unused).

    From Erlang B = Poisson pmf/cdf at n (log space, no factorials):
    C = nB/(n − a(1 − B)).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        b = np.exp(stats.poisson.logpmf(n, a) - stats.poisson.logcdf(n, a))
        c = n * b / (n - a * (1.0 - b))
    return np.where(a > 0, np.clip(c, 0.0, 1.0), 0.0)


def _finish(wait, rho):
    """``inf`` where ρ ≥ 1, 0 where ρ = 0 (no arrivals: 0·E[S]/(1 − 0)), as a scalar
    where every input was one."""
    with np.errstate(invalid="ignore"):
        out = np.where(rho >= 1.0, np.inf, np.where(rho > 0.0, wait, 0.0))
    return out[()]


def mean_wait_gg1(rate, mean_service, scv_arrival, scv_service):
    """Mean wait in queue of the GI/G/1 FIFO queue, Kingman's two-moment approximation.

    E[W_q] ≈ (ca² + cs²)/2 · ρ/(1 − ρ) · E[S], ρ = ``rate``·``mean_service``, in the
    time unit of ``mean_service`` (``rate`` per that unit).  ``scv_arrival`` = ca²,
    ``scv_service`` = cs².  An approximation (Kingman 1961; Allen 1990 eq 7.47), exact
    only for Poisson arrivals (ca² = 1: the Pollaczek–Khinchine mean of M/G/1, M/M/1
    at cs² = 1, M/D/1 at cs² = 0).  ``inf`` where ρ ≥ 1.  Broadcasts like a ufunc.
    """
    lam = RATE.check(rate)
    es = MEAN_SERVICE.check(mean_service)
    ca2 = SCV_ARRIVAL.check(scv_arrival)
    cs2 = SCV_SERVICE.check(scv_service)
    lam, es, ca2, cs2 = np.broadcast_arrays(lam, es, ca2, cs2)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        rho = lam * es
        wait = 0.5 * (ca2 + cs2) * rho / (1.0 - rho) * es
    return _finish(wait, rho)


def mean_wait_ggn(rate, mean_service, n_servers, scv_arrival, scv_service):
    """Mean wait in queue of the GI/G/n FIFO queue, the Allen–Cunneen approximation.

    E[W_q] ≈ C(n, a) · (ca² + cs²)/2 · E[S]/(n(1 − ρ)), a = ``rate``·``mean_service``,
    ρ = a/n, C the Erlang-C probability of waiting; in the time unit of
    ``mean_service``.  An approximation (Allen 1990 eq 7.48; Whitt 1993), exact only
    for M/M/n (ca² = cs² = 1, where it is Erlang C's E[W_q] = C·E[S]/(n(1 − ρ))); at
    n = 1 it is ``mean_wait_gg1``.  ``inf`` where ρ ≥ 1.  Broadcasts like a ufunc.
    """
    lam = RATE.check(rate)
    es = MEAN_SERVICE.check(mean_service)
    n = N_SERVERS.check(n_servers)
    ca2 = SCV_ARRIVAL.check(scv_arrival)
    cs2 = SCV_SERVICE.check(scv_service)
    lam, es, n, ca2, cs2 = np.broadcast_arrays(lam, es, n, ca2, cs2)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a = lam * es
        rho = a / n
        stable = rho < 1.0
        c = _erlang_c(n, np.where(stable, a, 0.0))
        wait = c * 0.5 * (ca2 + cs2) * es / (n * (1.0 - rho))
    return _finish(wait, rho)
