"""The batching simulator: hand-checked sample paths, backends, theory, statistics."""
import numpy as np
import pytest

from engine import batching as bt
from engine.batching import sim
from tests.reference import md1_mean_latency

V100 = (0.1438, 1.8874)


def test_greedy_sample_path_by_hand():
    """τ[b] = b + 1.  Job 0 starts alone at 0 (done 2); at 2 the three waiting jobs
    start together (done 6); at 6 the last two (done 9)."""
    rec = sim.simulate_records(None, 1.0, 1.0, arrivals=[0, 0.5, 0.6, 1.0, 5.0, 5.1])
    np.testing.assert_array_equal(rec.batch_size, [1, 3, 2])
    np.testing.assert_array_equal(rec.start_ms, [0, 2, 2, 2, 6, 6])
    np.testing.assert_array_equal(rec.finish_ms, [2, 6, 6, 6, 9, 9])
    np.testing.assert_array_equal(rec.batch_first, [0, 1, 4])


def test_b_max_caps_batches_oldest_first():
    rec = sim.simulate_records(None, 1.0, 1.0, b_max=2, arrivals=[0, 0.5, 0.6, 1.0])
    np.testing.assert_array_equal(rec.batch_size, [1, 2, 1])
    np.testing.assert_array_equal(rec.finish_ms, [2, 5, 5, 7])


def test_triton_batcher_sample_path_by_hand():
    """Delay 0.3 from the oldest arrival, preferred size 2: the first job waits
    until 0.3 (no second job by then) and starts alone; later queues are large
    enough to start at once."""
    arrivals = [0, 0.5, 0.6, 1.0, 5.0, 5.1]
    rec = sim.simulate_records(None, 1.0, 1.0, arrivals=arrivals, max_queue_delay_ms=0.3,
                               preferred_batch_size=2)
    np.testing.assert_allclose(rec.start_ms, [0.3, 2.3, 2.3, 2.3, 6.3, 6.3])
    np.testing.assert_array_equal(rec.batch_size, [1, 3, 2])
    # A long delay waits for the preferred size: the second job arrives at 0.5.
    rec = sim.simulate_records(None, 1.0, 1.0, arrivals=arrivals, max_queue_delay_ms=5.0,
                               preferred_batch_size=2)
    np.testing.assert_allclose(rec.start_ms[:2], [0.5, 0.5])


def test_zero_delay_or_preferred_one_is_the_greedy_policy():
    kw = dict(lam_per_ms=3.0, alpha_ms=V100[0], tau0_ms=V100[1], b_max=32, n_jobs=20_000,
              seed=4)
    greedy = sim.simulate_records(**kw)
    for extra in (dict(max_queue_delay_ms=0.0, preferred_batch_size=8),
                  dict(max_queue_delay_ms=5.0, preferred_batch_size=1)):
        other = sim.simulate_records(**kw, **extra)
        np.testing.assert_array_equal(other.finish_ms, greedy.finish_ms)


@pytest.mark.parametrize("extra", [dict(), dict(b_max=8, max_queue_delay_ms=1.5,
                                                 preferred_batch_size=4)])
def test_numba_and_numpy_backends_agree_exactly(extra):
    kw = dict(lam_per_ms=4.0, alpha_ms=V100[0], tau0_ms=V100[1], n_jobs=30_000, seed=9,
              **extra)
    fast = sim.simulate_records(**kw)
    slow = sim.simulate_records(**kw, backend="numpy")
    np.testing.assert_array_equal(fast.finish_ms, slow.finish_ms)
    np.testing.assert_array_equal(fast.batch_size, slow.batch_size)


def test_streamed_summary_equals_summary_of_records():
    """simulate_batching accumulates inside the event loop across chunks; the same
    seed through simulate_records + summarize (plain numpy) gives the same numbers."""
    kw = dict(lam_per_ms=6.0, alpha_ms=V100[0], tau0_ms=V100[1], b_max=64, n_jobs=300_000,
              seed=3, max_queue_delay_ms=0.5, preferred_batch_size=16)
    streamed = sim.simulate_batching(**kw, warmup_jobs=30_000)
    direct = sim.summarize(sim.simulate_records(**kw), warmup_jobs=30_000)
    for field in ("mean_latency_ms", "ci95_ms", "mean_wait_ms", "ci95_wait_ms", "mean_batch_size",
                  "utilization"):
        assert getattr(streamed, field) == pytest.approx(getattr(direct, field), rel=1e-9)
    for field in ("p50_ms", "p95_ms", "p99_ms"):   # kept as float32 for the percentiles
        assert getattr(streamed, field) == pytest.approx(getattr(direct, field), rel=1e-6)
    assert streamed.n_jobs == direct.n_jobs == 270_000


def test_table_and_callable_batch_times_equal_the_linear_law():
    kw = dict(lam_per_ms=5.0, b_max=64, n_jobs=50_000, seed=2)
    linear = sim.simulate_records(alpha_ms=V100[0], tau0_ms=V100[1], **kw)
    table = sim.simulate_records(batch_time_ms=V100[0] * np.arange(1, 65) + V100[1], **kw)
    law = sim.simulate_records(batch_time_ms=lambda b: V100[0] * b + V100[1], **kw)
    np.testing.assert_allclose(table.finish_ms, linear.finish_ms, rtol=1e-12)
    np.testing.assert_allclose(law.finish_ms, linear.finish_ms, rtol=1e-12)
    # E[B] ≈ λτ0/(1 − ρ) = 2000 jobs: the table (first 1024 sizes) is extended on the fly.
    big = sim.simulate_records(batch_time_ms=lambda b: 0.01 * b + 20.0, lam_per_ms=50.0,
                               n_jobs=50_000, seed=2)
    assert big.batch_size.max() > 1024
    np.testing.assert_allclose(big.batch_time_ms, 0.01 * big.batch_size + 20.0)


