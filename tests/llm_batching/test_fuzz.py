"""Fuzz tests of the LLM batching strategies (engine.llm_batching and its simulator): the contract of tests/fuzzing.py
over every public function's declared domains; ``FUZZED`` maps each public name
to the test that fuzzes it (checked by tests/test_fuzz_contract.py)."""
from tests.fuzzing import *  # noqa: F401,F403 (settings, checks, engine modules, domains)
import dataclasses

from engine.arrivals import Renewal
from engine.core.domains import ARRIVAL_SCV
from engine.llm_batching import (answers as lb_answers, batch_times as lb_batch_times,
                                 bounds as lb_bounds, coverage as lb_coverage,
                                 curves as lb_curves, dynamic as lb_dynamic,
                                 fixed as lb_fixed, model as lb_model, sim as lb_sim,
                                 stability as lb_stability)


# ============================================================ engine.llm_batching

K_COEFFICIENTS = st.tuples(valid(LLM_K1, high=10.0), valid(LLM_K2, high=100.0),
                           valid(LLM_K3, high=0.1), valid(LLM_K4, high=1.0))
LLM_DOMAINS = {"lam": LAM_PER_S, "b": LLM_BATCH, "l": LLM_MAX_TOKENS, "b_max": B_MAX,
               "kv_capacity_tokens": LLM_KV_CAPACITY, "prompt_tokens": LLM_PROMPT_TOKENS}
LLM_LAWS = token_law_specs(max_log_mean=7.0)


def bad_k(data, k):
    """k with one coefficient out of its domain, and that coefficient's name."""
    i = data.draw(st.integers(0, 3), label="bad coefficient")
    domain = (LLM_K1, LLM_K2, LLM_K3, LLM_K4)[i]
    value = data.draw(invalid(domain), label=domain.name)
    return tuple(value if j == i else x for j, x in enumerate(k)), domain.name


@FUZZ_VECTOR
@given(LLM_LAWS, K_COEFFICIENTS, sweep(valid(LLM_BATCH, high=10 ** 4)),
       sweep(valid(LLM_MAX_TOKENS)), loads(), st.integers(1, 64), b_maxes(high=10 ** 4),
       st.one_of(st.none(), valid(LLM_KV_CAPACITY)), valid(LLM_PROMPT_TOKENS), st.data())
