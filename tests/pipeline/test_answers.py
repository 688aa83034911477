"""The page's answers, now in the engine (engine/pipeline/answers.py), and the simulator's
shared summary vocabulary, each against theory."""
import math

import numpy as np
import pytest

from engine import pipeline as pl
from engine.core.units import per_ms_from_per_s, per_s_from_per_ms
from engine.pipeline import sim as pipeline_sim
from engine.presets import gpu_specs, pipeline_workloads


def _rates(K=4, units=4):
    spec, wl = gpu_specs()["a100_40gb_sxm"], pipeline_workloads()["job_1mib_intensity_16"]
    wl = type(wl)(**{**wl.__dict__, "memory_slots": K})
    return spec, wl, pl.group_compute_units(pl.rates_from_specs(spec, wl), units)


def test_the_old_unit_conversions_warn_and_answer_as_engine_core_units():
    """per_ms_to_per_s/per_s_to_per_ms (the old names here) give the numbers of before
    (×1000, ÷1000), through engine.core.units, with a DeprecationWarning naming it."""
    with pytest.warns(DeprecationWarning, match="engine.core.units.per_s_from_per_ms"):
        assert pl.per_ms_to_per_s(2.5) == 2500.0
    with pytest.warns(DeprecationWarning, match="engine.core.units.per_ms_from_per_s"):
        assert pl.per_s_to_per_ms(2500.0) == 2.5
    with pytest.warns(DeprecationWarning):
        assert np.array_equal(pl.per_ms_to_per_s(np.array([1.0, 0.001])), [1000.0, 1.0])
    assert per_s_from_per_ms(2.5) == 2500.0 and per_ms_from_per_s(2500.0) == 2.5


def test_the_stage_row_spells_utilization_and_keeps_the_old_name():
    _, _, r = _rates(K=2, units=4)
    cap = float(pl.capacity(r.mu_cpu_per_ms, r.mu_mem_per_ms, r.mu_cu_per_ms, r.K, r.c))
    row = pl.stage_table(r, pl.operating_point(r, 0.5 * cap, r.tandem(0.5 * cap), cap))[0]
    with pytest.warns(DeprecationWarning, match=r"\.utilization"):
        assert row.utilisation == row.utilization


def test_operating_point_of_a_pipeline_whose_downstream_never_blocks():
    """Fast memory and units, room for many jobs: the CPU is an M/M/1 queue, each
    stage is busy λ/μ of the time, nobody is blocked."""
    r = pl.PipelineRates(mu_cpu_per_ms=1.0, mu_mem_per_ms=1e3, mu_cu_per_ms=1e3, K=64, c=64,
                         flops_per_job=1e9, mem_traffic_bytes_per_job=2e6)
    lam = 0.6
    cap = float(pl.capacity(r.mu_cpu_per_ms, r.mu_mem_per_ms, r.mu_cu_per_ms, r.K, r.c))
    op = pl.operating_point(r, lam, r.tandem(lam), cap)
    assert op.stable and op.slowest == 0 and pl.STAGES[op.slowest] == "CPU + host link"
    assert op.busy == pytest.approx((lam / 1.0, lam / 1e3, lam / 1e3 / 64), rel=1e-9)
    assert op.jobs[0] == pytest.approx(lam / (1 - lam), rel=1e-6)       # M/M/1: ρ/(1 − ρ)
    assert op.blocked == pytest.approx((0.0, 0.0), abs=1e-9)
    assert op.gain_over_slowest == pytest.approx(cap / 1.0 - 1.0)
    assert op.load_fraction == pytest.approx(lam / cap)
    unstable = pl.operating_point(r, 2 * cap, r.tandem(2 * cap), cap)
    assert not unstable.stable and math.isinf(unstable.jobs[0])


def test_traffic_and_peak_against_the_spec_mapping():
    spec, wl, r = _rates()
    x = np.array([0.1, 1.0])                                # jobs per ms
    tr = pl.traffic(r, x, wl.job_size_bytes)
    flops = wl.flops_per_byte * wl.job_size_bytes           # F = I·S
    assert tr.flop_per_s == pytest.approx(1000 * x * flops)
    assert tr.link_bytes_per_s == pytest.approx(1000 * x * wl.job_size_bytes)
    assert tr.memory_bytes_per_s == pytest.approx(1000 * x * r.mem_traffic_bytes_per_job)
    assert pl.peak_flop_per_s(spec, "fp16") == spec.fp16_peak_TFLOP_per_s * 1e12
    # at the compute stage's own rate c·μ_cu the units run the parallel part f·F at the
    # precision's peak (the serial part runs on the host)
    full = pl.traffic(r, r.c * r.mu_cu_per_ms, wl.job_size_bytes).flop_per_s
    assert wl.parallel_fraction * full == pytest.approx(pl.peak_flop_per_s(spec, wl.precision))
    assert pl.stage_capacities(r) == (r.mu_cpu_per_ms, r.mu_mem_per_ms, r.c * r.mu_cu_per_ms)


