"""The compiled event loop of the serving simulator: one scheduler step at a time.

Plain Python that numba compiles (``engine.core.jit``); the rules it follows are in
docs/models/llm_serving.md and are checked, request by request, against a plainly
written scheduler kept in tests/llm_serving/reference.py.

Times in ms.  Per request: prompt ``l``, reply ``o`` (≥ 1), the stream its leading
``ptok`` prompt tokens come from (``pstream``, −1: none shared).  A request is done
with token g+1 when its computed tokens ``c`` reach l + g (vLLM V1's view: a prompt,
a recomputation after preemption and a decode are all "compute what is missing").
"""
from __future__ import annotations

import numpy as np

from ..core.jit import compiled
from . import blockcache as bc
from .paging import (B_EVICTABLE, B_FREE, B_HEAD, B_POOL, B_PREEMPTED, B_TAIL,  # noqa: F401
                     B_VERSION, B_WH, B_WS, KEY_SHIFT, N_BLK, OWN_STREAMS, _enter, _key,
                     _release, _room_for, _take_free)

# stats slots
S_STEPS, S_BUSY_MS, S_RUN_AREA, S_WAIT_AREA, S_PEAK_BLOCKS, S_PREEMPTIONS, S_END_MS, \
    S_ERROR, S_TIMELINE, S_CACHED_OUT = range(10)
N_STATS = 10
ITL_BINS = 2400             # ITL histogram: bin k holds [0.01·1.01^k, 0.01·1.01^(k+1)) ms
ITL_LOW_MS = 0.01
ITL_RATIO = 1.01
INV_LOW = 1.0 / ITL_LOW_MS
INV_LOG_RATIO = 1.0 / np.log(ITL_RATIO)
# scheduler-state slots
SC_NRUN, SC_NXT, SC_DONE, SC_NSENT, SC_NTL, SC_LOOKED_R, SC_LOOKED_AT, SC_LOOKED_HIT, \
    SC_LOOKED_EV, SC_LOOKED_MAX, SC_LAST_DONE = range(11)
N_SC = 11


@compiled
def new_state(n, closed, total_blocks, pool, table, entries, init_keys, arr, vis, front, first,
              ready, first_in):
    """A server's state before its first step: (c, g, held, fref, admitted, last_tok, run,
    wq, sched, take, blk, sc, tf) for ``n`` requests (see ``serve``)."""
    c = np.zeros(n, np.int64)           # computed tokens (KV present)
    g = np.zeros(n, np.int64)           # generated tokens
    held = np.zeros(n, np.int64)        # logical blocks held
    fref = np.zeros(n, np.int64)        # leading full blocks held as cache references
    admitted = np.zeros(n, np.bool_)
    last_tok = np.zeros(n)
    for i in range(n):                  # requests whose prompt was computed elsewhere
        if ready[i] > 0:
            g[i] = 1
            first[i] = first_in[i]
            last_tok[i] = first_in[i]
    run = np.empty(n, np.int64)
    wq = np.empty(n + 1, np.int64)      # waiting queue: a ring, preempted ones to its head
    sched = np.empty(n, np.int64)
    take = np.empty(n, np.int64)
    blk = np.zeros(N_BLK, np.int64)     # the cache's list ends and counts, the queue ring
    blk[B_HEAD] = bc.NONE
    blk[B_TAIL] = bc.NONE
    blk[B_POOL] = pool.size
    blk[B_FREE] = total_blocks if total_blocks >= 0 else np.int64(1) << 62
    for idx in range(init_keys.size):   # a warm prefix cache, oldest first
        if bc.find(table, entries, init_keys[idx]) == bc.NONE:
            if bc.add(table, entries, pool, blk, init_keys[idx], 0) != bc.NONE:
                blk[B_FREE] -= 1
    sc = np.zeros(N_SC, np.int64)
    sc[SC_LOOKED_R] = -1
    sc[SC_LOOKED_AT] = -1
    sc[SC_NSENT] = n
    if closed > 0:
        sc[SC_NSENT] = min(closed, n)
        for i in range(sc[SC_NSENT]):
            arr[i] = 0.0
            vis[i] = front
    tf = np.zeros(1)
    return c, g, held, fref, admitted, last_tok, run, wq, sched, take, blk, sc, tf


