"""A fleet of replicas behind a dispatcher: one replica is the server itself, round
robin is R servers each serving every R-th request (checked against separate runs), and
the smoother stream round robin sends makes shorter queues than random dispatch."""
import numpy as np
import pytest
from scipy import stats

from engine.llm_serving import Scheduler, StepCost, simulate_fleet, simulate_serving

COST = StepCost(base_ms=8.0, prefill_ms_per_token=0.04, decode_ms_per_seq=0.3,
                context_ms_per_token=1e-4, frontend_ms=2.0)
SCHED = Scheduler(max_num_seqs=16, max_num_batched_tokens=2048, kv_cache_tokens=40_000)
LAWS = dict(input_tokens=stats.randint(50, 1500), output_tokens=stats.randint(1, 300))


def test_one_replica_is_the_server():
    kw = dict(rate_per_s=3.0, n_requests=3000, seed=4, return_records=True, **LAWS)
    fleet = simulate_fleet(COST, SCHED, replicas=1, **kw)
    alone = simulate_serving(COST, SCHED, **kw)
    for name in ("first_token_s", "finish_s", "preemptions"):
        np.testing.assert_array_equal(getattr(fleet.records, name),
                                      getattr(alone.records, name))
    assert fleet.ttft_ms == alone.ttft_ms


def test_round_robin_is_each_replica_serving_every_rth_request():
    rng = np.random.default_rng(1)
    n, r = 2400, 3
    t = np.cumsum(rng.exponential(1 / 9.0, n))
    l, o = rng.integers(50, 1500, n), rng.integers(1, 300, n)
    fleet = simulate_fleet(COST, SCHED, replicas=r, dispatch="round_robin", arrival_s=t,
                           input_tokens=l, output_tokens=o, return_records=True)
    for i in range(r):
        part = simulate_serving(COST, SCHED, arrival_s=t[i::r], input_tokens=l[i::r],
                                output_tokens=o[i::r], return_records=True)
        np.testing.assert_allclose(fleet.records.finish_s[i::r], part.records.finish_s,
                                   rtol=1e-12)
        np.testing.assert_allclose(fleet.records.first_token_s[i::r],
                                   part.records.first_token_s, rtol=1e-12)
    assert fleet.throughput_requests_per_s == pytest.approx(n / fleet.records.finish_s.max())


def test_round_robin_queues_less_than_random():
    """Four replicas at 85 % of their capacity: round robin sends each one Erlang-4 gaps,
    random dispatch Poisson ones; the waits for a seat differ accordingly."""
    from engine.llm_serving import max_rate_per_s
    cap = max_rate_per_s(COST, SCHED, LAWS["input_tokens"], LAWS["output_tokens"])
    kw = dict(replicas=4, rate_per_s=4 * 0.85 * cap, n_requests=20_000, seed=2, **LAWS)
    rr = simulate_fleet(COST, SCHED, dispatch="round_robin", **kw)
    rand = simulate_fleet(COST, SCHED, dispatch="random", **kw)
    assert rr.ttft_ms.p99 < rand.ttft_ms.p99
    assert rr.queue_ms.mean < rand.queue_ms.mean


@pytest.mark.parametrize("kwargs, match", [
    (dict(replicas=0), "replicas"),
    (dict(replicas=2.5), "replicas"),
    (dict(dispatch="least_loaded"), "dispatch"),
    (dict(input_tokens=50_000), "can never run"),
])
def test_bad_input_is_a_clear_message(kwargs, match):
    args = dict(replicas=2, rate_per_s=1.0, n_requests=10, input_tokens=100,
                output_tokens=10)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        simulate_fleet(COST, SCHED, **args)


def test_least_outstanding_balances_better_than_round_robin():
    """Least-outstanding dispatch sees which replica is busy (long replies hold a seat
    long): at 85 % load it waits less than round robin, and each replica gets about a
    quarter of the requests."""
    from engine.llm_serving import max_rate_per_s
    cap = max_rate_per_s(COST, SCHED, LAWS["input_tokens"], LAWS["output_tokens"])
    kw = dict(replicas=4, rate_per_s=4 * 0.85 * cap, n_requests=6000, seed=2, **LAWS)
    lor = simulate_fleet(COST, SCHED, dispatch="least_outstanding", **kw)
    rr = simulate_fleet(COST, SCHED, dispatch="round_robin", **kw)
    assert lor.ttft_ms.p99 < rr.ttft_ms.p99 and lor.e2e_ms.mean < rr.e2e_ms.mean


def test_least_outstanding_sends_to_the_idle_replica():
    """Two replicas, one request each at 0 and 1 ms with long replies, a third at 2 ms:
    both are busy with one request, so the third goes to replica 0 (the lower on a tie);
    a single replica is the server itself."""
    kw = dict(arrival_s=[0.0, 0.001, 0.002], input_tokens=100, output_tokens=50,
              return_records=True)
    two = simulate_fleet(COST, SCHED, replicas=2, dispatch="least_outstanding", **kw)
    rr = simulate_fleet(COST, SCHED, replicas=2, dispatch="round_robin", **kw)
    np.testing.assert_allclose(two.records.finish_s, rr.records.finish_s, rtol=1e-12)
    one = simulate_fleet(COST, SCHED, replicas=1, dispatch="least_outstanding", **kw)
    alone = simulate_serving(COST, SCHED, **kw)
    np.testing.assert_array_equal(one.records.finish_s, alone.records.finish_s)
