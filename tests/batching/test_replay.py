"""Trace replay is deterministic given the trace: the simulator's latencies over replayed
arrival times equal, to the last bit, an independent recursion over the same times (the
greedy policy and the Triton-style batcher), on random traces and on the Azure code
trace scaled to ρ = 0.7 on the V100 profile; an arrival process passed as ``arrivals``
is served exactly as the times it draws."""
from bisect import bisect_right

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine.arrivals import MMPP2, Poisson, Replay
from engine.batching import simulate_batching, simulate_records
from engine.measured import read_trace
from tests.real_data import real_file

V100 = (0.1438, 1.8874)          # α, τ0 in ms


def replay_by_hand(arrivals, alpha, tau0, b_max=None, delay=0.0, preferred=None):
    """(start, finish) of every job, by the policy's definition, one batch at a time.

    Greedy (delay 0): the server, free at ``free``, starts at t = max(free, oldest
    arrival) with every job arrived by t, at most b_max, oldest first.  Triton-style
    (delay > 0): if fewer than ``preferred`` have arrived by t and the oldest has waited
    less than ``delay``, it starts instead when the preferred-th arrives or the oldest
    has waited ``delay``, whichever is first, with every job arrived by then.  A batch
    of b jobs takes αb + τ0.
    """
    arr = [float(x) for x in arrivals]
    n = len(arr)
    cap = n if b_max is None else min(b_max, n)
    want = cap if preferred is None else min(preferred, cap)
    start, finish = [0.0] * n, [0.0] * n
    free, i = 0.0, 0
    while i < n:
        t = max(free, arr[i])
        deadline = arr[i] + delay
        if delay > 0 and bisect_right(arr, t) - i < want and deadline > t:
            k = i + want - 1
            t = arr[k] if k < n and arr[k] <= deadline else deadline
        j = min(bisect_right(arr, t), i + cap)
        done = t + (alpha * (j - i) + tau0)
        for m in range(i, j):
            start[m], finish[m] = t, done
        free, i = done, j
    return np.array(start), np.array(finish)


@st.composite
def traces(draw):
    """Sorted times from gaps that are often 0 (ties), small or large."""
    gaps = draw(st.lists(st.one_of(st.just(0.0), st.floats(0.0, 0.5), st.floats(0.0, 20.0)),
                         min_size=1, max_size=120))
    return np.cumsum(gaps)


@settings(max_examples=150, deadline=None)
@given(traces(), st.floats(0.01, 3.0), st.floats(0.0, 5.0), st.one_of(st.none(),
       st.integers(1, 12)), st.one_of(st.just(0.0), st.floats(0.05, 10.0)),
       st.one_of(st.none(), st.integers(1, 12)), st.sampled_from(["numba", "numpy"]))
def test_replay_equals_the_recursion_on_random_traces(arrivals, alpha, tau0, b_max, delay,
                                                      preferred, backend):
    if preferred is not None and b_max is not None:
        preferred = min(preferred, b_max)
    start, finish = replay_by_hand(arrivals, alpha, tau0, b_max, delay, preferred)
    kw = dict(b_max=b_max, max_queue_delay_ms=delay, preferred_batch_size=preferred,
              arrivals=arrivals, backend=backend)
    rec = simulate_records(None, alpha, tau0, **kw)
    np.testing.assert_array_equal(rec.arrival_ms, arrivals)
    np.testing.assert_array_equal(rec.start_ms, start)
    np.testing.assert_array_equal(rec.finish_ms, finish)
    sim = simulate_batching(None, alpha, tau0, **kw, warmup_jobs=0, return_latencies=True)
    np.testing.assert_array_equal(sim.latencies_ms, finish - arrivals)
    assert sim.mean_latency_ms == pytest.approx(np.mean(finish - arrivals), rel=1e-12)


def test_triton_recursion_by_hand():
    """The recursion itself on the sample path of tests/batching/test_sim.py: τ[b] = b + 1,
    delay 0.3, preferred 2: the first job starts alone at 0.3, then 3 jobs at 2.3, 2 at 6.3."""
    start, finish = replay_by_hand([0, 0.5, 0.6, 1.0, 5.0, 5.1], 1.0, 1.0, delay=0.3,
                                   preferred=2)
    np.testing.assert_allclose(start, [0.3, 2.3, 2.3, 2.3, 6.3, 6.3])
    np.testing.assert_allclose(finish, [2.3, 6.3, 6.3, 6.3, 9.3, 9.3])


