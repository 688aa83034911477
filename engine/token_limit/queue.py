"""The frozen model object of the token-limit queue (numpy.polynomial's class layer over
the module functions): ``TokenLimitQueue`` binds λ, S = a·min(n, n_max) + c, the token
law and the patience τ, and its methods give the exact answers (eq 1's M/G/1 wait, the
M/G/1+D impatience, the optimal limit of eqs 10-11, Kingman's approximation under other
arrivals) and a simulated run, each the module function of the same name.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.domains import A_S_PER_TOKEN, C_S, LAM_PER_S, PATIENCE_S
from .answers import LimitPoint, OptimalLimit, limit_point, optimal_limit
from .curves import LimitCurves, approx_mean_wait, limit_curves
from .formulas import largest_stable_limit, mean_wait, utilization
from .patience import Impatience, impatience
from .sim import TokenQueueSimResult, simulate_token_queue
from .sweeps import SIM_MAX_LOAD, sim_plan


@dataclass(frozen=True)
class TokenLimitQueue:
    """One LLM server answering Poisson requests in turn (Yang et al. §III).

    ``lam_per_s`` requests per s; a request asking n output tokens (n from ``tokens``,
    an ``engine.core.token_laws`` law) takes a·min(n, n_max) + c s with ``a_s_per_token``
    and ``c_s``; a user whose wait would exceed ``patience_s`` (None: no one) leaves.
    The law is left out of equality and hashing (laws may hold arrays): key a memo on
    the law's own key beside the queue.

    >>> from engine.core import token_laws
    >>> q = TokenLimitQueue(0.025, 0.023087, 0.49, token_laws.lognormal(7.0, 0.7), 60.0)
    >>> bool(q.mean_wait(1600) < q.mean_wait(3000))
    True
    """

    lam_per_s: float
    a_s_per_token: float
    c_s: float
    tokens: object = field(compare=False, hash=False, repr=False)
    patience_s: float | None = None

    def __post_init__(self):
        LAM_PER_S.check(self.lam_per_s, "lam_per_s")
        A_S_PER_TOKEN.check(self.a_s_per_token, "a_s_per_token")
        C_S.check(self.c_s, "c_s")
        if self.patience_s is not None:
            PATIENCE_S.check(self.patience_s, "patience_s")

    @property
    def _args(self) -> tuple:
        return self.lam_per_s, self.a_s_per_token, self.c_s, self.tokens

    def _tau(self, patience_s):
        tau = self.patience_s if patience_s is None else patience_s
        if tau is None:
            raise ValueError("patience_s: this queue has no patience; give one")
        return tau

    def utilization(self, n_max):
        """ρ = λE[S] at the limits ``n_max`` (``formulas.utilization``)."""
        return utilization(*self._args, n_max)

    def mean_wait(self, n_max):
        """M/G/1 mean wait E[W] (s), eq 1, at the limits ``n_max``; inf where ρ ≥ 1."""
        return mean_wait(*self._args, n_max)

    def largest_stable_limit(self) -> float:
        """The largest stable n_max at this λ (inf: any)."""
        return largest_stable_limit(*self._args)

    def impatience(self, n_max, method: str = "exact", patience_s=None) -> Impatience:
        """π(τ), E[W_q], E[W_qs] with patience τ (M/G/1+D, ``patience.impatience``)."""
        return impatience(*self._args, n_max, self._tau(patience_s), method)

    def limit_point(self, n_max, method: str = "exact", patience_s=None) -> LimitPoint:
        """Everything at one limit (``answers.limit_point``)."""
        return limit_point(*self._args, n_max, self._tau(patience_s), method)

    def curves(self, n_max, patience_s=None) -> LimitCurves:
        """Waits, loads, loss and utility over the limits ``n_max`` (``limit_curves``)."""
        return limit_curves(*self._args, n_max, self._tau(patience_s))

    def optimal_limit(self, theta, loss_cost=None, *, method: str = "exact",
                      candidates=None, printed_sign: bool = False) -> OptimalLimit:
        """The limit maximising V1 (eq 10) or, with ``loss_cost``, V2 (eq 11) with this
        queue's patience (``answers.optimal_limit``)."""
        patience = None if loss_cost is None else self._tau(None)
        return optimal_limit(*self._args, theta, loss_cost, patience, method=method,
                             candidates=candidates, printed_sign=printed_sign)

    def approx_mean_wait(self, n_max, scv_arrival):
        """Kingman's GI/G/1 mean wait (s) under arrivals of SCV ``scv_arrival``."""
        return approx_mean_wait(*self._args, n_max, scv_arrival)

    def sim_plan(self, limits, max_load: float = SIM_MAX_LOAD, stream: int | None = None):
        """The runs of a simulated sweep over ``limits`` (``sweeps.sim_plan``)."""
        return sim_plan(*self._args, limits, self.patience_s, max_load, stream)

    def simulate(self, n_max=None, n_jobs: int = 200_000, seed=None, *, patience_s="queue",
                 warmup_jobs=None, backend: str | None = None,
                 arrivals=None) -> TokenQueueSimResult:
        """A simulated run (``sim.simulate_token_queue``) with this queue's patience, or
        ``patience_s`` (None: no one gives up)."""
        tau = self.patience_s if patience_s == "queue" else patience_s
        return simulate_token_queue(*self._args, n_max, tau, n_jobs, seed,
                                    warmup_jobs=warmup_jobs, backend=backend,
                                    arrivals=arrivals)
