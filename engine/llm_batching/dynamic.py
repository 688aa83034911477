"""Dynamic batching of LLM requests (Yang et al. §IV-A/B), exact with random batch times.

The departure chain of jobs left waiting, with batch time H(B, L_B) mixed over
the law of the longest output L_B, solved on a growing truncation; the mean
wait by renewal reward over departure cycles.  Seconds, requests.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from ..core.domains import LAM_PER_S, check_b_max
from ..core.renamed import renamed_attribute
from .batch_times import check_dist, check_k, max_token_moments, max_token_nodes, mean_batch_time
from .stability import stability_limit

_CHAIN_TOL = 1e-10         # probability allowed in the top quarter of the chain
_CHAIN_START, CHAIN_MAX_STATES = 64, 2048    # truncations tried: 64, 128, ..., 2048 states


@dataclass(frozen=True)
class DynamicSolution:
    """Stationary means of dynamic batching with random batch times (seconds, requests)."""

    mean_wait_s: float        # before the request's batch starts
    mean_sojourn_s: float     # wait + the batch time of its batch
    mean_batch_size: float    # over batches
    utilization: float        # fraction of time a batch is running
    n_states: int             # truncation of the departure chain (0: not solved)
    stable: bool              # False: load at or above the stability limit, means are inf
    converged: bool = True    # False: stable, but the chain needs over 2048 states (inf)

    mean_latency_s = property(lambda self: self.mean_sojourn_s,
                              doc="mean wait + processing, s (the same as ``mean_sojourn_s``)")

    # the names before the unit was added: read with a DeprecationWarning
    mean_wait = renamed_attribute("mean_wait_s")
    mean_sojourn = renamed_attribute("mean_sojourn_s")
    mean_latency = renamed_attribute("mean_latency_s")


def _unstable(b_max) -> DynamicSolution:
    return DynamicSolution(np.inf, np.inf, float(b_max), 1.0, 0, False)


def _dynamic_chain(lam: float, dist, k, b_max: float, n_states: int):
    """Stationary solution of the departure chain truncated at ``n_states`` states.

    State n = requests left waiting when a batch ends; the next batch takes
    B = min(max(n, 1), b_max) of them and A ~ Poisson(λH(B, L_B)) arrive during
    it (mixed over L_B).  Mass beyond the last state is put on it.  Returns
    (wait, sojourn, E[B], utilization, mass in the top quarter).
    """
    k1, k2, k3, k4 = k
    n = np.arange(n_states)
    batch = np.minimum(np.maximum(n, 1), b_max).astype(np.int64)
    sizes = np.arange(1, batch.max() + 1)
    l_nodes, w = max_token_nodes(dist, sizes)
    h = k1 * sizes[:, None] + k2 + (k3 * sizes[:, None] + k4) * l_nodes
    m1, m2 = max_token_moments(dist, sizes)
    eh = k1 * sizes + k2 + (k3 * sizes + k4) * m1
    eh2 = ((k1 * sizes + k2) ** 2 + 2.0 * (k1 * sizes + k2) * (k3 * sizes + k4) * m1
           + (k3 * sizes + k4) ** 2 * m2)
    j = np.arange(n_states)
    pmf = np.zeros((sizes.size, n_states))
    for g in range(w.size):                      # mixture over the nodes of L_B
        mean = lam * h[:, g:g + 1]
        pmf += w[g] * np.exp(j * np.log(mean) - mean - gammaln(j + 1.0))
    base = np.where(n == 0, 0, n - batch)
    cols = base[:, None] + j[None, :]                # row i: its batch's pmf shifted by base
    inside = cols < n_states
    p = np.zeros((n_states, n_states))
    rows = np.broadcast_to(n[:, None], cols.shape)
    p[rows[inside], cols[inside]] = pmf[batch - 1][inside]
    p[:, -1] += np.clip(1.0 - p.sum(axis=1), 0.0, None)   # mass beyond the truncation
    a = p.T - np.eye(n_states)
    a[-1, :] = 1.0
    rhs = np.zeros(n_states)
    rhs[-1] = 1.0
    q = np.linalg.solve(a, rhs)
    q = np.maximum(q, 0.0)
    q /= q.sum()
    ehb, eh2b = eh[batch - 1], eh2[batch - 1]
    cycle = q @ ehb + q[0] / lam
    area = q @ ((n - batch).clip(0) * ehb + 0.5 * lam * eh2b)
    eb = q @ batch
    wait = area / cycle / lam
    sojourn = wait + (q @ (batch * ehb)) / eb
    top = q[-max(n_states // 4, 1):].sum()
    return wait, sojourn, eb, (q @ ehb) / cycle, top


def dynamic_solution(lam: float, dist, k, b_max=None, max_states: int = CHAIN_MAX_STATES
                     ) -> DynamicSolution:
    """Exact dynamic batching with random batch times H(B, L_B), one arrival rate λ (per s).

    The departure chain is truncated at 64, 128, … states until its top quarter
    holds under 1e-10 of the probability, at most ``max_states`` (≤ 2048; cost
    grows like states²).  Loads at or above ``stability_limit('dynamic', ...)``
    give ``inf`` with ``stable=False``; a stable load needing more states gives
    ``inf`` with ``converged=False``.  Mean wait by renewal reward over
    departure cycles (docs/models/llm_batching.md).
    """
    lam = float(LAM_PER_S.check(lam))
    kk = check_k(k)
    check_dist(dist)
    cap = check_b_max(b_max)
    if cap.ndim:
        raise ValueError("b_max must be a single value")
    cap = float(cap)
    if not _CHAIN_START <= int(max_states) <= CHAIN_MAX_STATES:
        raise ValueError(f"max_states must be in [{_CHAIN_START}, {CHAIN_MAX_STATES}], "
                         f"got {max_states!r}")
    if not np.isfinite(lam) or lam >= stability_limit("dynamic", dist, kk, b_max=b_max):
        return _unstable(cap)
    if lam == 0.0:
        h1 = float(mean_batch_time(1, dist, kk))
        return DynamicSolution(0.0, h1, 1.0, 0.0, 1, True)
    n_states = _CHAIN_START
    while n_states <= int(max_states):
        wait, soj, eb, util, top = _dynamic_chain(lam, dist, kk, cap, n_states)
        if top < _CHAIN_TOL:
            return DynamicSolution(float(wait), float(soj), float(eb), float(util), n_states, True)
        n_states *= 2
    return DynamicSolution(np.inf, np.inf, np.inf, 1.0, 0, True, converged=False)


def dynamic_wait(lam, dist, k, b_max=None):
    """Exact mean wait (s) before the batch starts under dynamic batching; broadcasts over lam.

    Batch times are random, H(B, L_B) with L_B the largest of the B token
    counts (eq 18), not H(B, E[L_B]).  ``inf`` at unstable loads (uncapped with
    a heavy-tailed law: practically every load; docs/models/llm_batching.md).
    """
    lam = LAM_PER_S.check(lam)
    flat = [dynamic_solution(float(x), dist, k, b_max).mean_wait_s for x in lam.ravel()]
    return np.asarray(flat).reshape(lam.shape)[()]


def dynamic_sojourn(lam, dist, k, b_max=None):
    """Exact mean wait + batch time (s) under dynamic batching; broadcasts over lam."""
    lam = LAM_PER_S.check(lam)
    flat = [dynamic_solution(float(x), dist, k, b_max).mean_sojourn_s for x in lam.ravel()]
    return np.asarray(flat).reshape(lam.shape)[()]
