"""The compiled serving simulator (engine/llm_serving) against a slow reference written
from docs/models/llm_serving.md alone (tests/llm_serving/reference.py), request by
request: send, first token and finish times, preemptions, prefix-cache hits.

Random small configurations (chunked or whole prompts, a binding KV cache or not,
prefix caching with shared prefixes or not, replayed send times with ties and bursts or
a closed loop), and a few timelines computed by hand.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.llm_serving import Scheduler, StepCost, simulate_serving
from tests.llm_serving import reference

RTOL = 1e-9
# When a full block enters the prefix cache: at the end of the step that computes it
# (the doc's "two requests computed it at once", and the kernel), not when that step
# is scheduled (vLLM V1); see test_same_step_prefix_hit_as_vllm_v1.
CACHE_WHEN = "schedule"


def reference_serve(*args, **kwargs):
    return reference.reference_serve(*args, cache_when=CACHE_WHEN, **kwargs)


def _simulate(cost, scheduler, arrival_s, l, o, concurrency=None, prefix_stream=None,
              prefix_tokens=None):
    load = {"concurrency": concurrency} if concurrency is not None else {"arrival_s": arrival_s}
    return simulate_serving(cost, scheduler, input_tokens=np.asarray(l),
                            output_tokens=np.asarray(o), return_records=True,
                            prefix_stream=prefix_stream, prefix_tokens=prefix_tokens,
                            **load).records


def _assert_same(rec, ref, context=""):
    """Request by request: times to 1e-9 relative, counts exactly."""
    for name in ("arrival_s", "first_token_s", "finish_s"):
        got, want = np.asarray(getattr(rec, name)), getattr(ref, name)
        bad = ~np.isclose(got, want, rtol=RTOL, atol=1e-15)
        assert not bad.any(), (f"{name} differs at requests {np.flatnonzero(bad)[:5]}: "
                               f"kernel {got[bad][:5]} reference {want[bad][:5]} {context}")
    for name in ("preemptions", "cached_tokens"):
        got, want = np.asarray(getattr(rec, name)), getattr(ref, name)
        assert np.array_equal(got, want), (f"{name} differs: kernel {got} reference {want} "
                                           f"{context}")


# ------------------------------------------------------------------ hand-computed


def test_one_request_chunk_by_chunk():
    """Prompt 100, output 5, budget 32: chunks 32, 32, 32, 4, then 4 decodes."""
    cost = StepCost(base_ms=1.0, prefill_base_ms=2.0, prefill_ms_per_token=0.01,
                    prefill_ms_per_token_sq=1e-4, decode_ms_per_seq=0.5,
                    context_ms_per_token=0.001, frontend_ms=3.0)
    sched = Scheduler(max_num_batched_tokens=32, block_size=16, chunked_prefill=True)
    # prompt-only steps: prefill base + 0.01·x + 1e-4·x·(end of chunk)
    chunks = [2 + 0.01 * 32 + 1e-4 * 32 * 32,      # tokens 0..32
              2 + 0.01 * 32 + 1e-4 * 32 * 64,      # 32..64
              2 + 0.01 * 32 + 1e-4 * 32 * 96,      # 64..96
              2 + 0.01 * 4 + 1e-4 * 4 * 100]       # 96..100: the first token
    # decode steps: base + 0.5 + 0.001·(l + g), g = 1..4
    decodes = [1 + 0.5 + 0.001 * (100 + g) for g in range(1, 5)]
    send = 0.010                                   # s
    first_ms = send * 1e3 + 3.0 + sum(chunks)
    finish_ms = first_ms + sum(decodes)
    assert math.isclose(first_ms, 10 + 3 + 9.6544)
    assert math.isclose(finish_ms, first_ms + 6.41)
    rec = _simulate(cost, sched, [send], [100], [5])
    assert rec.first_token_s[0] == pytest.approx(first_ms / 1e3, rel=RTOL)
    assert rec.finish_s[0] == pytest.approx(finish_ms / 1e3, rel=RTOL)
    assert rec.preemptions[0] == 0 and rec.cached_tokens[0] == 0
    _assert_same(rec, reference_serve(cost, sched, [send], [100], [5]))


def test_whole_prompts_take_priority_over_decodes():
    """No chunked prefill, budget 25: prompts of 10 and 20 do not fit one step; the
    second prompt runs alone before any decode."""
    cost = StepCost(base_ms=2.0, prefill_base_ms=1.0, prefill_ms_per_token=0.1,
                    decode_ms_per_seq=0.5)
    sched = Scheduler(max_num_batched_tokens=25, chunked_prefill=False)
    # step 1: prompt 10 (1 + 1 = 2 ms); step 2: prompt 20 (1 + 2 = 3 ms);
    # steps 3, 4: both decode (2 + 2·0.5 = 3 ms each)
    rec = _simulate(cost, sched, [0.0, 0.0], [10, 20], [3, 3])
    np.testing.assert_allclose(rec.first_token_s, [0.002, 0.005], rtol=RTOL)
    np.testing.assert_allclose(rec.finish_s, [0.011, 0.011], rtol=RTOL)
    _assert_same(rec, reference_serve(cost, sched, [0.0, 0.0], [10, 20], [3, 3]))


def test_preemption_when_the_kv_cache_is_full():
    """3 blocks of 4 tokens, two requests of prompt 4 and 8 replies (11 tokens, 3 blocks
    each): both prefill in step 1 (1 block each); in step 2 the second finds no block
    for its decode and is preempted (it is the last running); it comes back only when
    the first finishes (step 8), recomputes 4 + 1 tokens (step 9) and decodes to 8."""
    cost = StepCost(base_ms=1.0)                   # every step 1 ms
    sched = Scheduler(max_num_batched_tokens=64, kv_cache_tokens=12, block_size=4,
                      prefix_caching=False)
    rec = _simulate(cost, sched, [0.0, 0.0], [4, 4], [8, 8])
    assert rec.preemptions[1] > 0
    np.testing.assert_array_equal(rec.preemptions, [0, 1])
    np.testing.assert_allclose(rec.first_token_s, [0.001, 0.001], rtol=RTOL)
    np.testing.assert_allclose(rec.finish_s, [0.008, 0.015], rtol=RTOL)
    _assert_same(rec, reference_serve(cost, sched, [0.0, 0.0], [4, 4], [8, 8]))


def test_prefix_hit_of_a_shared_system_prompt():
    """A second request sharing a 40-token prefix (blocks of 16) finds 2 full blocks."""
    cost = StepCost(base_ms=1.0, prefill_ms_per_token=0.01)
    sched = Scheduler(block_size=16)
    rec = _simulate(cost, sched, [0.0, 0.5], [50, 60], [2, 2], prefix_stream=0,
                    prefix_tokens=40)
    np.testing.assert_array_equal(rec.cached_tokens, [0, 32])
    # second request alone: a prompt-only step of 60 − 32 tokens, then one decode
    np.testing.assert_allclose(rec.first_token_s[1], 0.5 + (1 + 0.28) / 1e3, rtol=RTOL)
    _assert_same(rec, reference_serve(cost, sched, [0.0, 0.5], [50, 60], [2, 2],
                                      prefix_stream=0, prefix_tokens=40))


def test_same_step_prefix_hit_as_vllm_v1():
    """Two 48-token prompts sharing a 32-token system prompt (blocks of 16) admitted in
    one step: vLLM V1 registers the first's two full prefix blocks when it schedules
    it, so the second finds them (cached_tokens 32) and computes 16 tokens, not 48.
    The simulator enters blocks when it schedules them, as vLLM V1 does."""
    cost = StepCost(base_ms=1.0, prefill_ms_per_token=0.01)
    sched = Scheduler(block_size=16)
    args = (cost, sched, [0.0, 0.0], [48, 48], [2, 2])
    kw = dict(prefix_stream=0, prefix_tokens=32)
    rec = _simulate(*args, **kw)
    vllm = reference.reference_serve(*args, cache_when="schedule", **kw)
    np.testing.assert_array_equal(vllm.cached_tokens, [0, 32])
    # one prompt-only step of 48 + 16 tokens: 1 + 0.64 ms
    np.testing.assert_allclose(vllm.first_token_s, [0.00164, 0.00164], rtol=RTOL)
    np.testing.assert_array_equal(rec.cached_tokens, vllm.cached_tokens)


# ------------------------------------------------------------------ random configurations

QUARTERS = st.integers(0, 40).map(lambda k: k / 4)           # exact in binary


def _term(scale):
    """A cost term: often 0, else an exact quarter-multiple or an arbitrary float."""
    return st.one_of(st.just(0.0), QUARTERS.map(lambda x: x * scale),
                     st.floats(0.0, 5.0 * scale, allow_nan=False))


@st.composite
def configs(draw):
    n = draw(st.one_of(st.integers(1, 6), st.integers(1, 60)))
    b = draw(st.sampled_from([1, 2, 3, 4, 8, 16]))
    long_prompts = draw(st.booleans())
    l = draw(st.lists(st.integers(1, 90 if long_prompts else 24), min_size=n, max_size=n))
    o = draw(st.lists(st.one_of(st.integers(1, 4), st.integers(1, 30)), min_size=n,
                      max_size=n))
    chunked = draw(st.booleans())
    if chunked:
        budget = draw(st.one_of(st.integers(1, 8), st.integers(1, 128)))
    else:
        budget = max(l) + draw(st.one_of(st.just(0), st.integers(0, 8), st.integers(0, 200)))
    seqs = draw(st.one_of(st.integers(1, 4), st.integers(1, 64)))
    if draw(st.booleans()):
        need = max(-(-(li + oi - 1) // b) for li, oi in zip(l, o))
        blocks = need + draw(st.one_of(st.integers(0, 2), st.integers(0, 30)))
        kv = blocks * b + draw(st.integers(0, b - 1))
    else:
        kv = None
    caching = draw(st.booleans())
    sched = Scheduler(max_num_seqs=seqs, max_num_batched_tokens=budget, kv_cache_tokens=kv,
                      block_size=b, chunked_prefill=chunked, prefix_caching=caching)
    prefix_stream = prefix_tokens = None
    if draw(st.booleans()):
        if draw(st.booleans()):          # one shared system prompt
            prefix_stream = 0
            prefix_tokens = draw(st.integers(0, 100))
        else:
            prefix_stream = draw(st.lists(st.integers(-1, 2), min_size=n, max_size=n))
            prefix_tokens = draw(st.lists(st.integers(0, 100), min_size=n, max_size=n))
    cost = StepCost(base_ms=draw(_term(1.0)), prefill_base_ms=draw(_term(1.0)),
                    prefill_ms_per_token=draw(_term(0.05)),
                    prefill_ms_per_token_sq=draw(_term(1e-3)),
                    decode_ms_per_seq=draw(_term(0.5)),
                    context_ms_per_token=draw(_term(0.01)),
                    frontend_ms=draw(st.one_of(st.just(0.0), _term(2.0))))
    concurrency = arrival_s = None
    if draw(st.booleans()):
        concurrency = draw(st.integers(1, n + 2))
    else:
        # gaps in ms: ties (0), bursts, quarter-ms steps and arbitrary floats
        gap = st.one_of(st.just(0.0), QUARTERS, st.floats(0.0, 30.0, allow_nan=False))
        gaps = draw(st.lists(gap, min_size=n, max_size=n))
        arrival_s = np.cumsum(gaps) / 1e3
    return dict(cost=cost, sched=sched, arrival_s=arrival_s, l=l, o=o,
                concurrency=concurrency, prefix_stream=prefix_stream,
                prefix_tokens=prefix_tokens)


def describe(cfg):
    """The configuration as a short call that reproduces it."""
    c = cfg["cost"]
    terms = ", ".join(f"{k}={getattr(c, k)!r}" for k in (
        "base_ms", "prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq",
        "decode_ms_per_seq", "context_ms_per_token", "frontend_ms") if getattr(c, k))
    arr = cfg["arrival_s"]
    return (f"\ncost=StepCost({terms})\nsched={cfg['sched']!r}\n"
            f"arrival_s={None if arr is None else [float(x) for x in arr]}\n"
            f"l={[int(x) for x in cfg['l']]}\no={[int(x) for x in cfg['o']]}\n"
            f"concurrency={cfg['concurrency']}\nprefix_stream={cfg['prefix_stream']}\n"
            f"prefix_tokens={cfg['prefix_tokens']}")


def _check(cfg):
    rec = _simulate(cfg["cost"], cfg["sched"], cfg["arrival_s"], cfg["l"], cfg["o"],
                    cfg["concurrency"], cfg["prefix_stream"], cfg["prefix_tokens"])
    ref = reference_serve(cfg["cost"], cfg["sched"], cfg["arrival_s"], cfg["l"], cfg["o"],
                          concurrency=cfg["concurrency"], prefix_stream=cfg["prefix_stream"],
                          prefix_tokens=cfg["prefix_tokens"])
    _assert_same(rec, ref, context=describe(cfg))
    return ref


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_kernel_equals_reference(cfg):
    _check(cfg)


@st.composite
def tight_configs(draw):
    """A KV cache just large enough for the largest request, many requests at once:
    preemption, eviction and recomputation with prefix hits."""
    cfg = draw(configs())
    s = cfg["sched"]
    n = len(cfg["l"])
    need = max(-(-(li + oi - 1) // s.block_size) for li, oi in zip(cfg["l"], cfg["o"]))
    cfg["sched"] = Scheduler(max_num_seqs=max(s.max_num_seqs, 4),
                             max_num_batched_tokens=s.max_num_batched_tokens,
                             kv_cache_tokens=(need + draw(st.integers(0, 3))) * s.block_size,
                             block_size=s.block_size, chunked_prefill=s.chunked_prefill,
                             prefix_caching=draw(st.booleans()) or s.prefix_caching)
    if cfg["concurrency"] is not None:
        cfg["concurrency"] = max(cfg["concurrency"], min(n, 8))
    return cfg


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(tight_configs())
def test_kernel_equals_reference_under_kv_pressure(cfg):
    _check(cfg)


def test_random_configurations_do_preempt_and_hit():
    """The random draws above reach preemptions and prefix hits (a check of the
    generator, on a fixed sample)."""
    rng = np.random.default_rng(7)
    cost = StepCost(base_ms=1.0, prefill_ms_per_token=0.01, decode_ms_per_seq=0.1)
    pre = hit = 0
    for chunked in (True, False):
        for _ in range(5):
            n = 30
            l = rng.integers(20, 60, n)
            o = rng.integers(5, 30, n)
            b = 4
            need = int(max(-(-(l + o - 1) // b)))
            sched = Scheduler(max_num_batched_tokens=64, kv_cache_tokens=(need + 2) * b,
                              block_size=b, chunked_prefill=chunked)
            arrival = np.sort(rng.uniform(0, 0.05, n))
            cfg = dict(cost=cost, sched=sched, arrival_s=arrival, l=l, o=o, concurrency=None,
                       prefix_stream=0, prefix_tokens=16)
            ref = _check(cfg)
            pre += int(ref.preemptions.sum())
            hit += int(ref.cached_tokens.sum())
    assert pre > 0 and hit > 0
