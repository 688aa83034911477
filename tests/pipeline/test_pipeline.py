"""The CPU-GPU pipeline (May & Voigt 2010) against independent methods.

Expected values come from other routes than the engine's: generators built
state by state and solved directly (stations), a large truncated CTMC of the
whole tandem built from its event rules (scipy sparse solve), the job-level
simulator, closed forms in limits (M/M/1, M/M/c with Erlang C, M/M/∞), and
hand derivations from the datasheet numbers.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import sparse
from scipy.sparse.linalg import spsolve

from engine import pipeline as pl
from engine import presets
from engine.pipeline.sim import simulate_tandem


# ------------------------------------------------------------ independent references

def _ctmc_stationary(Q):
    """π with πQ = 0, Σπ = 1 (dense or sparse generator)."""
    n = Q.shape[0]
    A = sparse.csr_matrix(Q).T.tolil()
    A[n - 1, :] = np.ones(n)
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    return spsolve(A.tocsc(), rhs)


def _station_ctmc(lam, mu, c, K):
    """Birth-death generator of M/M/c/K built entry by entry; returns p, L, Lq, W, Wq, p_K."""
    Q = np.zeros((K + 1, K + 1))
    for n in range(K + 1):
        if n < K:
            Q[n, n + 1] = lam
        if n > 0:
            Q[n, n - 1] = min(n, c) * mu
        Q[n, n] = -Q[n].sum()
    p = _ctmc_stationary(Q)
    n = np.arange(K + 1)
    L, Lq = p @ n, p @ np.maximum(n - c, 0)
    admitted = lam * (1 - p[K])
    return p, L, Lq, L / admitted, Lq / admitted, p[K]


def _tandem_ctmc(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking, levels):
    """The whole tandem as one CTMC with the CPU queue cut at ``levels`` jobs.

    States (n, m, b, memory holds a finished job, CPU holds a finished job);
    every event is written out from the stage rules, arrivals beyond the cut
    are refused.  Returns the stationary means and the top level's mass.
    """
    states = []
    for n in range(levels + 1):
        for m in range(K + 1):
            for b in range(c + 1):
                for hm in (0, 1):
                    for hc in (0, 1):
                        if blocking == "before" and (hm or hc):
                            continue
                        if hm and not (b == c and m >= 1):
                            continue
                        if hc and not (m == K and n >= 1):
                            continue
                        states.append((n, m, b, hm, hc))
    idx = {s: i for i, s in enumerate(states)}
    rows, cols, vals = [], [], []

    def add(s, t, rate):
        rows.append(idx[s])
        cols.append(idx[t])
        vals.append(rate)

    for s in states:
        n, m, b, hm, hc = s
        if n < levels:
            add(s, (n + 1, m, b, hm, hc), lam)
        if blocking == "before":
            if n >= 1 and m < K:
                add(s, (n - 1, m + 1, b, 0, 0), mu_cpu)
            if m >= 1 and b < c:
                add(s, (n, m - 1, b + 1, 0, 0), mu_mem)
            if b >= 1:
                add(s, (n, m, b - 1, 0, 0), b * mu_cu)
            continue
        # blocking after service: a finished job waits in its server
        if n >= 1 and not hc:
            add(s, (n - 1, m + 1, b, hm, 0) if m < K else (n, m, b, hm, 1), mu_cpu)
        if m >= 1 and not hm:
            if b < c:
                t = (n, m - 1, b + 1, 0, hc)
                if hc:                               # the CPU's job follows into memory
                    t = (n - 1, m, b + 1, 0, 0)
                add(s, t, mu_mem)
            else:
                add(s, (n, m, b, 1, hc), mu_mem)
        if b >= 1:
            if hm:                                   # memory's job takes the free unit
                t = (n, m - 1, b, 0, hc)
                if hc:
                    t = (n - 1, m, b, 0, 0)
                add(s, t, b * mu_cu)
            else:
                add(s, (n, m, b - 1, 0, hc), b * mu_cu)
    N = len(states)
    Q = sparse.csr_matrix((vals, (rows, cols)), shape=(N, N))
    Q = Q - sparse.diags(np.asarray(Q.sum(axis=1)).ravel())
    p = _ctmc_stationary(Q)
    arr = np.array(states, dtype=float)
    out = dict(l_cpu=p @ arr[:, 0], l_mem=p @ arr[:, 1], l_cu=p @ arr[:, 2],
               top=p[arr[:, 0] == levels].sum())
    if blocking == "before":
        out["p_cpu_blocked"] = p @ ((arr[:, 0] >= 1) & (arr[:, 1] == K))
        out["p_mem_blocked"] = p @ ((arr[:, 1] >= 1) & (arr[:, 2] == c))
    else:
        out["p_cpu_blocked"], out["p_mem_blocked"] = p @ arr[:, 4], p @ arr[:, 3]
    return out


def _erlang_c_mean_number(lam, mu, c):
    """Mean number in M/M/c (Erlang C): L = a + C(c, a)·ρ/(1 − ρ), a = λ/μ, ρ = a/c."""
    a, rho = lam / mu, lam / (c * mu)
    head = sum(a ** k / math.factorial(k) for k in range(c))
    tail = a ** c / math.factorial(c) / (1 - rho)
    return a + tail / (head + tail) * rho / (1 - rho)


# ------------------------------------------------------------ stations

STATION_CASES = [(0.5, 1.0, 1, 5), (1.0, 1.0, 1, 7), (3.0, 1.0, 1, 4), (2.0, 0.7, 3, 3),
                 (5.0, 1.0, 4, 9), (4.0, 1.0, 4, 12), (0.01, 2.0, 8, 8)]


@pytest.mark.parametrize("lam,mu,c,K", STATION_CASES)
def test_station_formulas_match_direct_ctmc(lam, mu, c, K):
    p, L, Lq, W, Wq, pK = _station_ctmc(lam, mu, c, K)
    for res in [pl.mmck(lam, mu, c, K)] + ([pl.mm1k(lam, mu, K)] if c == 1 else []) + (
            [pl.mmcc(lam, mu, c)] if c == K else []):
        np.testing.assert_allclose(res.p, p, rtol=1e-10, atol=1e-15)
        assert res.L == pytest.approx(L, rel=1e-10)
        assert res.Lq == pytest.approx(Lq, rel=1e-10, abs=1e-14)
        assert res.W == pytest.approx(W, rel=1e-10)
        assert res.Wq == pytest.approx(Wq, rel=1e-10, abs=1e-14)
        assert res.p_block == pytest.approx(pK, rel=1e-10)
        assert res.throughput == pytest.approx(lam * (1 - pK), rel=1e-10)


def test_mm1_matches_large_truncated_chain_and_unstable_is_inf():
    lam, mu = 0.7, 1.0
    p, L, Lq, W, Wq, _ = _station_ctmc(lam, mu, 1, 200)       # 0.7^200: tail ~ 1e-31
    res = pl.mm1(lam, mu, n_max=10)
    np.testing.assert_allclose(res.p, p[:11], rtol=1e-10)
    for got, ref in [(res.L, L), (res.Lq, Lq), (res.W, W), (res.Wq, Wq)]:
        assert got == pytest.approx(ref, rel=1e-10)
    assert res.p_block == 0 and res.throughput == lam
    bad = pl.mm1([1.0, 2.0, np.inf], 1.0)
    assert np.all(np.isinf(bad.W)) and np.all(np.isinf(bad.L)) and not np.isnan(bad.p).any()
    np.testing.assert_array_equal(bad.throughput, 1.0)


def test_paper_mm1_and_mmck_printed_formulas():
    """Errata: W = 1/(λ − μ) is negative; the L_q formula needs ρ = λ/μ, not λ/(cμ)."""
    lam, mu = 0.5, 1.0
    assert 1 / (lam - mu) < 0 < pl.mm1(lam, mu).W == pytest.approx(1 / (mu - lam))

    def paper_lq(rho, c, K, p0):                              # as printed
        x = rho / c
        return p0 * rho ** (c + 1) / c / (math.factorial(c) * (1 - x) ** 2) * (
            1 - x ** (K - c + 1) - (1 - x) * (K - c + 1) * x ** (K - c))

    lam, mu, c, K = 2.0, 1.0, 3, 8
    p, _, Lq, _, _, _ = _station_ctmc(lam, mu, c, K)
    assert paper_lq(lam / mu, c, K, p[0]) == pytest.approx(Lq, rel=1e-12)      # ρ read as r
    assert abs(paper_lq(lam / (c * mu), c, K, p[0]) - Lq) > 0.1 * Lq         # ρ as defined
    L_paper = Lq + c - p[0] * sum((c - n) * (lam / mu) ** n / math.factorial(n)
                                  for n in range(c))
    assert pl.mmck(lam, mu, c, K).L == pytest.approx(L_paper, rel=1e-12)
    # at r = c the printed L_q is 0/0; the engine is finite and matches the chain
    p, _, Lq, _, _, _ = _station_ctmc(3.0, 1.0, 3, 8)
    assert pl.mmck(3.0, 1.0, 3, 8).Lq == pytest.approx(Lq, rel=1e-12)
    # its limit r → c (the geometric sum Σ_{j=1}^{K-c} j = (K−c)(K−c+1)/2)
    assert Lq == pytest.approx(p[0] * 3 ** 3 / math.factorial(3) * 5 * 6 / 2, rel=1e-12)


def test_station_edges_and_vectorisation():
    res = pl.mmck(np.array([[0.0], [1.0], [np.inf]]), np.array([1.0, 2.0]), 2, 5)
    assert res.L.shape == (3, 2) and res.p.shape == (3, 2, 6)
    np.testing.assert_allclose(res.W[0], [1.0, 0.5])             # λ = 0: W = 1/μ
    np.testing.assert_allclose(res.p_block[2], 1.0)              # λ = ∞: always full
    np.testing.assert_allclose(res.throughput[2], [2.0, 4.0])    # c μ
    assert not any(np.isnan(x).any() for x in (res.L, res.W, res.Wq, res.p))


# ------------------------------------------------------------ the exact tandem

TANDEM_CASES = [                     # load = λ / max_throughput_per_ms
    ("before", 0.6, 1.0, 1.2, 0.35, 3, 2), ("after", 0.6, 1.0, 1.2, 0.35, 3, 2),
    ("before", 0.8, 0.6, 2.0, 0.2, 2, 3), ("after", 0.8, 0.6, 2.0, 0.2, 2, 3),
    ("before", 0.3, 3.0, 1.0, 0.5, 4, 2), ("after", 0.7, 3.0, 1.0, 0.5, 1, 1)]


@pytest.mark.parametrize("blocking,load,mu_cpu,mu_mem,mu_cu,K,c", TANDEM_CASES)
def test_matrix_geometric_matches_large_truncated_ctmc(blocking, load, mu_cpu, mu_mem, mu_cu,
                                                       K, c):
    args = (mu_cpu, mu_mem, mu_cu, K, c, blocking)
    lam = load * float(pl.tandem(0.0, *args).max_throughput_per_ms)
    exact = pl.tandem(lam, *args)
    assert exact.stable
    ref = _tandem_ctmc(lam, *args, levels=300)
    assert ref["top"] < 1e-13                                     # the cut is immaterial
    for key in ("l_cpu", "l_mem", "l_cu", "p_cpu_blocked", "p_mem_blocked"):
        assert getattr(exact, key) == pytest.approx(ref[key], rel=1e-8, abs=1e-12), key


@pytest.mark.parametrize("blocking", ["before", "after"])
def test_saturation_throughput_is_where_the_truncated_chain_fills(blocking):
    """Just below max_throughput_per_ms the cut chain's top is light, just above it is heavy."""
    args = (1.0, 1.2, 0.35, 3, 2)
    cap = float(pl.tandem(0.1, *args, blocking).max_throughput_per_ms)
    assert cap < min(1.0, 1.2, 2 * 0.35)
    below = _tandem_ctmc(0.9 * cap, *args, blocking, levels=150)
    above = _tandem_ctmc(1.1 * cap, *args, blocking, levels=150)
    assert below["top"] < 1e-5 and above["top"] > 1e-3
    res = pl.tandem([0.9 * cap, cap, 1.1 * cap], *args, blocking)
    np.testing.assert_array_equal(res.stable, [True, False, False])
    assert np.isfinite(res.w_total_ms[0]) and np.all(np.isinf(res.w_total_ms[1:]))
    np.testing.assert_allclose(res.throughput_per_ms[1:], cap)


