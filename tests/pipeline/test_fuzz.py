"""Fuzz tests of the CPU-GPU pipeline (engine.pipeline and its simulator): the contract of tests/fuzzing.py
over every public function's declared domains; ``FUZZED`` maps each public name
to the test that fuzzes it (checked by tests/test_fuzz_contract.py)."""
from tests.fuzzing import *  # noqa: F401,F403 (settings, checks, engine modules, domains)
from engine.arrivals import Renewal
from engine.core.domains import ARRIVAL_SCV
from types import SimpleNamespace

from engine.pipeline import (answers, blas, chain, checks, curves, exact, model, qbd,
                             sim as pipe_sim, specs, stations)


# ============================================================ engine.pipeline

PIPE_DOMAINS = {"lam": LAM, "mu": PIPE_MU, "mu_cpu": PIPE_MU_CPU, "mu_mem": PIPE_MU_MEM,
                "mu_cu": PIPE_MU_CU, "K": PIPE_K, "c": PIPE_C}


def check_station(st_, lam, unstable=None):
    """Station measures: no NaN, probabilities in [0, 1]; M/M/1 inf exactly when λ ≥ μ."""
    assert_no_nan(st_)
    if unstable is None:                          # a finite station is always stable
        unstable = np.zeros(np.shape(lam), dtype=bool)
    for field in ("L", "Lq", "W", "Wq"):
        assert_inf_iff(getattr(st_, field), unstable, field)
    assert np.all((st_.p_block >= 0) & (st_.p_block <= 1))
    assert np.all(np.isfinite(st_.throughput) & (st_.throughput >= 0))


@FUZZ_VECTOR
@given(valid(PIPE_MU), valid(PIPE_MU_CPU), valid(PIPE_MU_MEM), valid(PIPE_MU_CU),
       valid(PIPE_C, high=256), st.integers(0, 256), loads(), st.data())
def test_pipeline_stations(mu, mu_cpu, mu_mem, mu_cu, c, extra, rho, data):
    """mm1, mm1k, mmcc, mmck and the naive decomposition (tandem_independent)."""
    K = c + extra
    lam = at_load(rho, mu)
    check_station(pipeline.mm1(lam, mu), lam, lam >= mu)
    for st_ in (pipeline.mm1k(lam, mu, K), pipeline.mmcc(lam, mu, c), pipeline.mmck(lam, mu, c, K)):
        check_station(st_, lam)
    lam_t = at_load(rho, mu_cpu)
    naive = pipeline.tandem_independent(lam_t, mu_cpu, mu_mem, mu_cu, K, c)
    assert_no_nan(naive)
    unstable = lam_t >= mu_cpu
    assert np.array_equal(naive.stable, ~unstable)
    for field in ("l_cpu", "w_cpu_ms"):
        assert_inf_iff(getattr(naive, field), unstable, field)
    for f in (pipeline.mm1, pipeline.mm1k, pipeline.mmcc, pipeline.mmck,
              pipeline.tandem_independent):
        tally(f, POINTS)
    params = dict(lam=lam, mu=mu, mu_cpu=mu_cpu, mu_mem=mu_mem, mu_cu=mu_cu, K=K, c=c)
    p, bad = corrupt(data, params, PIPE_DOMAINS)
    rejects((pipeline.mm1, pipeline.mm1k, pipeline.mmcc, pipeline.mmck,
             pipeline.tandem_independent), p, bad)
    raises_naming("K", pipeline.mmck, lam, mu, c + 1, c)          # K < c


# One phase space per (K, c) and one dense QBD solve per call (N ≤ 25 + 14 phases here:
# ~10 ms for all POINTS loads).
@FUZZ_VECTOR
@given(valid(PIPE_MU_CPU), valid(PIPE_MU_MEM), valid(PIPE_MU_CU), st.integers(1, 4),
       st.integers(1, 4), st.sampled_from(pipeline.BLOCKING), loads(), st.data())
