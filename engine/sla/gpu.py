"""One GPU as a replica: the requests/s it serves within a mean-latency target under
dynamic batching (engine.batching), the μ of the SLA model."""
from __future__ import annotations

import numpy as np

from .. import batching
from ..core.domains import ALPHA, LATENCY_TARGET_MS, TAU0, check_b_max
from ..core.roots import largest_satisfying
from ..core.units import MS_PER_S


def gpu_service_rate(alpha_ms, tau0_ms, latency_target_ms, b_max=None):
    """Requests/s one GPU serves with exact mean latency ≤ the target (dynamic batching).

    The largest λ with ``engine.batching.mean_latency(λ, α, τ0, b_max)`` ≤ target
    (E[W] grows with λ from α + τ0 at λ = 0 to ∞ at capacity), by bisection to
    relative 1e-12, converted from per ms to per s.  0 where the target is at or
    below α + τ0 (a lone request takes α + τ0, and any load adds to it).
    """
    alpha, tau0 = ALPHA.check(alpha_ms, "alpha_ms"), TAU0.check(tau0_ms, "tau0_ms")
    target = LATENCY_TARGET_MS.check(latency_target_ms)
    b = check_b_max(b_max)
    if b.ndim:
        raise ValueError("b_max must be a single value (None: unlimited)")
    bm = None if np.isinf(b) else int(b)
    alpha, tau0, target = np.broadcast_arrays(alpha, tau0, target)
    cap = batching.capacity(alpha, tau0, bm)
    reachable = alpha + tau0 < target          # at equality only λ = 0 meets it

    def ok(lam):
        return batching.mean_latency(lam, alpha, tau0, bm) <= target

    best = largest_satisfying(ok, np.zeros(alpha.shape), np.where(reachable, cap, 0.0))
    return np.where(reachable, best * MS_PER_S, 0.0)[()]