def test_llm_batch_times(law, k, b, l, rho, b_fixed, b_max, kv, prompt, data):
    """check_k, batch_time, E[L_b], μ[b], the linear bound (eq 20), fixed batching
    (M/D^b/1 and eq 25 as printed), stability limits, the throughput-optimal b."""
    name, law = law
    assert llm_batching.check_k(k) == tuple(float(x) for x in k)
    b, l = np.array(b), np.array(l)
    h = llm_batching.batch_time(b, l, k)
    assert np.all(np.isfinite(h) & (h > 0))
    eml = llm_batching.expected_max_tokens(law, b)
    assert_no_nan(eml)
    order = np.argsort(b)
    assert np.all(np.diff(eml[order]) >= -1e-9 * eml[order][1:])          # E[L_b] grows with b
    # E[L_b] ≥ E[L_1] = E[N]; the quadrature assumes a continuous law (an empirical one's
    # step quantile costs accuracy, up to 0.4 % measured with 3 values, not finiteness)
    rtol = 1e-2 if isinstance(law, token_laws.EmpiricalTokens) else 1e-6
    assert np.all(eml >= float(law.mean()) * (1 - rtol))
    mbt, mu = llm_batching.mean_batch_time(b, law, k), llm_batching.throughput(b, law, k)
    assert np.all(np.isfinite(mbt) & (mbt > 0) & np.isfinite(mu) & (mu > 0))
    a1, b1 = llm_batching.linear_bound_coefficients(law, k)
    assert_no_nan((a1, b1))
    lam_bound = at_load(rho, 1 / a1) if np.isfinite(a1) else at_load(rho, 1.0)
    bound = llm_batching.dynamic_wait_bound(lam_bound, law, k)      # φ(λ, α1, β1): capacity 1/α1
    assert_inf_iff(bound, ~np.isfinite(b1) | (lam_bound >= 1 / a1), "dynamic_wait_bound")
    cap = float(llm_batching.throughput(b_fixed, law, k))
    lam = at_load(rho, cap)
    unstable = (lam >= cap) | ((lam == 0) & (b_fixed > 1))        # b > 1 never fills at λ = 0
    for f in (llm_batching.fixed_batch_wait, llm_batching.fixed_batch_sojourn):
        assert_inf_iff(f(lam, b_fixed, law, k), unstable, f.__name__)
    eq25 = llm_batching.fixed_batch_wait_eq25(lam, b_fixed, law, k)
    assert_inf_iff(eq25, (lam >= cap) | (lam == 0), "fixed_batch_wait_eq25")
    for x in lam[(lam > 0) & (lam < cap)][:2]:
        roots = llm_batching.fixed_batch_roots_eq25(x, b_fixed, law, k)
        assert_no_nan(roots)
        assert roots.shape == (2, b_fixed - 1)
        tally(llm_batching.fixed_batch_roots_eq25)
    assert np.isclose(llm_batching.stability_limit("fixed", law, k, b=b_fixed), cap, rtol=1e-12)
    for strategy in ("elastic", "continuous"):
        limit = llm_batching.stability_limit(strategy, law, k, b_max=b_max,
                                             kv_capacity_tokens=kv, prompt_tokens=prompt)
        assert np.isfinite(limit) and limit > 0
    if b_max is not None and math.isfinite(b_max):
        assert llm_batching.stability_limit("dynamic", law, k, b_max=b_max) == \
            pytest.approx(float(llm_batching.throughput(b_max, law, k)), rel=1e-12)
    b_limit = min(b_fixed, 16)                   # (E[L_b] for every b up to it: cost)
    best = llm_batching.optimal_batch_size(law, k, b_limit)
    assert 1 <= best <= b_limit
    values = {"a": lam, "b": np.where(unstable, np.nan, lam), "c": np.full(POINTS, np.inf)}
    names = llm_batching.best_strategy(values)
    assert len(names) == POINTS and set(names) <= {"a", "b", ""}
    assert set(llm_batching.paper_laws()) == {"uniform(0, 1000)", "lognormal(7, 0.7)"}
    # the package's helpers: the law of L_b, curves, limits by strategy, merged means
    assert llm_batching.check_dist(law) is law
    top = llm_batching.upper_support(law)
    assert not math.isnan(top) and top >= 0
    m1, m2 = llm_batching.max_token_moments(law, b)
    assert np.array_equal(m1, np.asarray(eml)) and np.all(m2 >= m1 ** 2 * (1 - 1e-6))
    nodes, weights = llm_batching.max_token_nodes(law, b)
    assert nodes.shape == (b.size, weights.size) and abs(weights.sum() - 1) < 1e-12
    assert_no_nan(nodes)
    curve = llm_batching.batch_size_curve(law, k, b_limit)
    assert curve.b_throughput_opt == best and curve.peak_throughput_per_s == curve.throughput_per_s.max()
    grid = llm_batching.load_grid(cap, POINTS)
    fc = llm_batching.fixed_curves(grid, b_fixed, law, k)
    assert fc.sojourn_s[-1] == np.inf and np.all(np.isfinite(fc.sojourn_s[:-1]))    # λ = μ[b]
    limits = llm_batching.strategy_limits(law, k, b_fixed, b_max if b_max is not None else 64,
                                          kv, prompt)
    assert limits["fixed"] == llm_batching.stability_limit("fixed", law, k, b=b_fixed)
    assert_no_nan(limits)
    # which strategy is stable where: "none stable" only where every limit is passed
    top = 2.0 * max(limits.values())
    grid = llm_batching.curve_grid(top, cap, POINTS)
    assert np.all(np.diff(grid) > 0) and 0 < grid[0] and grid[-1] <= top
    assert (0 < cap < top) <= bool(np.any((grid < cap) & (grid >= 0.9 * cap)))
    tally(llm_batching.curve_grid)
    smap = llm_batching.strategy_map(
        grid, tuple(limits), {s: s for s in limits}, limits,
        {}, None, share={"dynamic": 0.8, "capped": 0.9},
        states={"dynamic": 256, "capped": 256})
    for x, verdict in zip(smap.lam_per_s, smap.verdicts()):
        assert (verdict == "none stable") == (not smap.stable(x))
    tally(llm_batching.strategy_map)
    assert llm_batching.chain_loads(smap.lam_per_s, limits["capped"], 0.9).max(initial=0) <= top
    tally(llm_batching.chain_loads)
    merged = llm_batching.prefer_simulated({"a": lam}, {"a": np.where(unstable, np.nan, lam),
                                                        "c": lam})
    assert set(merged) == {"a", "c"} and np.array_equal(merged["a"], lam)
    for f in (llm_batching.check_dist, llm_batching.upper_support, llm_batching.batch_size_curve,
              llm_batching.load_grid, llm_batching.fixed_curves, llm_batching.strategy_limits,
              llm_batching.prefer_simulated):
        tally(f)
    tally(llm_batching.max_token_moments, POINTS)
    tally(llm_batching.max_token_nodes, POINTS)
    raises_naming("dist", llm_batching.check_dist, "lognormal")
    raises_naming("b_top", llm_batching.batch_size_curve, law, k, 0)
    raises_naming("lam_max", llm_batching.load_grid, -1.0, 4)
    for f in (llm_batching.check_k, llm_batching.batch_time, llm_batching.expected_max_tokens,
              llm_batching.mean_batch_time, llm_batching.throughput,
              llm_batching.fixed_batch_wait, llm_batching.fixed_batch_sojourn,
              llm_batching.fixed_batch_wait_eq25, llm_batching.best_strategy):
        tally(f, POINTS)
    tally(llm_batching.dynamic_wait_bound, POINTS)
    for f in (llm_batching.linear_bound_coefficients, llm_batching.stability_limit,
              llm_batching.optimal_batch_size, llm_batching.paper_laws):
        tally(f)
    params = dict(lam=lam, b=b, l=l, b_max=b_max, kv_capacity_tokens=kv or 1e4,
                  prompt_tokens=prompt)
    p, bad = corrupt(data, params, LLM_DOMAINS)
    rejects((llm_batching.batch_time, llm_batching.expected_max_tokens,
             llm_batching.mean_batch_time, llm_batching.throughput), p, bad, k=k, dist=law)
    rejects((llm_batching.fixed_batch_wait, llm_batching.fixed_batch_sojourn,
             llm_batching.fixed_batch_wait_eq25, llm_batching.dynamic_wait_bound),
            p if bad == "b" else {**p, "b": b_fixed}, bad, dist=law, k=k)
    if bad in ("b_max", "kv_capacity_tokens", "prompt_tokens"):
        raises_naming(bad, llm_batching.stability_limit, "continuous", law, k,
                      b_max=p["b_max"], kv_capacity_tokens=p["kv_capacity_tokens"],
                      prompt_tokens=p["prompt_tokens"])
    kk, coefficient = bad_k(data, k)
    for f in (llm_batching.check_k,):
        raises_naming(coefficient, f, kk)
    raises_naming(coefficient, llm_batching.batch_time, b, l, kk)
    raises_naming(coefficient, llm_batching.throughput, b, law, kk)
    raises_naming("k", llm_batching.check_k, k[:3])
    raises_naming("strategy", llm_batching.stability_limit, "other", law, k)
    raises_naming("b_limit", llm_batching.optimal_batch_size, law, k, 0)


