"""Job-level discrete-event simulation of the CPU → GPU memory → compute-unit tandem
with blocking (each job draws its own exponential service times; each stage follows
its blocking rule physically); Poisson arrivals, another arrival process or a replayed
trace (``arrivals``).  The rules and the statistics: docs/models/pipeline.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.arrival_input import check_arrival_times, is_arrival_process
from ..core.domains import (N_JOBS, PIPE_C, PIPE_K, PIPE_MU_CPU, PIPE_MU_CU, PIPE_MU_MEM,
                            PIPE_SIM_LAM, WARMUP)
from ..core.jit import choose, compiled
from ..core.records import drawn_arrivals, warmup_count
from ..core.renamed import renamed_attribute
from ..core.stats import N_GROUPS, ci95_half_width, percentiles
from .checks import blocking_rule, single_integer

_INF = np.inf


def _pause_or_resume_plain(run, t, rem, fin):
    """A single-server stage's (remaining work, finish time) at ``t``, when it may
    (``run``) or may not work on its head job: resumed, paused (work kept) or as it was."""
    if run and fin == _INF:
        return rem, t + rem
    if not run and fin < _INF:
        return fin - t, _INF
    return rem, fin


_pause_or_resume = compiled(_pause_or_resume_plain)   # called by both loops


def _tandem_loop(arr, s_cpu, s_mem, s_cu, K, c, after, t0, t1,
                 leave_cpu, leave_mem, finish, area):
    """Run every job through the tandem; fill the per-job times and ``area``.

    ``area`` receives ∫ (CPU jobs, memory jobs, busy units, CPU blocked,
    memory blocked) dt over [t0, t1].
    """
    n = arr.size
    cu_fin = np.full(c, _INF)
    cu_job = np.zeros(c, dtype=np.int64)
    t = 0.0
    nxt = 0                 # next arrival
    cpu_head = 0            # first job not yet passed to memory
    mem_head = 0            # first job not yet passed to a compute unit
    b = 0
    done = 0
    cpu_fin, cpu_rem, cpu_job, cpu_held = _INF, 0.0, -1, False
    mem_fin, mem_rem, mem_job, mem_held = _INF, 0.0, -1, False
    while done < n:
        # next event
        t_arr = arr[nxt] if nxt < n else _INF
        slot = 0
        t_cu = _INF
        for s in range(c):
            if cu_fin[s] < t_cu:
                t_cu = cu_fin[s]
                slot = s
        t_new = min(t_arr, cpu_fin, mem_fin, t_cu)
        lo, hi = max(t, t0), min(t_new, t1)
        if hi > lo:
            m = cpu_head - mem_head
            ncpu = nxt - cpu_head
            dt = hi - lo
            area[0] += dt * ncpu
            area[1] += dt * m
            area[2] += dt * b
            if after:
                area[3] += dt * cpu_held
                area[4] += dt * mem_held
            else:
                area[3] += dt * (ncpu >= 1 and m == K)
                area[4] += dt * (m >= 1 and b == c)
        t = t_new
        if t_new == t_arr:
            nxt += 1
        elif t_new == cpu_fin:
            cpu_held, cpu_fin = True, _INF
        elif t_new == mem_fin:
            mem_held, mem_fin = True, _INF
        else:
            finish[cu_job[slot]] = t
            cu_fin[slot] = _INF
            b -= 1
            done += 1
        # finished jobs move on where there is room (memory first, then the CPU)
        if mem_held and b < c:
            for s in range(c):
                if cu_fin[s] == _INF:
                    cu_fin[s] = t + s_cu[mem_head]
                    cu_job[s] = mem_head
                    break
            leave_mem[mem_head] = t
            mem_head += 1
            b += 1
            mem_held = False
        if cpu_held and cpu_head - mem_head < K:
            leave_cpu[cpu_head] = t
            cpu_head += 1
            cpu_held = False
        # which stages work now
        m = cpu_head - mem_head
        if nxt > cpu_head and not cpu_held:
            if cpu_job != cpu_head:
                cpu_job, cpu_rem, cpu_fin = cpu_head, s_cpu[cpu_head], _INF
            cpu_rem, cpu_fin = _pause_or_resume(after or m < K, t, cpu_rem, cpu_fin)
        if m >= 1 and not mem_held:
            if mem_job != mem_head:
                mem_job, mem_rem, mem_fin = mem_head, s_mem[mem_head], _INF
            mem_rem, mem_fin = _pause_or_resume(after or b < c, t, mem_rem, mem_fin)
    return done


_tandem_loop_fast = compiled(_tandem_loop)


@dataclass(frozen=True)
class TandemSimResult:
    """Summary of one run of the blocking tandem (after the warm-up), in the pipeline's
    units: times in ms, rates per ms (the simulator runs in any one time unit used
    consistently; the names say ms, the unit of ``Tandem``).  ``l_*``: time-average
    jobs at each stage (counts, no unit).  The old field names (``w_total``, ``ci95``,
    ``throughput``, …) still read, with a ``DeprecationWarning``."""

    throughput_per_ms: float  # completions per ms over the counted window
    l_cpu: float              # time-average jobs at each stage
    l_mem: float
    l_cu: float
    w_cpu_ms: float           # mean per-job stage times, ms (CPU time includes blocking)
    w_mem_ms: float
    w_cu_ms: float
    w_total_ms: float
    ci95_cpu_ms: float        # 95 % CI half-widths, ms (batch means over consecutive jobs)
    ci95_mem_ms: float
    ci95_cu_ms: float
    ci95_ms: float            # of w_total_ms
    p_cpu_blocked: float
    p_mem_blocked: float
    n_jobs: int
    ci_reliable: bool
    p50_ms: float = float("nan")  # percentiles of the time in the pipeline, ms
    p95_ms: float = float("nan")
    p99_ms: float = float("nan")
    mean_wait_ms: float = float("nan")   # mean time not in service (queued or blocked), ms

    throughput = renamed_attribute("throughput_per_ms")
    w_cpu = renamed_attribute("w_cpu_ms")
    w_mem = renamed_attribute("w_mem_ms")
    w_cu = renamed_attribute("w_cu_ms")
    w_total = renamed_attribute("w_total_ms")
    ci95_cpu = renamed_attribute("ci95_cpu_ms")
    ci95_mem = renamed_attribute("ci95_mem_ms")
    ci95_cu = renamed_attribute("ci95_cu_ms")
    ci95 = renamed_attribute("ci95_ms")
    p50 = renamed_attribute("p50_ms")
    p95 = renamed_attribute("p95_ms")
    p99 = renamed_attribute("p99_ms")
    mean_wait = renamed_attribute("mean_wait_ms")
    mean_latency = renamed_attribute("mean_latency_ms")

    @property
    def mean_latency_ms(self) -> float:
        """Mean time in the pipeline (``w_total_ms``), ms: the shared simulator vocabulary."""
        return self.w_total_ms


@dataclass(frozen=True)
class TandemRecords:
    """The sample path of one run of the blocking tandem: per job (all ``n``, in arrival
    order, in ms) its arrival, the times it left the CPU stage and the memory stage and
    finished on a unit, and its drawn service times; ``warmup`` jobs left out at the
    start, and the time integrals over the counted window [t0, t1] (the arrivals of the
    first counted job and of the last) of (CPU jobs, memory jobs, busy units, CPU
    blocked, memory blocked), in jobs·ms (ms for the blocked fractions), the state the
    per-job times leave out.  The old names (``arrival``, ``finish``, …) still read, with
    a ``DeprecationWarning``."""

    arrival_ms: np.ndarray
    leave_cpu_ms: np.ndarray
    leave_mem_ms: np.ndarray
    finish_ms: np.ndarray
    service_cpu_ms: np.ndarray
    service_mem_ms: np.ndarray
    service_cu_ms: np.ndarray
    warmup: int
    time_integrals: np.ndarray

    arrival = renamed_attribute("arrival_ms")
    leave_cpu = renamed_attribute("leave_cpu_ms")
    leave_mem = renamed_attribute("leave_mem_ms")
    finish = renamed_attribute("finish_ms")
    service_cpu = renamed_attribute("service_cpu_ms")
    service_mem = renamed_attribute("service_mem_ms")
    service_cu = renamed_attribute("service_cu_ms")
    window = renamed_attribute("window_ms")
    time_in_pipeline = renamed_attribute("time_in_pipeline_ms")

    @property
    def window_ms(self) -> tuple[float, float]:
        """(t0, t1): the counted window, ms."""
        return float(self.arrival_ms[self.warmup]), float(self.arrival_ms[-1])

    @property
    def time_in_pipeline_ms(self) -> np.ndarray:
        """Each job's time from arrival to finish, ms."""
        return self.finish_ms - self.arrival_ms


