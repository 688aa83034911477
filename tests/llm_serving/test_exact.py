"""Exact cases of the serving simulator, derived independently of it: one seat with
whole prompts is M/D/1, one closed-loop client a deterministic cycle, a closed loop
obeys Little's law, and at saturation the throughput is max_rate_per_s."""
import math

import numpy as np
import pytest
from scipy import stats

from engine.llm_serving import (Scheduler, StepCost, approximate_serving, capacity_limit,
                                max_rate_per_s, simulate_serving)

COST = StepCost(base_ms=8.0, prefill_ms_per_token=0.04, prefill_ms_per_token_sq=2e-6,
                decode_ms_per_seq=0.25, context_ms_per_token=1e-4, prefill_base_ms=12.0,
                frontend_ms=3.0)


def test_one_seat_whole_prompts_is_md1():
    """max_num_seqs = 1: a request holds the server for its prompt step and o − 1 decode
    steps alone, a deterministic S; arrivals are Poisson, so the wait for the seat is
    Pollaczek-Khinchine's λS²/(2(1 − ρ)) and TTFT = front end + wait + the prompt step."""
    l, o, rate = 300, 6, 4.0
    sched = Scheduler(max_num_seqs=1, max_num_batched_tokens=4096, chunked_prefill=False)
    prompt = float(COST.prompt_ms(l))
    decodes = sum(float(COST.decode_ms(1, l + g)) for g in range(1, o))
    service_ms = prompt + decodes
    lam = rate / 1e3
    rho = lam * service_ms
    assert rho < 0.9
    wait = lam * service_ms ** 2 / (2 * (1 - rho))
    r = simulate_serving(COST, sched, input_tokens=l, output_tokens=o, rate_per_s=rate,
                         n_requests=200_000, seed=11)
    assert r.ttft_ms.mean == pytest.approx(COST.frontend_ms + wait + prompt,
                                           abs=4 * r.ttft_ms.ci95)
    assert r.tpot_ms.p50 == pytest.approx(decodes / (o - 1), rel=1e-9)
    assert r.mean_running == pytest.approx(rho, rel=0.02)


def test_one_client_is_a_deterministic_cycle_chunk_by_chunk():
    """One client, chunked prefill with a budget of 128: a prompt of 300 tokens runs in
    chunks of 128, 128 and 44 (prompt-only steps: Q = Σ x·end), then o − 1 decodes; the
    next request is sent when the last finishes."""
    l, o, budget = 300, 4, 128
    sched = Scheduler(max_num_seqs=8, max_num_batched_tokens=budget)
    chunks = [(128, 128), (128, 256), (44, 300)]
    prefill = sum(COST.prefill_base_ms + COST.prefill_ms_per_token * x
                  + COST.prefill_ms_per_token_sq * x * end for x, end in chunks)
    decodes = [COST.base_ms + COST.decode_ms_per_seq + COST.context_ms_per_token * (l + g)
               for g in range(1, o)]
    ttft = COST.frontend_ms + prefill
    cycle = ttft + sum(decodes)
    r = simulate_serving(COST, sched, input_tokens=l, output_tokens=o, concurrency=1,
                         n_requests=50, return_records=True)
    rec = r.records
    assert np.allclose(rec.ttft_ms, ttft, rtol=1e-12)
    assert np.allclose(rec.e2e_ms, cycle, rtol=1e-12)
    assert np.allclose(rec.arrival_s, np.arange(50) * cycle / 1e3, rtol=1e-12)
    assert r.throughput_requests_per_s == pytest.approx(1e3 / cycle, rel=1e-12)
    assert r.tpot_ms.mean == pytest.approx(sum(decodes) / (o - 1), rel=1e-12)
    assert r.steps == 50 * (len(chunks) + o - 1)


@pytest.mark.parametrize("chunked", [True, False])
def test_closed_loop_obeys_littles_law(chunked):
    """N clients always have a request in the server (no think time), so the time-average
    in the system is N: throughput × mean e2e = N (up to the run's ragged end)."""
    n_clients = 24
    sched = Scheduler(max_num_seqs=16, max_num_batched_tokens=2048, kv_cache_tokens=30_000,
                      chunked_prefill=chunked)
    law_in, law_out = stats.randint(50, 900), stats.randint(1, 300)
    r = simulate_serving(COST, sched, input_tokens=law_in, output_tokens=law_out,
                         concurrency=n_clients, n_requests=30_000, seed=5)
    assert r.throughput_requests_per_s * r.e2e_ms.mean / 1e3 == pytest.approx(n_clients,
                                                                             rel=0.01)
    # more clients than seats: some wait, and the running count stays within the seats
    assert r.mean_running <= 16 + 1e-9 and r.queue_ms.mean > 0