@example(1.0, 1.0, 0.5, 1, 1, "before", np.full(POINTS, 0.999), None).via("K = c = 1")
def test_pipeline_tandem(mu_cpu, mu_mem, mu_cu, K, c, blocking, rho, data):
    """tandem (matrix-geometric) and capacity: stable exactly below capacity, CPU queue and
    totals inf beyond it, every other measure finite."""
    cap = pipeline.capacity(mu_cpu, mu_mem, mu_cu, K, c, blocking)
    assert np.isfinite(cap) and cap > 0
    # capacity broadcasts over the rates; solve_phases takes one point
    scaled = mu_cu * np.geomspace(1e-3, 1e3, POINTS)
    caps = pipeline.capacity(mu_cpu, mu_mem, scaled, K, c, blocking)
    assert np.all(np.isfinite(caps) & (caps > 0))
    # never above a stage's own rate, where the rates are within 1e6 of each other
    # (test_pipeline_capacity_never_exceeds_a_stage: beyond)
    rates = np.stack(np.broadcast_arrays(mu_cpu, mu_mem, scaled))
    near = rates.max(axis=0) <= 1e6 * rates.min(axis=0)
    bound = np.minimum(min(mu_cpu, mu_mem), c * scaled)
    assert np.all(caps[near] <= bound[near] * (1 + 1e-9))
    for m in scaled:
        n = pipeline.solve_phases(mu_cpu, mu_mem, m, K, c, blocking)
        assert isinstance(n, int) and K + 1 <= n <= (K + 1) * (c + 1) + K + c + 2
    lam = at_load(rho, cap)
    t = pipeline.tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking)
    assert_no_nan(t)
    unstable = lam >= cap
    assert np.array_equal(t.stable, ~unstable)
    for field in ("l_cpu", "w_cpu_ms", "l_total", "w_total_ms"):
        assert_inf_iff(getattr(t, field), unstable, field)
    for field in ("l_mem", "l_cu", "w_mem_ms", "w_cu_ms", "throughput_per_ms", "p_cpu_blocked",
                  "p_mem_blocked"):
        assert np.all(np.isfinite(getattr(t, field))), field
    for field in ("p_cpu_blocked", "p_mem_blocked"):       # time fractions
        assert np.all((getattr(t, field) >= 0) & (getattr(t, field) <= 1)), field
    tally(pipeline.tandem, POINTS)
    tally(pipeline.capacity, POINTS + 1)
    tally(pipeline.solve_phases, POINTS)
    if data is None:
        return
    params = dict(lam=lam, mu_cpu=mu_cpu, mu_mem=mu_mem, mu_cu=mu_cu, K=K, c=c)
    p, bad = corrupt(data, params, PIPE_DOMAINS)
    rejects((pipeline.tandem, pipeline.capacity, pipeline.solve_phases), p, bad,
            blocking=blocking)
    raises_naming("blocking", pipeline.tandem, lam, mu_cpu, mu_mem, mu_cu, K, c, "never")


# One N×N solve a point (~3 ms for POINTS points).
@FUZZ_VECTOR
@given(valid(PIPE_MU_CPU), valid(PIPE_MU_MEM), valid(PIPE_MU_CU), st.integers(1, 4),
       st.integers(1, 4), st.sampled_from(pipeline.BLOCKING))
@example(1.0, 1.0, 1e-8, 1, 1, "after")
def test_pipeline_capacity_never_exceeds_a_stage(mu_cpu, mu_mem, mu_cu, K, c, blocking):
    """capacity ≤ min(μ_cpu, μ_mem, c·μ_cu) (its docstring) at any spread of the rates,
    and the saturated flow is the same through the three stages to 1e-9 relative: each
    is a sum over the stationary vector, so this checks that vector's relative accuracy
    in its tiny entries (a linear solve overshot c·μ_cu by 3e-6 at rates 1e10 apart)."""
    scaled = mu_cu * np.geomspace(1e-3, 1e3, POINTS)
    caps = pipeline.capacity(mu_cpu, mu_mem, scaled, K, c, blocking)
    assert np.all(caps <= np.minimum(min(mu_cpu, mu_mem), c * scaled) * (1 + 1e-9))
    ph = chain.full_phases(K, c, blocking)
    rates = np.stack(np.broadcast_arrays(mu_cpu, mu_mem, scaled), axis=1)
    theta, cap = qbd.saturation(ph, rates)
    assert close(cap, caps, 1e-12)
    # the bound is a log-probability; where it is below the threshold the units are free
    bound = chain.log_all_units_busy_bound(rates, K, c)
    assert np.all(bound <= 1e-12)
    assert np.array_equal(chain.units_never_all_busy(rates, K, c), bound <= chain.LOG_UNITS_FREE_EPS)
    # generator rows: A1 + A2 + λI sums to 0 on each row (A0 = λI)
    lam = 0.5 * caps
    A1, A2, B1 = chain.qbd_blocks(ph, lam, rates)
    assert np.allclose((A1 + A2).sum(axis=2) + lam[:, None], 0.0,
                       atol=1e-9 * rates.max(axis=1, keepdims=True))
    for f in (qbd.saturation, chain.log_all_units_busy_bound, chain.units_never_all_busy,
              chain.qbd_blocks):
        tally(f, POINTS)
    flow = theta[:, ph.src] * rates[:, ph.kind] * ph.mult        # (points, events)
    # every job has one service completion at each stage (held or passed on)
    through = [flow[:, ph.kind == k].sum(axis=1) for k in (0, 1, 2)]
    for other in through[1:]:
        assert close(through[0], other, rtol=1e-9), (through[0], other)


