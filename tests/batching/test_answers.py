"""The model's answers and units (engine.batching.formulas/answers) against theory and
hand computations: energy (eqs 17, 19), load units, the operating point, validation."""
import numpy as np
import pytest

from engine import batching as bt
from engine.batching import answers
from tests.reference import md1_mean_latency

V100 = (0.1438, 1.8874)   # Inoue 2021 §3.3, fitted from Table 1(a)


def test_one_energy_formula_for_the_exact_value_the_curves_and_the_point():
    """η = 1/(β + c0/E[B]) (eq 19): the exact value, the curves and the operating point
    all equal the formula applied to the exact E[B] (one function, no copies)."""
    alpha, tau0 = V100
    beta, c0 = 0.05, 0.6
    c = bt.load_curves(alpha, tau0, None, beta, c0, n_points=7)
    by_hand = 1.0 / (beta + c0 / c.mean_batch_size)
    np.testing.assert_allclose(c.energy_efficiency_per_j, by_hand, rtol=1e-15)
    np.testing.assert_allclose(bt.energy_efficiency(c.lam_per_ms, alpha, tau0, beta, c0),
                               by_hand, rtol=1e-12)
    point = bt.operating_point_at(float(c.lam_per_ms[3]), alpha, tau0, None, beta, c0)
    assert point.energy_efficiency_per_j == pytest.approx(by_hand[3], rel=1e-12)
    assert point.joules_per_request == pytest.approx(beta + c0 / c.mean_batch_size[3], rel=1e-12)


def test_energy_bound_is_the_formula_at_the_batch_size_bound():
    """Eq 40 is eq 19 at E[B] ≥ max(1, λτ0/(1 − λα)) (Remark 5)."""
    alpha, tau0 = V100
    lam = np.array([0.1, 0.5, 0.9]) / alpha
    eb_low = np.maximum(1.0, lam * tau0 / (1 - lam * alpha))
    np.testing.assert_allclose(bt.energy_efficiency_bound(lam, alpha, tau0, 0.05, 0.6),
                               bt.efficiency_from_batch_size(eb_low, 0.05, 0.6), rtol=1e-15)
    assert bt.efficiency_from_batch_size(np.inf, 0.05, 0.6) == 1 / 0.05


def test_throughput_and_batch_energy_laws():
    """μ[b] = b/(αb + τ0) per ms → per s (eq 26); c[b] = βb + c0 (eq 17)."""
    assert bt.throughput_per_s(4, 0.5, 1.0) == pytest.approx(4000 / 3.0)
    assert bt.throughput_per_s(1e12, 0.5, 1.0) == pytest.approx(2000.0)     # 1/α per ms
    np.testing.assert_allclose(bt.batch_energy([0, 2], 0.3, 1.5), [1.5, 2.1])


def test_load_units_round_trip():
    alpha = 0.25
    assert bt.rate_from_load(0.5, alpha, "rho") == pytest.approx(2.0)        # λ = ρ/α
    assert bt.rate_from_load(3000.0, alpha, "per_s") == pytest.approx(3.0)
    assert bt.load_in(2.0, alpha, "rho") == pytest.approx(0.5)
    assert bt.load_in(2.0, alpha, "per_s") == pytest.approx(2000.0)
    assert bt.per_ms_to_per_s(bt.per_s_to_per_ms(1234.5)) == pytest.approx(1234.5)
    with pytest.raises(ValueError, match="unit"):
        bt.load_in(1.0, alpha, "rps")


def test_below_capacity_is_the_stability_condition():
    alpha, tau0 = V100
    for b_max in (None, 1, 8):
        cap = bt.capacity(alpha, tau0, b_max)
        assert bt.below_capacity(cap * 0.999, alpha, tau0, b_max)
        assert not bt.below_capacity(cap, alpha, tau0, b_max)
    assert bt.utilization_bound(0.1, 1.0, 2.0) == pytest.approx(0.3)       # λ(α + τ0)
    assert bt.utilization_bound(1.0, 1.0, 2.0) == 1.0


def test_operating_point_at_b_max_1_is_md1_with_hand_computed_cost():
    """b_max = 1: M/D/1 with service α + τ0 (Pollaczek-Khinchine); $ per million =
    GPU $/h spread over the requests of an hour + the electricity of one request."""
    alpha, tau0, lam = 0.5, 1.5, 0.3
    p = bt.operating_point_at(lam, alpha, tau0, 1, 2.0, 10.0, gpu_usd_per_hour=3.6,
                              usd_per_kwh=0.36)
    assert p.stable and p.mean_latency_ms == pytest.approx(md1_mean_latency(lam, 2.0), rel=1e-9)
    assert p.mean_batch_size == pytest.approx(1.0)
    assert p.utilization == pytest.approx(lam * 2.0, rel=1e-9)
    assert p.joules_per_request == pytest.approx(12.0)                     # β + c0 at E[B] = 1
    gpu = 3.6 / 3600 / (lam * 1000) * 1e6
    power = 12.0 / 3.6e6 * 0.36 * 1e6
    assert p.usd_per_million == pytest.approx(gpu + power, rel=1e-12)
    assert p.rate_per_s == 300.0 and p.rho == pytest.approx(0.15)
    assert p.capacity_per_s == pytest.approx(500.0)