@FUZZ_VECTOR
@given(valid(ALPHA), valid(TAU0), loads(), st.data())
def test_llm_yang_phi(alpha, beta, rho, data):
    """Eq 16 as printed (φ0, φ1, φ = min): inf exactly at λα ≥ 1, φ0 and φ1 against
    their closed forms, bad arguments named."""
    lam = at_load(rho, 1 / alpha)
    unstable = (lam * alpha >= 1) | (lam >= 1 / alpha)
    phis = [f(lam, alpha, beta) for f in (llm_batching.yang_phi0, llm_batching.yang_phi1,
                                          llm_batching.yang_phi)]
    for f, v in zip(("yang_phi0", "yang_phi1", "yang_phi"), phis):
        assert_inf_iff(v, unstable, f)
        assert np.all(v >= 0)
    ok = ~unstable
    r, lo = lam[ok] * alpha, 2 * (1 - (lam[ok] * alpha) ** 2)
    np.testing.assert_allclose(phis[0][ok], lam[ok] * (alpha + beta) ** 2 / lo, rtol=1e-12)
    np.testing.assert_allclose(phis[1][ok], (r * beta + r * alpha + beta) / lo, rtol=1e-12)
    assert np.array_equal(phis[2], np.minimum(phis[0], phis[1]))
    for f in (llm_batching.yang_phi0, llm_batching.yang_phi1, llm_batching.yang_phi):
        tally(f, POINTS)
    p, bad = corrupt(data, dict(lam=lam, alpha=alpha, beta=beta),
                     {"lam": LAM, "alpha": ALPHA, "beta": TAU0})
    rejects((llm_batching.yang_phi0, llm_batching.yang_phi1, llm_batching.yang_phi), p, bad)


