"""Discrete-event simulator of the LLM batching strategies (Yang et al. §IV, Orca/vLLM).

One GPU, FIFO queue, Poisson arrivals (or any process or trace, ``arrivals``), i.i.d.
output token counts drawn by inversion (the same ``seed`` gives every strategy the same
arrivals and tokens);
batch times from eq 18.  Strategies: dynamic, fixed, elastic (eq 26) and
continuous (iteration-level) batching; the rules are in
docs/models/llm_batching.md.  Times in seconds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.arrival_input import arrival_times, check_arrival_times, is_arrival_process
from ..core.domains import (LAM_PER_S, LLM_BATCH, LLM_KV_CAPACITY, LLM_PROMPT_TOKENS, N_JOBS,
                            WARMUP, check_b_max)
from ..core.jit import BACKEND, choose, compiled
from ..core.stats import N_GROUPS, PERCENTILES, ci95_half_width, percentiles
from .batch_times import check_dist, check_k, mean_batch_time
from .stability import STRATEGIES

__all__ = ["BACKEND", "STRATEGIES", "LLMSimRecords", "LLMSimResult", "simulate"]

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


def _continuous_loop(arr, tok, cap, kv_cap, prompt, k1, k2, k3, k4, start, finish, acc):
    """Iteration-level batching as a fluid; ``acc`` gets (busy time, ∫R dt, decode time)."""
    n = arr.size
    run = np.empty(n, dtype=np.int64)
    target = np.empty(n)
    r_count = 0
    qi = 0
    t = 0.0
    g = 0.0                    # tokens decoded by every running request so far
    kv = 0.0
    busy = 0.0
    area = 0.0
    decode = 0.0
    while qi < n or r_count > 0:
        m = 0                  # requests whose tokens are all decoded leave now
        while m < r_count:
            if target[m] <= g:
                job = run[m]
                finish[job] = t
                kv -= prompt + tok[job]
                r_count -= 1
                run[m] = run[r_count]
                target[m] = target[r_count]
            else:
                m += 1
        if r_count == 0:
            if qi >= n:
                break
            t = max(t, arr[qi])
        joined = 0
        while qi < n and arr[qi] <= t and r_count < cap and (
                kv + prompt + tok[qi] <= kv_cap or r_count == 0):
            start[qi] = t
            run[r_count] = qi
            target[r_count] = g + tok[qi]
            kv += prompt + tok[qi]
            r_count += 1
            joined += 1
            qi += 1
        if joined > 0:         # a prefill iteration: the joiners get their first token
            step = k1 * joined + k2
            t += step
            busy += step
            continue
        per_token = k3 * r_count + k4
        g_min = target[0]
        for m in range(1, r_count):
            g_min = min(g_min, target[m])
        dt = (g_min - g) * per_token
        admissible = qi < n and arr[qi] > t and r_count < cap
        if admissible and arr[qi] < t + dt:
            dt = arr[qi] - t
            g = g + dt / per_token if per_token > 0 else g_min
            t = arr[qi]
        else:
            t += dt
            g = g_min
        busy += dt
        area += r_count * dt
        decode += dt
    acc[0] = busy
    acc[1] = area
    acc[2] = decode


_batch_loop_fast = compiled(_batch_loop)
_continuous_loop_fast = compiled(_continuous_loop)


@dataclass(frozen=True)
class LLMSimRecords:
    """Tidy sample path: per request and (batch strategies) per batch; seconds, tokens."""

    arrival: np.ndarray
    tokens: np.ndarray
    start: np.ndarray          # NaN for requests never served (fixed: incomplete last batch)
    finish: np.ndarray
    batch_start: np.ndarray    # empty for continuous batching
    batch_end: np.ndarray
    batch_size: np.ndarray


@dataclass(frozen=True)
class LLMSimResult:
    """Summary of one run after the warm-up (seconds; batch sizes in requests)."""

    mean_wait: float           # arrival to the start of the request's batch / prefill
    mean_sojourn: float        # arrival to the request's departure
    p99_sojourn: float
    ci95_wait: float           # 95% CI half-widths from batch means
    ci95_sojourn: float
    mean_batch_size: float     # per batch; continuous: time-average of running sequences
                               # (requests per prefill when decoding takes no time)
    utilization: float         # fraction of time the GPU computes
    n_jobs: int                # requests counted
    ci_reliable: bool = True
    records: LLMSimRecords | None = None
    p50: float = float("nan")  # latency (sojourn) percentiles, s
    p95: float = float("nan")

    # the summary vocabulary shared by every simulator (latency = sojourn here)
    mean_latency = property(lambda self: self.mean_sojourn, doc="mean wait + processing, s")
    ci95 = property(lambda self: self.ci95_sojourn, doc="95% CI half-width of mean_latency, s")
    p99 = property(lambda self: self.p99_sojourn, doc="99th-percentile latency, s")


def _draw(lam, dist, n, seed, source=None):
    """Arrival times (Poisson at ``lam``, or from ``source``: a checked trace of n times
    or a process) and token counts."""
    rng = np.random.default_rng(seed)
    if source is None:
        arrivals = np.cumsum(rng.standard_exponential(n)) / lam
    else:
        arrivals = source if isinstance(source, np.ndarray) else arrival_times(source, n, rng)
    u = rng.random(n)
    tokens = np.asarray(dist.ppf(u), dtype=float)
    isf = getattr(dist, "isf", None)
    if callable(isf):
        upper = u > 0.5
        tokens[upper] = np.asarray(isf(1.0 - u[upper]), dtype=float)
    if not np.all(np.isfinite(tokens)) or np.any(tokens < 0):
        raise ValueError("dist: drawn token counts must be finite and >= 0")
    return arrivals, tokens


def simulate(strategy, lam, dist, k, b=None, b_max=None, n_jobs=100_000, seed=None, *,
             kv_capacity_tokens=None, prompt_tokens=0.0, batch_time="realised",
             warmup_jobs=None, return_records=False, backend=None,
             arrivals=None) -> LLMSimResult:
    """Simulate one batching strategy from an empty system and summarise it.

    ``strategy``: "dynamic", "fixed" (needs ``b``), "elastic" or "continuous".
    ``b_max``: cap on the batch (dynamic, elastic) or on running sequences
    (continuous); None is unlimited.  ``kv_capacity_tokens``/``prompt_tokens``:
    the KV cache of continuous batching (None: unlimited).  ``batch_time``:
    "realised" (H of the batch's longest request) or "mean" (H(b, E[L_b]), for
    fixed batching or a finite b_max).  ``warmup_jobs`` (default n_jobs // 10)
    are left out.  ``seed``: anything ``numpy.random.default_rng`` accepts.

    ``arrivals`` (docs/models/llm_batching.md): None is Poisson at ``lam``; a sorted
    array of times (s) is replayed, one request per time, so ``n_jobs`` is its length
    and ``lam`` is ignored; an arrival process (``rate`` per s and ``sample(n, rng)``,
    e.g. ``engine.arrivals.MMPP2``) gives ``n_jobs`` arrivals at its own rate, ``lam``
    ignored (None allowed).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
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
    if batch_time not in ("realised", "mean"):
        raise ValueError(f"batch_time must be 'realised' or 'mean', got {batch_time!r}")
    htab = np.empty(0)
    if batch_time == "mean":
        if strategy not in ("fixed", "dynamic") or limit > 4096:
            raise ValueError("batch_time='mean' needs fixed batching or dynamic with b_max <= 4096")
        htab = np.asarray(mean_batch_time(np.arange(1, limit + 1), dist, k), dtype=float)
    kv_cap = np.inf if kv_capacity_tokens is None else float(
        LLM_KV_CAPACITY.check(kv_capacity_tokens))
    prompt = float(LLM_PROMPT_TOKENS.check(prompt_tokens))
    warmup = n // 10 if warmup_jobs is None else int(WARMUP.check(warmup_jobs))
    batch_loop = choose(backend, _batch_loop_fast, _batch_loop)
    continuous_loop = choose(backend, _continuous_loop_fast, _continuous_loop)

    arrivals, tokens = _draw(lam, dist, n, seed, source)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    if strategy == "continuous":
        acc = np.zeros(3)
        continuous_loop(arrivals, tokens, limit, kv_cap, prompt, k1, k2, k3, k4, start, finish, acc)
        served = n
        b_start = b_end = np.empty(0)
        b_size = np.empty(0, dtype=np.int64)
        horizon = np.nanmax(finish) - arrivals[0]
        util = acc[0] / horizon if horizon > 0 else 1.0
        # with no decode time (k3 = k4 = 0) the only batches are the prefill joins
        mean_size = acc[1] / acc[2] if acc[2] > 0 else n / np.unique(start).size
    else:
        b_start, b_end = np.empty(n), np.empty(n)
        b_size = np.empty(n, dtype=np.int64)
        served, nb = batch_loop(arrivals, tokens, _MODE[strategy], limit, k1, k2, k3, k4, htab,
                          start, finish, b_start, b_end, b_size)
        b_start, b_end, b_size = b_start[:nb], b_end[:nb], b_size[:nb]
        if served == 0:            # fixed batching: fewer than b requests ever arrived
            records = (LLMSimRecords(arrivals, tokens, start, finish, b_start, b_end, b_size)
                       if return_records else None)
            return LLMSimResult(np.inf, np.inf, np.inf, np.inf, np.inf, 0.0, 0.0, 0,
                                ci_reliable=False, records=records, p50=np.inf, p95=np.inf)
        # batches from the first counted arrival on (a warm-up beyond the run keeps the last)
        kept = b_start >= arrivals[min(warmup, served - 1)]
        horizon = b_end[kept].max() - b_start[kept].min() if kept.any() else 0.0
        util = float((b_end[kept] - b_start[kept]).sum() / horizon) if horizon > 0 else 1.0
        mean_size = float(b_size[kept].mean()) if kept.any() else float("nan")
    warmup = min(warmup, served - 1)
    counted = served - warmup
    wait = start[warmup:served] - arrivals[warmup:served]
    soj = finish[warmup:served] - arrivals[warmup:served]
    edges = np.arange(N_GROUPS + 1) * counted // N_GROUPS
    if counted >= N_GROUPS:
        ci_soj, reliable = ci95_half_width(np.add.reduceat(soj, edges[:-1]), counted)
        ci_wait, _ = ci95_half_width(np.add.reduceat(wait, edges[:-1]), counted)
    else:
        ci_soj, ci_wait, reliable = float("inf"), float("inf"), False
    p50, p95, p99 = (float(x) for x in percentiles(soj.copy(), PERCENTILES))
    records = None
    if return_records:
        records = LLMSimRecords(arrivals, tokens, start, finish, b_start, b_end, b_size)
    return LLMSimResult(
        mean_wait=float(wait.mean()), mean_sojourn=float(soj.mean()), p99_sojourn=p99,
        ci95_wait=ci_wait, ci95_sojourn=ci_soj, mean_batch_size=float(mean_size),
        utilization=float(util), n_jobs=int(counted), ci_reliable=reliable, records=records,
        p50=p50, p95=p95)
