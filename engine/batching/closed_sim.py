"""Discrete-event simulator of the closed loop perf_analyzer drives (fixed concurrency).

``n_clients`` clients each send a request, wait for its reply, spend a think time
outside the server (exponential with mean ``think_time_ms``, or exactly that)
and send the next one.  Requests join one FIFO queue shared by ``instances`` copies
of the batching server; a free copy takes every waiting request (at most ``b_max``)
as one batch of deterministic time τ[b] = αb + τ0.  All clients send their first
request at time 0.  Times in ms (``alpha_ms``, ``tau0_ms``, ``think_time_ms``; the
keywords of before still work, with a ``DeprecationWarning``).  The model it checks:
``closed_loop``; the derivations: docs/models/batching.md, "Closed loop".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import (ALPHA, INSTANCES, N_BATCHES, N_CLIENTS, TAU0, THINK_LAW,
                            THINK_TIME, WARMUP_BATCHES, check_b_max)
from ..core.jit import compiled
from ..core.records import summary_of, warmup_count
from ..core.renamed import renamed_attribute, renamed_keywords
from ..core.stats import N_GROUPS, ci95_half_width

THINK_LAWS = THINK_LAW.values

# Slots of the float state: time, busy copy-time counted, start of the counted span.
_T, _BUSY, _T_START = range(3)
# Slots of the integer state: heap size, queue head, queue length, batches done, batches
# counted, requests recorded, random numbers used, busy copies.
_HEAP, _HEAD, _QLEN, _DONE_B, _COUNT_B, _N_REC, _POS, _N_BUSY = range(8)
# Why the event loop returned.
_DONE, _NEED_RANDOM, _NEED_SPACE = 0, 1, 2


def _event_loop(tau, b_max, think, exponential, n_batches, warmup, fs, ks, heap_t, heap_c,
                ring, arrived, until, size, members, draws, latency, wait, finish):
    """Run the closed loop from the state in ``fs``/``ks`` (slots above) until
    ``n_batches`` batches after the warm-up have completed (``_DONE``), the standard
    exponential ``draws`` may run out (``_NEED_RANDOM``) or the per-request
    records ``latency``/``wait``/``finish`` may fill (``_NEED_SPACE``).

    Every event at one time (completions, then returns, a zero think time
    included) is applied before free copies, in index order, take batches.  The
    warm-up ends at the ``warmup``-th completion; batches ending at that same
    instant belong to it.
    Returning clients wait in a binary heap keyed by return time.
    """
    n = ring.size
    copies = until.size
    t = fs[_T]
    while True:
        # Free copies take the waiting requests, oldest first, b_max at most.
        for j in range(copies):
            if size[j] == 0 and ks[_QLEN] > 0:
                b = min(ks[_QLEN], b_max)
                for m in range(b):
                    members[j, m] = ring[(ks[_HEAD] + m) % n]
                ks[_HEAD] = (ks[_HEAD] + b) % n
                ks[_QLEN] -= b
                size[j] = b
                until[j] = t + tau[b - 1]
                ks[_N_BUSY] += 1
        if exponential and ks[_POS] + copies * members.shape[1] > draws.size:
            fs[_T] = t
            return _NEED_RANDOM
        if ks[_N_REC] + copies * members.shape[1] > latency.size:
            fs[_T] = t
            return _NEED_SPACE
        t_next = np.inf
        for j in range(copies):
            if size[j] > 0 and until[j] < t_next:
                t_next = until[j]
        if ks[_HEAP] > 0 and heap_t[0] < t_next:
            t_next = heap_t[0]
        if ks[_DONE_B] >= warmup:
            fs[_BUSY] += ks[_N_BUSY] * (t_next - t)
        t = t_next
        for j in range(copies):
            if size[j] == 0 or until[j] > t:
                continue
            counted = ks[_DONE_B] >= warmup and (warmup == 0 or t > fs[_T_START])
            for m in range(size[j]):
                c = members[j, m]
                if counted:
                    latency[ks[_N_REC]] = t - arrived[c]
                    wait[ks[_N_REC]] = t - tau[size[j] - 1] - arrived[c]
                    finish[ks[_N_REC]] = t
                    ks[_N_REC] += 1
                d = think
                if exponential:
                    d = draws[ks[_POS]] * think
                    ks[_POS] += 1
                if d == 0.0:                        # straight back into the queue
                    arrived[c] = t
                    ring[(ks[_HEAD] + ks[_QLEN]) % n] = c
                    ks[_QLEN] += 1
                    continue
                k = ks[_HEAP]                       # heap push (sift up)
                ks[_HEAP] += 1
                while k > 0 and heap_t[(k - 1) // 2] > t + d:
                    heap_t[k] = heap_t[(k - 1) // 2]
                    heap_c[k] = heap_c[(k - 1) // 2]
                    k = (k - 1) // 2
                heap_t[k] = t + d
                heap_c[k] = c
            size[j] = 0
            ks[_N_BUSY] -= 1
            ks[_DONE_B] += 1
            ks[_COUNT_B] += counted
            if ks[_DONE_B] == warmup:
                fs[_T_START] = t
        while ks[_HEAP] > 0 and heap_t[0] <= t:     # heap pop (sift down)
            c = heap_c[0]
            arrived[c] = heap_t[0]
            ring[(ks[_HEAD] + ks[_QLEN]) % n] = c
            ks[_QLEN] += 1
            ks[_HEAP] -= 1
            last_t, last_c = heap_t[ks[_HEAP]], heap_c[ks[_HEAP]]
            k = 0
            while True:
                child = 2 * k + 1
                if child >= ks[_HEAP]:
                    break
                if child + 1 < ks[_HEAP] and heap_t[child + 1] < heap_t[child]:
                    child += 1
                if heap_t[child] >= last_t:
                    break
                heap_t[k] = heap_t[child]
                heap_c[k] = heap_c[child]
                k = child
            heap_t[k] = last_t
            heap_c[k] = last_c
        if ks[_COUNT_B] >= n_batches:
            fs[_T] = t
            return _DONE


_event_loop_fast = compiled(_event_loop)


@dataclass(frozen=True)
class ClosedLoopSimResult:
    """Summary of one closed-loop run after the warm-up; times in ms, the unit of α as
    ``engine.batching`` takes it (another unit given comes back under the same names).

    ``throughput_per_ms``: requests completed per ms over the counted span (from the
    last warm-up batch's completion to the last counted one); ``mean_latency_ms``: from
    a request's arrival at the queue to its batch's completion (think time excluded);
    ``ci95*``: half-widths of 95 % confidence intervals from batch means of
    consecutive requests (``engine.core.stats``), the throughput's by the delta
    method from the mean time between completions.  The names without a unit
    (``throughput``, ``mean_latency``, ``ci95``, ``p50`` …) still read the fields, with
    a ``DeprecationWarning``.
    """

    throughput_per_ms: float
    ci95_throughput_per_ms: float
    mean_latency_ms: float
    ci95_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_wait_ms: float          # from arrival at the queue to the batch's start
    ci95_wait_ms: float
    mean_batch_size: float
    utilization: float           # mean busy copies / instances
    n_requests: int              # requests counted
    n_batches: int               # batches counted (≥ the n_batches asked for)
    ci_reliable: bool = True     # False: batch means stayed correlated (run too short)

    throughput = renamed_attribute("throughput_per_ms")
    ci95_throughput = renamed_attribute("ci95_throughput_per_ms")
    mean_latency = renamed_attribute("mean_latency_ms")
    ci95 = renamed_attribute("ci95_ms")
    p50 = renamed_attribute("p50_ms")
    p95 = renamed_attribute("p95_ms")
    p99 = renamed_attribute("p99_ms")
    mean_wait = renamed_attribute("mean_wait_ms")
    ci95_wait = renamed_attribute("ci95_wait_ms")


def _scalar_int(domain, value, name):
    arr = domain.check(value, name)
    if arr.ndim:
        raise ValueError(f"{name} must be a single value to simulate")
    return int(arr)


@dataclass(frozen=True)
class ClosedLoopRecords:
    """The counted part of one closed-loop run (after the warm-up), times in ms (the unit
    of α): per request, in the order the batches completed, its ``latency_ms`` (arrival at
    the queue to its batch's completion), ``wait_ms`` (to its batch's start) and
    ``finish_ms``; the counted span's start ``span_start_ms`` (the last warm-up batch's
    completion, 0 without a warm-up), the copies' busy time summed over the span
    ``busy_copy_time_ms``, the batches counted and the copies.  The names without a unit
    still read the fields, with a ``DeprecationWarning``."""

    latency_ms: np.ndarray
    wait_ms: np.ndarray
    finish_ms: np.ndarray
    span_start_ms: float
    busy_copy_time_ms: float
    n_batches: int
    instances: int

    latency = renamed_attribute("latency_ms")
    wait = renamed_attribute("wait_ms")
    finish = renamed_attribute("finish_ms")
    span_start = renamed_attribute("span_start_ms")
    busy_copy_time = renamed_attribute("busy_copy_time_ms")


_OLD_KEYWORDS = dict(alpha="alpha_ms", tau0="tau0_ms", think_time="think_time_ms")


@renamed_keywords(**_OLD_KEYWORDS)
def simulate_closed_loop_records(n_clients, alpha_ms, tau0_ms, b_max=None, think_time_ms=0.0,
                                 instances=1, *, n_batches=20_000, warmup=None,
                                 think="exponential", rng=None) -> ClosedLoopRecords:
    """The closed loop's sample path (``simulate_closed_loop``'s arguments) as records;
    ``summarize_closed_loop`` gives its summary."""
    n = _scalar_int(N_CLIENTS, n_clients, "n_clients")
    a = ALPHA.check(alpha_ms, "alpha_ms")
    t0 = TAU0.check(tau0_ms, "tau0_ms")
    theta = THINK_TIME.check(think_time_ms, "think_time_ms")
    if a.ndim or t0.ndim or theta.ndim:
        raise ValueError("alpha_ms, tau0_ms and think_time_ms must be single values to "
                         "simulate")
    b = check_b_max(b_max)
    if b.ndim:
        raise ValueError("b_max must be a single value to simulate")
    copies = _scalar_int(INSTANCES, instances, "instances")
    count = _scalar_int(N_BATCHES, n_batches, "n_batches")
    # warm-up batches come before the counted ones (not out of them): only the default
    # is the shared n // 10
    warm = (warmup_count(count, None) if warmup is None
            else _scalar_int(WARMUP_BATCHES, warmup, "warmup"))
    THINK_LAW.check(think)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    cap = int(min(n, b))
    tau = float(a) * np.arange(1, cap + 1) + float(t0)
    exponential = think == "exponential" and float(theta) > 0.0
    fs, ks = np.zeros(3), np.zeros(8, dtype=np.int64)
    ring = np.arange(n, dtype=np.int64)
    ks[_QLEN] = n                                   # every client sends at time 0
    arrived = np.zeros(n)
    heap_t, heap_c = np.empty(n), np.empty(n, dtype=np.int64)
    until, size = np.zeros(copies), np.zeros(copies, dtype=np.int64)
    members = np.zeros((copies, cap), dtype=np.int64)
    chunk = max(1 << 14, 4 * copies * cap)
    draws = rng.standard_exponential(chunk) if exponential else np.empty(0)
    room = max(1 << 12, min(count * cap, 1 << 20) + copies * cap)
    latency, wait, finish = np.empty(room), np.empty(room), np.empty(room)
    while True:
        status = _event_loop_fast(tau, cap, float(theta), exponential, count, warm, fs, ks,
                                  heap_t, heap_c, ring, arrived, until, size, members, draws,
                                  latency, wait, finish)
        if status == _DONE:
            break
        if status == _NEED_RANDOM:
            draws = np.concatenate([draws[ks[_POS]:], rng.standard_exponential(chunk)])
            ks[_POS] = 0
        else:
            latency, wait, finish = (np.concatenate([x, np.empty(x.size)])
                                     for x in (latency, wait, finish))
    done = ks[_N_REC]
    return ClosedLoopRecords(latency[:done].copy(), wait[:done].copy(), finish[:done].copy(),
                             float(fs[_T_START]), float(fs[_BUSY]), int(ks[_COUNT_B]), copies)


def summarize_closed_loop(records: ClosedLoopRecords) -> ClosedLoopSimResult:
    """The summary of a closed-loop run's records: the mean and percentiles of the latency
    and the mean wait from the shared summary (``engine.core.records.summary_of``), 95 %
    half-widths from batch means of consecutive requests (``core.stats.ci95_half_width``),
    throughput X = requests / counted span with its half-width by the delta method from
    the mean time between completions, E[B] = requests / batches, utilization = busy
    copy-time / (copies × span)."""
    latency, wait, finish = records.latency_ms, records.wait_ms, records.finish_ms
    counted = latency.size
    if counted == 0:
        raise ValueError("records must hold at least one counted request")
    span = finish[-1] - records.span_start_ms
    throughput = counted / span if span > 0 else np.inf
    edges = np.arange(N_GROUPS + 1) * counted // N_GROUPS
    ok = counted >= N_GROUPS
    if ok:
        ci, reliable = ci95_half_width(np.add.reduceat(latency, edges[:-1]), counted)
        ci_wait, _ = ci95_half_width(np.add.reduceat(wait, edges[:-1]), counted)
        gaps = np.diff(np.concatenate([[records.span_start_ms], finish]))
        ci_gap, _ = ci95_half_width(np.add.reduceat(gaps, edges[:-1]), counted)
        ci_x = throughput * throughput * ci_gap if np.isfinite(throughput) else np.inf
    else:
        ci, ci_wait, reliable, ci_x = np.inf, np.inf, False, np.inf
    lat = summary_of(latency)
    return ClosedLoopSimResult(
        throughput_per_ms=float(throughput), ci95_throughput_per_ms=float(ci_x),
        mean_latency_ms=lat.mean, ci95_ms=float(ci), p50_ms=lat.p50, p95_ms=lat.p95,
        p99_ms=lat.p99, mean_wait_ms=summary_of(wait).mean, ci95_wait_ms=float(ci_wait),
        mean_batch_size=counted / records.n_batches,
        utilization=(float(records.busy_copy_time_ms / (records.instances * span))
                     if span > 0 else 1.0),
        n_requests=int(counted), n_batches=int(records.n_batches), ci_reliable=bool(reliable))


@renamed_keywords(**_OLD_KEYWORDS)
def simulate_closed_loop(n_clients, alpha_ms, tau0_ms, b_max=None, think_time_ms=0.0,
                         instances=1, *, n_batches=20_000, warmup=None, think="exponential",
                         rng=None) -> ClosedLoopSimResult:
    """Simulate the closed loop (all clients send at time 0) until ``n_batches`` batches
    have completed after the warm-up (more when the last completions coincide).

    ``n_clients`` N, ``alpha_ms``/``tau0_ms`` (τ[b] = αb + τ0 in ms), ``b_max`` (None:
    unlimited), ``think_time_ms`` (mean time in ms a client spends outside the server
    between a reply and its next request, ``think`` = "exponential" or "deterministic"), ``instances`` (copies
    sharing the queue): scalars.  ``warmup`` batches (default n_batches // 10) are left
    out of every statistic.  ``rng``: a ``numpy.random.Generator`` (or a seed for
    ``numpy.random.default_rng``).  The records and their summary:
    ``simulate_closed_loop_records``, ``summarize_closed_loop``.
    """
    return summarize_closed_loop(simulate_closed_loop_records(
        n_clients, alpha_ms, tau0_ms, b_max, think_time_ms, instances, n_batches=n_batches,
        warmup=warmup, think=think, rng=rng))