# One departure chain per point (64-128 states here, ~10-50 ms) and, without a cap (one
# case in four), a stability scan over 400 batch sizes up to 10^6 in every call (~0.1 s).
@fuzz(40, 4)
@given(LLM_LAWS, K_COEFFICIENTS, st.one_of(*[st.integers(1, 16)] * 3, st.none()),
       st.lists(rho(), min_size=4, max_size=4), st.data())
def test_llm_dynamic(law, k, b_max, rho, data):
    """dynamic_solution, dynamic_wait, dynamic_sojourn, the uncapped stability limit,
    recommended_b_max, best_fixed_batch_size."""
    name, law = law
    limit = llm_batching.stability_limit("dynamic", law, k, b_max=b_max)
    assert not math.isnan(limit) and limit >= 0
    lam = at_load(np.array(rho), limit)
    unstable = lam >= limit
    sols = [llm_batching.dynamic_solution(float(x), law, k, b_max, max_states=128) for x in lam]
    for sol, bad_load in zip(sols, unstable):
        assert_no_nan(sol)
        assert sol.stable == (not bad_load)
        assert (sol.mean_wait_s == np.inf) == (bad_load or not sol.converged)
        assert np.isfinite(sol.mean_sojourn_s) == np.isfinite(sol.mean_wait_s)
    tally(llm_batching.dynamic_solution, lam.size)
    solved = np.array([s.converged and s.stable for s in sols])
    few = lam[solved | unstable][:2]            # converged chains are cached by nothing: cost
    for f in (llm_batching.dynamic_wait, llm_batching.dynamic_sojourn):
        v = f(few, law, k, b_max)
        assert_inf_iff(v, few >= limit, f.__name__)
        tally(f, few.size)
    x = float(lam[0]) if np.isfinite(lam[0]) else 0.0
    best, soj = llm_batching.recommended_b_max(x, law, k, (1, 2, 4), max_states=128)
    assert best in (0, 1, 2, 4) and (best == 0) == (soj == np.inf)
    b = llm_batching.best_fixed_batch_size(x, law, k, 8)
    assert 0 <= b <= 8
    if b:
        assert x < llm_batching.throughput(b, law, k)
    tally(llm_batching.recommended_b_max)
    tally(llm_batching.best_fixed_batch_size)
    kk, coefficient = bad_k(data, k)
    raises_naming(coefficient, llm_batching.dynamic_solution, x, law, kk, b_max)
    bad_lam = data.draw(invalid(LAM_PER_S), label="bad lam")
    for f in (llm_batching.dynamic_wait, llm_batching.dynamic_sojourn,
              llm_batching.dynamic_solution, llm_batching.recommended_b_max,
              llm_batching.best_fixed_batch_size):
        raises_naming("lam", f, bad_lam, law, k)
    raises_naming("b_max", llm_batching.dynamic_solution, x, law, k,
                  data.draw(invalid(B_MAX), label="bad b_max"))
    raises_naming("max_states", llm_batching.dynamic_solution, x + 1e-9, law, k, 4, 1)
    raises_naming("candidates", llm_batching.recommended_b_max, x, law, k, (0, 2))
    raises_naming("max_load", llm_batching.recommended_b_max, x, law, k, (1,), 1.5)
    raises_naming("b_search", llm_batching.best_fixed_batch_size, x, law, k, 0)


# ~5 ms a case (numba loops over n_jobs requests), POINTS loads an example.
@fuzz(1000, POINTS)
@given(LLM_LAWS, K_COEFFICIENTS, st.sampled_from(lb_sim.STRATEGIES),
       st.integers(1, 32), b_maxes(high=64), loads(), st.integers(1, 300),
       st.one_of(st.none(), valid(LLM_KV_CAPACITY)), valid(LLM_PROMPT_TOKENS, high=1e4),
       st.sampled_from(["realised", "mean"]), st.one_of(st.none(), st.integers(0, 400)),
       st.integers(0, 2 ** 32), st.data())