SPEC_SCALE = st.floats(0.01, 100.0)


@FUZZ_VECTOR
@given(st.sampled_from(sorted(presets.gpu_specs())),
       st.sampled_from(sorted(presets.pipeline_workloads())), sweep(SPEC_SCALE),
       st.floats(0.01, 1.0), st.floats(1.0, 1e3), st.integers(1, 8),
       st.sampled_from(pipeline.BLOCKING), st.data())
def test_pipeline_rates(spec_id, work_id, scales, fraction, reuse, units, blocking, data):
    """rates_from_specs on scaled datasheets and workloads, group_compute_units, and the
    frozen rates' own tandem (grouped to ``units`` servers so the solve stays small)."""
    spec0, work0 = presets.gpu_specs()[spec_id], presets.pipeline_workloads()[work_id]
    for s_ in scales:
        spec = dataclasses.replace(spec0, memory_bandwidth_GB_per_s=spec0.memory_bandwidth_GB_per_s
                                   * s_, host_link_bandwidth_GB_per_s=
                                   spec0.host_link_bandwidth_GB_per_s / s_)
        work = dataclasses.replace(work0, flops_per_byte=work0.flops_per_byte * s_,
                                   parallel_fraction=fraction, reuse_factor=reuse)
        try:
            rates = pipeline.rates_from_specs(spec, work)
        except ValueError as err:              # documented: the jobs must fit in memory
            assert "memory_slots" in str(err)
            continue
        assert_no_nan(rates)
        assert min(rates.mu_cpu_per_ms, rates.mu_mem_per_ms, rates.mu_cu_per_ms) > 0
        grouped = pipeline.group_compute_units(rates, units)
        assert close(grouped.c * grouped.mu_cu_per_ms, rates.c * rates.mu_cu_per_ms, 1e-12)
        faster = pipeline.with_cpu_speedup(rates, s_)
        assert close(faster.mu_cpu_per_ms, rates.mu_cpu_per_ms * s_, 1e-12)
        assert faster.mu_mem_per_ms == rates.mu_mem_per_ms
        tally(pipeline.rates_from_specs)
        tally(pipeline.group_compute_units)
        tally(pipeline.with_cpu_speedup)
    cap = float(pipeline.capacity(grouped.mu_cpu_per_ms, grouped.mu_mem_per_ms,
                                  grouped.mu_cu_per_ms,
                                  min(grouped.K, 4), grouped.c, blocking))
    small = dataclasses.replace(grouped, K=min(grouped.K, 4))
    t = small.tandem(cap * np.array([0.5, 1.0, 2.0]), blocking)
    assert_no_nan(t)
    assert list(t.stable) == [True, False, False]
    tally(pipeline.PipelineRates)
    field = data.draw(st.sampled_from(["parallel_fraction", "reuse_factor", "flops_per_byte",
                                       "job_size_bytes", "precision"]))
    bad = {"parallel_fraction": 1.5, "reuse_factor": 0.5, "flops_per_byte": -1.0,
           "job_size_bytes": 0, "precision": "fp8"}[field]
    raises_naming(field, pipeline.rates_from_specs, spec0,
                  dataclasses.replace(work0, **{field: bad}))
    raises_naming("c", pipeline.group_compute_units, grouped, 0)
    raises_naming("factor", pipeline.with_cpu_speedup, grouped, data.draw(
        st.sampled_from([0.0, -1.0, np.inf, np.nan])))


# ~4 ms a case (numba loop over n_jobs jobs), POINTS loads an example.
@fuzz(1000, POINTS)
@given(valid(PIPE_MU_CPU, high=1e3), valid(PIPE_MU_MEM, high=1e3), valid(PIPE_MU_CU, high=1e3),
       st.integers(1, 16), st.integers(1, 16), st.sampled_from(pipeline.BLOCKING), loads(),
       st.integers(2, 300), st.one_of(st.none(), st.integers(0, 400)), st.integers(0, 2 ** 32),
       st.data())
