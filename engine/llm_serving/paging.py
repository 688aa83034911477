"""KV-cache paging of the serving simulator's compiled loop (engine/llm_serving/kernel.py):
the prefix-cache key of a block, a request's blocks released, entered in the prefix cache
and taken from the free pool, and room made by preemption.

Plain Python that numba compiles (``engine.core.jit``); the block cache itself is
``blockcache``.  ``blk`` holds the cache's list ends and counts and the waiting-queue
ring (the ``B_*`` slots).
"""
from __future__ import annotations

from ..core.jit import compiled
from . import blockcache as bc

KEY_SHIFT = 1 << 22         # blocks per token stream in a prefix-cache key
OWN_STREAMS = 1 << 20       # request r's own tokens are stream OWN_STREAMS + r (shared: below)
# block and queue state shared by the helpers (the first five are the cache's own)
B_HEAD, B_TAIL, B_POOL, B_EVICTABLE, B_FREE, B_VERSION = (
    bc.HEAD, bc.TAIL, bc.POOL_TOP, bc.EVICTABLE, bc.FREE, bc.VERSION)
B_WH, B_WS, B_PREEMPTED = 6, 7, 8
N_BLK = 9


@compiled
def _key(r, j, bs, pstream, ptok):
    """Prefix-cache key of request r's j-th full block: (stream, j) while the block
    lies in the shared leading tokens, (the request's own stream, j) after."""
    if pstream[r] >= 0 and (j + 1) * bs <= ptok[r]:
        return pstream[r] * KEY_SHIFT + j
    return (OWN_STREAMS + r) * KEY_SHIFT + j


@compiled
def _release(r, finishing, blk, c, held, fref, bs, pstream, ptok, prefix, table, entries,
             pool):
    """Request r gives its blocks back, its last block first: full ones stay cached
    (least recently released evicted first), the partial one is free.  Its own full
    blocks beyond ``fref`` were never entered (only r could find them, and r is done
    with them when it finishes: they join the eviction list as one run; preempted, it
    may find them again, so they are entered now)."""
    if prefix:
        nf = c[r] // bs
        lazy = nf - fref[r]
        if lazy > 0:
            if finishing:
                if not bc.add_run(table, entries, pool, blk, lazy):
                    blk[B_FREE] += lazy
            else:
                for j in range(nf - 1, fref[r] - 1, -1):
                    if bc.add(table, entries, pool, blk, _key(r, j, bs, pstream, ptok),
                              0) == bc.NONE:
                        blk[B_FREE] += 1
        for j in range(fref[r] - 1, -1, -1):
            bc.drop(entries, blk, bc.find(table, entries, _key(r, j, bs, pstream, ptok)))
        blk[B_FREE] += held[r] - nf
    else:
        blk[B_FREE] += held[r]
    held[r] = 0
    fref[r] = 0


@compiled
def _take_free(need, blk, table, entries, pool):
    """Take ``need`` free blocks, evicting the least recently released cached ones
    first (the caller checked need ≤ free + evictable)."""
    while need > blk[B_FREE]:
        bc.evict(table, entries, pool, blk, need - blk[B_FREE])
    blk[B_FREE] -= need


@compiled
def _enter(r, upto, blk, fref, n_pre, bs, pstream, ptok, table, entries, pool):
    """Enter request r's full blocks up to token ``upto`` (what it will have computed by
    the step's end) in the prefix cache when it is scheduled, as vLLM V1 does: a request
    admitted later in the same step finds them.  A block already cached (computed twice)
    is shared and r's copy is free; r's own tokens are entered only once it has been
    preempted (nobody else can find them)."""
    nf = upto // bs
    j = fref[r]
    while j < nf:
        if n_pre[r] == 0 and not (pstream[r] >= 0 and (j + 1) * bs <= ptok[r]):
            break
        k = _key(r, j, bs, pstream, ptok)
        e = bc.find(table, entries, k)
        if e != bc.NONE:
            bc.hold(entries, blk, e)
            blk[B_FREE] += 1
        elif bc.add(table, entries, pool, blk, k, 1) == bc.NONE:
            break               # no row left (unbounded cache): stays private
        j += 1
    fref[r] = j


@compiled
def _room_for(r, need, run, nrun, blk, c, held, fref, n_pre, wq, bs, pstream, ptok,
              prefix, table, entries, pool):
    """Make room for ``need`` more blocks of running request r by preempting the most
    recently admitted (blocks back, to the head of the queue); returns the running
    count left, and whether r itself was preempted (then nothing is taken)."""
    while need > blk[B_FREE] + blk[B_EVICTABLE]:
        v = run[nrun - 1]
        nrun -= 1
        _release(v, False, blk, c, held, fref, bs, pstream, ptok, prefix, table, entries,
                 pool)
        c[v] = 0
        n_pre[v] += 1
        blk[B_PREEMPTED] += 1
        blk[B_WH] = (blk[B_WH] - 1) % wq.size
        wq[blk[B_WH]] = v
        blk[B_WS] += 1
        if v == r:
            return nrun, True
    _take_free(need, blk, table, entries, pool)
    return nrun, False
