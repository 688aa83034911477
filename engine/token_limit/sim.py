"""Simulation of the clipped M/G/1 queue with deterministic patience (the exact sample path);
GI/G/1 or a replayed trace with ``arrivals``."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import token_laws
from ..core.arrival_input import check_arrival_times, is_arrival_process
from ..core.domains import (A_S_PER_TOKEN, C_S, N_JOBS, PATIENCE_S, SIM_LAM_PER_S, WARMUP,
                            check_n_max)
from ..core.jit import choose, compiled
from ..core.records import drawn_arrivals, warmup_count
from ..core.renamed import renamed_attribute
from ..core.stats import N_GROUPS, ci95_half_width, percentiles


def _sim_loop(gaps, service, tau, wait, served):
    """Workload recursion of the FCFS queue with patience τ (inf: none).

    Request k sees the work V in system; it joins iff V ≤ τ (waits V, adds its
    service), else it leaves after τ.  Fills ``wait`` (τ for a lost request)
    and ``served``; returns the total accepted work.
    """
    v = 0.0
    work = 0.0
    for k in range(gaps.size):
        v = max(0.0, v - gaps[k])
        if v <= tau:
            wait[k] = v
            served[k] = 1.0
            v += service[k]
            work += service[k]
        else:
            wait[k] = tau
            served[k] = 0.0
    return work


_sim_loop_fast = compiled(_sim_loop)


@dataclass(frozen=True)
class TokenQueueSimResult:
    """Summary of one simulated run (after the warm-up), times in seconds."""

    mean_wait_all_s: float        # E[W_q]: lost requests count τ
    ci95_wait_all_s: float        # half-width of its 95% CI (batch means)
    mean_wait_served_s: float     # E[W_qs] (τ when every counted request left)
    ci95_wait_served_s: float
    loss_fraction: float          # π(τ)
    ci95_loss: float
    mean_service_s: float         # mean S over all requests (served or not)
    utilization: float            # busy fraction
    n_jobs: int
    ci_reliable: bool = True      # False: run too short for its load, CI too narrow
    mean_latency_s: float = float("nan")  # time in system: wait + service (served), τ (lost)
    ci95_s: float = float("nan")          # half-width of the 95% CI of mean_latency_s
    p50_s: float = float("nan")           # percentiles of the time in system
    p95_s: float = float("nan")
    p99_s: float = float("nan")

    @property
    def mean_wait_s(self) -> float:
        """E[W_q] (lost requests count τ), s: the common simulator vocabulary."""
        return self.mean_wait_all_s

    # the names before the unit was added: read with a DeprecationWarning
    mean_wait_all = renamed_attribute("mean_wait_all_s")
    ci95_wait_all = renamed_attribute("ci95_wait_all_s")
    mean_wait_served = renamed_attribute("mean_wait_served_s")
    ci95_wait_served = renamed_attribute("ci95_wait_served_s")
    mean_service = renamed_attribute("mean_service_s")
    mean_latency = renamed_attribute("mean_latency_s")
    ci95 = renamed_attribute("ci95_s")
    p50 = renamed_attribute("p50_s")
    p95 = renamed_attribute("p95_s")
    p99 = renamed_attribute("p99_s")
    mean_wait = renamed_attribute("mean_wait_s")


@dataclass(frozen=True)
class TokenQueueRecords:
    """The sample path of one run, per request (all ``n``, in arrival order, seconds):
    the gap since the previous arrival ``gap_s`` (the first: since t = 0, the empty
    system), the tokens served, the service time a·min(n, n_max) + c ``service_s``, the
    wait ``wait_s`` (τ for a request that left) and whether it was served; ``warmup``
    requests left out at the start and the patience τ ``patience_s`` (inf: none).  The
    names without a unit still read, with a ``DeprecationWarning``."""

    gap_s: np.ndarray
    tokens: np.ndarray
    service_s: np.ndarray
    wait_s: np.ndarray
    served: np.ndarray             # 1.0 served, 0.0 left after τ
    warmup: int
    patience_s: float

    @property
    def arrival_s(self) -> np.ndarray:
        """Arrival times (s)."""
        return np.cumsum(self.gap_s)

    @property
    def latency_s(self) -> np.ndarray:
        """Time in system: wait + service for a served request, τ for one that left (s)."""
        return self.wait_s + self.served * self.service_s

    gap = renamed_attribute("gap_s")
    service = renamed_attribute("service_s")
    wait = renamed_attribute("wait_s")
    patience = renamed_attribute("patience_s")
    arrival = renamed_attribute("arrival_s")
    latency = renamed_attribute("latency_s")


def simulate_token_queue_records(lam, a, c, dist, n_max=None, patience=None, n_jobs=200_000,
                                 seed=None, *, warmup_jobs=None, backend: str | None = None,
                                 arrivals=None) -> TokenQueueRecords:
    """The ``TokenQueueRecords`` of one run (arguments as ``simulate_token_queue``): the
    arrivals and warm-up of the shared preamble (``core.records``), the tokens, then the
    workload recursion."""
    if arrivals is None:
        lam = float(SIM_LAM_PER_S.check(lam))
    a, c = float(A_S_PER_TOKEN.check(a)), float(C_S.check(c))
    m = check_n_max(n_max)
    if m.ndim:
        raise ValueError("n_max must be a single value to simulate")
    tau = np.inf if patience is None else PATIENCE_S.check(patience)
    if np.ndim(tau):
        raise ValueError("patience must be a single value to simulate")
    replay = (None if arrivals is None or is_arrival_process(arrivals)
              else check_arrival_times(arrivals))
    n = int(N_JOBS.check(n_jobs)) if replay is None else replay.size
    warmup = warmup_count(n, None if warmup_jobs is None else WARMUP.check(warmup_jobs))
    loop = choose(backend, _sim_loop_fast, _sim_loop)
    rng = np.random.default_rng(seed)
    if arrivals is None:        # the gaps themselves: the Poisson runs of before, bit for bit
        gaps = rng.standard_exponential(n) / lam
    else:                       # from the empty system at t = 0
        gaps = np.diff(drawn_arrivals(None, n, rng, arrivals), prepend=0.0)
    tokens = np.minimum(token_laws.sample_tokens(dist, n, rng), float(m))
    service = a * tokens + c
    wait, served = np.empty(n), np.empty(n)
    loop(gaps, service, float(tau), wait, served)
    return TokenQueueRecords(gaps, tokens, service, wait, served, warmup, float(tau))


def token_queue_summary(records: TokenQueueRecords) -> TokenQueueSimResult:
    """The ``TokenQueueSimResult`` of ``records`` after the warm-up: E[W_q], E[W_qs], π(τ)
    and the time in system with their 95 % half-widths (batch means,
    ``core.stats.ci95_half_width``; the served mean, a ratio, by the batch means of
    w·1{served} − W̄_s·1{served}), percentiles (``core.stats.percentiles``), the mean
    service and the busy fraction."""
    r = records
    warmup, n = r.warmup, r.gap_s.size
    counted = n - warmup
    w, s = r.wait_s[warmup:], r.served[warmup:]
    edges = (np.arange(N_GROUPS + 1) * counted // N_GROUPS)[:-1]
    ci_all, reliable = ci95_half_width(np.add.reduceat(w, edges), counted)
    ci_loss, _ = ci95_half_width(np.add.reduceat(1.0 - s, edges), counted)
    n_served = s.sum()
    if n_served:
        w_served = float(np.dot(w, s) / n_served)
        resid = w * s - w_served * s
        ci_served, _ = ci95_half_width(np.add.reduceat(resid, edges), counted)
    else:       # every counted request left: the served wait's limit as π → 1 is τ
        w_served, ci_served = float(r.patience_s), float("inf")
    horizon = r.gap_s[warmup + 1:].sum() if n - warmup > 1 else 0.0
    busy = float(np.dot(r.service_s[warmup:], s))
    latency = w + s * r.service_s[warmup:]              # lost: τ (the time until leaving)
    ci_latency, _ = ci95_half_width(np.add.reduceat(latency, edges), counted)
    mean_latency = float(latency.mean())
    p50, p95, p99 = percentiles(latency)
    return TokenQueueSimResult(
        mean_wait_all_s=float(w.mean()), ci95_wait_all_s=ci_all,
        mean_wait_served_s=w_served,
        ci95_wait_served_s=float(ci_served * counted / max(n_served, 1.0)),
        loss_fraction=float(1.0 - s.mean()), ci95_loss=ci_loss,
        mean_service_s=float(r.service_s[warmup:].mean()),
        utilization=float(min(1.0, busy / horizon)) if horizon > 0 else 1.0,
        n_jobs=int(counted), ci_reliable=reliable, mean_latency_s=mean_latency,
        ci95_s=ci_latency, p50_s=float(p50), p95_s=float(p95), p99_s=float(p99))


def simulate_token_queue(lam, a, c, dist, n_max=None, patience=None, n_jobs=200_000, seed=None,
                         *, warmup_jobs=None, backend: str | None = None,
                         arrivals=None) -> TokenQueueSimResult:
    """Simulate the clipped M/G/1 queue (with deterministic patience) from empty: the
    summary (``token_queue_summary``) of the run's records
    (``simulate_token_queue_records``).

    Poisson arrivals of rate ``lam``; n = max(1, ⌈X⌉), X ~ ``dist``; service
    a·min(n, n_max) + c.  ``patience=None`` (or inf): everyone waits.
    ``warmup_jobs`` (default n_jobs // 10) are left out.  Times in seconds.  ``seed``: anything
    ``numpy.random.default_rng`` accepts.  ``backend``: "numba" or "numpy".

    ``arrivals`` (GI/G/1 and trace replay; docs/models/token_limit.md): None is Poisson
    at ``lam``; a sorted array of times (s) is replayed, one request per time, so
    ``n_jobs`` is its length and ``lam`` is ignored; an arrival process (``rate`` per s
    and ``sample(n, rng)``, e.g. ``engine.arrivals.Renewal``) gives ``n_jobs`` arrivals
    at its own rate, ``lam`` ignored (None allowed).
    """
    return token_queue_summary(simulate_token_queue_records(
        lam, a, c, dist, n_max, patience, n_jobs, seed, warmup_jobs=warmup_jobs,
        backend=backend, arrivals=arrivals))