def assert_stage_times_within_ci(sim, exact):
    """Each simulated stage time (and the total) within 4 sigma of the exact one."""
    for w, ci, ref in [(sim.w_cpu_ms, sim.ci95_cpu_ms, exact.w_cpu_ms),
                       (sim.w_mem_ms, sim.ci95_mem_ms, exact.w_mem_ms),
                       (sim.w_cu_ms, sim.ci95_cu_ms, exact.w_cu_ms),
                       (sim.w_total_ms, sim.ci95_ms, exact.w_total_ms)]:
        assert abs(w - ref) < 4 * ci / 1.96                     # 4 sigma


SIM_CASES = [("before", 0.4, 1.0, 1.2, 0.3, 3, 2), ("after", 0.4, 1.0, 1.2, 0.3, 3, 2),
             ("before", 1.5, 2.0, 4.0, 0.25, 2, 8), ("after", 1.5, 2.0, 4.0, 0.25, 2, 8)]


@pytest.mark.parametrize("blocking,lam,mu_cpu,mu_mem,mu_cu,K,c", SIM_CASES)
def test_exact_tandem_matches_job_level_simulation(blocking, lam, mu_cpu, mu_mem, mu_cu, K, c):
    exact = pl.tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking)
    sim = simulate_tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking, n_jobs=300_000,
                          seed=20100511)
    assert_stage_times_within_ci(sim, exact)
    assert sim.p_cpu_blocked == pytest.approx(exact.p_cpu_blocked, abs=0.015)
    assert sim.p_mem_blocked == pytest.approx(exact.p_mem_blocked, abs=0.015)
    assert sim.throughput_per_ms == pytest.approx(lam, rel=0.02)


