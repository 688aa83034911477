"""Discrete-event simulator of the LLM batching strategies (Yang et al. §IV, Orca/vLLM).

One GPU, FIFO queue, Poisson arrivals (or any process or trace, ``arrivals``), i.i.d.
output token counts drawn by inversion (the same ``seed`` gives every strategy the same
arrivals and tokens);
batch times from eq 18.  Strategies: dynamic, fixed, elastic (eq 26) and
continuous (iteration-level) batching, which runs on the LLM serving simulator
(``engine.llm_serving.simulate_serving``: vLLM's scheduler without chunked prefill,
``continuous_serving`` maps eq 18 onto its step cost); the rules are in
docs/models/llm_batching.md.  Times in seconds.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core.arrival_input import check_arrival_times, is_arrival_process
from ..core.domains import (KV_CACHE_TOKENS, LAM_PER_S, LLM_BATCH, LLM_BATCH_TIME,
                            LLM_KV_CAPACITY, LLM_PROMPT_TOKENS, LLM_STRATEGY, MAX_BATCHED_TOKENS,
                            MAX_NUM_SEQS, N_JOBS, SERVING_TOKENS, WARMUP, check_b_max)
from ..core.jit import BACKEND, choose, compiled
from ..core.records import drawn_arrivals, summary_of, warmup_count
from ..core.renamed import renamed_attribute
from ..core.stats import N_GROUPS, ci95_half_width
from ..llm_serving.cost import StepCost
from ..llm_serving.scheduler import Scheduler
from ..llm_serving.sim import simulate_serving
from .batch_times import check_dist, check_k, mean_batch_time
from .stability import STRATEGIES

__all__ = ["BACKEND", "STRATEGIES", "LLMSimRecords", "LLMSimResult", "continuous_serving",
           "llm_sim_summary", "simulate", "simulate_records"]

# continuous batching on the serving simulator: the largest values its scheduler takes
MAX_SEQS = int(MAX_NUM_SEQS.high)                 # b_max None (or larger): 10^6 running at once
NO_TOKEN_BUDGET = int(MAX_BATCHED_TOKENS.high)    # 10^8 prompt tokens a step: no budget
MAX_TOKENS = int(SERVING_TOKENS.high)             # 10^7 tokens a prompt or reply
MAX_KV_TOKENS = KV_CACHE_TOKENS.high              # a larger KV cache never binds: unbounded

_MODE = {"dynamic": 0, "fixed": 1, "elastic": 2}


def _batch_loop(arr, tok, mode, cap, k1, k2, k3, k4, htab, start, finish, b_start, b_end,
                b_size):
    """Serve batches (mode 0 dynamic, 1 fixed, 2 elastic); returns (jobs served, batches)."""
    n = arr.size
    i = 0
    nb = 0
    t_free = 0.0
    while i < n:
        if mode == 1:
            if i + cap > n:
                break
            t = max(t_free, arr[i + cap - 1])
            j = i + cap
        else:
            t = max(t_free, arr[i])
            j = i + 1
            while j < n and j - i < cap and arr[j] <= t:
                j += 1
        size = j - i
        if mode == 2:
            order = np.argsort(tok[i:j])
            tt = t + k1 * size + k2
            prev = 0.0
            for r in range(size):
                m = i + order[r]
                tt += (k3 * (size - r) + k4) * (tok[m] - prev)
                prev = tok[m]
                start[m] = t
                finish[m] = tt
            end = tt
        else:
            if htab.size > 0:
                h = htab[size - 1]
            else:
                longest = 0.0
                for m in range(i, j):
                    longest = max(longest, tok[m])
                h = k1 * size + k2 + (k3 * size + k4) * longest
            end = t + h
            for m in range(i, j):
                start[m] = t
                finish[m] = end
        b_start[nb] = t
        b_end[nb] = end
        b_size[nb] = size
        nb += 1
        t_free = end
        i = j
    return i, nb


_batch_loop_fast = compiled(_batch_loop)


def continuous_serving(k, tokens, b_max=None, kv_capacity_tokens=None, prompt_tokens=0.0):
    """Continuous batching as the LLM serving simulator runs it: ``(cost, scheduler,
    prompt, replies)`` for ``engine.llm_serving.simulate_serving`` (``StepCost``,
    ``Scheduler``, the prompt tokens of every request, one reply count per drawn token
    count of ``tokens``).

    Eq 18's laws become the step cost: a prompt-only step of j joining requests takes
    k1·j + k2 s (``prefill_base_ms`` = 1000·k2, ``prefill_ms_per_token`` = 1000·k1/l for
    prompts of l tokens), a decode step of R running requests k3·R + k4 s (``base_ms`` =
    1000·k4, ``decode_ms_per_seq`` = 1000·k3).  l = ``prompt_tokens`` rounded, at least 1
    (a prompt of 0 tokens is modelled as 1).  The scheduler is vLLM's without chunked
    prefill (whole prompts in prompt-only steps), no token budget (10^8 tokens a step),
    ``max_num_seqs`` = ``b_max`` (10^6 when None or larger), the KV cache in blocks of
    1 token (tokens counted exactly), no prefix cache, no watermark.  A reply of N drawn
    tokens has max(1, ⌈N⌉) tokens (at most 10^7; vLLM's convention: the prompt step emits
    the first, so 1 prompt step and ⌈N⌉ − 1 decode steps).  The KV cache is
    ⌊``kv_capacity_tokens``⌋, raised where needed to the largest request's l + n − 1
    tokens (vLLM refuses a request its whole cache cannot hold; the fluid model this
    replaces ran it alone); None or above 10^10 tokens: unbounded.
    """
    k1, k2, k3, k4 = check_k(k)
    cap = check_b_max(b_max)
    if cap.ndim:
        raise ValueError("b_max must be a single value to simulate")
    kv = (np.inf if kv_capacity_tokens is None
          else float(LLM_KV_CAPACITY.check(kv_capacity_tokens)))
    p = float(LLM_PROMPT_TOKENS.check(prompt_tokens))
    if p > MAX_TOKENS:
        raise ValueError(f"prompt_tokens: continuous batching runs on the LLM serving "
                         f"simulator, which takes prompts of at most {MAX_TOKENS:,} tokens, "
                         f"got {p:g}")
    prompt = max(1, int(round(p)))
    n = np.asarray(tokens, dtype=float)
    if n.ndim != 1 or not np.all(np.isfinite(n)) or np.any(n < 0):
        raise ValueError("tokens: one finite count >= 0 per request")
    replies = np.minimum(np.maximum(np.ceil(n), 1.0), MAX_TOKENS).astype(np.int64)
    cost = StepCost(base_ms=1e3 * k4, prefill_base_ms=1e3 * k2,
                    prefill_ms_per_token=1e3 * k1 / prompt, decode_ms_per_seq=1e3 * k3,
                    label="Yang et al. eq 18: prompt step k1·j + k2, decode step k3·R + k4")
    kv_tokens = None
    if kv <= MAX_KV_TOKENS:
        largest = prompt + int(replies.max(initial=1)) - 1
        kv_tokens = max(int(np.floor(kv)), largest)
    scheduler = Scheduler(max_num_seqs=MAX_SEQS if cap > MAX_SEQS else int(cap),
                          max_num_batched_tokens=NO_TOKEN_BUDGET, kv_cache_tokens=kv_tokens,
                          block_size=1, chunked_prefill=False, prefix_caching=False)
    return cost, scheduler, prompt, replies


def _continuous(arrivals, tokens, k, b_max, kv, prompt):
    """Continuous batching on the serving simulator: (start, finish, busy time, ∫R dt,
    prompt steps), seconds.  ``start``: the start of the request's first prompt step (the
    serving simulator's first scheduling)."""
    cost, scheduler, l, o = continuous_serving(k, tokens, b_max, kv, prompt)
    res = simulate_serving(cost, scheduler, input_tokens=l, output_tokens=o,
                           arrival_s=arrivals, warmup_requests=0, return_records=True)
    rec = res.records
    first = np.asarray(rec.first_token_s, dtype=float)
    joined = np.unique(first).size
    # waits and sojourns on the serving simulator's own clock (ms / 1000, where first
    # scheduling ≥ send holds exactly), then from this run's arrivals: never negative
    sent = np.asarray(rec.arrival_s, dtype=float)
    wait = np.maximum(np.asarray(rec.scheduled_s, dtype=float) - sent, 0.0)
    start = arrivals + wait
    finish = arrivals + (np.asarray(rec.finish_s, dtype=float) - sent)
    # the GPU computes whenever a request is in the system: busy = |∪ [arrival, finish]|
    reach = np.maximum.accumulate(finish)
    opens = np.concatenate(([True], arrivals[1:] > reach[:-1]))
    ends = np.append(reach[np.flatnonzero(opens)[1:] - 1], reach[-1])
    busy = float(np.sum(ends - arrivals[opens]))
    area = float(res.mean_running) * float(finish.max())
    return start, finish, busy, area, joined


