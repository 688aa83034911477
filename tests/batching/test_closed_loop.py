"""The closed loop (engine.batching.closed_loop, closed_sim): limits in closed form, the
chain against an independently built chain, the model against the simulator, Little's
law, monotonicity and bounds.  Derivations: docs/models/batching.md, "Closed loop".

Notation: N clients, τ[b] = αb + τ0, θ the mean think time, c copies (instances).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from engine.batching import ClosedLoop, closed_loop, closed_sim, simulate_closed_loop


def tau(b, alpha, tau0):
    return alpha * b + tau0


# ------------------------------------------------------------------ limits

@pytest.mark.parametrize("theta, instances", [(0.0, 1), (0.0, 3), (2.5, 1), (2.5, 3),
                                              (1e-4, 1), (1e4, 2)])
def test_one_client_is_served_alone(theta, instances):
    """N = 1: the one request never shares a batch nor waits, so its latency is τ[1] and
    the client completes one request every τ[1] + θ: X = 1/(τ[1] + θ) (every method:
    cycle at θ = 0, chain for one copy, "alone" for several)."""
    alpha, tau0 = 0.3, 1.7
    r = closed_loop(1, alpha, tau0, b_max=4, think_time_ms=theta, instances=instances)
    t1 = tau(1, alpha, tau0)
    assert r.mean_latency_ms == pytest.approx(t1, rel=1e-12)
    assert r.throughput_per_ms == pytest.approx(1.0 / (t1 + theta), rel=1e-12)
    assert r.mean_batch_size == pytest.approx(1.0, rel=1e-12)


def test_zero_think_one_copy_is_the_cycle():
    """θ = 0, one copy: all N wait at every batch start, so batches of b = min(N, b_max)
    follow each other back to back: X = b/τ[b]; Little: W = N/X (τ[N] when N ≤ b_max)."""
    alpha, tau0, b_max = 0.5, 2.0, 8
    n = np.array([1, 3, 8, 9, 40])
    r = closed_loop(n, alpha, tau0, b_max)
    b = np.minimum(n, b_max)
    np.testing.assert_allclose(r.throughput_per_ms, b / tau(b, alpha, tau0), rtol=1e-14)
    np.testing.assert_allclose(r.mean_latency_ms, n * tau(b, alpha, tau0) / b, rtol=1e-14)
    np.testing.assert_allclose(r.mean_latency_ms[:3], tau(n[:3], alpha, tau0), rtol=1e-14)
    assert list(r.method) == ["cycle"] * 5 and np.all(r.utilization == 1.0)


@pytest.mark.parametrize("theta, instances", [(0.0, 1), (0.0, 4), (2.0, 1), (2.0, 4)])
def test_many_clients_reach_full_batches_on_every_copy(theta, instances):
    """N ≫ c·b_max: every copy always finds b_max waiting, X = c·b_max/τ[b_max]: exact for
    the cycle (a freed copy finds N − (c − 1)·b_max ≥ b_max waiting); for θ > 0 the
    chain and the approximation reach it up to the probability that fewer than b_max
    of ~N requests are back, here far below 1e-12."""
    alpha, tau0, b_max = 0.1, 2.0, 8
    r = closed_loop(400, alpha, tau0, b_max, theta, instances)
    assert r.throughput_per_ms == pytest.approx(instances * b_max / tau(b_max, alpha, tau0),
                                                rel=1e-12)
    assert r.mean_batch_size == pytest.approx(b_max, rel=1e-12)


def test_zero_think_several_copies_from_the_common_start():
    """θ = 0, c copies, N < c·b_max: from the common start ⌊N/b_max⌋ copies take full
    batches and one the r left over, and each group keeps its copy.  N = 5, b_max = 4,
    c = 2, τ[b] = b + 1: X = 4/τ[4] + 1/τ[1] = 4/5 + 1/2 = 1.3; batches per unit time
    1/5 + 1/2, so E[b] = 1.3/0.7."""
    r = closed_loop(5, 1.0, 1.0, b_max=4, instances=2)
    assert r.method == "cycle: all clients start at once"
    assert r.throughput_per_ms == pytest.approx(1.3, rel=1e-14)
    assert r.mean_latency_ms == pytest.approx(5 / 1.3, rel=1e-14)
    assert r.mean_batch_size == pytest.approx(1.3 / 0.7, rel=1e-14)
    # The simulator starts so too; its counted window cuts each group's cycle, so up to
    # one batch of each (5 requests) of its ~2,600 may fall outside: rel. error < 2e-3.
    sim = simulate_closed_loop(5, 1.0, 1.0, b_max=4, instances=2, n_batches=2_000, rng=1)
    assert sim.throughput_per_ms == pytest.approx(1.3, rel=5 / sim.n_requests)


# ------------------------------------------------------------------ the chain

def reference_chain_throughput(n, alpha, tau0, b_max, theta):
    """X of the one-copy chain built state by state from the model's description (returns
    R ~ Binomial(N − q, 1 − e^(−τ[b]/θ)), next q = q − b + R, q = 0 idles θ/N and
    becomes 1) and solved by power iteration of the lazy chain (I + P)/2."""
    p = np.zeros((n + 1, n + 1))
    idle = np.zeros(n + 1)
    for q in range(1, n + 1):
        b = min(q, b_max)
        back = stats.binom.pmf(np.arange(n - q + 1), n - q, 1 - np.exp(-tau(b, alpha, tau0) / theta))
        for r, prob in enumerate(back):
            nxt = q - b + r
            if nxt == 0:
                idle[q] += prob
            p[q, max(nxt, 1)] += prob
    p, idle = p[1:, 1:], idle[1:]
    pi = np.full(n, 1.0 / n)
    for _ in range(200_000):
        new = 0.5 * (pi + pi @ p)
        if np.abs(new - pi).sum() < 1e-15:
            break
        pi = new
    b = np.minimum(np.arange(1, n + 1), b_max)
    return (pi @ b) / (pi @ (tau(b, alpha, tau0) + idle * theta / n))


@pytest.mark.parametrize("n, alpha, tau0, b_max, theta", [
    (12, 1.0, 1.0, 5, 3.0), (30, 0.1, 2.0, 30, 5.0), (6, 0.5, 0.2, 2, 0.4), (2, 1.0, 0.0, 2, 1.0)])
def test_chain_against_an_independently_built_chain(n, alpha, tau0, b_max, theta):
    r = closed_loop(n, alpha, tau0, b_max, theta)
    assert r.method == "chain"
    assert r.throughput_per_ms == pytest.approx(
        reference_chain_throughput(n, alpha, tau0, b_max, theta), rel=1e-9)


def two_group_throughput(n, alpha, tau0, b_max):
    """θ → 0+ with one copy: the first of the N requests back starts a batch alone while
    the others wait; one group is served while the other waits.  A client still out when
    the running batch ends joins the other group, likeliest during the shorter batch, so
    late clients move to the smaller group and the groups end balanced, each batch ⌊N/2⌋
    or ⌈N/2⌉ (or b_max when N ≥ 2·b_max).  Two batches take αN + 2τ0:
    X = min(N/(αN + 2τ0), b_max/τ[b_max])."""
    return min(n / (alpha * n + 2 * tau0), b_max / tau(b_max, alpha, tau0))


@pytest.mark.parametrize("n, b_max", [(10, 64), (11, 64), (20, 8), (12, 8), (200, 256)])
@pytest.mark.parametrize("theta", [1e-3, 0.05, 1e-300])
def test_chain_small_think_time_limit(n, b_max, theta):
    """The chain at θ ≪ τ[1] (failures e^(−τ/θ) from 1e-9 down to underflow) gives the
    two-group law.  It equals the cycle (θ = 0, batches of b = min(N, b_max), X = b/τ[b])
    only when N ≥ 2·b_max; below, the cycle is faster (for N ≤ b_max by one τ0 per N
    requests): with exponential think times θ = 0 is not the limit θ → 0."""
    alpha, tau0 = 1.0, 1.0
    r = closed_loop(n, alpha, tau0, b_max, theta)
    assert r.throughput_per_ms == pytest.approx(two_group_throughput(n, alpha, tau0, b_max),
                                                rel=1e-9)
    cycle = closed_loop(n, alpha, tau0, b_max).throughput_per_ms
    if n >= 2 * b_max:
        assert cycle == pytest.approx(r.throughput_per_ms, rel=1e-9)
    else:
        b = min(n, b_max)
        assert cycle == pytest.approx(b / tau(b, alpha, tau0), rel=1e-14)
        assert cycle > r.throughput_per_ms


def test_deterministic_think_keeps_the_cycle_and_exponential_splits_it():
    """In the simulator, a deterministic think time brings a batch's N requests back
    together: batches of N, X = N/(τ[N] + θ).  Exponential think times spread them and
    the two-group law appears (N = 10, α = τ0 = 1, θ = 0.01: 10/12 against 10/11.01)."""
    n, theta = 10, 0.01
    det = simulate_closed_loop(n, 1.0, 1.0, think_time_ms=theta, think="deterministic",
                               n_batches=2_000, rng=3)
    assert det.throughput_per_ms == pytest.approx(n / (tau(n, 1.0, 1.0) + theta), rel=1e-9)
    expo = simulate_closed_loop(n, 1.0, 1.0, think_time_ms=theta, n_batches=4_000, rng=3)
    assert expo.throughput_per_ms == pytest.approx(two_group_throughput(n, 1.0, 1.0, 64), rel=2e-3)


# ------------------------------------------------------------------ against the simulator

def within(model, sim, ci, rel_bound=0.0):
    """|model − sim| within 4 standard errors of the simulation (ci = 1.96σ), plus the
    documented relative error of an approximation and a rounding floor."""
    return abs(model - sim) <= 4 * ci / 1.96 + rel_bound * abs(sim) + 1e-9 * abs(sim)


# Approximation bounds measured over the grid in docs/models/batching.md (θ ≥ τ[1]).
FLOW_X_BOUND, FLOW_W_BOUND = 0.08, 0.15


@pytest.mark.parametrize("n, alpha, tau0, b_max, theta, instances, bound", [
    (16, 0.1, 2.0, 8, 2.1, 1, 0.0),                 # chain
    (40, 1.0, 0.5, None, 0.7, 1, 0.0),              # chain, unlimited batches
    (3, 0.1, 2.0, None, 1.0, 4, 0.0),               # every request alone
    (16, 0.1, 2.0, None, 2.1, 2, 1.0),              # flow-equivalent server
    (64, 1.0, 1.0, 8, 6.0, 4, 1.0),                 # flow-equivalent server
])
def test_model_against_simulation(n, alpha, tau0, b_max, theta, instances, bound):
    r = closed_loop(n, alpha, tau0, b_max, theta, instances)
    sim = simulate_closed_loop(n, alpha, tau0, b_max, theta, instances, n_batches=20_000,
                               rng=np.random.default_rng(11))
    x_bound, w_bound = bound * FLOW_X_BOUND, bound * FLOW_W_BOUND
    assert within(r.throughput_per_ms, sim.throughput_per_ms, sim.ci95_throughput_per_ms, x_bound)
    assert within(r.mean_latency_ms, sim.mean_latency_ms, sim.ci95_ms, w_bound)
    if bound == 0.0:
        assert within(r.mean_batch_size, sim.mean_batch_size, 0.01 * sim.mean_batch_size)
        assert abs(r.utilization - sim.utilization) < 0.01


# ------------------------------------------------------------------ properties

PARAMS = st.tuples(st.floats(0.01, 2.0), st.floats(0.0, 5.0),
                   st.one_of(st.none(), st.integers(1, 32)),
                   st.one_of(st.just(0.0), st.floats(0.01, 20.0)), st.integers(1, 4))
N_GRID = np.arange(1, 61)


@settings(max_examples=60, deadline=None)
@given(PARAMS)
def test_littles_law_bounds_and_monotone_throughput(params):
    """Little over the loop, N = X(W + θ), to rounding; X ≤ N/(τ[1] + θ) (W ≥ τ[1]) and
    X ≤ c·B/τ[B] with B = min(N, b_max) (b/τ[b] grows with b); 1 ≤ E[b] ≤ B;
    utilization in [0, 1]; X nondecreasing in N (one more client never slows the loop)."""
    alpha, tau0, b_max, theta, c = params
    r = closed_loop(N_GRID, alpha, tau0, b_max, theta, c)
    x, w = r.throughput_per_ms, r.mean_latency_ms
    np.testing.assert_allclose(N_GRID, x * (w + theta), rtol=1e-12)
    big = np.minimum(N_GRID, np.inf if b_max is None else b_max)
    assert np.all(x <= N_GRID / (tau(1, alpha, tau0) + theta) * (1 + 1e-12))
    assert np.all(x <= c * big / tau(big, alpha, tau0) * (1 + 1e-12))
    assert np.all(w >= tau(1, alpha, tau0) * (1 - 1e-12))
    assert np.all((r.mean_batch_size >= 1 - 1e-12) & (r.mean_batch_size <= big * (1 + 1e-12)))
    assert np.all((r.utilization >= 0) & (r.utilization <= 1 + 1e-12))
    assert np.all(np.diff(x) >= -1e-9 * x[1:])


def test_broadcasting_and_result_types():
    r = closed_loop([[1], [8]], 1.0, 1.0, b_max=[None, 4, 2], think_time_ms=[0.0, 1.0, 1.0],
                    instances=[1, 1, 2])
    assert isinstance(r, ClosedLoop) and r.throughput_per_ms.shape == (2, 3)
    assert r.method.shape == (2, 3) and r.method[1, 0] == "cycle"
    assert r.method[1, 1] == "chain" and r.method[1, 2].startswith("approximation")
    one = closed_loop(8, 1.0, 1.0, think_time_ms=1.0)
    assert isinstance(one.throughput_per_ms, float) and isinstance(one.method, str)
    with pytest.raises(ValueError, match="n_clients"):
        closed_loop(0, 1.0, 1.0)
    with pytest.raises(ValueError, match="instances"):
        closed_loop(4, 1.0, 1.0, instances=1.5)


# ------------------------------------------------------------------ the simulator

def test_simulator_plain_python_loop_gives_the_same_run(monkeypatch):
    """The compiled loop and the same function run as plain Python agree exactly."""
    kw = dict(n_clients=9, alpha_ms=0.4, tau0_ms=1.0, b_max=4, think_time_ms=1.5, instances=2,
              n_batches=300)
    fast = simulate_closed_loop(**kw, rng=5)
    monkeypatch.setattr(closed_sim, "_event_loop_fast", closed_sim._event_loop)
    slow = simulate_closed_loop(**kw, rng=5)
    assert fast == slow


def test_simulator_zero_think_cycle_by_hand():
    """θ = 0, one copy, N = 8, b_max = 3, τ[b] = b + 1: batches of 3 every 4, X = 3/4;
    the requests wait 8/3 batches on average: W = N/X = 32/3."""
    r = simulate_closed_loop(8, 1.0, 1.0, b_max=3, n_batches=3_000, rng=0)
    assert r.throughput_per_ms == pytest.approx(0.75, rel=1e-12)
    assert r.mean_latency_ms == pytest.approx(32 / 3, rel=1e-3)
    assert r.mean_batch_size == 3.0 and r.utilization == pytest.approx(1.0)
    assert r.mean_wait_ms == pytest.approx(r.mean_latency_ms - 4.0, rel=1e-12)


def test_simulator_rejects_bad_arguments():
    with pytest.raises(ValueError, match="think"):
        simulate_closed_loop(4, 1.0, 1.0, think_time_ms=1.0, think="uniform")
    with pytest.raises(ValueError, match="n_clients"):
        simulate_closed_loop([4, 5], 1.0, 1.0)
    with pytest.raises(ValueError, match="n_batches"):
        simulate_closed_loop(4, 1.0, 1.0, n_batches=0)


def test_closed_loop_summary_of_records_by_hand():
    """summarize_closed_loop on hand-made records: the mean, np.percentile's p50/p95/p99,
    X = requests / span, E[B] = requests / batches, utilization = busy / (copies × span);
    fewer than the CI's groups: infinite half-widths, flagged unreliable."""
    latency = np.array([3.0, 1.0, 2.0, 6.0, 4.0])
    wait = latency - 1.0
    finish = np.array([2.0, 3.0, 5.0, 7.0, 12.0])
    rec = closed_sim.ClosedLoopRecords(latency, wait, finish, span_start_ms=2.0,
                                       busy_copy_time_ms=15.0, n_batches=2, instances=2)
    r = closed_sim.summarize_closed_loop(rec)
    assert r.mean_latency_ms == pytest.approx(3.2) and r.mean_wait_ms == pytest.approx(2.2)
    assert (r.p50_ms, r.p95_ms, r.p99_ms) == pytest.approx(
        tuple(np.percentile(latency, [50, 95, 99])))
    assert r.throughput_per_ms == pytest.approx(5 / 10.0) and r.mean_batch_size == 2.5
    assert r.utilization == pytest.approx(15.0 / (2 * 10.0))
    assert r.n_requests == 5 and r.n_batches == 2
    assert np.isinf(r.ci95_ms) and np.isinf(r.ci95_throughput_per_ms) and not r.ci_reliable
    with pytest.raises(ValueError, match="records"):
        closed_sim.summarize_closed_loop(closed_sim.ClosedLoopRecords(
            np.empty(0), np.empty(0), np.empty(0), 0.0, 0.0, 1, 1))


