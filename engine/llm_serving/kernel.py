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

import heapq

import numpy as np

from ..core.jit import compiled

# stats slots
S_STEPS, S_BUSY_MS, S_RUN_AREA, S_WAIT_AREA, S_PEAK_BLOCKS, S_PREEMPTIONS, S_END_MS, \
    S_ERROR, S_TIMELINE = range(9)
N_STATS = 9
ITL_BINS = 2400             # ITL histogram: bin k holds [0.01·1.01^k, 0.01·1.01^(k+1)) ms
ITL_LOW_MS = 0.01
ITL_RATIO = 1.01
KEY_SHIFT = 1 << 22         # blocks per token stream in a prefix-cache key
# block and queue state shared by the helpers
B_FREE, B_EVICTABLE, B_STAMP, B_WH, B_WS, B_PREEMPTED = range(6)


@compiled
def _key(r, j, bs, pstream, ptok, n_streams):
    """Prefix-cache key of request r's j-th full block: (stream, j) while the block
    lies in the shared leading tokens, (the request's own stream, j) after."""
    if pstream[r] >= 0 and (j + 1) * bs <= ptok[r]:
        return pstream[r] * KEY_SHIFT + j
    return (n_streams + r) * KEY_SHIFT + j


@compiled
def _release(r, blk, held, fref, bs, pstream, ptok, n_streams, prefix, ref, stamp_of, heap):
    """Request r gives its blocks back: full ones stay cached (least recently used
    evicted first, its last block before its first), the rest are free."""
    if prefix:
        for j in range(fref[r] - 1, -1, -1):
            k = _key(r, j, bs, pstream, ptok, n_streams)
            ref[k] -= 1
            if ref[k] == 0:
                blk[B_EVICTABLE] += 1
                blk[B_STAMP] += 1
                stamp_of[k] = blk[B_STAMP]
                heapq.heappush(heap, (blk[B_STAMP], k))
        blk[B_FREE] += held[r] - fref[r]
    else:
        blk[B_FREE] += held[r]
    held[r] = 0
    fref[r] = 0


@compiled
def _take_free(need, blk, ref, stamp_of, heap):
    """Take ``need`` free blocks, evicting the least recently used cached ones first
    (the caller checked need ≤ free + evictable)."""
    while need > blk[B_FREE]:
        s_k = heapq.heappop(heap)
        k = s_k[1]
        if k in ref and ref[k] == 0 and stamp_of[k] == s_k[0]:
            del ref[k]
            del stamp_of[k]
            blk[B_EVICTABLE] -= 1
            blk[B_FREE] += 1
    blk[B_FREE] -= need


@compiled
def _room_for(r, need, run, nrun, blk, c, held, fref, n_pre, wq, bs, pstream, ptok,
              n_streams, prefix, ref, stamp_of, heap):
    """Make room for ``need`` more blocks of running request r by preempting the most
    recently admitted (blocks back, to the head of the queue); returns the running
    count left, and whether r itself was preempted (then nothing is taken)."""
    while need > blk[B_FREE] + blk[B_EVICTABLE]:
        v = run[nrun - 1]
        nrun -= 1
        _release(v, blk, held, fref, bs, pstream, ptok, n_streams, prefix, ref, stamp_of,
                 heap)
        c[v] = 0
        n_pre[v] += 1
        blk[B_PREEMPTED] += 1
        blk[B_WH] = (blk[B_WH] - 1) % wq.size
        wq[blk[B_WH]] = v
        blk[B_WS] += 1
        if v == r:
            return nrun, True
    _take_free(need, blk, ref, stamp_of, heap)
    return nrun, False