@pytest.fixture(scope="module")
def code_trace_ms():
    """The Azure code trace (8,819 requests) scaled to ρ = 0.7 on the V100 profile: mean
    rate 0.7/α per ms, so the times are in ms."""
    seconds = read_trace(real_file("trace_azure_llm_2023_code.csv")).arrival_s
    return Replay(seconds, "the code trace").scaled(0.7 / V100[0])


@pytest.mark.parametrize("b_max, delay, preferred", [(None, 0.0, None), (64, 0.0, None),
                                                     (64, 2.0, 16)])
def test_azure_code_trace_replay_equals_the_recursion(code_trace_ms, b_max, delay, preferred):
    alpha, tau0 = V100
    times = code_trace_ms.arrival_times
    assert code_trace_ms.rate == pytest.approx(0.7 / alpha, rel=1e-12)
    start, finish = replay_by_hand(times, alpha, tau0, b_max, delay, preferred)
    kw = dict(b_max=b_max, max_queue_delay_ms=delay, preferred_batch_size=preferred)
    sim = simulate_batching(None, alpha, tau0, **kw, arrivals=times, warmup_jobs=0,
                            return_latencies=True)
    np.testing.assert_array_equal(sim.latencies_ms, finish - times)
    rec = simulate_records(None, alpha, tau0, **kw, arrivals=times)
    np.testing.assert_array_equal(rec.start_ms, start)
    np.testing.assert_array_equal(rec.finish_ms, finish)
    # The same replay passed as a process: its own times from 0, cycled past the end.
    n = int(2.5 * times.size)
    cycled = code_trace_ms.sample(n)
    start, finish = replay_by_hand(cycled, alpha, tau0, b_max, delay, preferred)
    sim = simulate_batching(None, alpha, tau0, **kw, n_jobs=n, arrivals=code_trace_ms,
                            warmup_jobs=0, return_latencies=True)
    np.testing.assert_array_equal(sim.latencies_ms, finish - cycled)


def test_a_process_is_served_as_the_times_it_draws():
    """arrivals=process: ``lam_per_ms`` is ignored and n_jobs times are drawn from a child of
    the run's generator (engine.core.arrival_input), so a seed fixes the path."""
    alpha, tau0 = V100
    process = MMPP2(20.0, 2.0, 0.5, 0.5)
    n, seed = 20_000, 5
    times = process.sample(n, np.random.default_rng(seed).spawn(1)[0])
    by_process = simulate_records(12345.0, alpha, tau0, 32, n_jobs=n, seed=seed,
                                  arrivals=process)
    by_times = simulate_records(None, alpha, tau0, 32, arrivals=times)
    np.testing.assert_array_equal(by_process.arrival_ms, times)
    np.testing.assert_array_equal(by_process.finish_ms, by_times.finish_ms)
    _, finish = replay_by_hand(times, alpha, tau0, 32)
    np.testing.assert_array_equal(by_process.finish_ms, finish)
    a = simulate_batching(None, alpha, tau0, 32, n_jobs=n, seed=seed, arrivals=process)
    b = simulate_batching(None, alpha, tau0, 32, arrivals=times)
    assert a == b


def test_poisson_process_runs_like_the_built_in_arrivals():
    """arrivals=Poisson(λ) gives a run with the same law as lam_per_ms=λ (not the same
    path: the process draws from a child stream): the means agree within their CIs."""
    alpha, tau0 = V100
    lam = 0.6 / alpha
    own = simulate_batching(lam, alpha, tau0, n_jobs=400_000, seed=2)
    drawn = simulate_batching(None, alpha, tau0, n_jobs=400_000, seed=2, arrivals=Poisson(lam))
    assert drawn.n_jobs == own.n_jobs
    assert abs(own.mean_latency_ms - drawn.mean_latency_ms) <= 4 * np.hypot(own.ci95_ms, drawn.ci95_ms) / 1.96


def test_a_process_needs_a_usable_rate_and_sample():
    class Broken:
        rate = 0.0

        def sample(self, n, rng):
            return np.arange(n, dtype=float)

    with pytest.raises(ValueError, match="arrivals"):
        simulate_batching(None, 1.0, 1.0, n_jobs=10, arrivals=Broken())

    class Unsorted(Broken):
        rate = 1.0

        def sample(self, n, rng):
            return np.arange(n, dtype=float)[::-1]

    with pytest.raises(ValueError, match="arrivals"):
        simulate_batching(None, 1.0, 1.0, n_jobs=10, arrivals=Unsorted())
    with pytest.raises(ValueError, match="n_jobs"):
        simulate_batching(None, 1.0, 1.0, n_jobs=0, arrivals=Poisson(1.0))
