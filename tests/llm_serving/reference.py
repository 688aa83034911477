"""A slow, plainly written LLM server: the rules of docs/models/llm_serving.md
("The scheduler, step by step", "The KV cache and the prefix cache", "Conventions"),
written from the doc alone, to check the compiled event loop
(engine/llm_serving/kernel.py) request by request.

The structure differs from the kernel on purpose: physical KV blocks are objects
(reference count, cache key, release stamp), with a free list, an LRU order of the
evictable cached blocks and a dict from cache key to block; requests are objects in
a waiting deque and a running list.  Nothing here is compiled or vectorised.

Choices where the doc leaves room (vLLM V1's behaviour where it has one):

* When a block "becomes full" and enters the prefix cache.  ``cache_when="end"``
  (the doc's reading, "two requests computed it at once", and the kernel's): at the
  end of the step that computes its last token, so two requests admitted in one step
  with the same prefix both compute it and the second then swaps to the first's copy.
  ``cache_when="schedule"`` (vLLM V1, which caches in ``allocate_slots``): as soon as
  the step that fills it is scheduled, so a request admitted later in the same step
  already finds it (vLLM writes each layer's KV before that layer's attention).
* A request is classified as decoding when, at scheduling, g ≥ 1 and c = l + g − 1,
  whatever brought it there (also a recomputation whose prefix hit leaves one token).
* Requests that leave in one step drop their blocks in running-list order, each
  last block first.
* An empty step would take no time (it cannot arise: the first running request
  always fits, since every request fits the cache alone).
* An unbounded cache (``kv_cache_tokens=None``) never evicts: a cached block stays.
* Send times equal: requests join the waiting queue in index order.
"""
from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field

import numpy as np

__all__ = ["reference_serve", "ReferenceRecords"]


@dataclass
class Block:
    """One physical KV block."""

    id: int
    ref: int = 0
    key: tuple | None = None       # set while the block is in the prefix cache
    stamp: int = -1                # when its references last reached 0


@dataclass
class Request:
    index: int
    prompt: int                    # l
    output: int                    # o
    stream: int                    # prefix stream (-1: none)
    shared: int                    # leading tokens from the stream (past the prompt: the reply continues it)
    send_ms: float = 0.0
    visible_ms: float = 0.0
    generated: int = 0             # g
    computed: int = 0              # c
    blocks: list = field(default_factory=list)   # blocks[j]: the request's j-th block
    preemptions: int = 0
    first_ms: float = float("nan")
    finish_ms: float = float("nan")
    cached_tokens: int = 0
    admitted_before: bool = False

    def tokens(self) -> int:
        """l + g: the tokens whose KV must be computed to emit the next token."""
        return self.prompt + self.generated