def test_operating_point_beyond_capacity_is_unstable():
    p = bt.operating_point_at(10.0, *V100)
    assert not p.stable and p.mean_latency_ms == np.inf and p.usd_per_million == np.inf
    assert p.energy_efficiency_per_j is None and p.utilization == 1.0


def test_validation_of_the_v100_preset():
    """φ bounds E[W] from above (Theorem 2) and simulation agrees with the exact mean."""
    v = answers.validation(*V100, n_jobs=100_000, seed=3)
    assert 0 < v.phi_gap < 0.5
    assert v.max_z < 5
    assert v.loads_per_ms == pytest.approx(tuple(np.array([0.3, 0.6, 0.85]) / V100[0]))


@pytest.mark.parametrize("rho", [0.05, 0.2, 0.5, 0.9])
def test_busy_time_splits_into_work_rho_and_batch_overhead(rho):
    """Batches start at rate λ/E[B] and take αE[B] + τ0, so the per-job work is λα = ρ of
    the time and the fixed cost λτ0/E[B]; with the idle share π0 they add up to 1."""
    alpha, tau0 = V100
    lam = rho / alpha
    p = bt.operating_point_at(lam, alpha, tau0)
    assert p.work_share == pytest.approx(rho, rel=1e-9)
    assert p.overhead_share == pytest.approx(lam * tau0 / p.mean_batch_size, rel=1e-9)
    assert p.idle_share + p.work_share + p.overhead_share == pytest.approx(1.0, abs=1e-12)


def test_busy_all_the_time_at_half_load_on_the_v100():
    """ρ = 0.5 on the V100 profile: busy ~100 % of the time although the work is half of
    capacity (batches of ~13 jobs pay τ0 = 1.89 ms each); simulation agrees on the idle share."""
    alpha, tau0 = V100
    lam = 0.5 / alpha
    p = bt.operating_point_at(lam, alpha, tau0)
    assert p.idle_share < 1e-5 and p.overhead_share == pytest.approx(0.5, abs=1e-5)
    sim = bt.simulate_batching(lam, alpha, tau0, n_jobs=100_000, seed=5)
    assert 1 - sim.utilization < 1e-3
    assert sim.mean_batch_size * alpha / (sim.mean_batch_size * alpha + tau0) * sim.utilization \
        == pytest.approx(0.5, rel=0.01)


def test_busy_split_beyond_capacity():
    """Beyond capacity the GPU is always busy: with b_max = 8, batches of 8 (work 8α of
    8α + τ0); without b_max, batches without bound are all work."""
    alpha, tau0 = V100
    capped = bt.operating_point_at(10.0, alpha, tau0, 8)
    assert capped.work_share == pytest.approx(8 * alpha / (8 * alpha + tau0), rel=1e-9)
    assert capped.idle_share == 0.0
    assert bt.busy_split(1.0, np.inf, alpha, tau0) == (1.0, 0.0)


def test_energy_per_request_at_a_board_power():
    """A GPU drawing P W busy (share u of the time) and P_idle otherwise at λ requests/s
    spends (P·u + P_idle·(1 − u))/λ J per request: 70 W busy half the time at 100/s is
    0.35 J; always busy it is P/λ; no requests, no finite share."""
    assert bt.energy_per_request_at_power(100.0, 0.5, 70.0) == pytest.approx(0.35)
    assert bt.energy_per_request_at_power(100.0, 0.5, 70.0, 30.0) == pytest.approx(0.5)
    assert bt.energy_per_request_at_power(50.0, 1.0, 70.0) == pytest.approx(1.4)
    assert bt.energy_per_request_at_power(0.0, 0.5, 70.0) == np.inf
    with pytest.raises(ValueError, match="busy_power_w"):
        bt.energy_per_request_at_power(100.0, 0.5, -1.0)