@compiled
def serve(arr, vis, closed, l, o, pstream, ptok, watermark, cost, max_seqs, budget,
          total_blocks, bs, chunked, prefix, warmup, start, first, finish, n_pre, cached, stats,
          itl_hist, tl_t, tl_run, tl_wait, tl_blocks, tl_pre, init_keys, out_keys, table,
          entries, pool, hit_rows, ready, first_in):
    """Serve every request; fills ``start`` (first scheduled), ``first``/``finish`` (ms), ``n_pre`` (preemptions),
    ``cached`` (prompt tokens found in the prefix cache at first admission), ``stats``,
    the ITL histogram of requests ≥ ``warmup`` and the per-step timeline (as long as
    its arrays).  ``closed`` > 0: a closed loop of that many clients (``arr``/``vis``
    filled here).  ``total_blocks`` < 0: unbounded KV cache; an admission leaves
    ``watermark`` blocks free.  ``init_keys``: blocks
    cached before the first request (least recently used first: a previous run's
    ``out_keys``); ``out_keys`` gets the shared-stream blocks cached at the end, in the
    same order (their count in ``stats[S_CACHED_OUT]``).  ``ready`` > 0: the request
    arrives with that many tokens computed elsewhere and its first token already out at
    ``first_in`` (ms): a disaggregated server's decode instance."""
    n = l.size
    c, g, held, fref, admitted, last_tok, run, wq, sched, take, blk, sc, tf = new_state(
        n, closed, total_blocks, pool, table, entries, init_keys, arr, vis, cost[6], first,
        ready, first_in)
    advance(arr, vis, closed, l, o, pstream, ptok, watermark, cost, max_seqs, budget,
            total_blocks, bs, chunked, prefix, warmup, start, first, finish, n_pre, cached,
            stats, itl_hist, tl_t, tl_run, tl_wait, tl_blocks, tl_pre, out_keys, table,
            entries, pool, hit_rows, ready, c, g, held, fref, admitted, last_tok, run, wq,
            sched, take, blk, sc, tf, np.inf, n, True)


