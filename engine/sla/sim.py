"""Discrete-event simulation of request dispatch to n backends (Swayam's setting):
random dispatch with retries, join-the-shortest-queue and one central queue; Poisson
arrivals, or any arrival process or a replayed trace (``arrivals``).  Times in s, rates
per s; randomness only from the ``numpy.random.Generator`` built from ``seed``; the
event loops compiled by ``engine.core.jit``.  See docs/models/sla.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.arrival_input import (arrival_rate, check_arrival_times,
                                  is_arrival_process)
from ..core.domains import (DISPATCH_POLICY, N_BACKENDS, N_REQUESTS, NET_DELAY,
                            RETRY_CYCLE_S, SIM_RATE_PER_S, WARMUP)
from ..core.jit import BACKEND, choose, compiled  # noqa: F401 (BACKEND: public API)
from ..core.renamed import renamed_attribute
from ..core.records import drawn_arrivals, summary_of, warmup_count
from ..core.service_laws import service_sampler
from ..core.stats import N_GROUPS, ci95_half_width

POLICIES = DISPATCH_POLICY.values
_CHOICE_CHUNK = 1 << 18       # random backend choices drawn per refill

# Slots of the retry loop's integer state.
_NEXT, _HEAD, _TAIL, _PENDING = range(4)


def _retry_loop(first_try, svc, c, choices, pos, free_at, ring_req, ring_time, st,
                start, attempts):
    """Serve tries in time order until all requests started or ``choices`` ran out.

    ``first_try[i]``: when request i's first try reaches a backend (sorted).
    State lives in the arrays (``st``: next new request, ring head, ring tail,
    pending retries), so the loop resumes where it stopped.  Returns the
    position in ``choices`` and whether every request has started.
    """
    n_req = first_try.size
    cap = ring_req.size
    nxt, head, tail, pending = st[_NEXT], st[_HEAD], st[_TAIL], st[_PENDING]
    done = False
    while True:
        if nxt < n_req and (pending == 0 or first_try[nxt] <= ring_time[head]):
            i = nxt
            t = first_try[nxt]
            nxt += 1
            first = True
        elif pending > 0:
            i = ring_req[head]
            t = ring_time[head]
            head = (head + 1) % cap
            pending -= 1
            first = False
        else:
            done = True
            break
        if pos == choices.size:            # out of random numbers: put the event back
            if first:
                nxt -= 1
            else:
                head = (head - 1) % cap
                pending += 1
            break
        b = choices[pos]
        pos += 1
        attempts[i] += 1
        if free_at[b] <= t:
            start[i] = t
            free_at[b] = t + svc[i]
        else:
            ring_req[tail] = i
            ring_time[tail] = t + c
            tail = (tail + 1) % cap
            pending += 1
    st[_NEXT], st[_HEAD], st[_TAIL], st[_PENDING] = nxt, head, tail, pending
    return pos, done


def _jsq_loop(arrival, svc, n, d1, offset, start):
    """Join the shortest queue: outstanding counts from per-backend FIFO lists."""
    n_req = arrival.size
    finish = np.empty(n_req)
    link = np.full(n_req, -1, dtype=np.int64)
    head = np.full(n, -1, dtype=np.int64)
    last = np.full(n, -1, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    for i in range(n_req):
        t = arrival[i]
        best, best_count = -1, n_req + 1
        for k in range(n):
            b = (k + offset[i]) % n
            h = head[b]
            while h >= 0 and finish[h] <= t:
                h = link[h]
                count[b] -= 1
            head[b] = h
            if h < 0:
                last[b] = -1
            if count[b] < best_count:
                best, best_count = b, count[b]
        s = t + d1
        if last[best] >= 0 and finish[last[best]] > s:
            s = finish[last[best]]
        start[i] = s
        finish[i] = s + svc[i]
        if last[best] >= 0:
            link[last[best]] = i
        else:
            head[best] = i
        last[best] = i
        count[best] += 1


def _central_loop(arrival, svc, n, d1, start):
    """One FIFO queue for n servers: each request takes the earliest free server."""
    free_at = np.zeros(n)
    for i in range(arrival.size):
        b = 0
        for k in range(1, n):
            if free_at[k] < free_at[b]:
                b = k
        s = arrival[i] + d1
        if free_at[b] > s:
            s = free_at[b]
        start[i] = s
        free_at[b] = s + svc[i]


_retry_loop_fast = compiled(_retry_loop)
_jsq_loop_fast = compiled(_jsq_loop)
_central_loop_fast = compiled(_central_loop)
_LOOPS = {"random_retry": (_retry_loop_fast, _retry_loop), "jsq": (_jsq_loop_fast, _jsq_loop),
          "central_queue": (_central_loop_fast, _central_loop)}


@dataclass(frozen=True)
class DispatchRecords:
    """Tidy per-request sample path (all requests, seconds): arrival, service start,
    service time and tries; ``summarised`` turns it into a ``DispatchSimResult``."""

    arrival: np.ndarray
    start: np.ndarray
    service: np.ndarray
    attempts: np.ndarray

    @property
    def waiting(self) -> np.ndarray:
        return self.start - self.arrival

    @property
    def response(self) -> np.ndarray:
        return self.start + self.service - self.arrival


@dataclass(frozen=True)
class DispatchSimResult:
    """Summary of one dispatch simulation after the warm-up; every time in seconds (``_s``).
    The names without a unit (``mean_response``, ``ci95``, ``p99_response``, ... and the
    shared ``mean_latency``, ``mean_wait``, ``p50``, ``p95``, ``p99``) still read, with a
    ``DeprecationWarning``."""

    policy: str
    mean_response_s: float
    ci95_s: float                  # 95% CI half-width of mean_response_s (batch means)
    mean_waiting_s: float
    ci95_waiting_s: float
    p50_response_s: float
    p95_response_s: float
    p99_response_s: float
    p50_waiting_s: float
    p99_waiting_s: float
    mean_attempts: float           # tries per request (1 for jsq and central_queue)
    p_busy_first_try: float        # fraction of first tries that found the backend busy
    p_busy_retry: float            # fraction of retries that found it busy (nan: no retries)
    n_requests: int                # requests counted
    ci_reliable: bool
    sorted_response_s: np.ndarray = field(repr=False, compare=False)
    sorted_waiting_s: np.ndarray = field(repr=False, compare=False)

    # the names of before the units (removed in engine.core.renamed.REMOVED_IN)
    mean_response = renamed_attribute("mean_response_s")
    ci95 = renamed_attribute("ci95_s")
    mean_waiting = renamed_attribute("mean_waiting_s")
    ci95_waiting = renamed_attribute("ci95_waiting_s")
    p50_response = renamed_attribute("p50_response_s")
    p95_response = renamed_attribute("p95_response_s")
    p99_response = renamed_attribute("p99_response_s")
    p50_waiting = renamed_attribute("p50_waiting_s")
    p99_waiting = renamed_attribute("p99_waiting_s")
    sorted_response = renamed_attribute("sorted_response_s")
    sorted_waiting = renamed_attribute("sorted_waiting_s")
    # the vocabulary shared by every simulator's summary, as it was (seconds)
    mean_latency = renamed_attribute("mean_response_s")
    mean_wait = renamed_attribute("mean_waiting_s")
    p50 = renamed_attribute("p50_response_s")
    p95 = renamed_attribute("p95_response_s")
    p99 = renamed_attribute("p99_response_s")

    def fraction_within(self, rt):
        """Fraction of requests with response time ≤ ``rt`` (broadcasts over rt)."""
        rt = np.asarray(rt, dtype=float)
        idx = np.searchsorted(self.sorted_response_s, rt, side="right")
        return (idx / self.sorted_response_s.size)[()]

    def response_percentile(self, p):
        """p-th percentile of the response time (s) over the counted requests."""
        return float(np.percentile(self.sorted_response_s, float(p)))

    def waiting_percentile(self, p):
        """p-th percentile of the waiting time (s) over the counted requests."""
        return float(np.percentile(self.sorted_waiting_s, float(p)))

    def waiting_fraction_within(self, w):
        """Fraction of requests that waited ≤ ``w`` (broadcasts over w)."""
        w = np.asarray(w, dtype=float)
        return (np.searchsorted(self.sorted_waiting_s, w, side="right")
                / self.sorted_waiting_s.size)[()]


def simulate_records(policy, lam, service, n, d1=0.0, d2=0.0, delta=0.0,
                     n_requests=200_000, seed=None, *, backend=None,
                     arrivals=None) -> DispatchRecords:
    """Simulate ``n_requests`` Poisson arrivals from an empty system; the whole path.

    Arguments as for ``simulate_dispatch``.  Raises ``ValueError`` for a load
    λ·E[S] ≥ n (no steady state: the retries would never end), λ the process's rate
    or the trace's mean rate with ``arrivals``.
    """
    DISPATCH_POLICY.check(policy)
    if arrivals is None:
        lam = float(SIM_RATE_PER_S.check(lam, "lam"))
    n = int(N_BACKENDS.check(n))
    d1, d2, delta = (float(NET_DELAY.check(v, name))
                     for v, name in ((d1, "d1"), (d2, "d2"), (delta, "delta")))
    replay = (None if arrivals is None or is_arrival_process(arrivals)
              else check_arrival_times(arrivals))
    n_req = int(N_REQUESTS.check(n_requests)) if replay is None else replay.size
    sampler, mean_s = service_sampler(service)
    rate = lam if arrivals is None else arrival_rate(arrivals)
    if replay is not None and replay.size == 1:
        rate = 0.0                                     # one request: no load to check
    if rate * mean_s >= n or mean_s > 0 and rate >= n / mean_s:   # n/E[S]·E[S] can round < n
        what = "lam" if arrivals is None else "the mean rate of arrivals"
        raise ValueError(f"{what} = {rate:g} per s is at or beyond the capacity n/E[S] = "
                         f"{n / mean_s:g} per s: no steady state to simulate")
    c = d1 + d2 + delta
    if policy == "random_retry":
        RETRY_CYCLE_S.check(c)                       # retries need time
    loop = choose(backend, *_LOOPS[policy])
    rng = np.random.default_rng(seed)
    # the preamble every simulator shares: Poisson at λ, the replayed trace, or a process
    arrival = drawn_arrivals(lam, n_req, rng, arrivals if replay is None else replay)
    svc = sampler(rng, n_req)
    if svc.shape != (n_req,) or not np.all(np.isfinite(svc)) or np.any(svc < 0):
        raise ValueError("service must give finite times >= 0")
    start = np.empty(n_req)
    attempts = np.ones(n_req, dtype=np.int64)
    if policy == "random_retry":
        attempts[:] = 0
        free_at = np.zeros(n)
        ring_req = np.zeros(n_req, dtype=np.int64)
        ring_time = np.zeros(n_req)
        st = np.zeros(4, dtype=np.int64)
        first_try = arrival + d1
        done = False
        while not done:
            choices = rng.integers(0, n, size=_CHOICE_CHUNK)
            _, done = loop(first_try, svc, c, choices, 0, free_at, ring_req, ring_time, st,
                           start, attempts)
    elif policy == "jsq":
        loop(arrival, svc, n, d1, rng.integers(0, n, size=n_req), start)
    else:
        loop(arrival, svc, n, d1, start)
    return DispatchRecords(arrival, start, svc, attempts)


def simulate_dispatch(policy, lam, service, n, d1=0.0, d2=0.0, delta=0.0,
                      n_requests=200_000, seed=None, *, warmup_requests=None,
                      backend=None, arrivals=None) -> DispatchSimResult:
    """Simulate one dispatch policy from empty and summarise it.

    ``policy``: "random_retry", "jsq" or "central_queue"; ``lam``: arrival
    rate per second; ``service``: service time in seconds (a number:
    deterministic) or a scipy.stats frozen distribution (anything with
    ``rvs`` and ``mean``); ``n``: backends; ``d1``, ``d2``: frontend→backend
    and backend→frontend message times (s); ``delta``: the frontend's pause
    before a retry (s).  ``warmup_requests`` (default n_requests // 10) are
    left out of the statistics.  ``seed``: anything ``default_rng`` accepts.

    ``arrivals`` (docs/models/sla.md): None is Poisson at ``lam``; a sorted array of
    times (s) is replayed, one request per time, so ``n_requests`` is its length and
    ``lam`` is ignored; an arrival process (``rate`` per s and ``sample(n, rng)``, e.g.
    ``engine.arrivals.Renewal``) gives ``n_requests`` arrivals at its own rate, ``lam``
    ignored (None allowed).  The load check uses the process's rate or the trace's mean
    rate (k − 1)/(t_k − t_1) (inf for k > 1 simultaneous times; one time passes): a
    trace may exceed n/E[S] in bursts, not on average.
    """
    rec = simulate_records(policy, lam, service, n, d1, d2, delta, n_requests, seed,
                           backend=backend, arrivals=arrivals)
    return summarised(rec, policy, warmup_requests)


def _ci95(values: np.ndarray) -> tuple[float, bool]:
    """95 % half-width of the mean of ``values`` by batch means over ``N_GROUPS`` groups
    of consecutive requests (``engine.core.stats.ci95_half_width``), and whether it is
    trustworthy (inf, False for fewer requests than groups)."""
    edges = np.arange(N_GROUPS + 1) * values.size // N_GROUPS
    return ci95_half_width(np.add.reduceat(values, edges[:-1]), values.size)


def summarised(records: DispatchRecords, policy: str, warmup_requests=None) -> DispatchSimResult:
    """``DispatchSimResult`` of a sample path: the warm-up left out
    (``engine.core.records.warmup_count``: ``warmup_requests``, default n // 10, at least
    one request counted), the means and percentiles of the response and waiting times by
    ``engine.core.records.summary_of``, their 95 % half-widths by batch means, the tries
    and the busy fractions of first tries and retries."""
    DISPATCH_POLICY.check(policy)
    n_req = records.arrival.size
    if n_req == 0:
        raise ValueError("records must hold at least one request")
    warm = warmup_count(n_req, None if warmup_requests is None
                        else WARMUP.check(warmup_requests, "warmup_requests"))
    counted = n_req - warm
    response = records.response[warm:]
    waiting = records.waiting[warm:]
    r, w = summary_of(response), summary_of(waiting)
    ci, reliable = _ci95(response)
    ci_w, _ = _ci95(waiting)
    response.sort()
    waiting.sort()
    attempts = records.attempts[warm:]
    # Busy fractions over the counted requests' tries (first tries vs retries).
    first_busy = float(np.mean(attempts > 1))
    retries = float(np.sum(attempts - 1))
    retry_busy = float(np.sum(np.maximum(attempts - 2, 0)))
    return DispatchSimResult(
        policy=policy, mean_response_s=r.mean, ci95_s=ci, mean_waiting_s=w.mean,
        ci95_waiting_s=ci_w, p50_response_s=r.p50, p95_response_s=r.p95,
        p99_response_s=r.p99, p50_waiting_s=w.p50, p99_waiting_s=w.p99,
        mean_attempts=float(attempts.mean()), p_busy_first_try=first_busy,
        p_busy_retry=retry_busy / retries if retries else float("nan"),
        n_requests=int(counted), ci_reliable=reliable,
        sorted_response_s=response, sorted_waiting_s=waiting)