def test_cpu_speedup_multiplies_only_the_cpu_rate():
    _, _, r = _rates()
    fast = pl.with_cpu_speedup(r, 20)
    assert fast.mu_cpu_per_ms == pytest.approx(20 * r.mu_cpu_per_ms)
    assert (fast.mu_mem_per_ms, fast.mu_cu_per_ms, fast.K, fast.c) == (
        r.mu_mem_per_ms, r.mu_cu_per_ms, r.K, r.c)


def test_simulator_summary_vocabulary_against_mm1():
    """Memory and units a thousand times faster: the time in the pipeline is the CPU's
    M/M/1 sojourn, Exp(μ − λ) (plus ~3/1000): p-th percentile −ln(1 − p)/(μ − λ), mean
    wait (time not in service) λ/(μ(μ − λ))."""
    lam, mu = 0.5, 1.0
    r = pipeline_sim.simulate_tandem(lam, mu, 1e3, 1e3, 16, 16, n_jobs=400_000, seed=7)
    assert r.mean_latency_ms == r.w_total_ms
    assert r.mean_latency_ms == pytest.approx(1 / (mu - lam), rel=0.03)
    for p, value in ((0.50, r.p50_ms), (0.95, r.p95_ms), (0.99, r.p99_ms)):
        assert value == pytest.approx(-math.log(1 - p) / (mu - lam), rel=0.04), p
    assert r.mean_wait_ms == pytest.approx(lam / (mu * (mu - lam)), rel=0.05)
    assert r.ci95_ms > 0


def test_stage_table_reads_the_operating_point_in_planner_units():
    _, _, r = _rates(K=2, units=4)
    cap = float(pl.capacity(r.mu_cpu_per_ms, r.mu_mem_per_ms, r.mu_cu_per_ms, r.K, r.c))
    op = pl.operating_point(r, 0.5 * cap, r.tandem(0.5 * cap), cap)
    rows = pl.stage_table(r, op)
    assert [row.stage for row in rows] == list(pl.STAGES)
    assert [row.rate_alone_per_s for row in rows] == pytest.approx(
        [1000 * c for c in pl.stage_capacities(r)])
    assert [row.servers for row in rows] == [1, 1, 4] and rows[0].room == math.inf
    assert [row.room for row in rows[1:]] == [2, 4]
    assert [row.utilization for row in rows] == pytest.approx(op.busy)
    assert [row.blocked for row in rows[:2]] == pytest.approx(op.blocked)
    assert math.isnan(rows[2].blocked)
    noisy = pl.OperatingPoint(1.0, 2.0, True, (0.5, -1e-17, -0.0), (-0.0, -2e-18),
                              (1.0, 0.0, 0.0), 0, -0.1)
    for row in pl.stage_table(r, noisy):                       # round-off is not a fraction
        assert row.utilization >= 0 and math.copysign(1, row.utilization) == 1
        assert math.isnan(row.blocked) or math.copysign(1, row.blocked) == 1


def test_double_buffered_preset_numbers_are_the_engines():
    """The preset's source derives its stage rates on the A100; they must be what
    rates_from_specs gives, and its claim (blocking costs 22 %) what the solver gives."""
    spec = gpu_specs()["a100_40gb_sxm"]
    wl = pipeline_workloads()["job_1mib_double_buffered"]
    r = pl.rates_from_specs(spec, wl)
    for rate in (f"{1000 * c:,.0f} jobs/s" for c in pl.stage_capacities(r)):
        assert rate in " ".join(wl.source.split())
    g = pl.group_compute_units(r, 8)
    cap = 1000 * float(pl.capacity(g.mu_cpu_per_ms, g.mu_mem_per_ms, g.mu_cu_per_ms, g.K, g.c))
    assert f"{cap:,.0f} jobs/s" in wl.source and round(100 * (1 - cap / 18160.79)) == 22
    assert wl.memory_slots == 2
