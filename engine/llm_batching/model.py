"""The LLM batching model as one frozen object: the batch-time law H(b, l) = k1·b + k2 +
k3·b·l + k4·l seconds (Yang et al. eq 18) with the law of the output tokens bound, and
every strategy's answer as a method (numpy.polynomial's class layer over the module
functions, like ``engine.batching.DynamicBatching``).

The module functions take their arguments in five orders (``batch_time(b, l, k)``,
``throughput(b, dist, k)``, ``stability_limit(strategy, dist, k, …)``,
``dynamic_sojourn(lam, dist, k, …)``, ``fixed_batch_sojourn(lam, b, dist, k)``); the
methods take one: the load first (``lam_per_s``, requests/s), then the strategy's own
parameters.  Each method is the function it names, with the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass

from .answers import (B_MAX_CANDIDATES, best_fixed_batch_size, compare_strategies,
                      recommended_b_max, strategy_limits)
from .batch_times import (batch_time, check_dist, check_k, expected_max_tokens,
                          mean_batch_time, optimal_batch_size, throughput)
from .bounds import dynamic_wait_bound, linear_bound_coefficients
from .curves import batch_size_curve, fixed_curves
from .dynamic import CHAIN_MAX_STATES, dynamic_sojourn, dynamic_solution, dynamic_wait
from .fixed import fixed_batch_sojourn, fixed_batch_wait
from .sim import simulate
from .stability import stability_limit

__all__ = ["BatchTimes"]


@dataclass(frozen=True)
class BatchTimes:
    """H(b, l) = k1·b + k2 + k3·b·l + k4·l seconds (eq 18) and the law of the output
    tokens (an object with ``ppf`` and ``mean``: a scipy frozen law, ``EmpiricalTokens``).

    Two are equal when their coefficients are and they hold the same law object.

    >>> from scipy import stats
    >>> m = BatchTimes(0.06, 0.126, 0.0003, 0.02269, stats.uniform(0, 1000))
    >>> round(float(m.batch_time(4, 100)), 4)        # 0.24 + 0.126 + 0.12 + 2.269
    2.755
    >>> bool(m.dynamic_sojourn(0.5) < m.fixed_sojourn(0.5, 4))
    True
    """

    k1_s_per_request: float
    k2_s: float
    k3_s_per_token_per_request: float
    k4_s_per_token: float
    output_tokens: object

    def __post_init__(self):
        for name, value in zip(("k1_s_per_request", "k2_s", "k3_s_per_token_per_request",
                                "k4_s_per_token"), check_k(self.k)):
            object.__setattr__(self, name, value)
        check_dist(self.output_tokens)

    @classmethod
    def from_k(cls, k, output_tokens) -> "BatchTimes":
        """From the coefficients (k1, k2, k3, k4) as the module functions take them."""
        return cls(*check_k(k), output_tokens)

    @property
    def k(self) -> tuple[float, float, float, float]:
        """(k1, k2, k3, k4) as the module functions take them."""
        return (self.k1_s_per_request, self.k2_s, self.k3_s_per_token_per_request,
                self.k4_s_per_token)

    # ------------------------------------------------------------ batch times (eqs 18-24)

    def batch_time(self, b, l):
        """H(b, l), s (``batch_time``)."""
        return batch_time(b, l, self.k)

    def expected_max_tokens(self, b):
        """E[L_b], the mean longest output of b requests, tokens (``expected_max_tokens``)."""
        return expected_max_tokens(self.output_tokens, b)

    def mean_batch_time(self, b):
        """H(b, E[L_b]), s (``mean_batch_time``)."""
        return mean_batch_time(b, self.output_tokens, self.k)

    def throughput(self, b):
        """μ[b], requests/s (``throughput``, eq 24)."""
        return throughput(b, self.output_tokens, self.k)

    def optimal_batch_size(self, b_limit: int = 1024) -> int:
        """argmax μ[b] for b ≤ ``b_limit`` (``optimal_batch_size``)."""
        return optimal_batch_size(self.output_tokens, self.k, b_limit)

    def batch_size_curve(self, b_top: int = 512):
        """E[L_b] and μ[b] for b ≤ ``b_top`` (``batch_size_curve``, Fig 3)."""
        return batch_size_curve(self.output_tokens, self.k, b_top)

    def linear_bound_coefficients(self) -> tuple[float, float]:
        """(α1, β1) of eq 20 (``linear_bound_coefficients``)."""
        return linear_bound_coefficients(self.output_tokens, self.k)

    # ------------------------------------------------------------ capacities

    def stability_limit(self, strategy: str, b=None, b_max=None, *, kv_capacity_tokens=None,
                        prompt_tokens=0.0) -> float:
        """The largest stable load of ``strategy``, requests/s (``stability_limit``)."""
        return stability_limit(strategy, self.output_tokens, self.k, b, b_max,
                               kv_capacity_tokens=kv_capacity_tokens,
                               prompt_tokens=prompt_tokens)

    def strategy_limits(self, b, b_max, kv_capacity_tokens=None, prompt_tokens=0.0) -> dict:
        """Every strategy's limit, requests/s, by key (``strategy_limits``)."""
        return strategy_limits(self.output_tokens, self.k, b, b_max, kv_capacity_tokens,
                               prompt_tokens)

    # ------------------------------------------------------------ latencies at a load

    def fixed_wait(self, lam_per_s, b):
        """Fixed batches of ``b``: mean wait, s (``fixed_batch_wait``, M/D^b/1)."""
        return fixed_batch_wait(lam_per_s, b, self.output_tokens, self.k)

    def fixed_sojourn(self, lam_per_s, b):
        """Fixed batches of ``b``: mean latency, s (``fixed_batch_sojourn``)."""
        return fixed_batch_sojourn(lam_per_s, b, self.output_tokens, self.k)

    def fixed_curves(self, lam_per_s, b):
        """Fixed batching, eq 25 and the dynamic bound over loads (``fixed_curves``)."""
        return fixed_curves(lam_per_s, b, self.output_tokens, self.k)

    def dynamic_solution(self, lam_per_s: float, b_max=None,
                         max_states: int = CHAIN_MAX_STATES):
        """The exact dynamic-batching chain at one load (``dynamic_solution``)."""
        return dynamic_solution(lam_per_s, self.output_tokens, self.k, b_max, max_states)

    def dynamic_wait(self, lam_per_s, b_max=None):
        """Dynamic batching: mean wait, s (``dynamic_wait``)."""
        return dynamic_wait(lam_per_s, self.output_tokens, self.k, b_max)

    def dynamic_sojourn(self, lam_per_s, b_max=None):
        """Dynamic batching: mean latency, s (``dynamic_sojourn``)."""
        return dynamic_sojourn(lam_per_s, self.output_tokens, self.k, b_max)

    def dynamic_wait_bound(self, lam_per_s):
        """Inoue's φ with eq 20, s (``dynamic_wait_bound``)."""
        return dynamic_wait_bound(lam_per_s, self.output_tokens, self.k)

    # ------------------------------------------------------------ answers

    def best_fixed_batch_size(self, lam_per_s: float, b_search: int = 64) -> int:
        """b* at one load (``best_fixed_batch_size``)."""
        return best_fixed_batch_size(lam_per_s, self.output_tokens, self.k, b_search)

    def recommended_b_max(self, lam_per_s: float, candidates=B_MAX_CANDIDATES,
                          max_load: float = 0.9, max_states: int = CHAIN_MAX_STATES):
        """(b_max, mean latency in s) at one load (``recommended_b_max``)."""
        return recommended_b_max(lam_per_s, self.output_tokens, self.k, candidates,
                                 max_load, max_states)

    def compare_strategies(self, lam_per_s: float, b=None, **options) -> dict:
        """Every strategy at one load (``compare_strategies``; its keyword options)."""
        return compare_strategies(lam_per_s, self.output_tokens, self.k, b, **options)

    def simulate(self, strategy: str, lam_per_s, b=None, b_max=None, **options):
        """One strategy simulated (``simulate``; its keyword options: ``n_jobs``,
        ``seed``, ``kv_capacity_tokens``, ``arrivals`` …)."""
        return simulate(strategy, lam_per_s, self.output_tokens, self.k, b, b_max, **options)
