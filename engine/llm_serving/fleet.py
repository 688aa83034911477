"""A fleet of identical LLM servers behind a dispatcher, simulated whole.

``simulate_fleet`` sends each request to one of R replicas and serves every replica on
the compiled loop of ``simulate_serving``; the fleet's summary comes from all requests'
records (one ``ServingResult``), so the dispatch policy shows in the percentiles.

Policies:

* ``"random"``: each request to a replica drawn uniformly (each replica sees the stream
  thinned at random: for Poisson arrivals, Poisson at rate λ/R);
* ``"round_robin"``: request i to replica i mod R (for Poisson arrivals each replica sees
  Erlang-R gaps: smoother than random, so shorter queues);
* ``"least_outstanding"``: each request to the replica with the fewest requests sent to it
  and not finished at its send (the lowest-numbered on a tie), what LLM routers offer:
  the replicas are simulated jointly, each advanced to every send.
"""
from __future__ import annotations

import numpy as np

from ..core.domains import FLEET_DISPATCH, REPLICAS
from ..core.jit import compiled
from . import blockcache, kernel
from .cost import StepCost
from .result import ServingRecords
from .scheduler import Scheduler
from .sim import _ro, _serve_requests, _ServedRun, _Totals, _workload, check_fits

__all__ = ["simulate_fleet", "DISPATCH"]

DISPATCH = FLEET_DISPATCH.values


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
    FLEET_DISPATCH.check(dispatch)
    arr_ms, _, l, o, w = _workload(input_tokens=input_tokens, output_tokens=output_tokens,
                                   rate_per_s=rate_per_s, arrivals=arrivals,
                                   arrival_s=arrival_s, n_requests=n_requests, seed=seed,
                                   warmup_requests=warmup_requests)
    check_fits(scheduler, l, o)
    n = l.size
    runs = None
    if dispatch == "least_outstanding":
        where, runs = _least_outstanding(cost, scheduler, arr_ms, l, o, r_count)
    elif dispatch == "round_robin":
        where = np.arange(n) % r_count
    else:
        where = np.random.default_rng([0 if seed is None else int(seed), 1]).integers(
            0, r_count, n)
    start, first, finish = (np.full(n, np.nan) for _ in range(3))
    pre, cached = np.zeros(n, np.int64), np.zeros(n, np.int64)
    totals = _Totals()
    for i in range(r_count):
        sel = np.flatnonzero(where == i)
        if sel.size == 0:
            continue
        run = runs[i] if runs is not None else _serve_requests(cost, scheduler, arr_ms[sel],
                                                                l[sel], o[sel])
        start[sel], first[sel], finish[sel] = run.start_ms, run.first_ms, run.finish_ms
        pre[sel], cached[sel] = run.preemptions, run.cached_tokens
        totals.add(run)
    records = ServingRecords(
        arrival_s=_ro(arr_ms / 1e3), first_token_s=_ro(first / 1e3),
        finish_s=_ro(finish / 1e3), input_tokens=_ro(l), output_tokens=_ro(o),
        preemptions=_ro(pre), cached_tokens=_ro(cached), scheduled_s=_ro(start / 1e3))
    return totals.result(records, warmup=w, queue_s=(start - arr_ms) / 1e3,
                         scheduler=scheduler, keep_records=return_records,
                         notes=(f"{r_count} replicas, {dispatch.replace('_', ' ')} dispatch",))