class BlockPool:
    """Physical blocks: free ones (a list), evictable cached ones (least recently
    released first), held ones; ``cache`` maps a cache key to its block, held or
    evictable.  ``total=None``: blocks are made on demand (an unbounded cache)."""

    def __init__(self, total, block_size, prefix_caching):
        self.block_size = block_size
        self.prefix_caching = prefix_caching
        self.unbounded = total is None
        self.blocks = [] if total is None else [Block(i) for i in range(total)]
        self.free = list(self.blocks)
        self.evictable = OrderedDict()       # block id -> block, oldest release first
        self.cache = {}                      # key -> block
        self.clock = 0

    def available(self):
        """Free plus evictable blocks (inf when unbounded)."""
        if self.unbounded:
            return float("inf")
        return len(self.free) + len(self.evictable)

    def take(self) -> Block:
        """A block for a request: a free one, else (unbounded) a new one, else the
        least recently released cached one (evicted from the cache)."""
        if self.free:
            block = self.free.pop()
        elif self.unbounded:                 # an unbounded cache never evicts
            block = Block(len(self.blocks))
            self.blocks.append(block)
        elif self.evictable:
            _, block = self.evictable.popitem(last=False)
            del self.cache[block.key]
            block.key = None
        else:
            raise RuntimeError("no KV block left (the scheduler checked room first)")
        assert block.ref == 0 and block.key is None
        block.ref = 1
        return block

    def reference(self, block: Block):
        """One more request uses ``block`` (a cache hit): it stops being evictable."""
        if block.ref == 0:
            del self.evictable[block.id]
        block.ref += 1

    def release(self, block: Block):
        """A request drops ``block``: at 0 references a cached block becomes
        evictable with a new stamp, any other block returns to the free list."""
        block.ref -= 1
        assert block.ref >= 0
        if block.ref == 0:
            if block.key is not None:
                self.clock += 1
                block.stamp = self.clock
                self.evictable[block.id] = block
            else:
                self.free.append(block)

    def check(self, running):
        """Invariants: every block is free, evictable or held by as many requests as
        its count says."""
        if self.unbounded:
            return
        held = {}
        for r in running:
            for b in r.blocks:
                held[b.id] = held.get(b.id, 0) + 1
        free_ids = {b.id for b in self.free}
        assert len(free_ids) == len(self.free)
        for b in self.blocks:
            assert b.ref == held.get(b.id, 0), (b, held.get(b.id, 0))
            if b.ref == 0:
                assert (b.id in free_ids) != (b.id in self.evictable)
            else:
                assert b.id not in free_ids and b.id not in self.evictable
            if b.id in self.evictable:
                assert b.key is not None
            if b.key is not None:
                assert self.cache[b.key] is b
        assert len(self.cache) == sum(b.key is not None for b in self.blocks)


