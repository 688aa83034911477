"""The prefix cache of the serving simulator, compiled: cached KV blocks by key, with
reference counts, and the blocks no request references in least-recently-released
order (evicted from the front).

Arrays, not dictionaries (a numba dictionary costs ~50-100 ns an operation, the block
cache makes several per block): an open-addressing hash table ``table`` (power-of-two
size, linear probing, deletion by backward shift) of indices into ``entries`` (one row
per cached block: key, references, previous and next in the eviction list, blocks), a
stack of unused rows ``pool``, and the scalars in ``state`` (``VERSION`` counts every change
of which keys are cached or unreferenced, so a caller may keep a lookup while it holds).

A row without a key (``add_run``) stands for a run of blocks nobody can ever find again
(a finished request's own blocks): it keeps their place in the eviction order at the cost
of one row instead of one a block.
"""
from __future__ import annotations

import numpy as np

from ..core.jit import compiled

KEY, REFS, PREV, NEXT, COUNT = range(5)
HEAD, TAIL, POOL_TOP, EVICTABLE, FREE, VERSION = range(6)   # slots of ``state``
NONE = -1


def new_cache(capacity: int):
    """(table, entries, pool) for at most ``capacity`` (≥ 1) cached blocks."""
    if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) \
            or capacity < 1:
        raise ValueError(f"capacity must be a whole number of blocks >= 1, got {capacity!r}")
    capacity = int(capacity)
    size = 1
    while size < 2 * capacity:
        size *= 2
    table = np.full(size, NONE, np.int64)
    entries = np.full((capacity, 5), NONE, np.int64)
    pool = np.arange(capacity - 1, -1, -1, dtype=np.int64)
    return table, entries, pool


@compiled
def _slot(table, key):
    """Home slot of ``key`` (stream × 2²² + block): multiplicative hashing of its two
    halves by odd constants (each product under 2⁶², their sum under 2⁶³: no overflow on
    either backend), the high bits folded onto the low ones."""
    h = (key & 0x7FFFFFFF) * 1481765933 + (key >> 31) * 625341585
    return (h ^ (h >> 24)) & (table.size - 1)


@compiled
def find(table, entries, key):
    """Row of ``key``, or NONE."""
    mask = table.size - 1
    i = _slot(table, key)
    while True:
        e = table[i]
        if e == NONE:
            return NONE
        if entries[e, KEY] == key:
            return e
        i = (i + 1) & mask


@compiled
def _unlink(entries, state, e):
    p, n = entries[e, PREV], entries[e, NEXT]
    if p == NONE:
        state[HEAD] = n
    else:
        entries[p, NEXT] = n
    if n == NONE:
        state[TAIL] = p
    else:
        entries[n, PREV] = p
    entries[e, PREV] = NONE
    entries[e, NEXT] = NONE
    state[EVICTABLE] -= entries[e, COUNT]
    state[VERSION] += 1


@compiled
def _append(entries, state, e):
    t = state[TAIL]
    entries[e, PREV] = t
    entries[e, NEXT] = NONE
    if t == NONE:
        state[HEAD] = e
    else:
        entries[t, NEXT] = e
    state[TAIL] = e
    state[EVICTABLE] += entries[e, COUNT]
    state[VERSION] += 1


@compiled
def hold(entries, state, e):
    """One more reference to row ``e`` (out of the eviction list if it was in it)."""
    if entries[e, REFS] == 0:
        _unlink(entries, state, e)
    entries[e, REFS] += 1


@compiled
def drop(entries, state, e):
    """One reference less to row ``e``; at none it joins the back of the eviction list."""
    entries[e, REFS] -= 1
    if entries[e, REFS] == 0:
        _append(entries, state, e)


@compiled
def _delete(table, entries, key):
    mask = table.size - 1
    i = _slot(table, key)
    while entries[table[i], KEY] != key:
        i = (i + 1) & mask
    table[i] = NONE
    j = i
    while True:                                       # backward shift
        j = (j + 1) & mask
        e = table[j]
        if e == NONE:
            return
        k = _slot(table, entries[e, KEY])
        if (j > i and (k <= i or k > j)) or (j < i and (k <= i and k > j)):
            table[i] = e
            table[j] = NONE
            i = j


@compiled
def evict(table, entries, pool, state, most):
    """Forget up to ``most`` of the least recently released unreferenced blocks (one
    keyed block, or part of a run); their blocks are free.  Returns how many."""
    e = state[HEAD]
    if entries[e, KEY] == NONE and entries[e, COUNT] > most:
        entries[e, COUNT] -= most
        state[EVICTABLE] -= most
        state[FREE] += most
        return most
    count = entries[e, COUNT]
    _unlink(entries, state, e)
    if entries[e, KEY] != NONE:
        _delete(table, entries, entries[e, KEY])
        entries[e, KEY] = NONE
    pool[state[POOL_TOP]] = e
    state[POOL_TOP] += 1
    state[FREE] += count
    return count


@compiled
def _row(table, entries, pool, state):
    """An unused row (forgetting the oldest unreferenced block when none is left), or
    NONE."""
    if state[POOL_TOP] == 0:                         # forget the oldest row whole
        if state[HEAD] == NONE:
            return NONE
        forgotten = evict(table, entries, pool, state, entries[state[HEAD], COUNT])
        state[FREE] -= forgotten                          # forgotten, not freed
    state[POOL_TOP] -= 1
    e = pool[state[POOL_TOP]]
    entries[e, PREV] = NONE
    entries[e, NEXT] = NONE
    return e


@compiled
def add_run(table, entries, pool, state, count):
    """``count`` unreferenced blocks nobody can find again, at the back of the eviction
    list as one row (False when no row is left: the caller frees them)."""
    e = _row(table, entries, pool, state)
    if e == NONE:
        return False
    entries[e, KEY] = NONE
    entries[e, REFS] = 0
    entries[e, COUNT] = count
    _append(entries, state, e)
    return True


@compiled
def add(table, entries, pool, state, key, refs):
    """Cache ``key`` (not cached yet) with ``refs`` references (0: straight into the
    eviction list); returns its row, or NONE when no row is left and nothing can be
    forgotten."""
    e = _row(table, entries, pool, state)
    if e == NONE:
        return NONE
    entries[e, KEY] = key
    entries[e, REFS] = refs
    entries[e, COUNT] = 1
    if refs == 0:
        _append(entries, state, e)
    mask = table.size - 1
    i = _slot(table, key)
    while table[i] != NONE:
        i = (i + 1) & mask
    table[i] = e
    state[VERSION] += 1
    return e