def test_simulation_backends_agree():
    args = (0.4, 1.0, 1.2, 0.3, 3, 2, "after")
    a = simulate_tandem(*args, n_jobs=3_000, seed=5, backend="numba")
    b = simulate_tandem(*args, n_jobs=3_000, seed=5, backend="numpy")
    assert a == b


# ------------------------------------------------------------ limits

@pytest.mark.parametrize("blocking", ["before", "after"])
def test_large_K_and_c_decouple_the_stages(blocking):
    """K, c → ∞: M/M/1 → M/M/1 → M/M/∞ (the independent view becomes exact)."""
    lam, mu_cpu, mu_mem, mu_cu = 0.3, 0.5, 1.0, 0.3       # memory ρ = 0.3: 0.3^30 ~ 2e-16
    K, c = 30, 12                                           # P(Poisson(1) ≥ 12) ~ 1e-9
    res = pl.tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking)
    assert res.w_cpu_ms == pytest.approx(1 / (mu_cpu - lam), rel=1e-7)
    assert res.w_mem_ms == pytest.approx(1 / (mu_mem - lam), rel=1e-7)
    assert res.w_cu_ms == pytest.approx(1 / mu_cu, rel=1e-12)
    naive = pl.tandem_independent(lam, mu_cpu, mu_mem, mu_cu, K, c)
    assert naive.w_total_ms == pytest.approx(res.w_total_ms, rel=1e-7)
    assert res.max_throughput_per_ms == pytest.approx(min(mu_cpu, mu_mem), rel=1e-7)