def test_simulate_tandem(mu_cpu, mu_mem, mu_cu, K, c, blocking, rho, n_jobs, warmup, seed,
                         data):
    """simulate_tandem at stable and unstable loads (a finite run is well defined)."""
    cap = min(mu_cpu, mu_mem, c * mu_cu)
    for lam in at_load(rho, cap):
        kw = dict(lam=lam, mu_cpu=mu_cpu, mu_mem=mu_mem, mu_cu=mu_cu, K=K, c=c,
                  blocking=blocking, n_jobs=n_jobs, seed=seed, warmup_jobs=warmup)
        if not 0 < lam < np.inf:
            raises_naming("lam", pipe_sim.simulate_tandem, **kw)
            continue
        r = pipe_sim.simulate_tandem(**kw)
        assert_no_nan(r)
        assert r.w_total_ms >= 0 and r.throughput_per_ms >= 0
        assert 0 <= r.p_cpu_blocked <= 1 + 1e-9 and 0 <= r.p_mem_blocked <= 1 + 1e-9
        rec = pipe_sim.simulate_tandem_records(**kw)          # the same run, as records
        assert pipe_sim.tandem_summary(rec) == r
        assert np.all((rec.arrival_ms <= rec.leave_cpu_ms) & (rec.leave_cpu_ms <= rec.leave_mem_ms)
                      & (rec.leave_mem_ms <= rec.finish_ms))
        assert rec.warmup == min(n_jobs // 10 if warmup is None else warmup, n_jobs - 2)
        assert close(rec.time_in_pipeline_ms, rec.finish_ms - rec.arrival_ms, 0)
        for f in (pipe_sim.simulate_tandem, pipe_sim.simulate_tandem_records,
                  pipe_sim.tandem_summary):
            tally(f)
    lam = float(at_load(rho[0], cap))
    if 0 < lam < np.inf:            # ``arrivals``: a renewal process at λ, then its replay
        process = Renewal(lam, data.draw(valid(ARRIVAL_SCV, high=100.0), label="scv"))
        args = dict(lam=None, mu_cpu=mu_cpu, mu_mem=mu_mem, mu_cu=mu_cu, K=K, c=c,
                    blocking=blocking, n_jobs=n_jobs, seed=seed, warmup_jobs=warmup)
        times = process.sample(n_jobs, np.random.default_rng(seed))
        for arrivals in (process, times):
            r = pipe_sim.simulate_tandem(**args, arrivals=arrivals)
            assert_no_nan(r)
            assert r.w_total_ms >= 0 and r.throughput_per_ms >= 0
            assert r.n_jobs == n_jobs - min(n_jobs // 10 if warmup is None else warmup,
                                            n_jobs - 2)
        raises_naming("arrivals", pipe_sim.simulate_tandem, **args,
                      arrivals=np.append(times, -1.0))
    params = dict(lam=1.0, mu_cpu=mu_cpu, mu_mem=mu_mem, mu_cu=mu_cu, K=K, c=c, n_jobs=n_jobs,
                  warmup_jobs=warmup or 0)
    p, bad = corrupt(data, params, {**PIPE_DOMAINS, "n_jobs": N_JOBS, "warmup_jobs": WARMUP})
    rejects((pipe_sim.simulate_tandem,), p, bad, blocking=blocking)


# Small phase spaces (≤ 25 + 14 phases), one dense solve per reduction step.
@FUZZ_VECTOR
@given(valid(PIPE_MU_CPU, high=1e3), valid(PIPE_MU_MEM, high=1e3), valid(PIPE_MU_CU, high=1e3),
       st.integers(1, 4), st.integers(1, 4), st.sampled_from(pipeline.BLOCKING),
       st.floats(0.05, 0.95))
@example(1e-7, 561.0, 9.9e-7, 1, 1, "after", 0.75).via("rates 5.6e9 apart: routes 2e-6 apart")
def test_pipeline_qbd_solvers(mu_cpu, mu_mem, mu_cu, K, c, blocking, load):
    """The QBD solvers on the full phase space, one against another: G stochastic by
    cyclic and by logarithmic reduction, the same measures from both routes (to 1e-6, or
    to the rates' spread × 1e-15 where they span more than nine orders of magnitude: the
    blocks' conditioning), GTH and the linear solve giving one stationary vector."""
    ph = chain.full_phases(K, c, blocking)
    rates = np.array([[mu_cpu, mu_mem, mu_cu]])
    theta, cap = qbd.saturation(ph, rates)
    A1, A2, _ = chain.qbd_blocks(ph, np.zeros(1), rates)
    assert close(qbd.gth(A1 + A2), qbd.stationary_vector(A1 + A2), 1e-6)
    assert np.allclose(qbd.gth(A1 + A2), theta, rtol=1e-6, atol=1e-12)
    lam = load * cap
    A1, A2, _ = chain.qbd_blocks(ph, lam, rates)
    for G in (qbd.cyclic_reduction(lam, A1, A2), qbd.log_reduction(lam, A1, A2)):
        assert np.all(np.isfinite(G))
        assert np.allclose(G.sum(axis=2), 1.0, atol=1e-8)
    fast, ref = qbd.solve_stable(ph, lam, rates), qbd.solve_stable_lr(ph, lam, rates)
    rtol = max(1e-6, 1e-15 * rates.max() / rates.min())
    for key, value in fast.items():
        assert np.all(np.isfinite(value)), key
        assert np.allclose(value, ref[key], rtol=rtol, atol=1e-10), key
    for f in (qbd.gth, qbd.stationary_vector, qbd.cyclic_reduction, qbd.log_reduction,
              qbd.solve_stable, qbd.solve_stable_lr):
        tally(f)


@FUZZ_VECTOR
@given(st.sampled_from(sorted(presets.gpu_specs())),
       st.sampled_from(sorted(presets.pipeline_workloads())), st.integers(1, 4),
       st.integers(1, 4), st.sampled_from(pipeline.BLOCKING), loads(), st.data())
def test_pipeline_answers(spec_id, work_id, K, units, blocking, rho, data):
    """stage_capacities, slowest_stage, operating_point, traffic, peak_flop_per_s and the
    unit conversions on preset rates grouped to few units (small exact solves)."""
    spec, work = presets.gpu_specs()[spec_id], presets.pipeline_workloads()[work_id]
    work = dataclasses.replace(work, memory_slots=K)
    try:
        rates = pipeline.group_compute_units(pipeline.rates_from_specs(spec, work), units)
    except ValueError as err:                  # documented: the jobs must fit in memory
        assert "memory_slots" in str(err)
        return
    caps = pipeline.stage_capacities(rates)
    assert caps == (rates.mu_cpu_per_ms, rates.mu_mem_per_ms, rates.c * rates.mu_cu_per_ms)
    assert caps[pipeline.slowest_stage(rates)] == min(caps)
    cap = float(pipeline.capacity(rates.mu_cpu_per_ms, rates.mu_mem_per_ms, rates.mu_cu_per_ms,
                                  K, units, blocking))
    for lam in at_load(rho, cap):
        t = rates.tandem(lam, blocking)
        op = pipeline.operating_point(rates, lam, t, cap)
        assert op.stable == (lam < cap) and close(op.load_fraction, lam / cap, 1e-12)
        assert all(0 <= b <= 1 + 1e-9 for b in op.busy), op.busy
        assert all(0 <= b <= 1 + 1e-9 for b in op.blocked), op.blocked
        assert -1 - 1e-9 <= op.gain_over_slowest <= 1e-9          # capacity ≤ slowest stage
        assert op.lost_to_blocking == -op.gain_over_slowest
        assert np.isinf(op.jobs[0]) == (not op.stable)
        tally(pipeline.operating_point)
        rows = answers.stage_table(rates, op)
        assert_no_nan([(r.utilization, r.rate_alone_per_s, r.mean_jobs) for r in rows])
        assert [r.stage for r in rows] == list(pipeline.STAGES)
        assert all(0.0 <= r.utilization <= 1.0 for r in rows)
        assert all(0.0 <= r.blocked <= 1.0 for r in rows[:2]) and np.isnan(rows[2].blocked)
        assert close([r.rate_alone_per_s for r in rows], 1000.0 * np.array(caps), 1e-12)
        tally(answers.stage_table)
    x = np.minimum(cap * np.geomspace(0.01, 1.0, POINTS), cap)
    tr = pipeline.traffic(rates, x, work.job_size_bytes)
    assert close(tr.flop_per_s, 1000.0 * x * rates.flops_per_job, 1e-12)
    assert np.all(tr.memory_bytes_per_s >= tr.link_bytes_per_s * (1 - 1e-12))  # traffic ≥ S
    with pytest.warns(DeprecationWarning):          # the old names: engine.core.units
        per_s = pipeline.per_ms_to_per_s(x)
    with pytest.warns(DeprecationWarning):
        assert close(pipeline.per_s_to_per_ms(per_s), x, 1e-15) and close(per_s, 1000.0 * x, 0)
    peak = pipeline.peak_flop_per_s(spec, work.precision)
    # X ≤ c·μ_cu keeps the units' share f·F of the FLOP/s at most the peak
    assert np.all(work.parallel_fraction * tr.flop_per_s <= peak * (1 + 1e-9))
    for f in (pipeline.traffic, pipeline.per_ms_to_per_s, pipeline.per_s_to_per_ms):
        tally(f, POINTS)
    memory_bw, link_bw = pipeline.bandwidths_bytes_per_s(spec)
    assert memory_bw == spec.memory_bandwidth_GB_per_s * 1e9 and link_bw > 0
    for f in (pipeline.stage_capacities, pipeline.slowest_stage, pipeline.peak_flop_per_s,
              pipeline.bandwidths_bytes_per_s):
        tally(f)
    raises_naming("precision", pipeline.peak_flop_per_s, spec, data.draw(st.sampled_from(
        ["fp8", "FP32", ""])))


@FUZZ_VECTOR
@given(st.one_of(st.integers(-3, 300), st.floats(allow_nan=True), st.text(alphabet="abc", max_size=3),
                 st.none(), st.booleans()),
       st.sampled_from([PIPE_K, PIPE_C]))
def test_pipeline_checks(value, domain):
    """single_integer, blocking_rule and the BLAS setting: a valid value comes back,
    anything else is a ValueError naming the parameter."""
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
          and value >= 1 and value == int(value))
    if ok:
        assert checks.single_integer(value, domain) == int(value)
        tally(checks.single_integer)
    elif not isinstance(value, bool):
        raises_naming(domain.name, checks.single_integer, value, domain)
    raises_naming(domain.name, checks.single_integer, [1, 2], domain)
    for rule in pipeline.BLOCKING:
        assert checks.blocking_rule(rule) == rule
        tally(checks.blocking_rule)
    if value not in pipeline.BLOCKING:
        raises_naming("blocking", checks.blocking_rule, value)
    blas.ensure_blas_limit()                     # set once; later calls change nothing
    chosen = blas.blas_threads_chosen()
    assert blas.limit_blas_threads(7) == chosen and blas.blas_threads_chosen() == chosen
    if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1) \
            and value is not None:
        raises_naming("threads", blas.limit_blas_threads, value)
    for f in (blas.ensure_blas_limit, blas.blas_threads_chosen, blas.limit_blas_threads):
        tally(f)


