"""Swayam's random dispatch with retries as one frozen object (numpy.polynomial's class
layer): the load, the service law, the dispatch delays and optionally the replica count
bound once, the model's exact answers and the simulator offered as methods.  Every method
is one call of a module function (``cdfs``, ``replicas``, ``curves``, ``answers``,
``central``, ``traces``, ``sim``), which stay the vectorised layer.  Times in s, rates
per s.  docs/models/sla.md.

>>> m = RandomDispatch(rate_per_s=900.0, mu_per_s=100.0, d1_s=0.00025, d2_s=0.00025,
...                    delta_s=0.0005)
>>> int(m.min_backends(rt_s=0.1, percentile=99)), int(m.erlang_c_min_servers(0.1, 99))
(10, 10)
>>> float(m.with_replicas(10).utilization())
0.9
"""
from __future__ import annotations

from dataclasses import dataclass, replace
import functools

from ..core.domains import LAM, MU, N_BACKENDS, NET_DELAY, SERVICE_LAW
from ..core.service_laws import service_law, service_sampler
from . import answers, central, curves, sim
from .cdfs import (mmn_response_cdf, mmn_response_percentile, mmn_waiting_percentile,
                   response_cdf, response_percentile, retry_busy_probability, utilization,
                   waiting_percentile)
from .replicas import erlang_c_min_servers, min_backends, offered_load, stable_replicas
from .traces import plan_replicas

__all__ = ["RandomDispatch"]