def simulate_tandem_records(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking="before",
                            n_jobs=200_000, seed=None, *, warmup_jobs=None,
                            backend: str | None = None, arrivals=None) -> TandemRecords:
    """The ``TandemRecords`` of one run (arguments as ``simulate_tandem``): the arrivals
    and warm-up of the shared preamble (``core.records.drawn_arrivals``, ``warmup_count``),
    then every job through the tandem."""
    if arrivals is None:
        lam = float(PIPE_SIM_LAM.check(lam))
    mu = [float(d.check(x)) for d, x in ((PIPE_MU_CPU, mu_cpu), (PIPE_MU_MEM, mu_mem),
                                         (PIPE_MU_CU, mu_cu))]
    K, c = single_integer(K, PIPE_K), single_integer(c, PIPE_C)
    after = blocking_rule(blocking) == "after"
    replay = (None if arrivals is None or is_arrival_process(arrivals)
              else check_arrival_times(arrivals))
    if replay is not None and replay.size < 2:
        raise ValueError(f"arrivals: a replayed trace needs at least 2 times, got {replay.size}")
    n = int(N_JOBS.check(n_jobs)) if replay is None else replay.size
    warmup = warmup_count(n, None if warmup_jobs is None else WARMUP.check(warmup_jobs),
                          keep=2)
    loop = choose(backend, _tandem_loop_fast, _tandem_loop)
    rng = np.random.default_rng(seed)
    arr = drawn_arrivals(lam, n, rng, arrivals)
    s_cpu, s_mem, s_cu = (rng.standard_exponential(n) / r for r in mu)
    leave_cpu, leave_mem, finish = np.empty(n), np.empty(n), np.empty(n)
    area = np.zeros(5)
    t0, t1 = arr[warmup], arr[-1]
    loop(arr, s_cpu, s_mem, s_cu, K, c, after, t0, t1, leave_cpu, leave_mem, finish, area)
    if arrivals is not None and not t1 - t0 > 0:
        raise ValueError("arrivals: the counted arrivals (after the warm-up) must span a "
                         "positive time")
    return TandemRecords(arr, leave_cpu, leave_mem, finish, s_cpu, s_mem, s_cu, warmup, area)