@pytest.mark.parametrize("blocking", ["before", "after"])
def test_instant_cpu_and_memory_leave_an_mmc_queue(blocking):
    """μ_cpu, μ_mem → ∞: jobs wait upstream only while all c units are busy: M/M/c."""
    lam, mu_cu, c = 1.5, 0.5, 4
    res = pl.tandem(lam, 1e7, 1e7, mu_cu, 2, c, blocking)
    assert res.l_total == pytest.approx(_erlang_c_mean_number(lam, mu_cu, c), rel=1e-5)
    assert res.max_throughput_per_ms == pytest.approx(c * mu_cu, rel=1e-5)


def test_instant_cpu_with_ample_units_makes_cpu_plus_memory_an_mm1():
    """μ_cpu → ∞ and c large: jobs at CPU + memory form one M/M/1 served by memory."""
    lam, mu_mem, mu_cu = 0.6, 1.0, 0.4
    res = pl.tandem(lam, 1e7, mu_mem, mu_cu, 3, 12)         # P(Poisson(2.5) ≥ 12) ~ 1e-5
    rho = lam / mu_mem
    assert res.l_cpu + res.l_mem == pytest.approx(rho / (1 - rho), rel=1e-4)


def test_independent_decomposition_is_wrong_near_saturation():
    args = (1.0, 1.2, 0.35, 3, 2)
    cap = float(pl.tandem(0.1, *args).max_throughput_per_ms)
    lam = np.array([0.3 * cap, 0.95 * cap, 0.5 * (cap + 1.0)])
    exact, naive = pl.tandem(lam, *args), pl.tandem_independent(lam, *args)
    assert naive.stable.all() and not exact.stable[2]                  # naive misses it
    assert exact.w_total_ms[1] > 2 * naive.w_total_ms[1]
    assert exact.w_total_ms[0] == pytest.approx(naive.w_total_ms[0], rel=0.5)