@compiled
def advance(arr, vis, closed, l, o, pstream, ptok, watermark, cost, max_seqs, budget,
            total_blocks, bs, chunked, prefix, warmup, start, first, finish, n_pre, cached,
            stats, itl_hist, tl_t, tl_run, tl_wait, tl_blocks, tl_pre, out_keys, table,
            entries, pool, hit_rows, ready, c, g, held, fref, admitted, last_tok, run, wq,
            sched, take, blk, sc, tf, until, n_avail, final):
    """Run steps from the state ``new_state`` made (or an earlier call left) until a step
    would start at or after ``until`` (ms), with the first ``n_avail`` requests sent (an
    open loop fed as a dispatcher decides); ``final``: run every request to its end and
    fill the run's totals."""
    n = l.size
    base, pbase, a_tok, a_sq, d_seq, d_ctx, front = (cost[0], cost[1], cost[2], cost[3],
                                                     cost[4], cost[5], cost[6])
    cap = wq.size
    unbounded = total_blocks < 0
    nrun = sc[SC_NRUN]
    nxt = sc[SC_NXT]
    done = sc[SC_DONE]
    n_sent = sc[SC_NSENT] if closed > 0 else n_avail
    ntl = sc[SC_NTL]
    looked_r = sc[SC_LOOKED_R]
    looked_at = sc[SC_LOOKED_AT]
    looked_hit = sc[SC_LOOKED_HIT]
    looked_ev = sc[SC_LOOKED_EV]
    looked_max = sc[SC_LOOKED_MAX]
    last_done = sc[SC_LAST_DONE]
    t = tf[0]
    tl_cap = tl_t.size
    target = n if closed > 0 else n_avail
    while done < target:
        if t >= until:
            break
        while nxt < n_sent and vis[nxt] <= t:
            wq[(blk[B_WH] + blk[B_WS]) % cap] = nxt
            blk[B_WS] += 1
            nxt += 1
        if nrun == 0 and blk[B_WS] == 0:
            if nxt < n_sent:
                t = max(t, vis[nxt])
                continue
            if final:
                stats[S_ERROR] = 1.0    # nothing to do and nothing coming: cannot happen
            break
        budget_left = budget
        ns = 0
        before = blk[B_PREEMPTED]
        if chunked:                     # running requests first, in admission order
            i = 0
            while i < nrun and budget_left > 0:
                r = run[i]
                tk = min(l[r] + g[r] - c[r], budget_left)
                need = (c[r] + tk + bs - 1) // bs - held[r]
                if need <= blk[B_FREE]:
                    blk[B_FREE] -= need
                else:
                    nrun, out = _room_for(r, need, run, nrun, blk, c, held, fref, n_pre, wq,
                                          bs, pstream, ptok, prefix, table, entries, pool)
                    if out:
                        break
                held[r] += need
                if prefix and (fref[r] + 1) * bs <= c[r] + tk and (n_pre[r] > 0 or (
                        pstream[r] >= 0 and (fref[r] + 1) * bs <= ptok[r])):
                    _enter(r, c[r] + tk, blk, fref, n_pre, bs, pstream, ptok, table, entries,
                           pool)
                sched[ns] = r
                take[ns] = tk
                ns += 1
                budget_left -= tk
                i += 1
        if blk[B_PREEMPTED] == before:  # then waiting ones, first come first served
            while blk[B_WS] > 0 and budget_left > 0 and nrun < max_seqs:
                r = wq[blk[B_WH]]
                hit = 0
                ev_hit = 0
                arrived = ready[r] > 0 and not admitted[r]    # its KV came with it
                if prefix and not arrived:
                    maxh = (l[r] + g[r] - 1) // bs
                    if looked_r == r and looked_at == blk[B_VERSION] and looked_max == maxh:
                        hit = looked_hit            # nothing cached changed: the same hit
                        ev_hit = looked_ev
                    else:
                        while hit < maxh:
                            e = bc.find(table, entries, _key(r, hit, bs, pstream, ptok))
                            if e == bc.NONE:
                                break
                            if entries[e, bc.REFS] == 0:
                                ev_hit += 1
                            hit_rows[hit] = e
                            hit += 1
                        looked_r = r
                        looked_at = blk[B_VERSION]
                        looked_hit = hit
                        looked_ev = ev_hit
                        looked_max = maxh
                base_tok = ready[r] if arrived else hit * bs
                tk = l[r] + g[r] - base_tok
                if chunked:
                    tk = min(tk, budget_left)
                elif tk > budget_left and ns > 0:
                    break
                need = (base_tok + tk + bs - 1) // bs - hit
                if need > blk[B_FREE] + blk[B_EVICTABLE] - ev_hit - watermark:
                    break
                for j in range(hit):
                    bc.hold(entries, blk, hit_rows[j])
                if need <= blk[B_FREE]:
                    blk[B_FREE] -= need
                else:
                    _take_free(need, blk, table, entries, pool)
                blk[B_WH] = (blk[B_WH] + 1) % cap
                blk[B_WS] -= 1
                if not admitted[r]:
                    admitted[r] = True
                    cached[r] = hit * bs
                    start[r] = t
                c[r] = base_tok
                held[r] = hit + need
                fref[r] = hit
                if prefix and (fref[r] + 1) * bs <= c[r] + tk and (n_pre[r] > 0 or (
                        pstream[r] >= 0 and (fref[r] + 1) * bs <= ptok[r])):
                    _enter(r, c[r] + tk, blk, fref, n_pre, bs, pstream, ptok, table, entries,
                           pool)
                run[nrun] = r
                nrun += 1
                sched[ns] = r
                take[ns] = tk
                ns += 1
                budget_left -= tk
        if (not chunked) and ns == 0:   # no prompt fits: one decode of every running one
            i = 0
            while i < nrun:
                r = run[i]
                need = (c[r] + bs) // bs - held[r]
                if need <= blk[B_FREE]:
                    blk[B_FREE] -= need
                else:
                    nrun, out = _room_for(r, need, run, nrun, blk, c, held, fref, n_pre, wq,
                                          bs, pstream, ptok, prefix, table, entries, pool)
                    if out:
                        break
                held[r] += need
                if prefix and (fref[r] + 1) * bs <= c[r] + 1 and (n_pre[r] > 0 or (
                        pstream[r] >= 0 and (fref[r] + 1) * bs <= ptok[r])):
                    _enter(r, c[r] + 1, blk, fref, n_pre, bs, pstream, ptok, table, entries,
                           pool)
                sched[ns] = r
                take[ns] = l[r] + g[r] - c[r]
                ns += 1
                i += 1
        if ns == 0:
            if nxt < n_sent:            # wait for the next arrival
                t = max(t, vis[nxt])
                continue
            if final:
                stats[S_ERROR] = 2.0
            break
        # ---- the step's time
        p_tok = 0.0
        q_tok = 0.0
        d_cnt = 0.0
        k_ctx = 0.0
        for m in range(ns):
            r = sched[m]
            if g[r] >= 1 and c[r] == l[r] + g[r] - 1:
                d_cnt += 1.0
                k_ctx += l[r] + g[r]
            else:
                p_tok += take[m]
                q_tok += take[m] * (c[r] + take[m])
        if d_cnt > 0:
            dt = base + a_tok * p_tok + a_sq * q_tok + d_seq * d_cnt + d_ctx * k_ctx
        else:
            dt = pbase + a_tok * p_tok + a_sq * q_tok
        used = 0
        if not unbounded:
            used = total_blocks - blk[B_FREE] - blk[B_EVICTABLE]
            if used > stats[S_PEAK_BLOCKS]:
                stats[S_PEAK_BLOCKS] = used
        if ntl < tl_cap:
            tl_t[ntl] = t
            tl_run[ntl] = nrun
            tl_wait[ntl] = blk[B_WS]
            tl_blocks[ntl] = used
            tl_pre[ntl] = blk[B_PREEMPTED]
            ntl += 1
        stats[S_RUN_AREA] += nrun * dt
        stats[S_WAIT_AREA] += blk[B_WS] * dt
        stats[S_BUSY_MS] += dt
        stats[S_STEPS] += 1.0
        t += dt
        # ---- the step's end: tokens out, finished ones leave
        any_done = False
        last_done = 0
        for m in range(ns):
            r = sched[m]
            c[r] += take[m]
            if c[r] == l[r] + g[r]:
                g[r] += 1
                if g[r] == 1:
                    first[r] = t
                elif r >= warmup:
                    gap = t - last_tok[r]
                    b = 0
                    if gap > ITL_LOW_MS:
                        b = min(int(np.log(gap * INV_LOW) * INV_LOG_RATIO), ITL_BINS - 1)
                    itl_hist[b] += 1
                last_tok[r] = t
                if g[r] == o[r]:
                    finish[r] = t
                    done += 1
                    last_done += 1
                    any_done = True
                    _release(r, True, blk, c, held, fref, bs, pstream, ptok, prefix, table,
                             entries, pool)
                    if closed > 0 and n_sent < n:
                        arr[n_sent] = t
                        vis[n_sent] = t + front
                        n_sent += 1
        if any_done:
            keep = 0
            for m in range(nrun):
                r = run[m]
                if g[r] < o[r]:
                    run[keep] = r
                    keep += 1
            nrun = keep
    sc[SC_NRUN] = nrun
    sc[SC_NXT] = nxt
    sc[SC_DONE] = done
    sc[SC_NSENT] = n_sent
    sc[SC_NTL] = ntl
    sc[SC_LOOKED_R] = looked_r
    sc[SC_LOOKED_AT] = looked_at
    sc[SC_LOOKED_HIT] = looked_hit
    sc[SC_LOOKED_EV] = looked_ev
    sc[SC_LOOKED_MAX] = looked_max
    sc[SC_LAST_DONE] = last_done
    tf[0] = t
    stats[S_PREEMPTIONS] = blk[B_PREEMPTED]
    stats[S_END_MS] = t
    stats[S_TIMELINE] = ntl
    if not final:
        return
    n_out = 0                           # the cache left behind, shared streams only
    if out_keys.size > 0:
        keys = np.empty(entries.shape[0], np.int64)
        e = blk[B_HEAD]
        while e != bc.NONE:
            if entries[e, bc.KEY] // KEY_SHIFT < OWN_STREAMS:
                keys[n_out] = entries[e, bc.KEY]
                n_out += 1
            e = entries[e, bc.NEXT]
        skip = max(n_out - out_keys.size, 0)
        n_out -= skip
        out_keys[:n_out] = keys[skip:skip + n_out]
    stats[S_CACHED_OUT] = n_out