# One capacity solve per (K, c) ≤ 4 and the four what-if capacities (K, c ≤ 8: N ≤ 81).
@fuzz(400, POINTS)
@given(valid(PIPE_MU_CPU), valid(PIPE_MU_MEM), valid(PIPE_MU_CU), st.integers(1, 4),
       st.integers(1, 4), st.sampled_from(pipeline.BLOCKING), loads(), st.integers(1, 40),
       st.integers(1, 6), st.data())
def test_pipeline_curves(mu_cpu, mu_mem, mu_cu, K, c, blocking, rho, n_points, n_chunks, data):
    """The page's grids, joined curves, sweeps, capacity families, what-ifs, the load
    and the traffic below capacity (engine.pipeline.curves and answers)."""
    rates = pipeline.PipelineRates(mu_cpu, mu_mem, mu_cu, K, c, 1e9, 2e6)
    cap = float(pipeline.capacity(mu_cpu, mu_mem, mu_cu, K, c, blocking))
    chunks = curves.exact_load_chunks_per_ms(cap, n_points, n_chunks)
    assert len(chunks) == n_chunks
    flat = [x for ch in chunks for x in ch]
    step = (0.98 - 0.02) / max(n_points - 1, 1)
    assert close(flat, [cap * (0.02 + i * step) for i in range(n_points)], 1e-12)
    dense = curves.naive_loads_per_ms(cap)
    assert dense.size == 200 and close([dense[0], dense[-1]], [0.005 * cap, 1.15 * cap], 1e-12)
    fr = np.clip(rho, 0.0, 2.0)
    assert close(curves.loads_at_fractions_per_ms(cap, fr), [f * cap for f in fr], 1e-15)
    parts = [pipeline.tandem(np.array(ch), mu_cpu, mu_mem, mu_cu, K, c, blocking)
             for ch in chunks if ch]
    whole = pipeline.tandem(np.array(flat), mu_cpu, mu_mem, mu_cu, K, c, blocking)
    joined = curves.joined_tandem(parts)
    for field in pipeline.TandemMeasures.__dataclass_fields__:
        assert close(getattr(joined, field), getattr(whole, field), 1e-9), field
    naive = pipeline.tandem_independent(dense, mu_cpu, mu_mem, mu_cu, K, c)
    cv = curves.tandem_curves(chunks, parts, naive, dense, cap)
    assert close(cv.lam_per_ms, flat, 0) and cv.capacity_per_ms == cap and cv.naive is naive
    runs = [SimpleNamespace(throughput_per_ms=i, w_total_ms=2 * i, ci95_ms=3 * i)
            for i in range(n_chunks)]
    sweep = curves.tandem_sim_sweep(range(n_chunks), runs)
    assert close(sweep.w_total_ms, 2 * np.arange(n_chunks), 0)
    assert close(sweep.ci95_ms, 3 * sweep.throughput_per_ms, 0)
    for f in (curves.exact_load_chunks_per_ms, curves.naive_loads_per_ms,
              curves.loads_at_fractions_per_ms, curves.joined_tandem, curves.tandem_curves,
              curves.tandem_sim_sweep):
        tally(f)
    limit = data.draw(st.sampled_from([20, 81, 3000]), label="max_phases")
    for vary, now in (("K", K), ("c", c)):
        cases = curves.family_cases(vary, K, c, mu_cpu, mu_mem, mu_cu, blocking, limit)
        assert all(pipeline.solve_phases(mu_cpu, mu_mem, mu_cu, k, u, blocking) <= limit
                   for k, u in cases)
        values = [k if vary == "K" else u for k, u in cases]
        assert values == sorted(set(values))
        assert all((u if vary == "K" else k) == (c if vary == "K" else K) for k, u in cases)
        if limit == 3000:
            assert {now, now + 1, 2 * now} <= set(values)
        small = cases[:2]
        caps = [float(pipeline.capacity(mu_cpu, mu_mem, mu_cu, k, u, blocking)) for k, u in small]
        fam = curves.capacity_family(vary, small, caps)
        assert list(fam.values) == values[:2] and list(fam.capacity_per_ms) == caps
    raises_naming("vary", curves.family_cases, "units", K, c, mu_cpu, mu_mem, mu_cu)
    what = curves.what_if_capacities(mu_cpu, mu_mem, mu_cu, K, c, blocking, limit)
    assert list(what) == ["K + 1", "2K", "c + 1 units", "2c units"]
    for name, (k, u) in zip(what, ((K + 1, c), (2 * K, c), (K, c + 1), (K, 2 * c))):
        solvable = pipeline.solve_phases(mu_cpu, mu_mem, mu_cu, k, u, blocking) <= limit
        assert (what[name] is None) == (not solvable)
        if solvable:        # more room or more units never lowers the capacity
            assert what[name] >= cap * (1 - 1e-9)
    for f in (curves.family_cases, curves.capacity_family, curves.what_if_capacities):
        tally(f)
    lam = at_load(rho, cap)
    x_expected = np.where(lam < cap, lam, cap)
    tr = answers.traffic_at_loads(rates, lam, cap, 1e6)
    assert close(tr.flop_per_s, x_expected * 1000.0 * 1e9, 1e-12)
    assert close(tr.link_bytes_per_s, x_expected * 1000.0 * 1e6, 1e-12)
    frac = float(np.clip(rho[0], 0.01, 0.99))
    assert answers.load_per_ms(cap, "frac", frac, 5.0) == cap * frac
    assert answers.load_per_ms(cap, "rate", frac, 2500.0) == 2.5
    raises_naming("mode", answers.load_per_ms, cap, "jobs", frac, 1.0)
    assert answers.slowest_rate_per_ms(rates) == min(mu_cpu, mu_mem, c * mu_cu)
    assert answers.slowest_rate_per_ms(rates, without_units=True) == min(mu_cpu, mu_mem)
    assert answers.relative_change(3.0, 2.0) == 0.5
    assert close(answers.relative_change(lam, cap), lam / cap - 1, 0)
    for f in (answers.traffic_at_loads, answers.load_per_ms, answers.slowest_rate_per_ms,
              answers.relative_change):
        tally(f)


