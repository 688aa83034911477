"""Stability limits (largest stable arrival rates) of the LLM batching strategies.

Fixed and dynamic batching from the throughput μ[b] (eq 24), elastic batching
from eq 26, continuous batching from the KV-cache occupancy.  Rates in requests
per second.  Derivations: docs/models/llm_batching.md.
"""
from __future__ import annotations

import numpy as np

from ..core.domains import LLM_KV_CAPACITY, LLM_PROMPT_TOKENS, LLM_STRATEGY, check_b_max
from .batch_times import check_dist, check_k, expected_max_tokens, throughput

B_HORIZON = 10 ** 6        # largest batch size the stability checks look at
STRATEGIES = LLM_STRATEGY.values


def _log_grid(top: int) -> np.ndarray:
    return np.unique(np.round(np.logspace(0, np.log10(top), 400)).astype(np.int64))


def stability_limit(strategy: str, dist, k, b=None, b_max=None, *, kv_capacity_tokens=None,
                    prompt_tokens=0.0) -> float:
    """Largest stable arrival rate (requests per second) of a strategy.

    * ``fixed``: μ[b] (needs ``b``).
    * ``dynamic``: μ[b_max] for finite b_max; uncapped: min of μ[b] over batch
      sizes from the throughput peak up to ``B_HORIZON`` (strictly 0 for an
      unbounded token law and k3 > 0).
    * ``elastic``: b_max/E[H_el(b_max)] with E[H_el(b)] = k1·b + k2 + k3·b·E[N] +
      k4·E[L_b] (eq 26); uncapped 1/(k1 + k3·E[N]).
    * ``continuous``: 1/(k1 + k3·E[N]) with unlimited KV cache and b_max; otherwise
      the approximation 1/(k1 + k2 + (k3 + k4/m)·E[N]), m = min(C/(p + E[N²]/E[N]),
      b_max) sequences fitting the cache (p = ``prompt_tokens``).
    """
    LLM_STRATEGY.check(strategy)
    k1, k2, k3, k4 = check_k(k)
    check_dist(dist)
    en = float(dist.mean())
    if strategy == "fixed":
        if b is None:
            raise ValueError("b: fixed batching needs a batch size")
        return float(throughput(b, dist, k))
    cap = check_b_max(b_max)
    if cap.ndim:
        raise ValueError("b_max must be a single value")
    if strategy == "dynamic":
        if np.isfinite(cap):
            return float(throughput(cap, dist, k))
        grid = _log_grid(B_HORIZON)
        mu = throughput(grid, dist, k)
        return float(mu[np.argmax(mu):].min())
    if strategy == "elastic":
        if np.isfinite(cap):
            return float(cap / (k1 * cap + k2 + k3 * cap * en
                                + k4 * expected_max_tokens(dist, cap)))
        return 1.0 / (k1 + k3 * en)
    if strategy == "continuous":
        p = float(LLM_PROMPT_TOKENS.check(prompt_tokens))
        c = (np.inf if kv_capacity_tokens is None
             else float(LLM_KV_CAPACITY.check(kv_capacity_tokens)))
        # a request holds p + N tokens for a time ∝ N: size-biased occupancy
        m = min(c / (p + float(dist.moment(2)) / en), float(cap)) if en > 0 else float(cap)
        if np.isinf(m):
            return 1.0 / (k1 + k3 * en)
        m = max(m, 1.0)
        return 1.0 / (k1 + k2 + (k3 + k4 / m) * en)