@dataclass(frozen=True)
class LLMSimRecords:
    """Tidy sample path of one run (``simulate_records``): per request and (batch
    strategies) per batch, seconds and tokens; what ``llm_sim_summary`` summarises.

    ``warmup``: the requests left out at the start; ``served``: the requests served (a
    prefix: fixed batching leaves an incomplete last batch unserved; −1: all with a
    finish).  The GPU's busy time ``busy_s``, the integral of the running requests over
    time ``running_area_s`` (request·s) and the ``steps`` (batches; continuous batching:
    its prompt steps) cover the whole run."""

    arrival_s: np.ndarray
    tokens: np.ndarray
    start_s: np.ndarray        # NaN for requests never served (fixed: incomplete last batch)
    finish_s: np.ndarray
    batch_start_s: np.ndarray  # empty for continuous batching
    batch_end_s: np.ndarray
    batch_size: np.ndarray
    strategy: str = ""
    warmup: int = 0
    served: int = -1
    busy_s: float = float("nan")
    running_area_s: float = float("nan")
    steps: int = 0

    # the names before the unit was added: read with a DeprecationWarning
    arrival = renamed_attribute("arrival_s")
    start = renamed_attribute("start_s")
    finish = renamed_attribute("finish_s")
    batch_start = renamed_attribute("batch_start_s")
    batch_end = renamed_attribute("batch_end_s")

    @property
    def n_served(self) -> int:
        """Requests served (``served``, or those with a finish when −1)."""
        return int(np.count_nonzero(np.isfinite(self.finish_s))) if self.served < 0 \
            else self.served