def test_results_read_under_their_old_names_with_a_warning():
    """The names before the unit was added (ms, per ms) read the same values, with a
    DeprecationWarning naming the new one."""
    r = closed_loop(4, 1.0, 1.0, think_time_ms=1.0)
    sim = simulate_closed_loop(4, 1.0, 1.0, think_time_ms=1.0, n_batches=500, rng=2)
    pairs = [(r, "throughput", "throughput_per_ms"), (r, "mean_latency", "mean_latency_ms"),
             (sim, "throughput", "throughput_per_ms"),
             (sim, "ci95_throughput", "ci95_throughput_per_ms")]
    pairs += [(sim, old, old + "_ms") for old in ("mean_latency", "ci95", "p50", "p95", "p99",
                                                  "mean_wait", "ci95_wait")]
    rec = closed_sim.simulate_closed_loop_records(4, 1.0, 1.0, think_time_ms=1.0, n_batches=50,
                                                  rng=2)
    pairs += [(rec, old, old + "_ms") for old in ("latency", "wait", "finish", "span_start",
                                                  "busy_copy_time")]
    for result, old, new in pairs:
        with pytest.warns(DeprecationWarning, match=new):
            got = getattr(result, old)
        np.testing.assert_array_equal(got, getattr(result, new), err_msg=old)