# Three capacity solves, the exact and naive tandems and a short simulated run an example.
@fuzz(200, POINTS)
@given(valid(PIPE_MU_CPU), valid(PIPE_MU_MEM), valid(PIPE_MU_CU), st.integers(1, 4),
       st.integers(1, 4), st.sampled_from(pipeline.BLOCKING), loads(), st.data())
def test_pipeline_model(mu_cpu, mu_mem, mu_cu, K, c, blocking, rho, data):
    """Tandem: each method answers as the module function of its name with the
    object's rates, K, c and blocking rule; bad fields named."""
    m = pipeline.Tandem(mu_cpu, mu_mem, mu_cu, K, c, blocking)
    args = (mu_cpu, mu_mem, mu_cu, K, c, blocking)
    assert m.args == args
    cap = float(pipeline.capacity(*args))
    assert m.capacity_per_ms == cap and m.n_phases == pipeline.solve_phases(*args)
    lam = at_load(rho, cap)
    for got, want in ((m.exact(lam), pipeline.tandem(lam, *args)),
                      (m.naive(lam), pipeline.tandem_independent(lam, *args[:5]))):
        for field in pipeline.TandemMeasures.__dataclass_fields__:
            assert close(getattr(got, field), getattr(want, field), 0), field
    assert m.what_if_capacities(81) == pipeline.what_if_capacities(*args, 81)
    assert m.family_cases("c", 40) == pipeline.family_cases("c", K, c, *args[:3], blocking, 40)
    rates = pipeline.PipelineRates(mu_cpu, mu_mem, mu_cu, K, c, 1e9, 2e6)
    assert pipeline.Tandem.from_rates(rates, blocking) == m
    x = float(lam[0]) if np.isfinite(lam[0]) else 0.5 * cap
    assert m.operating_point(rates, x) == pipeline.operating_point(
        rates, x, pipeline.tandem(x, *args), cap)
    if 0 < x < np.inf:
        assert m.simulate(x, 500, 3) == pipeline.simulate_tandem(x, *args, 500, 3)
    bad = data.draw(st.sampled_from(["mu_cpu_per_ms", "mu_mem_per_ms", "mu_cu_per_ms", "K", "c",
                                     "blocking"]))
    fields = dict(zip(("mu_cpu_per_ms", "mu_mem_per_ms", "mu_cu_per_ms", "K", "c", "blocking"),
                      args))
    raises_naming(bad, pipeline.Tandem, **{**fields, bad: -1.0})
    tally(pipeline.Tandem)