@dataclass(frozen=True)
class LLMSimResult:
    """Summary of one run after the warm-up (seconds; batch sizes in requests).  The
    shared summary vocabulary reads the sojourn as the latency (``mean_latency_s``,
    ``ci95_s``, ``p99_s``); the names without a unit still read, with a warning."""

    mean_wait_s: float         # arrival to the start of the request's batch / prefill
    mean_sojourn_s: float      # arrival to the request's departure
    p99_sojourn_s: float
    ci95_wait_s: float         # 95% CI half-widths from batch means
    ci95_sojourn_s: float
    mean_batch_size: float     # per batch; continuous: time-average of running sequences
                               # while the GPU computes (prompt and decode steps)
    utilization: float         # fraction of time the GPU computes
    n_jobs: int                # requests counted
    ci_reliable: bool = True
    records: LLMSimRecords | None = None
    p50_s: float = float("nan")  # latency (sojourn) percentiles, s
    p95_s: float = float("nan")

    # the summary vocabulary shared by every simulator (latency = sojourn here)
    mean_latency_s = property(lambda self: self.mean_sojourn_s, doc="mean wait + processing, s")
    ci95_s = property(lambda self: self.ci95_sojourn_s, doc="95% CI half-width of the latency, s")
    p99_s = property(lambda self: self.p99_sojourn_s, doc="99th-percentile latency, s")

    # the names before the unit was added: read with a DeprecationWarning
    mean_wait = renamed_attribute("mean_wait_s")
    mean_sojourn = renamed_attribute("mean_sojourn_s")
    p99_sojourn = renamed_attribute("p99_sojourn_s")
    ci95_wait = renamed_attribute("ci95_wait_s")
    ci95_sojourn = renamed_attribute("ci95_sojourn_s")
    p50 = renamed_attribute("p50_s")
    p95 = renamed_attribute("p95_s")
    mean_latency = renamed_attribute("mean_latency_s")
    ci95 = renamed_attribute("ci95_s")
    p99 = renamed_attribute("p99_s")


def _tokens(dist, rng, n):
    """``n`` token counts drawn by inversion (``isf`` in the upper half, where it is
    more accurate)."""
    u = rng.random(n)
    tokens = np.asarray(dist.ppf(u), dtype=float)
    isf = getattr(dist, "isf", None)
    if callable(isf):
        upper = u > 0.5
        tokens[upper] = np.asarray(isf(1.0 - u[upper]), dtype=float)
    if not np.all(np.isfinite(tokens)) or np.any(tokens < 0):
        raise ValueError("dist: drawn token counts must be finite and >= 0")
    return tokens


