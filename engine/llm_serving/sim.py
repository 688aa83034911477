"""``simulate_serving``: an LLM server run step by step (compiled event loop).

Open loop (Poisson ``rate_per_s``, any ``engine.arrivals`` process, or replayed send
times ``arrival_s``) or closed loop (``concurrency`` clients, what ``vllm bench serve
--max-concurrency N --request-rate inf`` does).  vLLM's conventions: the step that
completes a prompt emits the first token (TTFT = its end − the send); each later step
one token; TPOT = (e2e − TTFT)/(output − 1).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from ..arrivals import Poisson
from ..core.arrival_input import arrival_times, check_arrival_times
from ..core.domains import CONCURRENCY, N_REQUESTS, RATE_PER_S, SERVING_TOKENS, WARMUP
from . import blockcache, kernel
from .cost import StepCost
from .result import ServingRecords, Timeline, summarize
from .scheduler import Scheduler

__all__ = ["simulate_serving", "request_lengths", "check_fits", "DEFAULT_REQUESTS"]

DEFAULT_REQUESTS = 20_000
MAX_UNBOUNDED_CACHED_BLOCKS = 1 << 22   # an unbounded KV cache keeps this many cached blocks
ITL_EDGES_MS = kernel.ITL_LOW_MS * kernel.ITL_RATIO ** np.arange(kernel.ITL_BINS + 1.0)
ITL_EDGES_MS[0] = 0.0


def _is_law(x) -> bool:
    return callable(getattr(x, "rvs", None))


def request_lengths(tokens, n: int, rng, name: str) -> np.ndarray:
    """Token counts of ``n`` requests: a whole number (every request), one per request
    (a trace's), or a law (anything with ``rvs``: n = max(1, ⌈X⌉)).  ``ValueError``
    naming ``name`` for anything else (an infinite-mean law included)."""
    if _is_law(tokens):
        try:
            mean = float(tokens.mean())
        except Exception:              # noqa: BLE001 - any law that cannot say its mean
            mean = math.nan
        if not math.isfinite(mean):
            raise ValueError(f"{name}: the law's mean is {mean:g} tokens; a law with a finite "
                             f"mean is needed (a server cannot keep up with infinite work)")
        x = np.asarray(tokens.rvs(size=n, random_state=rng), dtype=float)
        x = np.maximum(1.0, np.ceil(x))
        if x.shape != (n,) or not np.all(np.isfinite(x)):
            raise ValueError(f"{name}: the law drew non-finite token counts")
        return SERVING_TOKENS.check(np.minimum(x, SERVING_TOKENS.high), name).astype(np.int64)
    if isinstance(tokens, (str, bytes, bool)) or tokens is None:
        raise ValueError(f"{name} must be a whole number of tokens, one per request, or a "
                         f"law with rvs, got {tokens!r}")
    arr = SERVING_TOKENS.check(tokens, name)
    if arr.ndim == 0:
        return np.full(n, int(arr), dtype=np.int64)
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(f"{name}: {arr.size} values for {n} requests (one per request)")
    return arr.astype(np.int64)


def check_fits(scheduler: Scheduler, l: np.ndarray, o: np.ndarray) -> None:
    """``ValueError`` with the limit when a request can never run: its prompt and
    reply beyond the KV cache, its first admission (the first chunk, or the whole
    prompt or recomputation without chunked prefill) beyond the cache less the
    watermark, or (whole prompts) a prompt beyond the token budget."""
    if scheduler.kv_cache_tokens is not None:
        total = l + o - 1
        first = total if not scheduler.chunked_prefill else np.minimum(
            total, scheduler.max_num_batched_tokens)
        room = scheduler.kv_blocks - scheduler.watermark_blocks
        need, first_need = scheduler.blocks_for(total), scheduler.blocks_for(first)
        bad = np.flatnonzero((need > scheduler.kv_blocks) | (first_need > room))
        if bad.size:
            i = int(bad[0])
            mark = (f" less the watermark of {scheduler.watermark_blocks} blocks "
                    f"(kv_watermark {scheduler.kv_watermark:g}) an admission leaves free"
                    if scheduler.watermark_blocks else "")
            raise ValueError(
                f"request {i + 1}: {int(l[i])} prompt + {int(o[i])} reply tokens need "
                f"{int(need[i])} KV blocks of {scheduler.block_size}; the cache holds "
                f"{scheduler.kv_blocks} ({scheduler.kv_cache_tokens:,} tokens){mark}: such a "
                f"request can never run (vLLM refuses it)")
    if not scheduler.chunked_prefill:
        bad = np.flatnonzero(l > scheduler.max_num_batched_tokens)
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"request {i + 1}: a prompt of {int(l[i])} tokens exceeds "
                f"max_num_batched_tokens = {scheduler.max_num_batched_tokens} without "
                f"chunked prefill: it can never be scheduled")


def _prefixes(prefix_stream, prefix_tokens, l, o, n):
    if prefix_stream is None and prefix_tokens is None:
        return np.full(n, -1, np.int64), np.zeros(n, np.int64)
    if prefix_stream is None or prefix_tokens is None:
        raise ValueError("prefix_stream and prefix_tokens go together (which stream a "
                         "request's leading tokens come from, and how many)")
    s = np.broadcast_to(np.asarray(prefix_stream), (n,))
    p = np.broadcast_to(np.asarray(prefix_tokens), (n,))
    try:
        s = s.astype(float)
        p = p.astype(float)
    except (TypeError, ValueError):
        raise ValueError("prefix_stream and prefix_tokens must be whole numbers") from None
    if not (np.all(np.isfinite(s)) and np.all(s == np.round(s)) and np.all(s >= -1)
            and np.all(s < kernel.OWN_STREAMS)):
        raise ValueError("prefix_stream must be whole numbers in [-1, 2**20) (-1: none)")
    if not (np.all(np.isfinite(p)) and np.all(p == np.round(p)) and np.all(p >= 0)):
        raise ValueError("prefix_tokens must be whole numbers ≥ 0")
    p = np.minimum(p, l + o - 1).astype(np.int64)
    s = s.astype(np.int64)
    return s, p


def _workload(*, input_tokens, output_tokens, rate_per_s=None, arrivals=None,
              arrival_s=None, concurrency=None, n_requests=None, seed=None,
              warmup_requests=None):
    """The requests a simulator serves, checked: (send times in ms, or zeros for a closed
    loop; the closed loop's clients, 0 for an open loop; prompt and reply tokens; the
    requests left out as warm-up).  The arguments as ``simulate_serving`` takes them."""
    given = [k for k, v in (("rate_per_s", rate_per_s), ("arrivals", arrivals),
                            ("arrival_s", arrival_s), ("concurrency", concurrency))
             if v is not None]
    if len(given) != 1:
        raise ValueError("give exactly one load: rate_per_s, arrivals, arrival_s or "
                         f"concurrency (got {', '.join(given) or 'none'})")
    rng = np.random.default_rng(seed)
    times = None
    replayed = False
    if arrival_s is not None or (arrivals is not None and not callable(
            getattr(arrivals, "sample", None))):
        times = check_arrival_times(arrival_s if arrival_s is not None else arrivals)
        replayed = True
        if n_requests is not None and int(N_REQUESTS.check(n_requests)) != times.size:
            raise ValueError(f"n_requests = {n_requests} but {times.size} send times given")
        n = times.size
    else:
        n = _count(n_requests, input_tokens, output_tokens)
    closed = 0
    if concurrency is not None:
        if isinstance(concurrency, bool):
            raise ValueError(f"concurrency must be {CONCURRENCY.describe()}, got {concurrency!r}")
        closed = int(CONCURRENCY.check(concurrency, "concurrency"))
    elif times is None:
        if rate_per_s is not None:
            rate = float(RATE_PER_S.check(rate_per_s, "rate_per_s"))
            if math.isinf(rate):
                raise ValueError("rate_per_s = inf: every request at once; give concurrency "
                                 "for a closed loop, or a finite rate")
            arrivals = Poisson(rate)
        times = arrival_times(arrivals, n, rng)
    l = request_lengths(input_tokens, n, rng, "input_tokens")
    o = request_lengths(output_tokens, n, rng, "output_tokens")
    if warmup_requests is None:
        w = 0 if (closed or replayed) else n // 10
    else:
        w = int(WARMUP.check(warmup_requests, "warmup_requests"))
        if w >= n:
            raise ValueError(f"warmup_requests = {w} leaves none of the {n} requests counted")
    arr_ms = np.zeros(n) if times is None else times * 1e3
    return arr_ms, closed, l, o, w


def simulate_serving(cost: StepCost, scheduler: Scheduler, *, input_tokens, output_tokens,
                     rate_per_s=None, arrivals=None, arrival_s=None, concurrency=None,
                     n_requests=None, seed=None, warmup_requests=None,
                     return_records=False, prefix_stream=None, prefix_tokens=None,
                     timeline_steps=0, warm_prefix_cache=None):
    """Serve requests step by step; a ``ServingResult`` (ms, per s).

    Exactly one load: ``rate_per_s`` (Poisson), ``arrivals`` (an ``engine.arrivals``
    process, or send times in s), ``arrival_s`` (replayed send times, s) or
    ``concurrency`` (closed loop, all clients start at 0).  ``input_tokens`` /
    ``output_tokens``: a whole number, one per request, or a law.  ``n_requests``:
    default the trace's length or 20,000.  ``warmup_requests``: left out of the
    summaries (default 0 for a replay and a closed loop, 10 % otherwise).
    ``prefix_stream``/``prefix_tokens`` (one per request or one for all): request i's
    first ``prefix_tokens[i]`` prompt tokens are the first tokens of token stream
    ``prefix_stream[i]`` (−1: shares none; a system prompt of S tokens: stream 0, S; the
    same prompt sent again: the same stream, its length).  ``prefix_tokens`` may run past
    the prompt into the reply (at most prompt + reply − 1): a chat turn whose reply the
    conversation's next turn repeats in its prompt (stream = the conversation).
    ``timeline_steps``: keep the first that many steps as ``result.timeline``.
    ``warm_prefix_cache``: the ``prefix_cache`` a previous run on the same server left
    (its shared-stream blocks; streams are the same numbers across runs), so a set of
    runs taken back to back without a restart can be replayed in order.
    """
    if not isinstance(cost, StepCost):
        raise ValueError(f"cost must be a StepCost, got {type(cost).__name__}")
    if not isinstance(scheduler, Scheduler):
        raise ValueError(f"scheduler must be a Scheduler, got {type(scheduler).__name__}")
    arr_ms, closed, l, o, w = _workload(
        input_tokens=input_tokens, output_tokens=output_tokens, rate_per_s=rate_per_s,
        arrivals=arrivals, arrival_s=arrival_s, concurrency=concurrency,
        n_requests=n_requests, seed=seed, warmup_requests=warmup_requests)
    check_fits(scheduler, l, o)
    n = l.size
    stream, shared = _prefixes(prefix_stream, prefix_tokens, l, o, n)
    run = _serve_requests(cost, scheduler, arr_ms, l, o, closed=closed, warmup=w,
                         stream=stream, shared=shared, timeline_steps=timeline_steps,
                         warm_prefix_cache=warm_prefix_cache)
    return run.result(return_records)


@dataclass(frozen=True, eq=False)
class _ServedRun:
    """What the compiled loop filled for one server (times in ms, per request in send
    order), and its summary (``result``)."""

    arrival_ms: np.ndarray
    start_ms: np.ndarray
    first_ms: np.ndarray
    finish_ms: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    preemptions: np.ndarray
    cached_tokens: np.ndarray
    stats: np.ndarray
    itl_hist: np.ndarray
    timeline: Timeline | None
    prefix_cache: np.ndarray
    kv_blocks: int | None
    warmup: int

    def records(self) -> ServingRecords:
        return ServingRecords(
            arrival_s=_ro(self.arrival_ms / 1e3), first_token_s=_ro(self.first_ms / 1e3),
            finish_s=_ro(self.finish_ms / 1e3), input_tokens=_ro(self.input_tokens),
            output_tokens=_ro(self.output_tokens), preemptions=_ro(self.preemptions),
            cached_tokens=_ro(self.cached_tokens), scheduled_s=_ro(self.start_ms / 1e3))

    def result(self, return_records: bool = False):
        st = self.stats
        end = st[kernel.S_END_MS]
        return summarize(
            self.records(), warmup_requests=self.warmup,
            queue_s=(self.start_ms - self.arrival_ms) / 1e3, itl_hist=self.itl_hist,
            itl_edges_ms=ITL_EDGES_MS,
            mean_running=st[kernel.S_RUN_AREA] / end if end > 0 else 0,
            mean_waiting=st[kernel.S_WAIT_AREA] / end if end > 0 else 0,
            kv_peak_fraction=(None if self.kv_blocks is None
                              else st[kernel.S_PEAK_BLOCKS] / self.kv_blocks),
            steps=int(st[kernel.S_STEPS]), timeline=self.timeline,
            keep_records=return_records, prefix_cache=self.prefix_cache)


def _serve_requests(cost: StepCost, scheduler: Scheduler, arrival_ms, l, o, *, closed=0,
                   warmup=0, stream=None, shared=None, ready=None, first_in_ms=None,
                   timeline_steps=0, warm_prefix_cache=None) -> _ServedRun:
    """One server's compiled run over checked arrays: send times (ms, sorted), prompt
    and reply tokens; ``ready`` > 0: tokens a request brings already computed (its first
    token out at ``first_in_ms``: a disaggregated decode instance)."""
    n = l.size
    arr_ms = np.array(arrival_ms, dtype=float)
    vis = arr_ms + cost.frontend_ms
    stream = np.full(n, -1, np.int64) if stream is None else stream
    shared = np.zeros(n, np.int64) if shared is None else shared
    ready = np.zeros(n, np.int64) if ready is None else np.asarray(ready, np.int64)
    first_in = np.full(n, np.nan) if first_in_ms is None else np.asarray(first_in_ms, float)
    start = np.full(n, np.nan)
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    n_pre = np.zeros(n, np.int64)
    cached = np.zeros(n, np.int64)
    stats = np.zeros(kernel.N_STATS)
    hist = np.zeros(kernel.ITL_BINS, np.int64)
    k = max(int(timeline_steps), 0)
    tl = (np.zeros(k), np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64),
          np.zeros(k, np.int64))
    blocks = scheduler.kv_blocks
    warm = _warm_keys(warm_prefix_cache, scheduler)
    out_keys = np.zeros(0 if blocks is None or not scheduler.prefix_caching else blocks,
                        np.int64)
    if scheduler.prefix_caching:
        rows = blocks if blocks is not None else min(
            int(np.sum((l + o) // scheduler.block_size + 1)), MAX_UNBOUNDED_CACHED_BLOCKS)
        cache = blockcache.new_cache(rows)
    else:
        cache = blockcache.new_cache(1)
    hit_rows = np.empty(int(np.max(l + o)) // scheduler.block_size + 1, np.int64)
    kernel.serve(arr_ms, vis, int(closed), l, o, stream, shared, scheduler.watermark_blocks,
                 cost.as_array(),
                 scheduler.max_num_seqs, scheduler.max_num_batched_tokens,
                 -1 if blocks is None else blocks, scheduler.block_size,
                 scheduler.chunked_prefill, scheduler.prefix_caching, int(warmup), start,
                 first, finish, n_pre, cached, stats, hist, *tl, warm, out_keys, *cache,
                 hit_rows, ready, first_in)
    if stats[kernel.S_ERROR] != 0:      # pragma: no cover - a broken invariant
        raise RuntimeError(f"the serving simulator stopped with {int(np.sum(finish >= 0))} of "
                           f"{n} requests served (code {stats[kernel.S_ERROR]:g})")
    kept = int(stats[kernel.S_TIMELINE])
    timeline = None
    if k:
        timeline = Timeline(_ro(tl[0][:kept] / 1e3), _ro(tl[1][:kept]), _ro(tl[2][:kept]),
                            _ro(tl[3][:kept]), _ro(tl[4][:kept]), blocks)
    return _ServedRun(arr_ms, start, first, finish, l, o, n_pre, cached, stats, hist, timeline,
                     _ro(out_keys[:int(stats[kernel.S_CACHED_OUT])]), blocks, int(warmup))


class _Totals:
    """Several servers' runs summed (a fleet, a disaggregated server's decode side): the
    ITL histogram, the running requests' area, the last step's end, the fullest KV."""

    def __init__(self):
        self.hist = np.zeros(kernel.ITL_BINS, np.int64)
        self.area = self.end = self.peak = 0.0

    def add(self, run: "_ServedRun") -> None:
        self.hist += run.itl_hist
        st = run.stats
        self.area += st[kernel.S_RUN_AREA]
        self.end = max(self.end, st[kernel.S_END_MS])
        if run.kv_blocks:
            self.peak = max(self.peak, st[kernel.S_PEAK_BLOCKS] / run.kv_blocks)

    def result(self, records: ServingRecords, *, warmup, queue_s, scheduler: Scheduler,
               keep_records, notes, span_ms=None):
        span = self.end if span_ms is None else span_ms
        return summarize(records, warmup_requests=warmup, queue_s=queue_s,
                         itl_hist=self.hist, itl_edges_ms=ITL_EDGES_MS,
                         mean_running=self.area / span if span > 0 else 0.0,
                         kv_peak_fraction=self.peak if scheduler.kv_blocks is not None
                         else None, keep_records=keep_records, notes=notes)


def _warm_keys(warm, scheduler: Scheduler) -> np.ndarray:
    """The cached blocks a run starts with (oldest first), at most the cache's size."""
    if warm is None or len(warm) == 0:
        return np.zeros(0, np.int64)
    if scheduler.kv_blocks is None or not scheduler.prefix_caching:
        raise ValueError("warm_prefix_cache needs a bounded KV cache with prefix_caching on")
    keys = np.asarray(warm)
    if keys.dtype != np.int64 or keys.ndim != 1:
        raise ValueError("warm_prefix_cache must be the prefix_cache of a previous result")
    return keys[-scheduler.kv_blocks:]


def _ro(a):
    a = np.asarray(a)
    a.setflags(write=False)
    return a


def _count(n_requests, *lengths) -> int:
    for x in lengths:
        if not _is_law(x) and np.ndim(x) == 1:
            n = len(x)
            if n_requests is not None and int(N_REQUESTS.check(n_requests)) != n:
                raise ValueError(f"n_requests = {n_requests} but {n} token counts given")
            return n
    if n_requests is None:
        return DEFAULT_REQUESTS
    return int(N_REQUESTS.check(n_requests, "n_requests"))