# ============================================================ every public function has a case

# Public name -> the test that fuzzes it.  A result or data class (no arguments of its
# own to fuzz) names the test that builds and checks it and the function it comes from.
# engine.pipeline only re-exports these names.
FUZZED = {
    stations: {
        "mm1": test_pipeline_stations, "mm1k": test_pipeline_stations,
        "mmcc": test_pipeline_stations, "mmck": test_pipeline_stations,
        "Station": (test_pipeline_stations, "mmck")},
    exact: {
        "tandem_independent": test_pipeline_stations,
        "tandem": test_pipeline_tandem, "capacity": test_pipeline_tandem,
        "solve_phases": test_pipeline_tandem,
        "TandemMeasures": (test_pipeline_tandem, "tandem")},
    chain: {
        "log_all_units_busy_bound": test_pipeline_capacity_never_exceeds_a_stage,
        "units_never_all_busy": test_pipeline_capacity_never_exceeds_a_stage,
        "qbd_blocks": test_pipeline_capacity_never_exceeds_a_stage,
        "Phases": (test_pipeline_qbd_solvers, "full_phases")},
    qbd: {
        "saturation": test_pipeline_capacity_never_exceeds_a_stage,
        "gth": test_pipeline_qbd_solvers, "stationary_vector": test_pipeline_qbd_solvers,
        "cyclic_reduction": test_pipeline_qbd_solvers, "log_reduction": test_pipeline_qbd_solvers,
        "solve_stable": test_pipeline_qbd_solvers, "solve_stable_lr": test_pipeline_qbd_solvers},
    specs: {
        "rates_from_specs": test_pipeline_rates, "group_compute_units": test_pipeline_rates,
        "with_cpu_speedup": test_pipeline_rates,
        "PipelineRates": (test_pipeline_rates, "tandem")},
    answers: {
        "stage_capacities": test_pipeline_answers, "slowest_stage": test_pipeline_answers,
        "operating_point": test_pipeline_answers, "traffic": test_pipeline_answers,
        "peak_flop_per_s": test_pipeline_answers, "per_ms_to_per_s": test_pipeline_answers,
        "per_s_to_per_ms": test_pipeline_answers, "bandwidths_bytes_per_s": test_pipeline_answers,
        "OperatingPoint": (test_pipeline_answers, "operating_point"),
        "stage_table": test_pipeline_answers, "StageRow": (test_pipeline_answers, "stage_table"),
        "Traffic": (test_pipeline_answers, "traffic"),
        "traffic_at_loads": test_pipeline_curves, "load_per_ms": test_pipeline_curves,
        "slowest_rate_per_ms": test_pipeline_curves, "relative_change": test_pipeline_curves},
    model: {"Tandem": test_pipeline_model},
    curves: {
        "exact_load_chunks_per_ms": test_pipeline_curves, "naive_loads_per_ms": test_pipeline_curves,
        "loads_at_fractions_per_ms": test_pipeline_curves, "joined_tandem": test_pipeline_curves,
        "tandem_curves": test_pipeline_curves, "tandem_sim_sweep": test_pipeline_curves,
        "family_cases": test_pipeline_curves, "capacity_family": test_pipeline_curves,
        "what_if_capacities": test_pipeline_curves,
        "TandemCurves": (test_pipeline_curves, "tandem_curves"),
        "TandemSimSweep": (test_pipeline_curves, "tandem_sim_sweep"),
        "CapacityFamily": (test_pipeline_curves, "capacity_family")},
    checks: {"single_integer": test_pipeline_checks, "blocking_rule": test_pipeline_checks},
    blas: {"limit_blas_threads": test_pipeline_checks, "ensure_blas_limit": test_pipeline_checks,
           "blas_threads_chosen": test_pipeline_checks},
    pipe_sim: {
        "simulate_tandem": test_simulate_tandem,
        "TandemSimResult": (test_simulate_tandem, "simulate_tandem"),
        "simulate_tandem_records": test_simulate_tandem, "tandem_summary": test_simulate_tandem,
        "TandemRecords": (test_simulate_tandem, "simulate_tandem_records")},
}