def test_llm_simulate(law, k, strategy, b, b_max, rho, n_jobs, kv, prompt, batch_time, warmup,
                      seed, data):
    """llm_batching.simulate (and lb_sim.simulate behind it), every strategy."""
    name, law = law
    if batch_time == "mean" and (strategy in ("elastic", "continuous")
                                 or strategy == "dynamic" and (b_max is None or b_max == np.inf)):
        batch_time = "realised"
    cap = llm_batching.stability_limit(strategy, law, k, b=b, b_max=b_max if strategy != "dynamic"
                                       else (b_max or 64), kv_capacity_tokens=kv,
                                       prompt_tokens=prompt)
    kw = dict(dist=law, k=k, b=b, b_max=b_max, n_jobs=n_jobs, seed=seed, kv_capacity_tokens=kv,
              prompt_tokens=prompt, batch_time=batch_time, warmup_jobs=warmup)
    for lam in at_load(rho, cap):
        if not 0 < lam < np.inf:
            raises_naming("lam", llm_batching.simulate, strategy, lam, **kw)
            continue
        r = llm_batching.simulate(strategy, lam, **kw, return_records=True)
        assert_no_nan(r, allowed=("start_s", "finish_s"))   # documented: requests never served
        if strategy == "continuous":    # the serving simulator's view it ran on
            cost, scheduler, prompt_l, replies = lb_sim.continuous_serving(
                k, r.records.tokens, b_max, kv, prompt)
            assert prompt_l >= 1 and replies.min() >= 1 and replies.size == n_jobs
            assert not scheduler.chunked_prefill and scheduler.block_size == 1
            assert (scheduler.kv_cache_tokens is None) == (kv is None or kv > 1e10)
            assert cost.prompt_ms(prompt_l) == pytest.approx(1e3 * (k[0] + k[1]), rel=1e-9)
            tally(lb_sim.continuous_serving)
        assert r.mean_sojourn_s >= r.mean_wait_s >= -1e-9 * max(1.0, r.mean_sojourn_s)
        # (times as large as 1e11 s at λ = 1e-9·capacity round the busy fraction)
        done = r.records.finish_s[np.isfinite(r.records.finish_s)]
        rounding = 1e-12 * done.max() / r.mean_sojourn_s if done.size else 0.0
        assert 0 <= r.utilization <= 1 + 1e-9 + rounding
        tally(llm_batching.simulate)
        tally(lb_sim.simulate)
        # the records and their summary, apart: the same numbers
        rec = lb_sim.simulate_records(strategy, lam, **kw)
        assert np.array_equal(rec.finish_s, r.records.finish_s, equal_nan=True)
        assert rec.strategy == strategy and 0 <= rec.warmup < max(rec.n_served, 1)
        assert rec.busy_s >= 0 and rec.running_area_s >= 0 and rec.steps >= 0
        assert _same(lb_sim.llm_sim_summary(rec), dataclasses.replace(r, records=None))
        tally(lb_sim.simulate_records)
        tally(lb_sim.llm_sim_summary)
    lam = float(at_load(rho[0], cap))
    if 0 < lam < np.inf:            # ``arrivals``: a renewal process at λ, then its replay
        process = Renewal(lam, data.draw(valid(ARRIVAL_SCV, high=100.0), label="scv"))
        times = process.sample(n_jobs, np.random.default_rng(seed))
        for arrivals in (process, times):
            r = llm_batching.simulate(strategy, None, **kw, arrivals=arrivals,
                                      return_records=True)
            assert_no_nan(r, allowed=("start_s", "finish_s"))
            assert r.records.arrival_s.size == n_jobs
        raises_naming("arrivals", llm_batching.simulate, strategy, None, **kw,
                      arrivals=np.append(times, np.nan))
    params = dict(lam=1.0, b=b, b_max=b_max, n_jobs=n_jobs, kv_capacity_tokens=kv or 1e4,
                  prompt_tokens=prompt, warmup_jobs=warmup or 0)
    p, bad = corrupt(data, params, {**LLM_DOMAINS, "n_jobs": N_JOBS, "warmup_jobs": WARMUP})
    p.pop("l", None)
    rejects((lb_sim.simulate,), p, bad, strategy="fixed" if bad == "b" else strategy,
            dist=law, k=k, seed=seed)
    rejects((lb_sim.continuous_serving,), p, bad, k=k, tokens=np.full(3, 10.0))
    raises_naming("strategy", llm_batching.simulate, "other", 1.0, law, k)
    raises_naming("batch_time", llm_batching.simulate, strategy, 1.0, law, k, b=b,
                  batch_time="other")