def tandem_summary(records: TandemRecords) -> TandemSimResult:
    """The ``TandemSimResult`` of ``records`` after the warm-up: per-stage and total mean
    times with their 95 % half-widths (batch means, ``core.stats.ci95_half_width``), the
    total's percentiles (``core.stats.percentiles``), the mean time not in service,
    throughput (completions in the window over its length) and the time averages."""
    r, sl = records, slice(records.warmup, None)
    t0, t1 = r.window_ms
    span = t1 - t0
    arr = r.arrival_ms
    stage = {"cpu": r.leave_cpu_ms[sl] - arr[sl],
             "mem": r.leave_mem_ms[sl] - r.leave_cpu_ms[sl],
             "cu": r.finish_ms[sl] - r.leave_mem_ms[sl], "total": r.finish_ms[sl] - arr[sl]}
    counted = arr.size - r.warmup
    edges = (np.arange(N_GROUPS + 1) * counted // N_GROUPS)[:-1]
    ci = {k: ci95_half_width(np.add.reduceat(v, edges), counted) for k, v in stage.items()}
    service = r.service_cpu_ms[sl] + r.service_mem_ms[sl] + r.service_cu_ms[sl]
    mean_wait = float(np.maximum(stage["total"] - service, 0.0).mean())
    p50, p95, p99 = percentiles(stage["total"].copy())
    completed = np.count_nonzero((r.finish_ms >= t0) & (r.finish_ms <= t1))
    area = r.time_integrals
    return TandemSimResult(
        throughput_per_ms=completed / span, l_cpu=area[0] / span, l_mem=area[1] / span,
        l_cu=area[2] / span, w_cpu_ms=float(stage["cpu"].mean()),
        w_mem_ms=float(stage["mem"].mean()), w_cu_ms=float(stage["cu"].mean()),
        w_total_ms=float(stage["total"].mean()), ci95_cpu_ms=ci["cpu"][0],
        ci95_mem_ms=ci["mem"][0], ci95_cu_ms=ci["cu"][0], ci95_ms=ci["total"][0],
        p_cpu_blocked=area[3] / span, p_mem_blocked=area[4] / span, n_jobs=counted,
        ci_reliable=ci["total"][1], p50_ms=float(p50), p95_ms=float(p95), p99_ms=float(p99),
        mean_wait_ms=mean_wait)


def simulate_tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking="before", n_jobs=200_000,
                    seed=None, *, warmup_jobs=None, backend: str | None = None,
                    arrivals=None) -> TandemSimResult:
    """Simulate ``n_jobs`` Poisson arrivals through the tandem from empty: the summary
    (``tandem_summary``) of the run's records (``simulate_tandem_records``).

    Arguments as for ``engine.pipeline.tandem`` (rates in jobs per ms, times in ms; any
    one time unit used consistently gives the same numbers in that unit);
    ``warmup_jobs`` (default n_jobs // 10) are left out; ``seed``: anything
    ``numpy.random.default_rng`` accepts; ``backend``: "numba" or "numpy".

    ``arrivals`` (docs/models/pipeline.md): None is Poisson at ``lam`` (the runs of
    before, bit for bit); an arrival process (``rate`` per ms and
    ``sample(n, rng)``, e.g. ``engine.arrivals.Renewal``) gives ``n_jobs`` arrivals at
    its own rate, ``lam`` ignored (None allowed); a sorted array of times (≥ 2, in ms)
    is replayed, one job per time, so ``n_jobs`` is its length and ``lam`` is ignored.
    """
    return tandem_summary(simulate_tandem_records(
        lam, mu_cpu, mu_mem, mu_cu, K, c, blocking, n_jobs, seed, warmup_jobs=warmup_jobs,
        backend=backend, arrivals=arrivals))
