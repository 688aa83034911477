"""Discrete-event simulator of a batching inference server (one GPU, FIFO queue).

Poisson arrivals (or a replayed trace, or any arrival process with ``rate`` and
``sample(n, rng)``); when the server is free and jobs wait, a
batch of at most ``b_max`` of them starts, taking τ[b] (αb + τ0, a measured table
or a callable).  Policies: greedy (the paper's) or the Triton-style dynamic batcher
(``max_queue_delay_ms``, ``preferred_batch_size``).  ``simulate_records`` returns the
tidy sample path, ``summarize`` its statistics, ``simulate_batching`` streams a long
run to the same statistics.  Times in ms and rates per ms (``lam_per_ms``, ``alpha_ms``,
``tau0_ms``, ``batch_time_ms``, ``max_queue_delay_ms``); the keywords of before (``lam=``,
``alpha=``, ``tau0=``, ``batch_time=``, ``max_queue_delay=``) still work, with a
``DeprecationWarning``.  Policy details: docs/models/batching.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core.arrival_input import arrival_rate, is_arrival_process
from ..core.domains import ALPHA, DELAY, LAM, N_JOBS, PREFERRED, TAU0, WARMUP, check_b_max
from ..core.jit import BACKEND, choose, compiled
from ..core.records import drawn_arrivals, warmup_count
from ..core.renamed import renamed_attribute, renamed_keywords
from ..core.stats import N_GROUPS, ci95_half_width, percentiles

_CHUNK = 1 << 16          # arrivals generated per step

# Slots of the accumulator array filled by the event loop.
_SUM_LAT, _SUM_WAIT, _N_BATCH, _SUM_SIZE, _BUSY, _T_FIRST, _T_LAST, _GROUP = range(8)

# Why the event loop returned.
_DONE, _NEED_ARRIVALS, _NEED_TABLE = 0, 1, 2


def _event_loop(arr, n_arr, final, tau, b_max, delay, preferred, t_free, job0, nb,
                warmup, edges, lat_store, acc, group_lat, group_wait,
                rec_start, rec_finish, rec_first, rec_size):
    """Serve batches from the buffered arrivals ``arr[:n_arr]`` (job ``job0`` first).

    Stops when a batch cannot be decided without later arrivals (unless
    ``final``) or needs a longer τ table.  Jobs with global index ≥ ``warmup``
    add to ``acc``, ``group_*`` (group k holds jobs edges[k]..edges[k+1]-1)
    and ``lat_store``; ``rec_*`` (when not empty) receive the full sample
    path (``nb`` batches so far).  Returns (jobs consumed, server-free time,
    batches recorded, status).
    """
    record = rec_start.size > 0
    store = lat_store.size > 0
    sum_lat, sum_wait = acc[_SUM_LAT], acc[_SUM_WAIT]
    n_batch, sum_size, busy = acc[_N_BATCH], acc[_SUM_SIZE], acc[_BUSY]
    t_first, t_last = acc[_T_FIRST], acc[_T_LAST]
    grp = int(acc[_GROUP])
    status = _DONE
    i = 0
    while i < n_arr:
        stop = min(n_arr, i + b_max)
        t = max(t_free, arr[i])
        j = i
        waiting = delay > 0.0           # the Triton batcher may still wait for more jobs
        while True:
            # Jobs arrived by t, counting at most to the batch limit (so a run is O(n)).
            while j < stop and arr[j] <= t:
                j += 1
            if j == n_arr and j < i + b_max and not final:
                status = _NEED_ARRIVALS
                break
            deadline = arr[i] + delay
            if not waiting or j - i >= preferred or deadline <= t:
                break
            waiting = False
            k = i + preferred - 1
            if k >= n_arr and not final:
                status = _NEED_ARRIVALS
                break
            t = arr[k] if k < n_arr and arr[k] <= deadline else deadline
        if status == _NEED_ARRIVALS:
            break
        size = j - i
        if size > tau.size:
            status = _NEED_TABLE
            break
        done = t + tau[size - 1]
        first = job0 + i
        if record:
            rec_first[nb] = first
            rec_size[nb] = size
            nb += 1
            for m in range(i, j):
                rec_start[job0 + m] = t
                rec_finish[job0 + m] = done
        if first + size > warmup:           # the batch holds a counted job
            if n_batch == 0.0:
                t_first = t
            n_batch += 1.0
            sum_size += size
            busy += done - t
        for m in range(max(i, warmup - job0), j):
            g = job0 + m
            lat = done - arr[m]
            wait = t - arr[m]
            sum_lat += lat
            sum_wait += wait
            while g >= edges[grp + 1]:
                grp += 1
            group_lat[grp] += lat
            group_wait[grp] += wait
            if store:
                lat_store[g - warmup] = lat
        t_last = done
        t_free = done
        i = j
    acc[_SUM_LAT], acc[_SUM_WAIT] = sum_lat, sum_wait
    acc[_N_BATCH], acc[_SUM_SIZE], acc[_BUSY] = n_batch, sum_size, busy
    acc[_T_FIRST], acc[_T_LAST] = t_first, t_last
    acc[_GROUP] = grp
    return i, t_free, nb, status


def _to_arrival_times(gaps, scale, last):
    """Turn standard exponential gaps into arrival times in place; return the last."""
    t = last
    for k in range(gaps.size):
        t += gaps[k] * scale
        gaps[k] = t
    return t


def _to_arrival_times_numpy(gaps, scale, last):
    """Vectorised ``_to_arrival_times`` for the plain-Python backend."""
    np.cumsum(gaps * scale, out=gaps)
    gaps += last
    return gaps[-1]


_event_loop_fast = compiled(_event_loop)
_to_arrival_times = compiled(_to_arrival_times) if BACKEND == "numba" else _to_arrival_times_numpy


@dataclass(frozen=True)
class SimRecords:
    """Tidy sample path, times in ms: per job (arrival, start, finish) and per batch (first
    job, size, τ).  The names without a unit (``arrival``, ``start``, ``finish``,
    ``batch_time``, ``latency``, ``wait``) still read, with a ``DeprecationWarning``."""

    arrival_ms: np.ndarray
    start_ms: np.ndarray
    finish_ms: np.ndarray
    batch_first: np.ndarray
    batch_size: np.ndarray
    batch_time_ms: np.ndarray     # τ of each batch

    arrival = renamed_attribute("arrival_ms")
    start = renamed_attribute("start_ms")
    finish = renamed_attribute("finish_ms")
    batch_time = renamed_attribute("batch_time_ms")
    latency = renamed_attribute("latency_ms")
    wait = renamed_attribute("wait_ms")

    @property
    def latency_ms(self) -> np.ndarray:
        """Per job: arrival to the end of its batch."""
        return self.finish_ms - self.arrival_ms

    @property
    def wait_ms(self) -> np.ndarray:
        """Per job: arrival to the start of its batch."""
        return self.start_ms - self.arrival_ms


@dataclass(frozen=True)
class BatchingSimResult:
    """Summary of one simulation run (after the warm-up), times in ms (the unit of α and
    τ0 as the presets give them; rates per ms).  The names without a unit (``mean_latency``,
    ``ci95``, ``p50``, ``p95``, ``p99``, ``mean_wait``, ``ci95_wait``, ``latencies``) still
    read the fields, with a ``DeprecationWarning``."""

    mean_latency_ms: float
    ci95_ms: float                # half-width of the 95% CI of mean_latency_ms (batch means)
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_wait_ms: float           # before the job's batch starts
    ci95_wait_ms: float
    mean_batch_size: float
    utilization: float
    n_jobs: int                   # jobs counted (after the warm-up)
    ci_reliable: bool = True      # False: run too short for its load, CI too narrow
    latencies_ms: np.ndarray | None = None

    mean_latency = renamed_attribute("mean_latency_ms")
    ci95 = renamed_attribute("ci95_ms")
    p50 = renamed_attribute("p50_ms")
    p95 = renamed_attribute("p95_ms")
    p99 = renamed_attribute("p99_ms")
    mean_wait = renamed_attribute("mean_wait_ms")
    ci95_wait = renamed_attribute("ci95_wait_ms")
    latencies = renamed_attribute("latencies_ms")


# ------------------------------------------------------------------ set-up

def _batch_time_law(alpha, tau0, batch_time, b_max):
    """(τ table or callable, b_max) from either α, τ0 or ``batch_time`` (ms)."""
    if batch_time is None:
        if alpha is None or tau0 is None:
            raise ValueError("give alpha_ms and tau0_ms, or batch_time_ms")
        a, t0 = float(ALPHA.check(alpha, "alpha_ms")), float(TAU0.check(tau0, "tau0_ms"))
        return (lambda b: a * b + t0), b_max
    if alpha is not None or tau0 is not None:
        raise ValueError("give either alpha_ms and tau0_ms, or batch_time_ms, not both")
    if callable(batch_time):
        return batch_time, b_max
    table = np.asarray(batch_time, dtype=float)
    if table.ndim != 1 or table.size < 1:
        raise ValueError("batch_time_ms must be a 1-d table of times for b = 1, 2, ...")
    if not np.all(np.isfinite(table)) or np.any(table < 0):
        raise ValueError("batch_time_ms must hold finite times >= 0")
    if b_max is None:
        b_max = table.size
    elif b_max > table.size:
        raise ValueError(f"b_max = {b_max} exceeds the batch_time_ms table ({table.size} sizes)")
    return table, b_max


def _tau_table(law, size: int) -> np.ndarray:
    if not callable(law):
        return law
    table = np.asarray(law(np.arange(1, size + 1)), dtype=float)
    if table.shape != (size,) or not np.all(np.isfinite(table)) or np.any(table < 0):
        raise ValueError("batch_time_ms(b) must return finite times >= 0 for each b")
    return table


@dataclass
class _Setup:
    lam: float
    arrivals: np.ndarray | None
    process: object | None          # an arrival process: n_jobs times drawn in ``_run``
    n_jobs: int
    law: object
    limit: int
    delay: float
    preferred: int
    loop: Callable


def _setup(lam, alpha, tau0, b_max, n_jobs, batch_time, max_queue_delay,
           preferred_batch_size, backend, arrivals=None) -> _Setup:
    process = None
    if arrivals is not None and is_arrival_process(arrivals):
        arrival_rate(arrivals)                  # a positive finite rate, or ValueError
        process, arrivals = arrivals, None
        lam, n_jobs = float("nan"), int(N_JOBS.check(n_jobs))
    elif arrivals is not None:
        arrivals = np.asarray(arrivals, dtype=float)
        if arrivals.ndim != 1 or arrivals.size < 1:
            raise ValueError("arrivals must be a non-empty 1-d array of times")
        if not np.all(np.isfinite(arrivals)) or np.any(arrivals < 0):
            raise ValueError("arrivals must be finite times >= 0")
        if np.any(np.diff(arrivals) < 0):
            raise ValueError("arrivals must be sorted in time")
        lam, n_jobs = float("nan"), arrivals.size
    else:
        lam = float(LAM.check(lam, "lam_per_ms"))
        if not 0.0 < lam < np.inf:
            raise ValueError(f"lam_per_ms must be a positive finite rate to simulate, "
                             f"got {lam:g}")
        n_jobs = int(N_JOBS.check(n_jobs))
    b = check_b_max(b_max)
    if b.ndim:
        raise ValueError("b_max must be a single value to simulate")
    b_max = None if np.isinf(b) else int(b)
    delay = float(DELAY.check(max_queue_delay, "max_queue_delay_ms"))
    law, b_max = _batch_time_law(alpha, tau0, batch_time, b_max)
    limit = n_jobs if b_max is None else min(b_max, n_jobs)
    if preferred_batch_size is None:
        preferred = limit
    else:
        preferred = int(PREFERRED.check(preferred_batch_size))
        if b_max is not None and preferred > b_max:
            raise ValueError(f"preferred_batch_size = {preferred} exceeds b_max = {b_max}")
    loop = choose(backend, _event_loop_fast, _event_loop)
    return _Setup(lam, arrivals, process, n_jobs, law, limit, delay, min(preferred, limit),
                  loop)


def _run(setup: _Setup, seed, warmup: int, lat_store, rec=None):
    """Drive the event loop over chunked arrivals.

    Returns (accumulators, group sums of latency and wait, arrivals if recorded,
    the τ table used, number of batches recorded).
    """
    rng = np.random.default_rng(seed)
    n = setup.n_jobs
    times = setup.arrivals
    if setup.process is not None:               # drawn once, from a child of the run's rng
        times = drawn_arrivals(None, n, rng, setup.process)
    empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
    rec_start, rec_finish, rec_first, rec_size = rec if rec is not None else (
        empty_f, empty_f, empty_i, empty_i)
    keep_arrivals = np.empty(n) if rec is not None else None
    size = setup.limit if not callable(setup.law) else min(setup.limit, 1024)
    tau = _tau_table(setup.law, size)
    acc = np.zeros(8)
    counted = n - warmup
    edges = warmup + np.arange(N_GROUPS + 1) * counted // N_GROUPS
    edges[-1] = np.iinfo(np.int64).max      # sentinel: the last group takes the rest
    group_lat = np.zeros(N_GROUPS)
    group_wait = np.zeros(N_GROUPS)
    buf = np.empty(2 * _CHUNK)
    pending, generated, job0, nb, t_free, last = 0, 0, 0, 0, 0.0, 0.0
    while True:
        m = min(_CHUNK, n - generated)
        if m:
            if pending + m > buf.size:          # a long queue: grow the buffer
                buf = np.concatenate([buf[:pending], np.empty(max(buf.size, m))])
            new = buf[pending:pending + m]
            if times is not None:
                new[:] = times[generated:generated + m]
            else:
                rng.standard_exponential(m, out=new)
                last = _to_arrival_times(new, 1.0 / setup.lam, last)
            if keep_arrivals is not None:
                keep_arrivals[generated:generated + m] = new
            generated += m
        n_arr = pending + m
        final = generated == n
        while True:
            used, t_free, nb, status = setup.loop(
                buf, n_arr, final, tau, setup.limit, setup.delay, setup.preferred, t_free,
                job0, nb, warmup, edges, lat_store, acc, group_lat, group_wait,
                rec_start, rec_finish, rec_first, rec_size)
            if status != _NEED_TABLE:
                break
            size = min(2 * size, setup.limit)   # a batch outgrew the table: extend it
            tau = _tau_table(setup.law, size)
            buf[:n_arr - used] = buf[used:n_arr]
            job0 += used
            n_arr -= used
        pending = n_arr - used
        buf[:pending] = buf[used:n_arr]
        job0 += used
        if final and pending == 0:
            return acc, group_lat, group_wait, keep_arrivals, tau, nb


# ------------------------------------------------------------------ public API

_OLD_KEYWORDS = dict(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms",
                    batch_time="batch_time_ms", max_queue_delay="max_queue_delay_ms")


@renamed_keywords(**_OLD_KEYWORDS)
def simulate_records(lam_per_ms, alpha_ms=None, tau0_ms=None, b_max=None, n_jobs=200_000,
                     seed=None, *, batch_time_ms=None, max_queue_delay_ms=0.0,
                     preferred_batch_size=None, arrivals=None,
                     backend: str | None = None) -> SimRecords:
    """Simulate ``n_jobs`` arrivals from an empty system and return the whole sample path.

    Arguments as for ``simulate_batching``; the same seed gives the same path.
    """
    setup = _setup(lam_per_ms, alpha_ms, tau0_ms, b_max, n_jobs, batch_time_ms,
                   max_queue_delay_ms, preferred_batch_size, backend, arrivals)
    n = setup.n_jobs
    rec = (np.empty(n), np.empty(n), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64))
    _, _, _, arrivals, tau, nb = _run(setup, seed, n, np.empty(0), rec)
    sizes = rec[3][:nb].copy()
    return SimRecords(arrivals, rec[0], rec[1], rec[2][:nb].copy(), sizes, tau[sizes - 1])


def summarize(records: SimRecords, warmup_jobs: int = 0,
              keep_latencies: bool = False) -> BatchingSimResult:
    """Statistics of a recorded sample path, leaving out the first ``warmup_jobs`` jobs.

    The CI comes from batch means of consecutive jobs (``core.stats.ci95_half_width``); E[B]
    and utilization count the batches that hold a job past the warm-up (so a
    short run whose counted jobs all joined one earlier batch still has one).
    """
    n = records.arrival_ms.size
    warmup_jobs = warmup_count(n, WARMUP.check(warmup_jobs))
    counted = n - warmup_jobs
    latency = records.latency_ms[warmup_jobs:]
    wait = records.wait_ms[warmup_jobs:]
    edges = np.arange(N_GROUPS + 1) * counted // N_GROUPS
    kept = records.batch_first + records.batch_size > warmup_jobs   # holds a counted job
    busy = records.batch_time_ms[kept].sum()
    t_first = records.start_ms[records.batch_first[kept][0]]
    horizon = records.finish_ms[-1] - t_first
    p50, p95, p99 = np.percentile(latency, [50, 95, 99])
    ci, reliable = ci95_half_width(np.add.reduceat(latency, edges[:-1]), counted)
    ci_wait, _ = ci95_half_width(np.add.reduceat(wait, edges[:-1]), counted)
    return BatchingSimResult(
        mean_latency_ms=float(latency.mean()), ci95_ms=ci,
        p50_ms=float(p50), p95_ms=float(p95), p99_ms=float(p99),
        mean_wait_ms=float(wait.mean()), ci95_wait_ms=ci_wait,
        mean_batch_size=float(records.batch_size[kept].mean()),
        utilization=float(busy / horizon) if horizon > 0 else 1.0,
        n_jobs=int(counted), ci_reliable=reliable,
        latencies_ms=latency.copy() if keep_latencies else None)


@renamed_keywords(**_OLD_KEYWORDS)
def simulate_batching(lam_per_ms, alpha_ms=None, tau0_ms=None, b_max=None, n_jobs=200_000,
                      seed=None, *, batch_time_ms=None, max_queue_delay_ms=0.0,
                      preferred_batch_size=None, warmup_jobs=None, return_latencies=False,
                      arrivals=None, backend: str | None = None) -> BatchingSimResult:
    """Simulate the batching server from empty and summarise it (times in ms).

    ``lam_per_ms``: arrival rate per ms; ``alpha_ms``, ``tau0_ms``: batch time
    τ[b] = αb + τ0 in ms, or ``batch_time_ms``: a table τ[1..m] (then b_max ≤ m,
    default m) or a callable b ↦ τ[b] accepting integer arrays.  ``b_max=None`` means
    unlimited.  ``max_queue_delay_ms``/``preferred_batch_size``: the Triton-style batcher
    (0 is the paper's greedy policy).  ``warmup_jobs`` (default n_jobs // 10) are left
    out of every statistic.  ``seed``: anything ``numpy.random.default_rng``
    accepts.  ``return_latencies`` keeps the per-job latencies (after warm-up).
    ``arrivals``: sorted arrival times to replay instead of Poisson ones (a
    trace, times in ms; then ``lam_per_ms`` and ``n_jobs`` are ignored), or an arrival
    process (an object with ``rate`` per ms and ``sample(n, rng)``, ``engine.arrivals``;
    then ``lam_per_ms`` is ignored and ``n_jobs`` arrivals are drawn from it with a child of the run's
    generator, ``engine.core.arrival_input.arrival_times``).
    ``backend``: "numba" or "numpy" (default: numba when installed).
    """
    setup = _setup(lam_per_ms, alpha_ms, tau0_ms, b_max, n_jobs, batch_time_ms,
                   max_queue_delay_ms, preferred_batch_size, backend, arrivals)
    n = setup.n_jobs
    warmup = warmup_count(n, None if warmup_jobs is None else WARMUP.check(warmup_jobs))
    counted = n - warmup
    lat_store = np.empty(counted, dtype=np.float64 if return_latencies else np.float32)
    acc, group_lat, group_wait, _, _, _ = _run(setup, seed, warmup, lat_store)
    latencies = lat_store.copy() if return_latencies else None
    p50, p95, p99 = percentiles(lat_store)
    horizon = acc[_T_LAST] - acc[_T_FIRST]
    ci, reliable = ci95_half_width(group_lat, counted)
    ci_wait, _ = ci95_half_width(group_wait, counted)
    return BatchingSimResult(
        mean_latency_ms=float(acc[_SUM_LAT] / counted), ci95_ms=ci,
        p50_ms=float(p50), p95_ms=float(p95), p99_ms=float(p99),
        mean_wait_ms=float(acc[_SUM_WAIT] / counted), ci95_wait_ms=ci_wait, ci_reliable=reliable,
        mean_batch_size=float(acc[_SUM_SIZE] / acc[_N_BATCH]) if acc[_N_BATCH] else float("nan"),
        utilization=float(acc[_BUSY] / horizon) if horizon > 0 else 1.0,
        n_jobs=int(counted), latencies_ms=latencies)