@compiled
def serve(arr, vis, closed, l, o, pstream, ptok, n_streams, cost, max_seqs, budget,
          total_blocks, bs, chunked, prefix, warmup, start, first, finish, n_pre, cached, stats,
          itl_hist, tl_t, tl_run, tl_wait, tl_blocks, tl_pre):
    """Serve every request; fills ``start`` (first scheduled), ``first``/``finish`` (ms), ``n_pre`` (preemptions),
    ``cached`` (prompt tokens found in the prefix cache at first admission), ``stats``,
    the ITL histogram of requests ≥ ``warmup`` and the per-step timeline (as long as
    its arrays).  ``closed`` > 0: a closed loop of that many clients (``arr``/``vis``
    filled here).  ``total_blocks`` < 0: unbounded KV cache."""
    n = l.size
    base, pbase, a_tok, a_sq, d_seq, d_ctx, front = (cost[0], cost[1], cost[2], cost[3],
                                                     cost[4], cost[5], cost[6])
    c = np.zeros(n, np.int64)           # computed tokens (KV present)
    g = np.zeros(n, np.int64)           # generated tokens
    held = np.zeros(n, np.int64)        # logical blocks held
    fref = np.zeros(n, np.int64)        # leading full blocks held as cache references
    admitted = np.zeros(n, np.bool_)
    last_tok = np.zeros(n)
    run = np.empty(n, np.int64)
    nrun = 0
    wq = np.empty(n + 1, np.int64)      # waiting queue: a ring, preempted ones to its head
    cap = n + 1
    sched = np.empty(n, np.int64)
    take = np.empty(n, np.int64)
    # prefix cache: key -> references, key -> release stamp, LRU heap of (stamp, key)
    ref = {np.int64(0): np.int64(0)}
    stamp_of = {np.int64(0): np.int64(0)}
    del ref[np.int64(0)]
    del stamp_of[np.int64(0)]
    heap = [(np.int64(0), np.int64(0))]
    heap.pop()
    unbounded = total_blocks < 0
    blk = np.zeros(6, np.int64)
    blk[B_FREE] = total_blocks if not unbounded else np.int64(1) << 62
    n_sent = n
    if closed > 0:
        n_sent = min(closed, n)
        for i in range(n_sent):
            arr[i] = 0.0
            vis[i] = front
    nxt = 0
    done = 0
    t = 0.0
    tl_cap = tl_t.size
    ntl = 0
    while done < n:
        while nxt < n_sent and vis[nxt] <= t:
            wq[(blk[B_WH] + blk[B_WS]) % cap] = nxt
            blk[B_WS] += 1
            nxt += 1
        if nrun == 0 and blk[B_WS] == 0:
            if nxt < n_sent:
                t = max(t, vis[nxt])
                continue
            stats[S_ERROR] = 1.0        # nothing to do and nothing coming: cannot happen
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
                nrun, out = _room_for(r, need, run, nrun, blk, c, held, fref, n_pre, wq, bs,
                                      pstream, ptok, n_streams, prefix, ref, stamp_of, heap)
                if out:
                    break
                held[r] += need
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
                if prefix:
                    maxh = (l[r] + g[r] - 1) // bs
                    while hit < maxh:
                        k = _key(r, hit, bs, pstream, ptok, n_streams)
                        if k not in ref:
                            break
                        if ref[k] == 0:
                            ev_hit += 1
                        hit += 1
                tk = l[r] + g[r] - hit * bs
                if chunked:
                    tk = min(tk, budget_left)
                elif tk > budget_left and ns > 0:
                    break
                need = (hit * bs + tk + bs - 1) // bs - hit
                if need > blk[B_FREE] + blk[B_EVICTABLE] - ev_hit:
                    break
                for j in range(hit):
                    k = _key(r, j, bs, pstream, ptok, n_streams)
                    if ref[k] == 0:
                        blk[B_EVICTABLE] -= 1
                    ref[k] += 1
                _take_free(need, blk, ref, stamp_of, heap)
                blk[B_WH] = (blk[B_WH] + 1) % cap
                blk[B_WS] -= 1
                if not admitted[r]:
                    admitted[r] = True
                    cached[r] = hit * bs
                    start[r] = t
                c[r] = hit * bs
                held[r] = hit + need
                fref[r] = hit
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
                nrun, out = _room_for(r, need, run, nrun, blk, c, held, fref, n_pre, wq, bs,
                                      pstream, ptok, n_streams, prefix, ref, stamp_of, heap)
                if out:
                    break
                held[r] += need
                sched[ns] = r
                take[ns] = l[r] + g[r] - c[r]
                ns += 1
                i += 1
        if ns == 0:
            if nxt < n_sent:            # wait for the next arrival
                t = max(t, vis[nxt])
                continue
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
        # ---- the step's end: tokens out, full blocks into the cache, finished ones leave
        any_done = False
        for m in range(ns):
            r = sched[m]
            c[r] += take[m]
            if prefix:
                nf = c[r] // bs
                for j in range(fref[r], nf):
                    k = _key(r, j, bs, pstream, ptok, n_streams)
                    if k in ref:        # computed twice: share the cached copy
                        if ref[k] == 0:
                            blk[B_EVICTABLE] -= 1
                        ref[k] += 1
                        blk[B_FREE] += 1
                    else:
                        ref[k] = 1
                if nf > fref[r]:
                    fref[r] = nf
            if c[r] == l[r] + g[r]:
                g[r] += 1
                if g[r] == 1:
                    first[r] = t
                elif r >= warmup:
                    gap = t - last_tok[r]
                    b = 0
                    if gap > ITL_LOW_MS:
                        b = min(int(np.log(gap / ITL_LOW_MS) / np.log(ITL_RATIO)), ITL_BINS - 1)
                    itl_hist[b] += 1
                last_tok[r] = t
                if g[r] == o[r]:
                    finish[r] = t
                    done += 1
                    any_done = True
                    _release(r, blk, held, fref, bs, pstream, ptok, n_streams, prefix, ref,
                             stamp_of, heap)
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
    stats[S_PREEMPTIONS] = blk[B_PREEMPTED]
    stats[S_END_MS] = t
    stats[S_TIMELINE] = ntl