@pytest.mark.parametrize("rho", [0.3, 0.8])
def test_b_max_one_matches_md1(rho):
    service = sum(V100)
    lam = rho / service
    res = sim.simulate_batching(lam, *V100, b_max=1, n_jobs=1_000_000, seed=21)
    assert abs(res.mean_latency_ms - md1_mean_latency(lam, service)) < 4 * res.ci95_ms
    assert res.mean_batch_size == 1.0
    assert res.utilization == pytest.approx(rho, abs=0.01)


def test_md1_percentiles_match_the_waiting_time_law():
    """M/D/1 with S = 1, λ = 0.5: P(W_q = 0) = 1 − ρ = 0.5, so the median latency
    is exactly S = 1 (the server is found idle by half the arrivals, PASTA)."""
    res = sim.simulate_batching(0.5, batch_time_ms=[1.0], n_jobs=400_000, seed=5)
    assert res.p50_ms == pytest.approx(1.0, abs=0.02)
    assert res.p99_ms > res.p95_ms > res.p50_ms


def test_confidence_intervals_cover_the_exact_mean():
    """40 independent runs: the batch-means 95% CI should cover E[W] in most."""
    lam = 0.7 / V100[0]
    exact = float(bt.mean_latency(lam, *V100))
    seeds = np.random.SeedSequence(2026).spawn(40)
    covered = 0
    for s in seeds:
        res = sim.simulate_batching(lam, *V100, n_jobs=50_000, seed=s)
        covered += abs(res.mean_latency_ms - exact) <= res.ci95_ms
    # If the CIs had their nominal 95% coverage, P(covered <= 32) = 0.0075.
    assert covered >= 33, covered


def test_triton_delay_trades_latency_for_batch_size():
    lam = 0.3 / V100[0]
    greedy = sim.simulate_batching(lam, *V100, b_max=64, n_jobs=200_000, seed=8)
    waiting = sim.simulate_batching(lam, *V100, b_max=64, n_jobs=200_000, seed=8,
                                    max_queue_delay_ms=3.0, preferred_batch_size=32)
    assert waiting.mean_batch_size > greedy.mean_batch_size
    assert waiting.mean_wait_ms > greedy.mean_wait_ms


@pytest.mark.parametrize("kwargs,match", [
    (dict(lam_per_ms=0.0), "lam_per_ms"), (dict(lam_per_ms=-1.0), "lam_per_ms"),
    (dict(lam_per_ms=np.inf), "lam_per_ms"),
    (dict(alpha_ms=0.0), "alpha_ms"), (dict(n_jobs=0), "n_jobs"), (dict(b_max=0), "b_max"),
    (dict(max_queue_delay_ms=-1.0), "max_queue_delay_ms"),
    (dict(b_max=4, preferred_batch_size=8), "preferred_batch_size"),
    (dict(backend="gpu"), "backend"), (dict(warmup_jobs=-1), "warmup_jobs"),
])
def test_invalid_arguments_name_the_parameter(kwargs, match):
    args = dict(lam_per_ms=1.0, alpha_ms=V100[0], tau0_ms=V100[1], n_jobs=1000) | kwargs
    with pytest.raises(ValueError, match=match):
        sim.simulate_batching(**args)


def test_batch_time_argument_errors():
    with pytest.raises(ValueError, match="batch_time_ms"):
        sim.simulate_batching(1.0, batch_time_ms=[1.0, np.nan], n_jobs=100)
    with pytest.raises(ValueError, match="b_max"):
        sim.simulate_batching(1.0, batch_time_ms=[1.0, 2.0], b_max=3, n_jobs=100)
    with pytest.raises(ValueError, match="either"):
        sim.simulate_batching(1.0, 0.1, 1.0, batch_time_ms=[1.0], n_jobs=100)
    with pytest.raises(ValueError, match="arrivals"):
        sim.simulate_batching(None, 0.1, 1.0, arrivals=[1.0, 0.5])


def test_same_seed_same_result_and_latencies_on_request():
    a = sim.simulate_batching(2.0, *V100, n_jobs=20_000, seed=1, return_latencies=True)
    b = sim.simulate_batching(2.0, *V100, n_jobs=20_000, seed=1)
    assert a.mean_latency_ms == b.mean_latency_ms and b.latencies_ms is None
    assert a.latencies_ms.shape == (a.n_jobs,)
    assert a.latencies_ms.mean() == pytest.approx(a.mean_latency_ms)


def test_too_short_a_run_near_saturation_is_flagged():
    """At ρ = 0.995 a 20,000-job run is shorter than the queue's memory: the batch
    means stay correlated even when merged to 10 groups, so the CI is flagged."""
    lam = 0.995 / V100[0]
    short = sim.simulate_batching(lam, *V100, n_jobs=20_000, seed=12)
    assert not short.ci_reliable
    assert sim.simulate_batching(0.5 / V100[0], *V100, n_jobs=100_000, seed=12).ci_reliable