# compare_strategies solves two chains (up to 2048 states: 15 s near saturation, so the
# stable loads stay at most half the reference throughput) and simulates four strategies.
@fuzz(4)
@given(LLM_LAWS, K_COEFFICIENTS, st.one_of(st.floats(0.01, 0.5), st.sampled_from([1.0, 1.5])),
       st.one_of(st.none(), st.integers(1, 16)),
       st.one_of(st.none(), valid(LLM_KV_CAPACITY)))
def test_llm_compare(law, k, rho, b, kv):
    """compare_strategies: every strategy at one load, no NaN (inf where unstable)."""
    name, law = law
    ref = float(llm_batching.throughput(b or 4, law, k))
    lam = float(at_load(rho, ref)) if np.isfinite(rho) else 10 * ref
    out = llm_batching.compare_strategies(lam, law, k, b, n_jobs=500, b_search=8,
                                          kv_capacity_tokens=kv)
    assert_no_nan(out)
    assert set(out) == {"dynamic", "dynamic_capped", "fixed", "fixed_realised", "elastic",
                        "continuous"}
    assert all(isinstance(v, lb_answers.StrategyLatency) and v.method in ("exact", "simulation")
               and v.mean_sojourn_s >= v.mean_wait_s >= 0 for v in out.values())
    tally(llm_batching.compare_strategies)
    raises_naming("lam", llm_batching.compare_strategies, -1.0, law, k, b)


def _same(a, b):
    """Equal numbers, NaN and inf included, in arrays, tuples and result objects."""
    if hasattr(a, "__dataclass_fields__"):
        return all(_same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__
                   if f != "records")
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[x], b[x]) for x in a)
    return np.array_equal(np.asarray(a, float), np.asarray(b, float), equal_nan=True)


# Each method against the function it names (same numbers), on two loads below the
# uncapped limit: a chain (≤ 128 states) and a short simulation per case.
@fuzz(20, 4)
@given(LLM_LAWS, K_COEFFICIENTS, st.integers(1, 8), st.integers(1, 8),
       st.lists(st.floats(0.05, 0.9), min_size=2, max_size=2), st.data())
def test_llm_batch_times_object(law, k, b, b_max, shares, data):
    """BatchTimes: the unit-suffixed coefficients, k, and every method giving the module
    function's numbers with the load first; a bad coefficient or law named."""
    name, law = law
    m = llm_batching.BatchTimes.from_k(k, law)
    assert m.k == tuple(float(x) for x in k) and m.k2_s == float(k[1])
    assert m == llm_batching.BatchTimes(*k, law) and m.output_tokens is law
    assert _same(m.batch_time(b, 100.0), llm_batching.batch_time(b, 100.0, k))
    assert _same(m.expected_max_tokens(b), llm_batching.expected_max_tokens(law, b))
    assert _same(m.mean_batch_time(b), llm_batching.mean_batch_time(b, law, k))
    assert _same(m.throughput(b), llm_batching.throughput(b, law, k))
    assert m.optimal_batch_size(8) == llm_batching.optimal_batch_size(law, k, 8)
    assert _same(m.batch_size_curve(8), llm_batching.batch_size_curve(law, k, 8))
    assert _same(m.linear_bound_coefficients(), llm_batching.linear_bound_coefficients(law, k))
    limits = m.strategy_limits(b, b_max)
    assert _same(limits, llm_batching.strategy_limits(law, k, b, b_max))
    assert m.stability_limit("dynamic", b_max=b_max) == \
        llm_batching.stability_limit("dynamic", law, k, b_max=b_max)
    lam = np.array(shares) * limits["capped"]
    assert _same(m.fixed_wait(lam, b), llm_batching.fixed_batch_wait(lam, b, law, k))
    assert _same(m.fixed_sojourn(lam, b), llm_batching.fixed_batch_sojourn(lam, b, law, k))
    assert _same(m.fixed_curves(lam, b), llm_batching.fixed_curves(lam, b, law, k))
    x = float(lam[0])
    assert _same(m.dynamic_solution(x, b_max, 128),
                 llm_batching.dynamic_solution(x, law, k, b_max, 128))
    assert _same(m.dynamic_sojourn(x, b_max), llm_batching.dynamic_sojourn(x, law, k, b_max))
    assert _same(m.dynamic_wait(x, b_max), llm_batching.dynamic_wait(x, law, k, b_max))
    assert _same(m.dynamic_wait_bound(lam), llm_batching.dynamic_wait_bound(lam, law, k))
    assert m.best_fixed_batch_size(x, 8) == llm_batching.best_fixed_batch_size(x, law, k, 8)
    assert m.recommended_b_max(x, (1, 2, 4), max_states=128) == \
        llm_batching.recommended_b_max(x, law, k, (1, 2, 4), max_states=128)
    assert _same(m.simulate("fixed", x, b, n_jobs=200, seed=3),
                 llm_batching.simulate("fixed", x, law, k, b, n_jobs=200, seed=3))
    tally(llm_batching.BatchTimes)
    kk, coefficient = bad_k(data, k)
    raises_naming(coefficient, llm_batching.BatchTimes.from_k, kk, law)
    raises_naming("dist", llm_batching.BatchTimes, *k, "lognormal")