def _least_outstanding(cost, scheduler, arr_ms, l, o, r_count) -> np.ndarray:
    """The replica each request goes to under least-outstanding dispatch: every replica
    advanced (``kernel.advance``) to each send in turn, its outstanding requests counted
    then (those finishing in a step that ends after the send still count).  The replicas'
    states are stacked row by row and the loop over sends is compiled
    (``_dispatch_loop``)."""
    n = l.size
    blocks = scheduler.kv_blocks
    costs = cost.as_array()
    if scheduler.prefix_caching:
        rows = blocks if blocks is not None else int(np.sum((l + o) // scheduler.block_size
                                                           + 1))
        rows = max(rows, 1)
    else:
        rows = 1
    per = []
    for _ in range(r_count):
        table, entries, pool = blockcache.new_cache(rows)
        arr, vis = np.zeros(n), np.zeros(n)
        ready, first = np.zeros(n, np.int64), np.full(n, np.nan)
        state = kernel.new_state(n, 0, -1 if blocks is None else blocks, pool, table, entries,
                                 np.zeros(0, np.int64), arr, vis, costs[6], first, ready,
                                 np.full(n, np.nan))
        per.append((arr, vis, np.ones(n, np.int64), np.ones(n, np.int64),
                    np.full(n, -1, np.int64), np.zeros(n, np.int64), ready, np.full(n, np.nan),
                    first, np.full(n, np.nan), np.zeros(n, np.int64), np.zeros(n, np.int64),
                    np.zeros(kernel.N_STATS), np.zeros(kernel.ITL_BINS, np.int64), table,
                    entries, pool, *state))
    stacked = [np.ascontiguousarray(np.stack(parts)) for parts in zip(*per)]
    where = np.empty(n, np.int64)
    hit_rows = np.empty(int(np.max(l + o)) // scheduler.block_size + 1, np.int64)
    empty_f, empty_i = np.zeros(0), np.zeros(0, np.int64)
    _dispatch_loop(np.asarray(arr_ms, float), l.astype(np.int64), o.astype(np.int64),
                   float(cost.frontend_ms), scheduler.watermark_blocks, costs,
                   scheduler.max_num_seqs, scheduler.max_num_batched_tokens,
                   -1 if blocks is None else blocks, scheduler.block_size,
                   scheduler.chunked_prefill, scheduler.prefix_caching, empty_f, empty_i,
                   hit_rows, where, *stacked)
    return where, _finished(costs, scheduler, blocks, where, hit_rows, empty_f, empty_i,
                            stacked)


def _finished(costs, scheduler, blocks, where, hit_rows, empty_f, empty_i, stacked) -> list:
    """Each replica's run to its end from where the dispatch left it (what serving its
    own requests from the start gives: the same steps), as ``_ServedRun``s."""
    (arr, vis, l, o, stream, shared, ready, start, first, finish, n_pre, cached, stats, hist,
     table, entries, pool, *state) = stacked
    runs = []
    for i in range(arr.shape[0]):
        m = int(np.sum(where == i))
        if m == 0:
            runs.append(None)
            continue
        kernel.advance(arr[i], vis[i], 0, l[i], o[i], stream[i], shared[i],
                       scheduler.watermark_blocks, costs, scheduler.max_num_seqs,
                       scheduler.max_num_batched_tokens, -1 if blocks is None else blocks,
                       scheduler.block_size, scheduler.chunked_prefill,
                       scheduler.prefix_caching, 0, start[i], first[i], finish[i], n_pre[i],
                       cached[i], stats[i], hist[i], empty_f, empty_i, empty_i, empty_i,
                       empty_i, empty_i, table[i], entries[i], pool[i], hit_rows, ready[i],
                       *(part[i] for part in state), np.inf, m, True)
        if stats[i][kernel.S_ERROR] != 0:      # pragma: no cover - a broken invariant
            raise RuntimeError(f"the serving simulator stopped on replica {i} (code "
                               f"{stats[i][kernel.S_ERROR]:g})")
        runs.append(_ServedRun(arr[i, :m].copy(), start[i, :m].copy(), first[i, :m].copy(),
                               finish[i, :m].copy(), l[i, :m].copy(), o[i, :m].copy(),
                               n_pre[i, :m].copy(), cached[i, :m].copy(), stats[i].copy(),
                               hist[i].copy(), None, _ro(np.zeros(0, np.int64)), blocks, 0))
    return runs


@compiled
def _dispatch_loop(arr_ms, l_all, o_all, front, watermark, costs, max_seqs, budget, blocks,
                   bs, chunked, prefix, empty_f, empty_i, hit_rows, where, arr, vis, l, o,
                   stream, shared, ready, start, first, finish, n_pre, cached, stats, hist,
                   table, entries, pool, c, g, held, fref, admitted, last_tok, run, wq, sched,
                   take, blk, sc, tf):
    """Least-outstanding dispatch over the replicas' stacked states (row i: replica i):
    at each send every replica with requests outstanding and no step running past the
    send is advanced to it (a replica that would not move is not called: the same state
    either way), then the request goes to the one with the fewest outstanding (the
    lowest-numbered on a tie); ``where`` receives the choices."""
    n = arr_ms.size
    r_count = arr.shape[0]
    cnt = np.zeros(r_count, np.int64)
    for k in range(n):
        until = arr_ms[k] + front
        best = 0
        best_count = -1
        for i in range(r_count):
            if tf[i, 0] < until and cnt[i] > sc[i, kernel.SC_DONE]:
                kernel.advance(arr[i], vis[i], 0, l[i], o[i], stream[i], shared[i], watermark,
                               costs, max_seqs, budget, blocks, bs, chunked, prefix, 0,
                               start[i], first[i], finish[i], n_pre[i], cached[i], stats[i],
                               hist[i], empty_f, empty_i, empty_i, empty_i, empty_i, empty_i,
                               table[i], entries[i], pool[i], hit_rows, ready[i], c[i], g[i],
                               held[i], fref[i], admitted[i], last_tok[i], run[i], wq[i],
                               sched[i], take[i], blk[i], sc[i], tf[i], until, cnt[i], False)
            out = cnt[i] - sc[i, kernel.SC_DONE]
            if tf[i, 0] > until:
                out += sc[i, kernel.SC_LAST_DONE]
            if best_count < 0 or out < best_count:
                best = i
                best_count = out
        j = cnt[best]
        arr[best, j] = arr_ms[k]
        vis[best, j] = until
        l[best, j] = l_all[k]
        o[best, j] = o_all[k]
        cnt[best] += 1
        where[k] = best