def test_old_result_names_read_the_unit_suffixed_fields():
    """Every result field renamed to carry its unit still reads under its old name, the
    same value, with a DeprecationWarning naming the new one."""
    import warnings

    from engine.batching import (load_curves, mean_latency_mmpp2, operating_point_at,
                                 simulate_batching, sweep_from_results, merge_delay_sweeps,
                                 sweep_queue_delay)
    from engine.arrivals import MMPP2

    alpha, tau0 = 0.1438, 1.8874
    lam = 0.5 / alpha
    run = simulate_batching(lam, alpha, tau0, n_jobs=2_000, seed=3, return_latencies=True)
    sweep = sweep_from_results([lam], [run])
    delays = merge_delay_sweeps([sweep_queue_delay(lam, alpha, tau0, 16, 8, (0.0,),
                                                   n_jobs=2_000, seed=3)])
    curves = load_curves(alpha, tau0, None, 1.0, 0.5, n_points=5)
    here = operating_point_at(lam, alpha, tau0)
    chain = mean_latency_mmpp2(MMPP2(2.0 * lam, 0.5 * lam, 0.01, 0.01), alpha, tau0, 32)
    cases = [(run, ("mean_latency", "ci95", "p50", "p95", "p99", "mean_wait", "ci95_wait",
                    "latencies")),
             (sweep, ("lam:lam_per_ms", "mean_latency", "ci95", "p50", "p95", "p99")),
             (delays, ("mean_latency", "p99", "greedy_p99")),
             (curves, ("lam:lam_per_ms", "capacity:capacity_per_ms", "mean_latency",
                       "mean_wait", "phi0", "phi1", "phi",
                       "energy_efficiency:energy_efficiency_per_j",
                       "energy_efficiency_bound:energy_efficiency_bound_per_j")),
             (here, ("mean_latency",)),
             (bt.stationary(lam, alpha, tau0), ("mean_latency", "mean_processing", "mean_wait")),
             (chain, ("mean_latency", "mean_wait", "mean_processing",
                      "throughput:throughput_per_ms", "arrival_rate:arrival_rate_per_ms"))]
    for result, names in cases:
        for entry in names:
            old, new = entry.split(":") if ":" in entry else (entry, f"{entry}_ms")
            with pytest.warns(DeprecationWarning, match=new):
                got = getattr(result, old)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                want = getattr(result, new)
            assert np.array_equal(np.asarray(got), np.asarray(want)), (type(result), old)


def test_old_keyword_names_give_the_same_numbers():
    """Keywords renamed to carry their unit (lam → lam_per_ms, alpha → alpha_ms, tau0 →
    tau0_ms, beta → beta_j, c0 → c0_j) still work, with a DeprecationWarning, and answer
    the same numbers."""
    from engine.batching import (b_max_family, busy_split, load_curves,
                                 max_rate_for_mean_latency, simulate_rate, simulate_rates,
                                 sweep_queue_delay, validation)

    alpha, tau0 = V100
    lam = 0.5 / alpha
    with pytest.warns(DeprecationWarning, match="_ms|_j"):
        old = load_curves(alpha=alpha, tau0=tau0, beta=0.5, c0=1.0, n_points=5)
    new = load_curves(alpha_ms=alpha, tau0_ms=tau0, beta_j=0.5, c0_j=1.0, n_points=5)
    assert np.array_equal(old.mean_latency_ms, new.mean_latency_ms)
    assert np.array_equal(old.energy_efficiency_per_j, new.energy_efficiency_per_j)
    with pytest.warns(DeprecationWarning, match="_ms"):
        fam = b_max_family(alpha=alpha, tau0=tau0, b_values=[4])
    assert np.array_equal(fam[0][2], b_max_family(alpha, tau0, [4])[0][2])
    with pytest.warns(DeprecationWarning, match="_ms"):
        assert max_rate_for_mean_latency(10.0, alpha=alpha, tau0=tau0) == \
            max_rate_for_mean_latency(10.0, alpha, tau0)
    with pytest.warns(DeprecationWarning, match="_ms"):
        assert busy_split(0.9, 8.0, alpha=alpha, tau0=tau0) == busy_split(0.9, 8.0, alpha, tau0)
    with pytest.warns(DeprecationWarning, match="_ms"):
        run = simulate_rate(lam=lam, alpha=alpha, tau0=tau0, n_jobs=2_000, seed=1)
    assert run == simulate_rate(lam, alpha, tau0, n_jobs=2_000, seed=1)
    with pytest.warns(DeprecationWarning, match="_ms"):
        sweep = simulate_rates(lam=[lam], alpha=alpha, tau0=tau0, n_jobs=2_000, seed=1)
    assert np.array_equal(sweep.p99_ms,
                          simulate_rates([lam], alpha, tau0, n_jobs=2_000, seed=1).p99_ms)
    with pytest.warns(DeprecationWarning, match="_ms"):
        d = sweep_queue_delay(lam=lam, alpha=alpha, tau0=tau0, b_max=16,
                              preferred_batch_size=8, delays_ms=(0.0, 1.0), n_jobs=2_000)
    assert np.array_equal(d.p99_ms, sweep_queue_delay(lam, alpha, tau0, 16, 8, (0.0, 1.0),
                                                      n_jobs=2_000).p99_ms)
    with pytest.warns(DeprecationWarning, match="_ms"):
        v = validation(alpha=alpha, tau0=tau0, n_jobs=2_000, fractions=(0.5,))
    assert v == validation(alpha, tau0, n_jobs=2_000, fractions=(0.5,))