@FUZZ
@given(st.lists(st.floats(0.01, 100.0), min_size=1, max_size=12, unique=True),
       st.lists(st.booleans(), min_size=12, max_size=12), st.data())
def test_llm_sweep_assembly(loads_per_s, converged, data):
    """chain_curve: the solved sojourns up to the first chain not converged, NaN on;
    sim_jobs: the loads below sim_load of each limit; strategy_sims: each run at its
    strategy and load, NaN elsewhere.  Expected values by a plain loop here."""
    from types import SimpleNamespace as Run
    lam = np.sort(np.array(loads_per_s))
    sols = [Run(converged=c, mean_sojourn_s=float(x) + 1.0) for x, c in zip(lam, converged)]
    first_bad = next((n for n, c in enumerate(converged[:lam.size]) if not c), lam.size)
    coarse = lam[::2]
    curve = llm_batching.chain_curve(lam, coarse, sols)
    want = np.array([x + 1.0 if n < first_bad else np.nan for n, x in enumerate(lam)])
    np.testing.assert_array_equal(curve.sojourn_s, want)
    np.testing.assert_array_equal(curve.coarse_s, want[::2])
    assert np.array_equal(curve.lam_per_s, lam)
    tally(llm_batching.chain_curve)
    raises_naming("solutions", llm_batching.chain_curve, lam, coarse, sols[:-1] + [None, None])
    limits = {"a": data.draw(st.floats(0.0, 200.0), label="a"),
              "b": data.draw(st.floats(0.0, 200.0), label="b")}
    share = data.draw(st.floats(0.1, 1.0), label="share")
    jobs = llm_batching.sim_jobs(lam, ("a", "b"), limits, share)
    assert jobs == [(s, i) for s in ("a", "b") for i, x in enumerate(lam)
                    if x < share * limits[s]]
    tally(llm_batching.sim_jobs)
    runs = [Run(mean_sojourn_s=10.0 * i, ci95_sojourn_s=0.5 * i, p99_sojourn_s=20.0 * i)
            for _, i in jobs]
    sims = llm_batching.strategy_sims(lam, ("a", "b"), jobs, runs)
    for s in ("a", "b"):
        done = {i for t, i in jobs if t == s}
        for i in range(lam.size):
            got = (sims.mean_s[s][i], sims.ci95_s[s][i], sims.p99_s[s][i])
            assert (got == (10.0 * i, 0.5 * i, 20.0 * i)) if i in done else \
                all(math.isnan(g) for g in got)
    tally(llm_batching.strategy_sims)
    raises_naming("runs", llm_batching.strategy_sims, lam, ("a", "b"), jobs, runs + [runs[:1]])