def simulate_records(strategy, lam, dist, k, b=None, b_max=None, n_jobs=100_000, seed=None, *,
                     kv_capacity_tokens=None, prompt_tokens=0.0, batch_time="realised",
                     warmup_jobs=None, backend=None, arrivals=None) -> LLMSimRecords:
    """The ``LLMSimRecords`` of one run (arguments as ``simulate``): the shared preamble
    (``core.records.drawn_arrivals``, ``warmup_count``), the token counts, then every
    request through the strategy."""
    LLM_STRATEGY.check(strategy)
    if arrivals is None:
        lam = float(LAM_PER_S.check(lam))
        if not 0.0 < lam < np.inf:
            raise ValueError(f"lam must be a positive finite rate to simulate, got {lam:g}")
    k1, k2, k3, k4 = check_k(k)
    check_dist(dist)
    source = (arrivals if arrivals is None or is_arrival_process(arrivals)
              else check_arrival_times(arrivals))
    n = int(N_JOBS.check(n_jobs)) if not isinstance(source, np.ndarray) else source.size
    cap = check_b_max(b_max)
    if cap.ndim:
        raise ValueError("b_max must be a single value to simulate")
    limit = n if np.isinf(cap) else int(cap)
    if strategy == "fixed":
        if b is None:
            raise ValueError("b: fixed batching needs a batch size")
        limit = int(LLM_BATCH.check(b))
    LLM_BATCH_TIME.check(batch_time)
    htab = np.empty(0)
    if batch_time == "mean":
        if strategy not in ("fixed", "dynamic") or limit > 4096:
            raise ValueError("batch_time='mean' needs fixed batching or dynamic with b_max <= 4096")
        htab = np.asarray(mean_batch_time(np.arange(1, limit + 1), dist, k), dtype=float)
    if kv_capacity_tokens is not None:
        LLM_KV_CAPACITY.check(kv_capacity_tokens)
    prompt = float(LLM_PROMPT_TOKENS.check(prompt_tokens))
    warmup = n // 10 if warmup_jobs is None else int(WARMUP.check(warmup_jobs))
    batch_loop = choose(backend, _batch_loop_fast, _batch_loop)

    rng = np.random.default_rng(seed)
    # Poisson: unit-rate times scaled by 1/λ (the times this simulator always drew)
    times = (drawn_arrivals(1.0, n, rng) / lam if source is None
             else drawn_arrivals(None, n, rng, source))
    tokens = _tokens(dist, rng, n)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    if strategy == "continuous":
        start, finish, busy, area, steps = _continuous(times, tokens, (k1, k2, k3, k4),
                                                       b_max, kv_capacity_tokens, prompt)
        empty = np.empty(0)
        return LLMSimRecords(times, tokens, start, finish, empty, empty,
                             np.empty(0, dtype=np.int64), strategy, warmup_count(n, warmup),
                             n, busy, area, steps)
    b_start, b_end = np.empty(n), np.empty(n)
    b_size = np.empty(n, dtype=np.int64)
    served, nb = batch_loop(times, tokens, _MODE[strategy], limit, k1, k2, k3, k4, htab,
                            start, finish, b_start, b_end, b_size)
    b_start, b_end, b_size = b_start[:nb], b_end[:nb], b_size[:nb]
    took = b_end - b_start
    return LLMSimRecords(times, tokens, start, finish, b_start, b_end, b_size, strategy,
                         warmup_count(max(served, 1), warmup), int(served),
                         float(took.sum()), float((b_size * took).sum()), int(nb))