def test_saturated_throughput_meets_max_rate():
    """Past saturation every seat is full: with fixed lengths the renewal-reward
    capacity is exact."""
    sched = Scheduler(max_num_seqs=48, max_num_batched_tokens=16_384)
    limit = capacity_limit(COST, sched, 400, 120)
    assert limit.binding == "max_num_seqs" and limit.exact
    r = simulate_serving(COST, sched, input_tokens=400, output_tokens=120, concurrency=300,
                         n_requests=20_000)
    assert r.throughput_requests_per_s == pytest.approx(limit.rate_per_s, rel=2e-3)


def test_saturated_throughput_with_random_lengths():
    sched = Scheduler(max_num_seqs=32, max_num_batched_tokens=16_384)
    rng = np.random.default_rng(3)
    l, o = rng.integers(20, 1200, 40_000), rng.integers(1, 500, 40_000)
    rate = max_rate_per_s(COST, sched, l, o)
    r = simulate_serving(COST, sched, input_tokens=l, output_tokens=o, concurrency=400)
    assert r.throughput_requests_per_s == pytest.approx(rate, rel=0.01)


def test_approximation_beside_simulation_at_moderate_load():
    """The approximation is an approximation: within 15 % of the simulation below 60 % of
    capacity (measured error over the whole range: docs/models/llm_serving.md)."""
    sched = Scheduler(max_num_seqs=32, max_num_batched_tokens=8192)
    law_in, law_out = stats.randint(50, 1500), stats.randint(1, 400)
    cap = max_rate_per_s(COST, sched, law_in, law_out)
    for share in (0.2, 0.6):
        a = approximate_serving(COST, sched, input_tokens=law_in, output_tokens=law_out,
                                rate_per_s=share * cap)
        r = simulate_serving(COST, sched, input_tokens=law_in, output_tokens=law_out,
                             rate_per_s=share * cap, n_requests=30_000, seed=1)
        assert float(a.ttft_ms) == pytest.approx(r.ttft_ms.mean, rel=0.15)
        assert float(a.tpot_ms) == pytest.approx(r.tpot_ms.mean, rel=0.15)
        assert float(a.mean_running) == pytest.approx(r.mean_running, rel=0.15)
    past = approximate_serving(COST, sched, input_tokens=law_in, output_tokens=law_out,
                               rate_per_s=[0.5 * cap, 1.2 * cap])
    assert past.stable.tolist() == [True, False] and math.isinf(past.ttft_ms[1])
    assert past.rate_limit_per_s == pytest.approx(cap)


def test_kv_cache_binds_and_preempts():
    """A KV cache holding about 6 requests' worth while 16 seats are offered: the peak
    use reaches the cache, requests are preempted, and every request still finishes."""
    sched = Scheduler(max_num_seqs=16, max_num_batched_tokens=4096, kv_cache_tokens=6 * 800)
    r = simulate_serving(COST, sched, input_tokens=400, output_tokens=stats.randint(1, 800),
                         concurrency=16, n_requests=2_000, seed=2, return_records=True)
    assert r.kv_peak_fraction == pytest.approx(1.0, abs=1 / sched.kv_blocks + 1e-12)
    assert r.preempted_fraction > 0
    assert np.all(np.isfinite(r.records.finish_s))
    assert int(r.records.preemptions.sum()) > 0


def test_prefix_cache_skips_a_shared_system_prompt():
    """Every prompt starts with the same 512-token system prompt: after the first, each
    request finds its 32 blocks cached and computes only the rest."""
    sched = Scheduler(max_num_seqs=8, max_num_batched_tokens=4096)
    r = simulate_serving(COST, sched, input_tokens=600, output_tokens=5, concurrency=1,
                         n_requests=20, prefix_stream=0, prefix_tokens=512,
                         return_records=True)
    assert r.records.cached_tokens[0] == 0
    assert np.all(r.records.cached_tokens[1:] == 512)
    off = simulate_serving(COST, Scheduler(max_num_seqs=8, max_num_batched_tokens=4096,
                                           prefix_caching=False),
                           input_tokens=600, output_tokens=5, concurrency=1, n_requests=20,
                           prefix_stream=0, prefix_tokens=512, return_records=True)
    assert np.all(off.records.cached_tokens == 0)
    hit = float(COST.step_ms(88, 88 * 600, 0, 0))
    miss = float(COST.prompt_ms(600))
    assert r.records.ttft_ms[5] == pytest.approx(COST.frontend_ms + hit, rel=1e-12)
    assert off.records.ttft_ms[5] == pytest.approx(COST.frontend_ms + miss, rel=1e-12)