# ------------------------------------------------------------ properties and edges

@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 5.0), st.floats(0.05, 5.0), st.floats(0.05, 2.0), st.integers(1, 4),
       st.integers(1, 4), st.floats(0.05, 0.95), st.sampled_from(["before", "after"]))
def test_tandem_identities(mu_cpu, mu_mem, mu_cu, K, c, load, blocking):
    """Little's law at the units (w_cu = 1/μ_cu), capacity below every stage's rate,
    blocking after service never below blocking before in capacity."""
    cap = pl.tandem(0.0, mu_cpu, mu_mem, mu_cu, K, c, blocking).max_throughput_per_ms
    assert cap <= min(mu_cpu, mu_mem, c * mu_cu) * (1 + 1e-9)
    res = pl.tandem(load * cap, mu_cpu, mu_mem, mu_cu, K, c, blocking)
    assert res.stable
    assert res.w_cu_ms == pytest.approx(1 / mu_cu, rel=1e-7)
    assert res.w_mem_ms >= 1 / mu_mem * (1 - 1e-9) and res.w_cpu_ms >= 1 / mu_cpu * (1 - 1e-9)
    assert 0 <= res.p_cpu_blocked <= 1 and 0 <= res.p_mem_blocked <= 1
    if blocking == "after":
        before = pl.tandem(0.0, mu_cpu, mu_mem, mu_cu, K, c, "before").max_throughput_per_ms
        assert cap >= before * (1 - 1e-9)


def test_tandem_edges_errors_and_broadcasting():
    res = pl.tandem(np.array([[0.0], [0.2], [np.inf]]), 1.0, np.array([1.2, 2.0]), 0.35, 3, 2)
    assert res.w_total_ms.shape == (3, 2)
    np.testing.assert_allclose(res.w_total_ms[0], 1 / 1.0 + 1 / np.array([1.2, 2.0]) + 1 / 0.35)
    assert np.all(np.isinf(res.w_total_ms[2])) and not res.stable[2].any()
    for x in (res.l_mem, res.l_cu, res.p_cpu_blocked, res.p_mem_blocked, res.w_mem_ms):
        assert not np.isnan(x).any()
    single = pl.tandem(0.2, 1.0, 2.0, 0.35, 3, 2)
    assert single.w_total_ms == pytest.approx(res.w_total_ms[1, 1], rel=1e-12)
    for kwargs, name in [(dict(lam=-1.0), "lam"), (dict(mu_cpu=0.0), "mu_cpu"),
                         (dict(mu_mem=np.nan), "mu_mem"), (dict(mu_cu=-1.0), "mu_cu"),
                         (dict(K=0), "K"), (dict(c=2.5), "c"), (dict(blocking="never"),
                                                                 "blocking")]:
        args = dict(lam=0.2, mu_cpu=1.0, mu_mem=1.2, mu_cu=0.35, K=3, c=2) | kwargs
        with pytest.raises(ValueError, match=name):
            pl.tandem(**args)
    with pytest.raises(ValueError, match="K"):
        pl.mmck(1.0, 1.0, 4, 2)


# ------------------------------------------------------------ presets and rates

def test_gpu_spec_presets_are_consistent_datasheets():
    specs = presets.gpu_specs()
    assert {"a100_40gb_sxm", "v100_sxm2_32gb", "h100_sxm", "t4"} <= set(specs)
    for spec in specs.values():
        # FP32 peak = SMs × FP32 lanes per SM × 2 (FMA) × boost clock: 64 lanes before
        # Hopper, 128 on H100 (vendor whitepapers)
        per_cycle = spec.fp32_peak_TFLOP_per_s * 1e12 / (spec.sm_count * spec.boost_clock_MHz
                                                         * 1e6)
        lanes = 128 if spec.id == "h100_sxm" else 64
        assert per_cycle == pytest.approx(2 * lanes, rel=0.01), spec.id
        assert spec.host_link_bandwidth_GB_per_s < spec.memory_bandwidth_GB_per_s
        assert "datasheet" in spec.source