def llm_sim_summary(records: LLMSimRecords) -> LLMSimResult:
    """The summary of a run's records after its warm-up: mean wait and latency with their
    95 % half-widths by batch means (``core.stats.ci95_half_width``), the latency's
    percentiles (``core.records.summary_of``), the mean batch size and the GPU's busy
    share (batch strategies: over the batches from the first counted arrival on;
    continuous: the running requests averaged over its busy time)."""
    r = records
    served, warmup = r.n_served, r.warmup
    arrivals = r.arrival_s
    if served == 0:            # fixed batching: fewer than b requests ever arrived
        return LLMSimResult(np.inf, np.inf, np.inf, np.inf, np.inf, 0.0, 0.0, 0,
                            ci_reliable=False, p50_s=np.inf, p95_s=np.inf)
    if r.strategy == "continuous":
        horizon = np.nanmax(r.finish_s) - arrivals[0]
        util = r.busy_s / horizon if horizon > 0 else 1.0
        # running requests averaged over the GPU's busy time (prompt and decode steps);
        # with no step time at all (k below rounding) the requests per prompt step
        mean_size = (r.running_area_s / r.busy_s if r.busy_s > 0 and r.running_area_s > 0
                     else served / r.steps)
    else:
        # batches from the first counted arrival on (a warm-up beyond the run keeps the last)
        kept = r.batch_start_s >= arrivals[warmup]
        horizon = r.batch_end_s[kept].max() - r.batch_start_s[kept].min() if kept.any() else 0.0
        util = (float((r.batch_end_s[kept] - r.batch_start_s[kept]).sum() / horizon)
                if horizon > 0 else 1.0)
        mean_size = float(r.batch_size[kept].mean()) if kept.any() else float("nan")
    counted = served - warmup
    wait = r.start_s[warmup:served] - arrivals[warmup:served]
    soj = r.finish_s[warmup:served] - arrivals[warmup:served]
    edges = np.arange(N_GROUPS + 1) * counted // N_GROUPS
    if counted >= N_GROUPS:
        ci_soj, reliable = ci95_half_width(np.add.reduceat(soj, edges[:-1]), counted)
        ci_wait, _ = ci95_half_width(np.add.reduceat(wait, edges[:-1]), counted)
    else:
        ci_soj, ci_wait, reliable = float("inf"), float("inf"), False
    latency = summary_of(soj)
    return LLMSimResult(
        mean_wait_s=float(wait.mean()), mean_sojourn_s=latency.mean,
        p99_sojourn_s=latency.p99, ci95_wait_s=ci_wait, ci95_sojourn_s=ci_soj,
        mean_batch_size=float(mean_size), utilization=float(util), n_jobs=int(counted),
        ci_reliable=reliable, p50_s=latency.p50, p95_s=latency.p95)


def simulate(strategy, lam, dist, k, b=None, b_max=None, n_jobs=100_000, seed=None, *,
             kv_capacity_tokens=None, prompt_tokens=0.0, batch_time="realised",
             warmup_jobs=None, return_records=False, backend=None,
             arrivals=None) -> LLMSimResult:
    """Simulate one batching strategy from an empty system and summarise it
    (``llm_sim_summary`` of ``simulate_records``; the records kept with
    ``return_records``).

    ``strategy``: "dynamic", "fixed" (needs ``b``), "elastic" or "continuous" (run on
    ``engine.llm_serving.simulate_serving``, mapped by ``continuous_serving``; replies of
    max(1, ⌈N⌉) tokens, vLLM's convention).
    ``b_max``: cap on the batch (dynamic, elastic) or on running sequences
    (continuous); None is unlimited.  ``kv_capacity_tokens``/``prompt_tokens``:
    the KV cache of continuous batching (None: unlimited).  ``batch_time``:
    "realised" (H of the batch's longest request) or "mean" (H(b, E[L_b]), for
    fixed batching or a finite b_max).  ``warmup_jobs`` (default n_jobs // 10)
    are left out.  ``seed``: anything ``numpy.random.default_rng`` accepts.
    ``backend`` picks the loop of the batch strategies (the serving simulator is
    compiled whenever numba is installed).

    ``arrivals`` (docs/models/llm_batching.md): None is Poisson at ``lam``; a sorted
    array of times (s) is replayed, one request per time, so ``n_jobs`` is its length
    and ``lam`` is ignored; an arrival process (``rate`` per s and ``sample(n, rng)``,
    e.g. ``engine.arrivals.MMPP2``) gives ``n_jobs`` arrivals at its own rate, ``lam``
    ignored (None allowed).
    """
    records = simulate_records(strategy, lam, dist, k, b, b_max, n_jobs, seed,
                               kv_capacity_tokens=kv_capacity_tokens,
                               prompt_tokens=prompt_tokens, batch_time=batch_time,
                               warmup_jobs=warmup_jobs, backend=backend, arrivals=arrivals)
    result = llm_sim_summary(records)
    return replace(result, records=records) if return_records else result
