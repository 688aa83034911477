"""A fleet of identical LLM servers behind a dispatcher, simulated whole.

``simulate_fleet`` sends each request to one of R replicas and serves every replica on
the compiled loop of ``simulate_serving``; the fleet's summary comes from all requests'
records (one ``ServingResult``), so the dispatch policy shows in the percentiles.

Policies whose choice does not depend on the replicas' state:

* ``"random"``: each request to a replica drawn uniformly (each replica sees the stream
  thinned at random: for Poisson arrivals, Poisson at rate λ/R);
* ``"round_robin"``: request i to replica i mod R (for Poisson arrivals each replica sees
  Erlang-R gaps: smoother than random, so shorter queues).

State-dependent policies (least outstanding requests, what LLM routers also offer) need
the replicas simulated jointly; they are not here yet.
"""
from __future__ import annotations

import numpy as np

from ..core.domains import Domain
from . import kernel
from .cost import StepCost
from .result import ServingRecords, summarize
from .scheduler import Scheduler
from .sim import ITL_EDGES_MS, _ro, _serve_requests, _workload, check_fits

__all__ = ["simulate_fleet", "DISPATCH"]

DISPATCH = ("random", "round_robin")
REPLICAS = Domain("replicas", "servers", low=1.0, high=100_000.0, integer=True,
                  typical=(1, 64), description="identical servers behind the dispatcher")


def simulate_fleet(cost: StepCost, scheduler: Scheduler, *, replicas, dispatch="random",
                   input_tokens, output_tokens, rate_per_s=None, arrivals=None,
                   arrival_s=None, n_requests=None, seed=None, warmup_requests=None,
                   return_records=False):
    """Serve the fleet's requests on ``replicas`` servers, each ``cost`` and
    ``scheduler``, sent by ``dispatch`` (``DISPATCH``); a ``ServingResult`` over every
    request (throughput: the fleet's; ``mean_running`` summed over the replicas;
    ``kv_peak_fraction`` the fullest replica's).  The load as ``simulate_serving``
    takes it (open loop: the fleet's whole arrival stream)."""
    if not isinstance(cost, StepCost):
        raise ValueError(f"cost must be a StepCost, got {type(cost).__name__}")
    if not isinstance(scheduler, Scheduler):
        raise ValueError(f"scheduler must be a Scheduler, got {type(scheduler).__name__}")
    if isinstance(replicas, bool) or not isinstance(replicas, (int, np.integer)):
        raise ValueError(f"replicas must be {REPLICAS.describe()}, got {replicas!r}")
    r_count = int(REPLICAS.check(replicas, "replicas"))
    if dispatch not in DISPATCH:
        raise ValueError(f"dispatch must be one of {', '.join(DISPATCH)}, got {dispatch!r}")
    arr_ms, _, l, o, w = _workload(input_tokens=input_tokens, output_tokens=output_tokens,
                                   rate_per_s=rate_per_s, arrivals=arrivals,
                                   arrival_s=arrival_s, n_requests=n_requests, seed=seed,
                                   warmup_requests=warmup_requests)
    check_fits(scheduler, l, o)
    n = l.size
    if dispatch == "round_robin":
        where = np.arange(n) % r_count
    else:
        where = np.random.default_rng([0 if seed is None else int(seed), 1]).integers(
            0, r_count, n)
    start, first, finish = (np.full(n, np.nan) for _ in range(3))
    pre, cached = np.zeros(n, np.int64), np.zeros(n, np.int64)
    hist = np.zeros(ITL_EDGES_MS.size - 1, np.int64)
    area, end, peak = 0.0, 0.0, 0.0
    for i in range(r_count):
        sel = np.flatnonzero(where == i)
        if sel.size == 0:
            continue
        run = _serve_requests(cost, scheduler, arr_ms[sel], l[sel], o[sel])
        start[sel], first[sel], finish[sel] = run.start_ms, run.first_ms, run.finish_ms
        pre[sel], cached[sel] = run.preemptions, run.cached_tokens
        hist += run.itl_hist
        st = run.stats
        area += st[kernel.S_RUN_AREA]
        end = max(end, st[kernel.S_END_MS])
        if run.kv_blocks:
            peak = max(peak, st[kernel.S_PEAK_BLOCKS] / run.kv_blocks)
    records = ServingRecords(
        arrival_s=_ro(arr_ms / 1e3), first_token_s=_ro(first / 1e3),
        finish_s=_ro(finish / 1e3), input_tokens=_ro(l), output_tokens=_ro(o),
        preemptions=_ro(pre), cached_tokens=_ro(cached), scheduled_s=_ro(start / 1e3))
    return summarize(
        records, warmup_requests=w, queue_s=(start - arr_ms) / 1e3, itl_hist=hist,
        itl_edges_ms=ITL_EDGES_MS, mean_running=area / end if end > 0 else 0.0,
        kv_peak_fraction=peak if scheduler.kv_blocks is not None else None,
        keep_records=return_records,
        notes=(f"{r_count} replicas, {dispatch.replace('_', ' ')} dispatch",))