class ReferenceServer:
    def __init__(self, cost, scheduler, requests, closed, n_clients, cache_when):
        assert cache_when in ("end", "schedule")
        self.cache_when = cache_when
        self.cost = cost
        self.s = scheduler
        self.b = scheduler.block_size
        self.requests = requests
        self.pool = BlockPool(scheduler.kv_blocks, self.b, scheduler.prefix_caching)
        self.waiting = deque()
        self.running = []
        self.now = 0.0
        self.closed = closed
        if closed:
            self.pending = deque(requests[:n_clients])   # sent at 0
            self.next_to_send = min(n_clients, len(requests))
        else:
            self.pending = deque(requests)
            self.next_to_send = len(requests)
        self.done = 0

    # ------------------------------------------------------------- prefix cache
    def key(self, req: Request, j: int):
        """Cache key of the request's j-th full block."""
        if req.stream >= 0 and (j + 1) * self.b <= req.shared:
            return ("stream", req.stream, j)
        return ("request", req.index, j)

    def lookup(self, req: Request):
        """Leading cached full blocks of the request (at most ⌊(l + g − 1)/b⌋)."""
        hits = []
        if not self.s.prefix_caching:
            return hits
        limit = (req.tokens() - 1) // self.b
        while len(hits) < limit:
            block = self.pool.cache.get(self.key(req, len(hits)))
            if block is None:
                break
            hits.append(block)
        return hits

    def cache_full_blocks(self, req: Request, upto_tokens: int):
        """The request's blocks full once ``upto_tokens`` are computed enter the
        cache; a block already cached under the same key is used instead of the
        request's own copy, which returns to the free pool."""
        if not self.s.prefix_caching:
            return
        for j in range(upto_tokens // self.b):
            block = req.blocks[j]
            if block.key is not None:
                continue
            k = self.key(req, j)
            other = self.pool.cache.get(k)
            if other is None:
                block.key = k
                self.pool.cache[k] = block
            else:
                assert other is not block
                self.pool.reference(other)
                req.blocks[j] = other
                self.pool.release(block)

    def blocks_needed(self, req: Request, upto_tokens: int) -> int:
        return -(-upto_tokens // self.b) - len(req.blocks)

    def allocate(self, req: Request, upto_tokens: int):
        for _ in range(self.blocks_needed(req, upto_tokens)):
            req.blocks.append(self.pool.take())
        if self.cache_when == "schedule":
            self.cache_full_blocks(req, upto_tokens)

    def drop_blocks(self, req: Request):
        for block in reversed(req.blocks):
            self.pool.release(block)
        req.blocks = []

    # ------------------------------------------------------------- scheduling
    def preempt_last(self) -> Request:
        victim = self.running.pop()
        self.drop_blocks(victim)
        victim.computed = 0
        victim.preemptions += 1
        self.waiting.appendleft(victim)
        return victim

    def make_room(self, req: Request, upto_tokens: int) -> bool:
        """Preempt the last running request until ``req``'s new blocks fit; False when
        ``req`` itself was preempted."""
        while self.blocks_needed(req, upto_tokens) > self.pool.available():
            victim = self.preempt_last()
            if victim is req:
                return False
        return True

    def admit(self, req: Request, hits, take: int):
        for block in hits:
            self.pool.reference(block)
        req.blocks = list(hits)
        req.computed = len(hits) * self.b
        if not req.admitted_before:
            req.admitted_before = True
            req.cached_tokens = len(hits) * self.b
        self.allocate(req, req.computed + take)
        self.running.append(req)

    def fits(self, req: Request, hits, take: int) -> bool:
        h = len(hits)
        new_blocks = -(-(h * self.b + take) // self.b) - h
        evictable_hits = sum(1 for blk in hits if blk.ref == 0)
        return new_blocks <= self.pool.available() - evictable_hits

    def schedule_chunked(self):
        """[(request, take)] of one step, vLLM V1's way."""
        budget = self.s.max_num_batched_tokens
        scheduled = []
        preempted = False
        i = 0
        while i < len(self.running) and budget > 0:
            req = self.running[i]
            take = min(req.tokens() - req.computed, budget)
            n_before = len(self.running)
            ok = self.make_room(req, req.computed + take)
            if len(self.running) != n_before or not ok:
                preempted = True
            if not ok:
                break
            self.allocate(req, req.computed + take)
            scheduled.append((req, take))
            budget -= take
            i += 1
        if not preempted:
            while self.waiting and budget > 0 and len(self.running) < self.s.max_num_seqs:
                req = self.waiting[0]
                hits = self.lookup(req)
                take = min(req.tokens() - len(hits) * self.b, budget)
                if not self.fits(req, hits, take):
                    break
                self.waiting.popleft()
                self.admit(req, hits, take)
                scheduled.append((req, take))
                budget -= take
        return scheduled

    def schedule_whole(self):
        """[(request, take)] of one step, vLLM's earlier scheduler: whole prompts, or
        else one decode of every running request."""
        scheduled = []
        taken = 0
        while self.waiting and len(self.running) < self.s.max_num_seqs:
            req = self.waiting[0]
            hits = self.lookup(req)
            take = req.tokens() - len(hits) * self.b
            if scheduled and taken + take > self.s.max_num_batched_tokens:
                break
            if not self.fits(req, hits, take):
                break
            self.waiting.popleft()
            self.admit(req, hits, take)
            scheduled.append((req, take))
            taken += take
        if scheduled:
            return scheduled
        i = 0
        while i < len(self.running):
            req = self.running[i]
            assert req.computed == req.tokens() - 1
            if not self.make_room(req, req.computed + 1):
                break
            self.allocate(req, req.computed + 1)
            scheduled.append((req, 1))
            i += 1
        return scheduled

    # ------------------------------------------------------------- the loop
    def step_ms(self, scheduled) -> float:
        p = q = d = k = 0
        for req, take in scheduled:
            if req.generated >= 1 and req.computed == req.tokens() - 1:
                assert take == 1
                d += 1
                k += req.tokens()
            else:
                p += take
                q += take * (req.computed + take)
        c = self.cost
        if d > 0:
            base = c.base_ms
        elif p > 0:
            base = c.prefill_base_ms
        else:
            return 0.0
        return (base + c.prefill_ms_per_token * p + c.prefill_ms_per_token_sq * q
                + c.decode_ms_per_seq * d + c.context_ms_per_token * k)

    def send(self, req: Request, at_ms: float):
        req.send_ms = at_ms
        req.visible_ms = at_ms + self.cost.frontend_ms
        self.pending.append(req)

    def run(self, check=True):
        n = len(self.requests)
        for req in self.pending:
            req.visible_ms = req.send_ms + self.cost.frontend_ms
        steps = 0
        while self.done < n:
            while self.pending and self.pending[0].visible_ms <= self.now:
                self.waiting.append(self.pending.popleft())
            if not self.waiting and not self.running:
                assert self.pending, "requests left but none to come"
                self.now = max(self.now, self.pending[0].visible_ms)
                continue
            if self.s.chunked_prefill:
                scheduled = self.schedule_chunked()
            else:
                scheduled = self.schedule_whole()
            self.now = self.now + self.step_ms(scheduled)
            steps += 1
            assert steps < 10_000_000
            leaving = []
            for req, take in scheduled:
                req.computed += take
                assert req.computed <= req.tokens()
                if self.cache_when == "end":
                    self.cache_full_blocks(req, req.computed)
                if req.computed == req.tokens():
                    req.generated += 1
                    if req.generated == 1:
                        req.first_ms = self.now
                    if req.generated == req.output:
                        req.finish_ms = self.now
                        leaving.append(req)
            for req in [r for r in self.running if r in leaving]:   # running-list order
                self.running.remove(req)
                self.drop_blocks(req)
                self.done += 1
                if self.closed and self.next_to_send < n:
                    self.send(self.requests[self.next_to_send], self.now)
                    self.next_to_send += 1
            if check:
                self.pool.check(self.running)
                for r in self.running:
                    assert len(r.blocks) == -(-r.computed // self.b)


@dataclass
class ReferenceRecords:
    arrival_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    preemptions: np.ndarray
    cached_tokens: np.ndarray


def reference_serve(cost, scheduler, arrival_s, input_tokens, output_tokens, *,
                    concurrency=None, prefix_stream=None, prefix_tokens=None,
                    check=True, cache_when="schedule") -> ReferenceRecords:
    """Serve the requests (send order) by the doc's rules; per request the send time,
    first token and finish times (s), preemptions and prompt tokens found in the
    prefix cache at first admission.  ``arrival_s``: send times (open loop), ignored
    (may be None) with ``concurrency`` (closed loop: that many clients send at 0, each
    sends the next request when its last one finishes).  ``input_tokens`` and
    ``output_tokens``: one per request; ``prefix_stream``/``prefix_tokens``: one per
    request, one for all, or None.  ``cache_when``: when a full block enters the
    prefix cache (module docstring).  ``check``: verify the block bookkeeping after
    every step."""
    l = [int(x) for x in np.atleast_1d(input_tokens)]
    o = [int(x) for x in np.atleast_1d(output_tokens)]
    n = len(l)
    assert len(o) == n
    if prefix_stream is None:
        streams, shared = [-1] * n, [0] * n
    else:
        streams = [int(x) for x in np.broadcast_to(np.asarray(prefix_stream), (n,))]
        shared = [min(int(x), l[i] + o[i] - 1)
                  for i, x in enumerate(np.broadcast_to(np.asarray(prefix_tokens), (n,)))]
    requests = [Request(i, l[i], o[i], streams[i], shared[i]) for i in range(n)]
    closed = concurrency is not None
    if not closed:
        times = np.asarray(arrival_s, dtype=float)
        assert times.shape == (n,)
        for req, t in zip(requests, times):
            req.send_ms = float(t * 1e3)
    server = ReferenceServer(cost, scheduler, requests, closed, concurrency or 0, cache_when)
    server.run(check=check)
    return ReferenceRecords(
        arrival_s=np.array([r.send_ms / 1e3 for r in requests]),
        first_token_s=np.array([r.first_ms / 1e3 for r in requests]),
        finish_s=np.array([r.finish_ms / 1e3 for r in requests]),
        preemptions=np.array([r.preemptions for r in requests], dtype=np.int64),
        cached_tokens=np.array([r.cached_tokens for r in requests], dtype=np.int64))