# paper_comparison runs compare_strategies for both laws of §V-C with the throughput-
# optimal b up to 1024 and b* up to 64 (E[L_b] for each): ~1-3 s a case, but 15-30 s where
# a drawn k puts the load just below the uncapped dynamic limit (a 2048-state chain).  So
# only explicit cases: the preset's k, and extreme coefficients beyond and below capacity.
@settings(FUZZ, phases=[Phase.explicit])
@given(K_COEFFICIENTS, st.floats(0.01, 1.5), st.one_of(st.none(), valid(LLM_KV_CAPACITY)))
@example((0.06, 0.126, 0.0003, 0.02269), 0.3, 62720.0)      # presets/llm_batching
@example((10.0, 0.0, 0.1, 1.0), 1.5, None)
@example((1e-9, 100.0, 0.0, 0.0), 0.05, 1.0)
def test_llm_paper_comparison(k, rho, kv):
    """paper_comparison (§V-C): a row per law and strategy, no NaN (inf where unstable)."""
    rows = llm_batching.paper_comparison(k, loads=(rho,), n_jobs=100, kv_capacity_tokens=kv)
    assert_no_nan(rows)
    assert {r["law"] for r in rows} == set(llm_batching.paper_laws())
    assert all(isinstance(r, lb_answers.ComparisonRow) and r.lam_per_s > 0 for r in rows)
    tally(llm_batching.paper_comparison)


# ============================================================ every public function has a case

# Public name -> the test that fuzzes it, per submodule of engine.llm_batching (the
# package only re-exports).  A result or data class (no arguments of its own to fuzz)
# names the test that builds and checks it and the function it comes from.
FUZZED = {
    lb_batch_times: {
        "check_k": test_llm_batch_times, "check_dist": test_llm_batch_times,
        "upper_support": test_llm_batch_times, "max_token_moments": test_llm_batch_times,
        "max_token_nodes": test_llm_batch_times, "expected_max_tokens": test_llm_batch_times,
        "batch_time": test_llm_batch_times, "mean_batch_time": test_llm_batch_times,
        "throughput": test_llm_batch_times, "optimal_batch_size": test_llm_batch_times},
    lb_stability: {"stability_limit": test_llm_batch_times},
    lb_fixed: {
        "fixed_batch_wait": test_llm_batch_times, "fixed_batch_sojourn": test_llm_batch_times,
        "fixed_batch_wait_eq25": test_llm_batch_times,
        "fixed_batch_roots_eq25": test_llm_batch_times},
    lb_bounds: {
        "linear_bound_coefficients": test_llm_batch_times,
        "dynamic_wait_bound": test_llm_batch_times,
        "yang_phi0": test_llm_yang_phi, "yang_phi1": test_llm_yang_phi,
        "yang_phi": test_llm_yang_phi},
    lb_curves: {
        "batch_size_curve": test_llm_batch_times, "load_grid": test_llm_batch_times,
        "fixed_curves": test_llm_batch_times,
        "BatchSizeCurve": (test_llm_batch_times, "batch_size_curve"),
        "FixedCurves": (test_llm_batch_times, "fixed_curves"),
        "chain_curve": test_llm_sweep_assembly, "sim_jobs": test_llm_sweep_assembly,
        "strategy_sims": test_llm_sweep_assembly,
        "ChainCurve": (test_llm_sweep_assembly, "chain_curve"),
        "StrategySims": (test_llm_sweep_assembly, "strategy_sims")},
    lb_dynamic: {
        "dynamic_solution": test_llm_dynamic, "dynamic_wait": test_llm_dynamic,
        "dynamic_sojourn": test_llm_dynamic,
        "DynamicSolution": (test_llm_dynamic, "dynamic_solution")},
    lb_answers: {
        "best_strategy": test_llm_batch_times, "paper_laws": test_llm_batch_times,
        "strategy_limits": test_llm_batch_times, "prefer_simulated": test_llm_batch_times,
        "recommended_b_max": test_llm_dynamic, "best_fixed_batch_size": test_llm_dynamic,
        "compare_strategies": test_llm_compare, "paper_comparison": test_llm_paper_comparison,
        "StrategyLatency": (test_llm_compare, "compare_strategies"),
        "ComparisonRow": (test_llm_paper_comparison, "paper_comparison")},
    lb_coverage: {   # tests/llm_batching/test_llm_batching.py (arrays in, labels out)
        "curve_grid": test_llm_batch_times, "chain_loads": test_llm_batch_times,
        "strategy_map": test_llm_batch_times,
        "StrategyMap": (test_llm_batch_times, "strategy_map")},
    lb_model: {"BatchTimes": test_llm_batch_times_object},
    lb_sim: {
        "simulate": test_llm_simulate, "continuous_serving": test_llm_simulate,
        "LLMSimResult": (test_llm_simulate, "simulate"),
        "LLMSimRecords": (test_llm_simulate, "simulate_records"),
        "simulate_records": test_llm_simulate, "llm_sim_summary": test_llm_simulate},
}
