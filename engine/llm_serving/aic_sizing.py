"""AIConfigurator's own sizing rule (``cli recommend``, aggregated vLLM worker) written
out on a lab ``StepCost``: ⌈rate / one replica's mean-value rate at its best batch⌉,
means only, no queue (``aiconfigurator_replicas`` → ``AicSizing``).  Needs no
AIConfigurator package: its batch schedule and prompt budgets are written out here.
Derivations and the numbers of the benchmark: docs/models/llm_serving.md
("AIConfigurator bridge").
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from ..core.domains import (KV_CACHE_TOKENS, MAX_BATCHED_TOKENS, MAX_NUM_SEQS, RATE_PER_S,
                            SERVING_TOKENS, STEP_MS, TARGET_MS)
from .cost import StepCost

__all__ = ["aiconfigurator_replicas", "AicSizing"]

# AIConfigurator 0.12.0, aiconfigurator/sdk/sweep.py: _DEFAULT_AGG_BATCH_SCHEDULE (the
# batch sizes its aggregated sweep tries) and _agg_ctx_tokens_list's constants.
_AIC_BATCHES = (tuple(range(1, 16)) + tuple(range(16, 32, 4)) + tuple(range(32, 64, 8))
                + tuple(range(64, 256, 16)) + tuple(range(256, 512, 32))
                + tuple(range(512, 1024, 256)) + (1024,))
_AIC_CTX_STRIDE = 512               # sweep_agg's default ctx_stride


@dataclass(frozen=True)
class AicSizing:
    """AIConfigurator's answer on a ``StepCost`` (``aiconfigurator_replicas``).

    ``replicas``: ⌈rate / replica_rate_per_s⌉ (None when no batch meets the limits);
    ``batch_size`` and ``max_num_batched_tokens``: the point chosen (the requests a
    replica holds and the prompt tokens per step); ``ttft_ms``, ``tpot_ms``,
    ``request_latency_ms``: its mean-value estimates there (no queue);
    ``replica_rate_per_s``: the requests per s one replica is taken to carry;
    ``points``: (batch, budget) points tried, ``feasible_points``: those meeting the
    limits; ``notes``: what bound the answer.
    """

    replicas: int | None
    batch_size: int | None
    max_num_batched_tokens: int | None
    ttft_ms: float | None
    tpot_ms: float | None
    request_latency_ms: float | None
    replica_rate_per_s: float | None
    points: int
    feasible_points: int
    notes: tuple


def _scalar(value, domain, name, *, whole=False):
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None or np.ndim(value) != 0:
        raise ValueError(f"{name} must be {domain.describe()}, got {value!r}")
    v = float(domain.check(value, name))
    return int(v) if whole else v


def _ctx_budgets(isl: int, chunked: bool) -> list:
    """AIConfigurator's per-step prompt-token budgets (aiconfigurator/sdk/sweep.py:
    _agg_ctx_tokens_list, ctx_stride 512): strides of 512 (≥ 8192/16) up to 8,192, then
    of ≥ 1,024, up to max(8192, 2·isl); without chunked prefill whole multiples of isl;
    isl and 2·isl always."""
    normal, top = 8192, max(8192, 2 * isl)
    stride = max(_AIC_CTX_STRIDE, normal // 16)
    large = max(1024, stride, top // 8)
    if not chunked:
        stride, large = max(isl, stride), int(math.ceil(large / isl) * isl)
    out, c = [], 0
    while True:
        c += stride if c < normal else large
        if c > top:
            break
        out.append(c)
    return sorted(set(out) | {isl, 2 * isl})


def _vllm_ttft_factor(b: int) -> float:
    """vllm_backend._ttft_queuing_factor: 1 + log2(b)/8, at most 2 (1 at b = 1)."""
    return 1.0 if b <= 1 else float(min(1.0 + math.log2(b) / 8.0, 2.0))


def aiconfigurator_replicas(rate_per_s, *, cost, input_tokens, output_tokens, max_batch,
                            ttft_ms=math.inf, tpot_ms=math.inf, max_num_batched_tokens=None,
                            chunked_prefill=False, kv_cache_tokens=None,
                            dispatch_overhead_ms=0.0) -> AicSizing:
    """Replicas for ``rate_per_s`` by AIConfigurator's rule (``cli recommend``, an
    aggregated vLLM worker), on ``cost``: requests of ``input_tokens`` l and
    ``output_tokens`` o ≥ 2 tokens, TTFT ≤ ``ttft_ms`` and TPOT ≤ ``tpot_ms`` (inf: no
    limit), batches up to ``max_batch``.  Means only, no queue.

    Read from AIConfigurator 0.12.0: ``aiconfigurator/sdk/sweep.py``
    (``_sweep_one_parallel_agg``), ``aiconfigurator_core/sdk/backends/base_backend.py``
    (``BaseBackend.run_agg``) with ``vllm_backend.py`` (``VLLMBackend``'s overrides) and
    ``aiconfigurator/sdk/pareto_analysis.py`` (``get_best_configs_for_target_load``, via
    ``picking.pick_load_match`` from ``cli/api.py: cli_recommend``).  For each batch b
    of its schedule (1…15, 16…28 by 4, 32…56 by 8, 64…240 by 16, 256…480 by 32, 512,
    768, 1024) up to ``max_batch`` and each prompt budget C of its sweep
    (``max_num_batched_tokens``: that one only; else 512-token strides up to
    max(8192, 2l), whole multiples of l without ``chunked_prefill``), skipping the points
    it skips (b < ⌈C/l⌉; b > 1 with no decode left; its repeated-point filter), and
    stopping a batch whose b·(l + o) tokens exceed ``kv_cache_tokens`` (its KV check):

    * S = ⌈l·b/C⌉ mixed steps, each of C prompt tokens (Q = C·l) and g = max(1, b −
      ⌈C/l⌉) decodes (vLLM's one partial prefill at a time); G = o − S decode-only steps
      of b requests when S < o (else 0); contexts l + ⌊o/2⌋ + 1.  b = 1: one prompt-only
      step, then o − 1 decode steps of 1;
    * TTFT = frontend_ms + (mixed step × ⌈l/C⌉ + ``dispatch_overhead_ms``) × (1 +
      log2(b)/8, at most 2; 1 at b = 1): a fixed factor for a batch arriving at once,
      not a queue (vLLM adds 0.8 ms per layer of dispatch: 25.6 for Llama-3.1-8B);
    * TPOT = (S·mixed + G·decode) / (S + G) (b = 1: the decode step), the mean over the
      steps of one batch's life;
    * a replica's rate = min(b / (S·mixed + G·decode), b / (TTFT + TPOT·(o − 1))) in
      requests per ms: the full batch's step throughput, capped by Little's law at b in
      flight.

    The points with TTFT ≤ ``ttft_ms`` and TPOT ≤ ``tpot_ms`` (mean values against the
    limits, whatever percentile they are meant as) are kept; the one with the largest
    rate is the answer, replicas = max(1, ⌈rate_per_s / rate⌉).  The arrival rate enters
    only there: what it does to queues, and to the percentiles, is not asked.  (Left
    out: the choice among tensor-parallel degrees and disaggregated workers, a cost
    being one worker's; AIConfigurator's 3-decimal rounding of the rate; with no
    feasible point it reports none: ``replicas`` None.)  A free step (0 ms) gives an
    unbounded rate: one replica.
    """
    rate = _scalar(rate_per_s, RATE_PER_S, "rate_per_s")
    if not math.isfinite(rate):
        raise ValueError(f"rate_per_s must be a finite rate to size for, got {rate_per_s!r}")
    if not isinstance(cost, StepCost):
        raise ValueError(f"cost must be a StepCost, got {type(cost).__name__}")
    l = _scalar(input_tokens, SERVING_TOKENS, "input_tokens", whole=True)
    o = _scalar(output_tokens, SERVING_TOKENS, "output_tokens", whole=True)
    if o < 2:
        raise ValueError(f"output_tokens must be at least 2: AIConfigurator's rate is output "
                         f"tokens per s over the o − 1 decoded ones, got {o}")
    b_max = _scalar(max_batch, MAX_NUM_SEQS, "max_batch", whole=True)
    ttft_limit = _scalar(ttft_ms, TARGET_MS, "ttft_ms")
    tpot_limit = _scalar(tpot_ms, TARGET_MS, "tpot_ms")
    if not isinstance(chunked_prefill, (bool, np.bool_)):
        raise ValueError(f"chunked_prefill must be True or False, got {chunked_prefill!r}")
    kv = None if kv_cache_tokens is None else _scalar(kv_cache_tokens, KV_CACHE_TOKENS,
                                                      "kv_cache_tokens", whole=True)
    overhead = _scalar(dispatch_overhead_ms, STEP_MS, "dispatch_overhead_ms")
    budgets = (_ctx_budgets(l, bool(chunked_prefill)) if max_num_batched_tokens is None
               else [_scalar(max_num_batched_tokens, MAX_BATCHED_TOKENS,
                             "max_num_batched_tokens", whole=True)])
    points, kv_stops = _agg_sweep(l, o, b_max, budgets, kv)
    s_ctx = l + o // 2 + 1
    best, feasible = None, 0
    if points:
        b_arr, c_arr = (np.array(x, dtype=float) for x in zip(*points))
        g_arr = np.array([_agg_decodes(b, c, l) for b, c in points], dtype=float)
        mixed = np.broadcast_to(cost.step_ms(c_arr, c_arr * l, g_arr, g_arr * s_ctx),
                                b_arr.shape)
        decode = np.broadcast_to(cost.step_ms(0, 0, b_arr, b_arr * s_ctx), b_arr.shape)
        for (b, c), m_ms, d_ms in zip(points, mixed.tolist(), decode.tolist()):
            point = _agg_point(m_ms, d_ms, b, c, l, o, overhead, cost.frontend_ms)
            if point[0] <= ttft_limit and point[1] <= tpot_limit:
                feasible += 1
                if best is None or point[3] > best[2][3]:
                    best = (b, c, point)
    tried = len(points)
    notes = [f"(batch, prompt budget) points tried: {tried}; meeting TTFT ≤ {ttft_limit:g} ms "
             f"and TPOT ≤ {tpot_limit:g} ms as means: {feasible}"]
    if kv_stops:
        notes.append(f"batches left out, b·(l + o) above the KV cache's {kv:,} tokens: "
                     f"{kv_stops}")
    if best is None:
        notes.append("no point meets the limits: AIConfigurator reports no configuration")
        return AicSizing(None, None, None, None, None, None, None, tried, feasible,
                         tuple(notes))
    b, c, (ttft, tpot, latency, per_ms) = best
    per_s = per_ms * 1e3
    replicas = 1 if math.isinf(per_s) else max(1, math.ceil(rate / per_s))
    notes.append(f"batch {b}, {c} prompt tokens per step: {per_s:.4g} requests per s per "
                 f"replica (TTFT {ttft:.4g} ms, TPOT {tpot:.4g} ms as means): "
                 f"⌈{rate:g} / {per_s:.4g}⌉ = {replicas}")
    return AicSizing(replicas, b, c, ttft, tpot, latency, per_s, tried, feasible, tuple(notes))


def _agg_sweep(l: int, o: int, b_max: int, budgets, kv):
    """The (batch, prompt budget) points AIConfigurator's aggregated sweep evaluates
    (sweep.py: _sweep_one_parallel_agg), and how many batches the KV cache left out."""
    points, seen, kv_stops = [], [], 0
    for b in (b for b in _AIC_BATCHES if b <= b_max):
        if kv is not None and b * (l + o) > kv:
            kv_stops += 1
            continue
        for c in budgets:
            per_step = math.ceil(c / l)
            if b - per_step < 0 or (b > 1 and b - per_step < 1):
                break
            balance = l * b / c / o
            if balance > 1:                     # its filter of repeated points
                gen = b // balance
                if gen > 1 and gen in seen:
                    continue
                seen.append(gen)
            points.append((b, c))
    return points, kv_stops


def _agg_decodes(b: int, c: int, l: int) -> int:
    """Decodes in a mixed step (vllm_backend._mix_step_gen_tokens; 0 at b = 1)."""
    return max(1, b - math.ceil(c / l)) if b > 1 else 0


def _agg_point(mixed_ms, decode_ms, b, c, l, o, overhead_ms=0.0, frontend_ms=0.0):
    """(TTFT, TPOT, request latency in ms, requests per ms) of one (batch, budget) point
    from its mixed step's and decode step's times: BaseBackend.run_agg with
    VLLMBackend's hooks."""
    steps_ctx = math.ceil(l * b / c)
    if b > 1:
        mix_steps, tpot_mix = steps_ctx, steps_ctx
        gen_steps = o - steps_ctx if steps_ctx < o else 0
    else:
        mix_steps, gen_steps, tpot_mix = 1, o - 1, 0
    decode_ms = decode_ms if gen_steps else 0.0
    ttft = frontend_ms + (mixed_ms * math.ceil(l / c) + overhead_ms) * _vllm_ttft_factor(b)
    n = tpot_mix + gen_steps
    tpot = (mixed_ms * tpot_mix + decode_ms * gen_steps) / n if n else 0.0
    total = mix_steps * mixed_ms + gen_steps * decode_ms
    latency = ttft + tpot * (o - 1)
    step_rate = b / total if total > 0 else math.inf
    little = b / latency if latency > 0 else math.inf
    return ttft, tpot, latency, min(step_rate, little)