def test_goodput_fraction_counts_requests_meeting_both_limits():
    sched = Scheduler(max_num_seqs=8, max_num_batched_tokens=2048)
    r = simulate_serving(COST, sched, input_tokens=stats.randint(10, 2000),
                         output_tokens=stats.randint(1, 50), rate_per_s=20.0,
                         n_requests=5_000, seed=4, return_records=True)
    rec = r.records
    w = r.warmup_requests
    ttft, tpot = rec.ttft_ms[w:], rec.tpot_ms[w:]
    x, y = np.percentile(ttft, 70), np.nanpercentile(tpot, 80)
    expected = np.mean((ttft <= x) & ~(tpot > y))
    assert r.goodput_fraction(ttft_ms=x, tpot_ms=y) == pytest.approx(expected)
    assert r.goodput_fraction(ttft_ms=x, tpot_ms=y, percentile=99) == 0.0
    assert r.goodput_fraction() == 1.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(input_tokens=stats.pareto(1.0), output_tokens=10, rate_per_s=1.0), "finite mean"),
    (dict(input_tokens=5_000, output_tokens=10, rate_per_s=1.0), "can never run"),
    (dict(input_tokens=100, output_tokens=10, concurrency=0), "concurrency"),
    (dict(input_tokens=100, output_tokens=10), "exactly one load"),
    (dict(input_tokens=100, output_tokens=10, rate_per_s=1.0, concurrency=2), "exactly one"),
    (dict(input_tokens=0, output_tokens=10, rate_per_s=1.0), "input_tokens"),
    (dict(input_tokens=[10, 20], output_tokens=[5, 5, 5], rate_per_s=1.0), "one per request"),
    (dict(input_tokens=100, output_tokens=10, arrival_s=[1.0, 0.5]), "sorted"),
])
def test_bad_input_is_a_clear_message(kwargs, match):
    sched = Scheduler(max_num_seqs=4, max_num_batched_tokens=1024, kv_cache_tokens=4096)
    with pytest.raises(ValueError, match=match):
        simulate_serving(COST, sched, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(max_num_batched_tokens=0), "max_num_batched_tokens"),
    (dict(max_num_seqs=0), "max_num_seqs"),
    (dict(kv_cache_tokens=8, block_size=16), "at least one block"),
    (dict(block_size=2.5), "block_size"),
    (dict(chunked_prefill="yes"), "chunked_prefill"),
])
def test_bad_scheduler_is_a_clear_message(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Scheduler(**kwargs)


def test_bad_step_cost_is_a_clear_message():
    with pytest.raises(ValueError, match="base_ms"):
        StepCost(base_ms=-1.0)
    with pytest.raises(ValueError, match="decode_ms_per_seq"):
        StepCost(decode_ms_per_seq=float("nan"))
    with pytest.raises(ValueError, match="frontend_ms"):
        StepCost(frontend_ms="fast")


def test_step_ms_broadcasts_like_a_ufunc():
    p = np.array([[0], [100]])
    d = np.array([0, 3, 5])
    got = COST.step_ms(p, p ** 2, d, d * 500)
    assert got.shape == (2, 3)
    assert got[0, 0] == 0.0
    assert got[1, 0] == pytest.approx(12.0 + 0.04 * 100 + 2e-6 * 1e4)
    assert got[0, 1] == pytest.approx(8.0 + 0.25 * 3 + 1e-4 * 1500)


def test_a_chat_turn_finds_the_last_turn_and_its_reply_cached():
    """Turn 2 of a conversation repeats turn 1's prompt and reply (100 + 50 tokens) and
    adds 60: with the reply in the conversation's stream (prefix_tokens past the
    prompt), turn 2 finds ⌊149/16⌋ = 9 blocks cached; with the prompt alone shared, 6."""
    sched = Scheduler(max_num_seqs=4, max_num_batched_tokens=4096)
    turn = dict(input_tokens=[100, 210], output_tokens=[50, 5], concurrency=1,
                return_records=True, prefix_stream=0)
    chat = simulate_serving(COST, sched, prefix_tokens=[150, 210], **turn)
    prompt_only = simulate_serving(COST, sched, prefix_tokens=[100, 210], **turn)
    assert chat.records.cached_tokens.tolist() == [0, 144]
    assert prompt_only.records.cached_tokens.tolist() == [0, 96]
    assert chat.records.ttft_ms[1] == pytest.approx(
        COST.frontend_ms + float(COST.step_ms(66, 66 * 210, 0, 0)), rel=1e-12)
