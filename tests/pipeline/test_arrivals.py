"""The tandem simulator under other arrivals (issue 16): ``arrivals=None`` is the Poisson
run of before, bit for bit (values recorded from the simulator before the keyword
existed); a Poisson process object agrees with it statistically; bursty renewal
arrivals (SCV 4) at the same mean rate raise the mean time in the pipeline and the
host's blocking; a replayed trace is deterministic and serves exactly its own times."""
from __future__ import annotations

import numpy as np
import pytest

from engine.arrivals import Poisson, Renewal
from engine.pipeline import simulate_tandem

RATES = dict(mu_cpu=2.0, mu_mem=1.5, mu_cu=0.5, K=3, c=2)     # capacity ≈ 0.75 per unit
LAM = 0.4

# (w_total_ms, throughput_per_ms, p_cpu_blocked, p_mem_blocked, ci95_ms, p99_ms) of
# simulate_tandem(0.4, **RATES, blocking, n_jobs=5000, seed=7) before ``arrivals``
RECORDED = {
    "before": (4.80712941464943, 0.4042949324674932, 0.05240465248837237,
               0.14510978277033038, 0.2904781569969061, 15.690917090902344),
    "after": (4.187101683979524, 0.4042949324674932, 0.019876841370148175,
              0.0891354227999356, 0.17081870468296262, 12.825717275747229),
}


@pytest.mark.parametrize("blocking", sorted(RECORDED))
def test_no_arrivals_is_the_poisson_run_of_before_bit_for_bit(blocking):
    r = simulate_tandem(LAM, **RATES, blocking=blocking, n_jobs=5000, seed=7)
    got = (r.w_total_ms, r.throughput_per_ms, r.p_cpu_blocked, r.p_mem_blocked, r.ci95_ms,
           r.p99_ms)
    assert got == RECORDED[blocking]
    assert simulate_tandem(LAM, **RATES, blocking=blocking, n_jobs=5000, seed=7,
                           arrivals=None) == r


def _z(a, b) -> float:
    """Difference of two independent estimates in units of its 95 % half-width."""
    return abs(a.w_total_ms - b.w_total_ms) / np.hypot(a.ci95_ms, b.ci95_ms)


def test_a_poisson_process_agrees_with_the_built_in_arrivals():
    plain = simulate_tandem(LAM, **RATES, n_jobs=200_000, seed=1)
    process = simulate_tandem(None, **RATES, n_jobs=200_000, seed=2, arrivals=Poisson(LAM))
    assert _z(plain, process) < 2.0                 # fails ~1 in 20 000 were they equal
    assert process.throughput_per_ms == pytest.approx(LAM, rel=0.02)
    assert process.p_cpu_blocked == pytest.approx(plain.p_cpu_blocked, abs=0.01)
    assert process.p_mem_blocked == pytest.approx(plain.p_mem_blocked, abs=0.01)


@pytest.mark.parametrize("blocking", ["before", "after"])
def test_bursty_arrivals_raise_the_mean_latency_and_the_blocking(blocking):
    poisson = simulate_tandem(None, **RATES, blocking=blocking, n_jobs=200_000, seed=3,
                              arrivals=Poisson(LAM))
    bursty = simulate_tandem(None, **RATES, blocking=blocking, n_jobs=200_000, seed=3,
                             arrivals=Renewal(LAM, 4.0))
    assert bursty.throughput_per_ms == pytest.approx(LAM, rel=0.03)       # the same mean load
    assert (bursty.w_total_ms - poisson.w_total_ms
            > 3 * np.hypot(bursty.ci95_ms, poisson.ci95_ms))
    assert bursty.p_cpu_blocked > 1.5 * poisson.p_cpu_blocked
    assert bursty.p_mem_blocked > poisson.p_mem_blocked


def test_a_replayed_trace_is_deterministic_and_serves_its_own_times():
    times = Renewal(LAM, 4.0).sample(3000, np.random.default_rng(11))
    a = simulate_tandem(None, **RATES, n_jobs=10, seed=5, arrivals=times)
    assert a == simulate_tandem(123.0, **RATES, seed=5, arrivals=list(times))
    assert a.n_jobs == 3000 - 300                   # n_jobs is the trace's length
    counted = times[300:]
    # every counted job completes once: throughput ≈ jobs over the counted span
    assert a.throughput_per_ms == pytest.approx((counted.size - 1) / (counted[-1] - counted[0]),
                                         rel=0.05)
    # the same seed with the same process gives the same path as replaying its sample
    process = Renewal(LAM, 4.0)
    assert (simulate_tandem(None, **RATES, n_jobs=3000, seed=5, arrivals=process)
            == simulate_tandem(None, **RATES, n_jobs=3000, seed=5, arrivals=process))


def test_a_sparse_replay_never_queues_or_blocks():
    """With arrivals far apart only one job is in the pipeline at a time: no one is held
    up or waits, and the mean time in the pipeline is the sum of the three mean service
    times 1/μ_cpu + 1/μ_mem + 1/μ_cu (200 jobs: within 25 %)."""
    times = np.arange(1, 201) * 1e6                 # gaps far beyond any service time
    r = simulate_tandem(None, **RATES, seed=9, arrivals=times, warmup_jobs=0)
    assert r.p_cpu_blocked == 0 and r.p_mem_blocked == 0
    assert r.w_total_ms == pytest.approx(1 / 2.0 + 1 / 1.5 + 1 / 0.5, rel=0.25)
    assert r.mean_wait_ms == pytest.approx(0.0, abs=1e-6)      # rounding of 1e6-s clocks


@pytest.mark.parametrize("bad", [[3.0, 1.0, 2.0], [-1.0, 2.0], [1.0], [[1.0, 2.0]],
                                 [1.0, np.nan], "x", [2.0, 2.0, 2.0]])
def test_bad_arrivals_raise_naming_arrivals(bad):
    with pytest.raises(ValueError, match="arrivals"):
        simulate_tandem(None, **RATES, arrivals=bad, warmup_jobs=0)