@dataclass(frozen=True)
class RandomDispatch:
    """Requests at ``rate_per_s`` sent to a random one of ``n`` replicas, each serving
    ``mu_per_s`` requests/s with service times of ``law`` (``"exponential"``,
    ``"lognormal"`` of log-sd ``sigma``, ``"deterministic"``, all of mean 1/μ; or a law
    object with ``cdf``/``rvs``/``mean``); a try reaches its replica ``d1_s`` after it
    is sent, a busy answer takes ``d2_s`` back and the retry leaves ``delta_s`` later.
    ``n`` (None: unbound) is the replica count the methods use when not given one.
    Hashable by value when ``law`` is a name (a memo key)."""

    rate_per_s: float
    mu_per_s: float
    d1_s: float = 0.0
    d2_s: float = 0.0
    delta_s: float = 0.0
    law: object = "exponential"
    sigma: float = 1.0
    n: int | None = None

    def __post_init__(self):
        LAM.check(self.rate_per_s, "rate_per_s")
        MU.check(self.mu_per_s, "mu_per_s")
        for value, name in ((self.d1_s, "d1_s"), (self.d2_s, "d2_s"),
                            (self.delta_s, "delta_s")):
            NET_DELAY.check(value, name)
        if self.n is not None:
            N_BACKENDS.check(self.n, "n")
        if isinstance(self.law, str):
            SERVICE_LAW.check(self.law, "law")             # or a law object
        else:
            service_sampler(self.law)             # ValueError naming service
        self.service                              # noqa: B018 (checks sigma at once)

    @functools.cached_property
    def service(self):
        """The service-time law (s): built once from ``law``, mean 1/μ."""
        if not isinstance(self.law, str):
            return self.law
        return service_law(self.law, 1.0 / float(self.mu_per_s), self.sigma)

    @property
    def delays_s(self) -> tuple:
        """(d1, d2, Δ) in s."""
        return self.d1_s, self.d2_s, self.delta_s

    def with_replicas(self, n) -> RandomDispatch:
        """The same model bound to ``n`` replicas."""
        return replace(self, n=n)

    def _n(self, n):
        if n is None:
            n = self.n
        if n is None:
            raise ValueError("n (replicas) must be given: this model has none bound")
        return n

    def _args(self):
        return self.rate_per_s, self.mu_per_s

    # ---------------------------------------------------------------- closed forms

    def offered_load(self):
        """λ/μ (Erlangs)."""
        return offered_load(*self._args())

    def stable_replicas(self):
        """Fewest replicas with a steady state, ⌊λ/μ⌋ + 1."""
        return stable_replicas(*self._args())

    def utilization(self, n=None):
        """ρ = λ/(nμ), eq 2."""
        return utilization(*self._args(), self._n(n))

    def waiting_percentile(self, p, n=None, *, printed=False, p_retry_busy=None):
        """p-th percentile wait (s): eq 1 as printed, or its geometric quantile."""
        return waiting_percentile(p, *self._args(), self._n(n), *self.delays_s,
                                  printed=printed, p_retry_busy=p_retry_busy)

    def response_cdf(self, t_s, n=None, *, p_retry_busy=None):
        """P(R ≤ t) by eq 7 (Theorem 2)."""
        return response_cdf(t_s, *self._args(), self._n(n), *self.delays_s, self.service,
                            p_retry_busy=p_retry_busy)

    def response_percentile(self, p, n=None, *, p_retry_busy=None):
        """p-th percentile response time (s) by eq 7."""
        return response_percentile(p, *self._args(), self._n(n), *self.delays_s,
                                   self.service, p_retry_busy=p_retry_busy)

    def retry_busy_probability(self, n=None):
        """Busy probability of a retry (the correction of eq 2)."""
        return retry_busy_probability(*self._args(), self._n(n), *self.delays_s)

    def mmn_response_cdf(self, t_s, n=None):
        """P(R ≤ t) of one central M/M/n FIFO queue (the reference)."""
        return mmn_response_cdf(t_s, *self._args(), self._n(n))

    def mmn_response_percentile(self, p, n=None):
        """p-th percentile response time (s) of one central M/M/n queue."""
        return mmn_response_percentile(p, *self._args(), self._n(n))

    def mmn_waiting_percentile(self, p, n=None):
        """p-th percentile wait (s) of one central M/M/n queue (closed form)."""
        return mmn_waiting_percentile(p, *self._args(), self._n(n))

    def min_backends(self, rt_s, percentile, *, p_retry_busy=None):
        """Fewest replicas with P(R ≤ RT) ≥ percentile/100 by eq 7 (n′)."""
        return min_backends(*self._args(), rt_s, percentile, *self.delays_s, self.service,
                            p_retry_busy=p_retry_busy)

    def erlang_c_min_servers(self, rt_s, percentile):
        """Fewest servers of one central M/M/n queue meeting the SLA."""
        return erlang_c_min_servers(*self._args(), rt_s, percentile)

    def central_mean_wait_s(self, arrival_scv=1.0, n=None):
        """Mean wait (s, d1 included) of one central queue by GI/G/n."""
        return central.central_mean_wait_s(*self._args(), self._n(n), self.d1_s,
                                           arrival_scv, self.service)

    # ---------------------------------------------------------------- the page's answers

    def replica_answers(self, rt_s, percentile) -> dict:
        """``answers.replica_answers``: replicas by eq 7, M/M/n, for a steady state; λ/μ."""
        return answers.replica_answers(*self._args(), rt_s, percentile, *self.delays_s,
                                       self.service)

    def replica_curves(self, rt_s, percentile, top) -> dict:
        """``curves.replica_curves``: the curves against n up to ``top``."""
        return curves.replica_curves(*self._args(), rt_s, percentile, *self.delays_s,
                                     self.service, top)

    def replica_grid(self, top):
        """``curves.replica_grid``: the replica counts on the curves."""
        return curves.replica_grid(*self._args(), top)

    def cdf_curves(self, rt_s, n=None, simulated=None) -> dict:
        """``curves.cdf_curves``: response-time CDFs at n replicas."""
        return curves.cdf_curves(*self._args(), self._n(n), rt_s, *self.delays_s,
                                 self.service, simulated)

    def at_replicas(self, rt_s, n=None, simulated=None) -> dict:
        """``answers.at_replicas``: the numbers at n replicas."""
        return answers.at_replicas(*self._args(), self._n(n), rt_s, *self.delays_s,
                                   self.service, simulated)

    def sim_grid(self, approx, simulate=True) -> tuple:
        """``answers.sim_grid``: the replica counts simulated around eq 7's answer."""
        return answers.sim_grid(*self._args(), approx, simulate)

    def simulable(self, n=None, simulate=True) -> bool:
        """``answers.simulable``: whether n replicas are simulated."""
        return answers.simulable(*self._args(), self._n(n), simulate)

    def fewest_simulated(self, within_at, approx, percentile, progress=None) -> dict:
        """``answers.fewest_simulated``: the fewest replicas whose simulated fraction
        within RT, ``within_at(n)``, reaches the percentile."""
        return answers.fewest_simulated(within_at, *self._args(), approx, percentile,
                                        progress)

    def plan(self, trace, rt_s, percentile, **options):
        """``traces.plan_replicas`` over a load trace (this model's μ, delays and law;
        ``options``: interval_s, kind, provisioning_delay, headroom, ...)."""
        return plan_replicas(trace, self.mu_per_s, rt_s, percentile, *self.delays_s,
                             self.service, **options)

    # ---------------------------------------------------------------- simulation

    def simulate(self, n=None, policy="random_retry", n_requests=200_000, seed=None, *,
                 warmup_requests=None, backend=None, arrivals=None):
        """``sim.simulate_dispatch`` at n replicas (``arrivals``: None is Poisson at
        ``rate_per_s``; a process or a replayed trace as there)."""
        return sim.simulate_dispatch(policy, self.rate_per_s, self.service, int(self._n(n)),
                                     *self.delays_s, n_requests, seed,
                                     warmup_requests=warmup_requests, backend=backend,
                                     arrivals=arrivals)