def test_rates_from_specs_by_hand():
    spec = presets.gpu_specs()["a100_40gb_sxm"]
    wl = presets.pipeline_workloads()["job_1mib_intensity_16"]
    r = pl.rates_from_specs(spec, wl)
    S, flops = 2 ** 20, 16 * 2 ** 20
    t_cpu = 0.05 * flops / 50e9 + S / 32e9                 # serial part + one copy, s
    t_mem = S * 0.95 * 16 / 8 / 1555e9                      # f·I/r = 1.9 byte fetches per byte
    t_cu = 0.95 * flops / (19.5e12 / 108)                   # one SM's share of the peak
    assert r.mu_cpu_per_ms == pytest.approx(1e-3 / t_cpu, rel=1e-12)
    assert r.mu_mem_per_ms == pytest.approx(1e-3 / t_mem, rel=1e-12)
    assert r.mu_cu_per_ms == pytest.approx(1e-3 / t_cu, rel=1e-12)
    assert (r.K, r.c) == (8, 108)
    streaming = pl.rates_from_specs(spec, presets.pipeline_workloads()["job_1mib_streaming"])
    assert streaming.mem_traffic_bytes_per_job == S        # read at least once
    t4 = pl.rates_from_specs(presets.gpu_specs()["t4"],
                             presets.pipeline_workloads()["job_1mib_streaming"])
    assert (t4.K, t4.c) == (4, 40)
    res = t4.tandem(0.5 * t4.mu_cpu_per_ms)                       # host link is the bottleneck
    assert res.stable and res.max_throughput_per_ms == pytest.approx(t4.mu_cpu_per_ms, rel=1e-4)


@pytest.mark.parametrize("field,value,message", [
    ("sm_count", "108.5", "sm_count"), ("memory_GB", "-1", "memory_GB"),
    ("boost_clock_MHz", '"fast"', "boost_clock_MHz"), ("colour", '"green"', "colour")])
def test_bad_gpu_spec_file_names_the_field(tmp_path, field, value, message):
    text = (presets.GPU_SPEC_DIR / "t4.toml").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith(field + " ")]
    (tmp_path / "bad.toml").write_text("\n".join(lines) + f"\n{field} = {value}\n")
    with pytest.raises(ValueError, match=f"bad.toml.*{message}"):
        presets.load_gpu_spec(tmp_path / "bad.toml")


@pytest.mark.parametrize("field,value", [("parallel_fraction", "1.5"), ("reuse_factor", "0.5"),
                                         ("precision", '"fp8"'), ("memory_slots", "0")])
def test_bad_workload_file_names_the_field(tmp_path, field, value):
    text = (presets.PIPELINE_WORKLOAD_DIR / "job_1mib_streaming.toml").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith(field + " ")]
    (tmp_path / "bad.toml").write_text("\n".join(lines) + f"\n{field} = {value}\n")
    with pytest.raises(ValueError, match=f"bad.toml.*{field}"):
        presets.load_pipeline_workload(tmp_path / "bad.toml")


@pytest.mark.parametrize("blocking", pl.BLOCKING)
def test_capacity_is_the_tandem_saturation_rate_and_below_every_stage(blocking):
    mu_cpu, mu_mem, mu_cu = np.array([1.0, 3.0, 0.5]), 1.2, 0.3
    cap = pl.capacity(mu_cpu, mu_mem, mu_cu, 3, 4, blocking)
    np.testing.assert_allclose(cap, pl.tandem(0.0, mu_cpu, mu_mem, mu_cu, 3, 4,
                                              blocking).max_throughput_per_ms, rtol=1e-12)
    assert np.all(cap < np.minimum(np.minimum(mu_cpu, mu_mem), 4 * mu_cu))
    # ample buffer and units: the slowest stage alone sets the rate
    assert pl.capacity(1.0, 5.0, 1.0, 40, 12, blocking) == pytest.approx(1.0, rel=1e-6)


def test_grouping_compute_units_keeps_the_stage_rate():
    spec = presets.gpu_specs()["a100_40gb_sxm"]
    r = pl.rates_from_specs(spec, presets.pipeline_workloads()["job_1mib_intensity_16"])
    g = pl.group_compute_units(r, 9)
    assert g.c == 9 and g.mu_cu_per_ms * g.c == pytest.approx(r.mu_cu_per_ms * r.c, rel=1e-12)
    assert (g.mu_cpu_per_ms, g.mu_mem_per_ms, g.K) == (r.mu_cpu_per_ms, r.mu_mem_per_ms, r.K)
    with pytest.raises(ValueError, match="c"):
        pl.group_compute_units(r, 0)
