"""Fuzz tests of the GPU dynamic batching (engine.batching: formulas, stationary,
exact solvers, curves, answers, simulator): the contract of tests/fuzzing.py over
every public function's declared domains; ``FUZZED`` maps each public name to the
test that fuzzes it (checked by tests/test_fuzz_contract.py)."""
from tests.fuzzing import *  # noqa: F401,F403 (settings, checks, engine modules, domains)
from engine.batching import answers as b_answers, curves as b_curves, exact as b_exact
from engine.batching import formulas as b_formulas, means as b_means, sim as b_sim


# ============================================================ engine.batching: closed forms

BATCHING_DOMAINS = {"lam_per_ms": LAM, "alpha_ms": ALPHA, "tau0_ms": TAU0, "b_max": B_MAX,
                    "beta_j": BETA, "c0_j": C0}


@FUZZ_VECTOR
@given(valid(ALPHA), valid(TAU0), sweep(b_maxes()), st.data())
def test_batching_capacity(alpha, tau0, b_max, data):
    """capacity: finite, positive, 1/α without a cap and μ[b_max] = b/τ[b] with one."""
    params = dict(alpha_ms=alpha, tau0_ms=tau0, b_max=b_max)
    c = batching.capacity(alpha, tau0, b_max)
    free = unlimited(b_max)
    assert np.all(np.isfinite(c) & (c > 0) & (c <= (1 / alpha) * (1 + 1e-12)))
    assert np.all(c[free] == 1 / alpha)
    b = arr([np.inf if x is None else x for x in b_max])[~free]
    assert close(c[~free], b / (alpha * b + tau0), 1e-12)
    for b, cap in zip(b_max, c):
        assert batching.DynamicBatching(alpha, tau0, b).capacity_per_ms == cap
    tally(batching.capacity, POINTS)
    tally(batching.DynamicBatching, POINTS)
    p, bad = corrupt(data, params, BATCHING_DOMAINS)
    rejects((batching.capacity, batching.DynamicBatching), p, bad)


@FUZZ_VECTOR
@given(valid(ALPHA), valid(TAU0), loads(), valid(BETA), valid(C0), st.data())
def test_batching_closed_forms(alpha, tau0, rho, beta, c0, data):
    """φ0, φ1, φ (eqs 41-43), the energy bound (eq 40), Yang's eq 16, over loads."""
    cap = float(batching.capacity(alpha, tau0))          # φ's capacity: 1/α (b_max = ∞)
    lam = at_load(rho, cap)
    unstable = lam >= cap
    params = dict(lam_per_ms=lam, alpha_ms=alpha, tau0_ms=tau0, beta_j=beta, c0_j=c0)
    bounds = [call(f, params) for f in (batching.phi0, batching.phi1, batching.phi)]
    for f, v in zip((batching.phi0, batching.phi1, batching.phi), bounds):
        assert_inf_iff(v, unstable, f.__name__)
        assert np.all(v >= (alpha + tau0) * (1 - 1e-12)), f.__name__   # φ ≥ E[W] ≥ α + τ0
    assert np.array_equal(bounds[2], np.minimum(bounds[0], bounds[1]))
    eta = call(batching.energy_efficiency_bound, params)
    assert np.all(np.isfinite(eta) & (eta > 0) & (eta <= (1 / beta) * (1 + 1e-12)))
    assert np.all(eta[unstable] == 1 / beta)
    assert np.array_equal(batching.DynamicBatching(alpha, tau0).phi_ms(lam), bounds[2])
    # Yang et al. eq 16 takes (λ, α, β) with β the batch overhead (τ0 here), by position.
    yang_names = list(inspect.signature(llm_batching.yang_phi0).parameters)[:3]
    yang = dict(zip(yang_names, (lam, alpha, tau0)))
    for f in (llm_batching.yang_phi0, llm_batching.yang_phi1, llm_batching.yang_phi):
        v = call(f, yang)
        assert_inf_iff(v, unstable, f.__name__)
        assert np.all(v >= 0)
    for f in (batching.phi0, batching.phi1, batching.phi, batching.energy_efficiency_bound,
              llm_batching.yang_phi0, llm_batching.yang_phi1, llm_batching.yang_phi):
        tally(f, POINTS)

    p, bad = corrupt(data, params, BATCHING_DOMAINS)
    rejects((batching.phi0, batching.phi1, batching.phi, batching.energy_efficiency_bound), p, bad)
    ours = ("lam_per_ms", "alpha_ms", "tau0_ms")
    if bad in ours:
        yang = dict(zip(yang_names, (p[k] for k in ours)))
        rejects((llm_batching.yang_phi0, llm_batching.yang_phi1, llm_batching.yang_phi), yang,
                yang_names[ours.index(bad)])


# ============================================================ engine.batching: exact solution

def check_stationary(lam, alpha, tau0, b_max, beta, c0, unstable):
    """Exact E[W], E[B], utilization and η against their bounds; inf exactly when unstable.

    All functions of ``engine.batching`` that solve the queue are called (each
    solves it anew, apart from the cached finite-b_max chain).
    """
    st_ = batching.stationary(lam, alpha, tau0, b_max)
    assert_no_nan(st_)
    assert_inf_iff(st_.mean_latency_ms, unstable, "mean_latency")
    assert_inf_iff(st_.mean_wait_ms, unstable, "mean_wait")
    w = batching.mean_latency(lam, alpha, tau0, b_max)
    assert np.array_equal(w, st_.mean_latency_ms)
    assert np.all(w >= (alpha + tau0) * (1 - 1e-9))             # a job's own batch time
    wait = batching.mean_wait(lam, alpha, tau0, b_max)
    assert np.array_equal(wait, st_.mean_wait_ms)
    assert np.all(wait >= -1e-9 * w)
    cap_b = np.inf if b_max is None else b_max
    eb = batching.mean_batch_size(lam, alpha, tau0, b_max)
    assert np.all((eb >= 1 - 1e-9) & (eb <= cap_b * (1 + 1e-9)))
    assert np.all(eb[unstable] == cap_b)
    util = batching.utilization(lam, alpha, tau0, b_max)
    assert np.all((util >= 0) & (util <= 1 + 1e-9)) and np.all(util[unstable] == 1)
    eta = batching.energy_efficiency(lam, alpha, tau0, beta, c0, b_max)
    assert np.all(np.isfinite(eta) & (eta > 0) & (eta <= (1 / beta) * (1 + 1e-9)))
    model = batching.DynamicBatching(alpha, tau0, b_max)
    assert np.array_equal(model.mean_latency_ms(lam), w)
    assert np.array_equal(model.mean_batch_size(lam), eb)
    assert np.array_equal(model.utilization(lam), util)
    for f in (batching.stationary, batching.mean_latency, batching.mean_wait,
              batching.mean_batch_size, batching.utilization, batching.energy_efficiency):
        tally(f, np.size(lam))
    return w, eta


EXACT_DOMAINS = {"lam_per_ms": LAM, "alpha_ms": ALPHA, "tau0_ms": TAU0, "beta_j": BETA,
                 "c0_j": C0}


# Ten solver calls an example, each iterating ~5,000 times when a point has
# ρ = 0.999 and λτ0 ≈ 0 (the series' slowest corner).
@fuzz(240, POINTS)
@given(valid(ALPHA), valid(TAU0), loads(), valid(BETA), valid(C0), st.data())
@example(1.0, 0.0, np.full(POINTS, 0.999), 1.0, 1.0, None).via("ρ = 0.999, τ0 = 0")
def test_batching_exact_unlimited(alpha, tau0, rho, beta, c0, data):
    """b_max = ∞: the generating-function series (``engine.batching.exact``), below φ
    (Theorem 2) and above the energy bound (eq 40)."""
    cap = float(batching.capacity(alpha, tau0))
    lam = at_load(rho, cap)
    unstable = lam >= cap
    w, eta = check_stationary(lam, alpha, tau0, None, beta, c0, unstable)
    ok = ~unstable
    assert np.all(w[ok] <= batching.phi(lam[ok], alpha, tau0) * (1 + 1e-9))     # Theorem 2
    assert np.all(eta[ok] >= batching.energy_efficiency_bound(lam[ok], alpha, tau0, beta, c0)
                  * (1 - 1e-9))                                                  # eq 40
    la = lam[ok]
    p0 = b_exact.unlimited_idle_weight(la * alpha, la * tau0)
    assert np.all((p0 >= 0) & (p0 <= 1))          # underflows to 0 when λτ0 is huge
    p, eb, eb2 = b_exact.unlimited_moments(la, alpha, tau0)
    assert_no_nan((p, eb, eb2))
    assert np.array_equal(p, p0) and np.all(eb >= 1 - 1e-12) and np.all(eb2 >= eb * eb * (1 - 1e-9))
    tally(b_exact.unlimited_idle_weight, la.size)
    tally(b_exact.unlimited_moments, la.size)
    if data is None:
        return
    params = dict(lam_per_ms=lam, alpha_ms=alpha, tau0_ms=tau0, beta_j=beta, c0_j=c0)
    p, bad = corrupt(data, params, EXACT_DOMAINS)
    rejects((batching.stationary, batching.mean_latency, batching.mean_wait,
             batching.mean_batch_size, batching.utilization, batching.energy_efficiency), p, bad)


# Each stable point is one banded solve (cached for the other functions): 10-130 ms
# near ρ = 0.999.
@fuzz(320, POINTS)
@given(valid(ALPHA), valid(TAU0), st.integers(1, 8), loads(), valid(BETA), valid(C0), st.data())
@example(1.0, 0.0, 1, np.full(POINTS, 0.999), 1.0, 1.0, None).via("b_max = 1 (M/D/1), ρ = 0.999")
def test_batching_exact_capped(alpha, tau0, b_max, rho, beta, c0, data):
    """Finite b_max: the departure chain (``exact.limited_solution``) for each point."""
    cap = float(batching.capacity(alpha, tau0, b_max))
    lam = at_load(rho, cap)
    unstable = lam >= cap
    w, _ = check_stationary(lam, alpha, tau0, b_max, beta, c0, unstable)
    if b_max == 1:                              # M/D/1: Pollaczek-Khinchine, sojourn
        s = alpha + tau0
        ok = ~unstable
        assert close(w[ok], s + lam[ok] * s * s / (2 * (1 - lam[ok] * s)), 1e-6)
    stable = np.flatnonzero(~unstable)
    if stable.size:
        tau = alpha * np.arange(1, b_max + 1) + tau0
        sol = b_exact.limited_solution(float(lam[stable[0]]), tau)
        assert_no_nan(sol)
        assert close(sol.mean_latency_ms, w[stable[0]], 1e-12)
        assert close(sol.batch_size_pmf.sum(), 1.0, 1e-9)
        tally(b_exact.limited_solution)
    if data is None:
        return
    params = dict(lam_per_ms=lam, alpha_ms=alpha, tau0_ms=tau0, b_max=b_max, beta_j=beta,
                  c0_j=c0)
    p, bad = corrupt(data, params, BATCHING_DOMAINS)
    rejects((batching.stationary, batching.mean_latency, batching.mean_wait,
             batching.mean_batch_size, batching.utilization, batching.energy_efficiency), p, bad)


# ============================================================ engine.batching.curves

# One case solves 3·n_points loads (a banded solve each for a finite b_max).
@fuzz(60)
@given(valid(ALPHA), valid(TAU0), st.one_of(st.none(), st.integers(1, 8)),
       st.one_of(st.none(), st.tuples(valid(BETA), valid(C0))), st.integers(2, 8),
       st.one_of(st.floats(0.005, 0.999), st.just(0.999)), st.data())
def test_batching_curves(alpha, tau0, b_max, energy, n_points, max_fraction, data):
    """load_curves and b_max_family: every value finite below capacity, bounds ordered."""
    beta, c0 = energy if energy else (None, None)
    curves = b_curves.load_curves(alpha, tau0, b_max, beta, c0, n_points, max_fraction)
    assert_no_nan(curves)
    cap = float(batching.capacity(alpha, tau0, b_max))
    assert curves.capacity_per_ms == cap and np.all(curves.lam_per_ms < cap) and curves.lam_per_ms.size == n_points
    assert np.all(np.isfinite(curves.mean_latency_ms))
    assert np.all(curves.mean_latency_ms >= (alpha + tau0) * (1 - 1e-9))
    if b_max is None:
        assert np.all(curves.mean_latency_ms <= curves.phi_ms * (1 + 1e-9))
    assert (curves.energy_efficiency_per_j is None) == (beta is None)
    family = b_curves.b_max_family(alpha, tau0, [1, b_max or 2], n_points, max_fraction)
    for b, lam, w in family:
        assert_no_nan(w)
        assert np.all(np.isfinite(w)) and np.all(lam < batching.capacity(alpha, tau0, b))
    tally(b_curves.load_curves)
    tally(b_curves.b_max_family)
    params = dict(alpha_ms=alpha, tau0_ms=tau0, b_max=b_max,
                  beta_j=1.0 if beta is None else beta, c0_j=1.0 if c0 is None else c0)
    p, bad = corrupt(data, params, BATCHING_DOMAINS)
    raises_naming(bad, b_curves.load_curves, p["alpha_ms"], p["tau0_ms"], p["b_max"],
                  p["beta_j"], p["c0_j"], n_points, max_fraction)
    if bad in ("alpha_ms", "tau0_ms"):
        raises_naming(bad, b_curves.b_max_family, p["alpha_ms"], p["tau0_ms"], [1], n_points)
    for name, domain in (("n_points", b_curves.N_POINTS),
                         ("max_fraction", b_curves.MAX_FRACTION)):
        value = data.draw(invalid(domain), label=f"bad {name}")
        raises_naming(name, b_curves.load_curves, alpha, tau0, b_max, **{name: value})
        raises_naming(name, b_curves.b_max_family, alpha, tau0, [1], **{name: value})


# ============================================================ engine.batching.answers

PRICES = {"gpu_usd_per_hour": b_answers.PRICE, "usd_per_kwh": b_answers.PRICE,
          "lam_per_ms": LAM, "joules_per_request": b_answers.ENERGY}


def _sim_result(lat, rng):
    """A simulation summary with the given mean latency (other fields consistent)."""
    return b_sim.BatchingSimResult(lat, 0.1 * lat, lat, 1.5 * lat, 2 * lat, 0.5 * lat, 0.05 * lat,
                                 1 + rng, min(1.0, rng), 100, True)


@FUZZ_VECTOR
@given(sweep(valid(LAM)), valid(b_answers.ENERGY), valid(b_answers.PRICE),
       valid(b_answers.PRICE),
       sweep(st.one_of(st.none(), st.floats(0.1, 1e3))), valid(b_answers.TARGET),
       st.one_of(st.none(), st.integers(0, 2 ** 63)), st.data())
def test_operating_point_costs_and_sweeps(lam, joules, gpu, kwh, p99, target, seed, data):
    """cost_per_million, rate_seed, sweep_from_results, max_rate_for_p99, merge_delay_sweeps."""
    lam = arr(lam)
    cost = b_answers.cost_per_million(lam, joules, gpu, kwh)
    assert_no_nan(cost)
    assert np.all(cost >= 0)
    assert np.all(np.isfinite(cost[lam > 0]))              # a served request has a price
    tally(b_answers.cost_per_million, POINTS)
    seqs = [b_answers.rate_seed(seed, i) for i in range(POINTS)]
    assert len({s.generate_state(1)[0] for s in seqs}) > 1 or POINTS == 1
    tally(b_answers.rate_seed, POINTS)
    # A sweep over increasing rates; None marks a rate the sweep found unstable.
    grid = np.sort(np.abs(lam[np.isfinite(lam)])) if np.isfinite(lam).any() else np.ones(1)
    lat = np.sort([np.inf if x is None else x for x in p99])[:grid.size]
    results = [None if np.isinf(x) else _sim_result(x, float(i) / POINTS)
               for i, x in enumerate(lat)]
    sweep_ = b_answers.sweep_from_results(grid[:len(results)], results)
    assert_no_nan(sweep_)
    assert np.array_equal(np.isinf(sweep_.mean_latency_ms), [r is None for r in results])
    best = b_answers.max_rate_for_p99(target, sweep_)
    assert np.isfinite(best) and 0 <= best <= sweep_.lam_per_ms[-1]
    parts = [b_answers.DelaySweep(np.array([d]), np.array([x]), np.array([2 * x]),
                                        np.array([1.0]), d, 2 * lat[0])
             for d, x in zip(grid[:3], lat[:3])]
    merged = b_answers.merge_delay_sweeps(parts)
    assert_no_nan(merged)
    assert merged.best_delay_ms == merged.delay_ms[np.argmin(merged.p99_ms)]
    for f in (b_answers.sweep_from_results, b_answers.max_rate_for_p99,
              b_answers.merge_delay_sweeps):
        tally(f, POINTS)
    params = dict(lam_per_ms=lam, joules_per_request=joules, gpu_usd_per_hour=gpu,
                  usd_per_kwh=kwh)
    p, bad = corrupt(data, params, PRICES)
    rejects((b_answers.cost_per_million,), p, bad)
    bad_target = data.draw(invalid(b_answers.TARGET), label="bad target_ms")
    raises_naming("target_ms", b_answers.max_rate_for_p99, bad_target, sweep_)


# Three short simulations a case, POINTS loads an example.
@fuzz(1000, POINTS)
@given(valid(ALPHA, low=1e-4, high=100.0), valid(TAU0, high=100.0),
       st.one_of(st.none(), st.integers(1, 16)), loads(), st.integers(1, 200),
       st.integers(1, 16), st.lists(valid(DELAY, high=1e3), min_size=1, max_size=3),
       st.integers(0, 2 ** 32), st.data())
def test_operating_point_simulated(alpha, tau0, b_max, rho, n_jobs, preferred, delays, seed,
                                   data):
    """simulate_rate (None where unstable), simulate_rates (inf there), sweep_queue_delay."""
    cap = float(batching.capacity(alpha, tau0, b_max))
    lam = at_load(rho, cap)
    preferred = min(preferred, b_max or preferred)
    for x in lam:
        r = b_answers.simulate_rate(float(x), alpha, tau0, b_max, n_jobs, seed)
        assert (r is None) == (not 0 < x < cap)
        if r is not None:
            assert_no_nan(r)
        tally(b_answers.simulate_rate)
    grid = lam[:2]
    seen = []
    sweep_ = b_answers.simulate_rates(grid, alpha, tau0, b_max, n_jobs, seed,
                                            progress=seen.append)
    assert_no_nan(sweep_)
    assert_inf_iff(sweep_.mean_latency_ms, ~((grid > 0) & (grid < cap)), "simulate_rates")
    assert seen[-1] == 1.0
    tally(b_answers.simulate_rates, grid.size)
    stable = lam[(lam > 0) & (lam < cap)]
    x = float(stable[0]) if stable.size else 0.5 * cap
    delay = b_answers.sweep_queue_delay(x, alpha, tau0, b_max, preferred, delays, n_jobs,
                                              seed)
    assert_no_nan(delay)
    assert delay.best_delay_ms in delay.delay_ms and delay.delay_ms.size == len(delays)
    tally(b_answers.sweep_queue_delay)
    bad = data.draw(invalid(DELAY), label="bad delay")
    with pytest.raises(ValueError) as err:
        b_answers.sweep_queue_delay(x, alpha, tau0, b_max, preferred, [bad], n_jobs, seed)
    assert "delay" in str(err.value)
    raises_naming("alpha_ms", b_answers.simulate_rates, grid, -1.0, tau0)


SIM_DOMAINS = {"lam_per_ms": LAM, "alpha_ms": ALPHA, "tau0_ms": TAU0, "b_max": B_MAX,
               "n_jobs": N_JOBS, "max_queue_delay_ms": DELAY, "preferred_batch_size": PREFERRED,
               "warmup_jobs": WARMUP}


def check_sim_result(r, n_jobs, warmup, tau1, horizon):
    """A summary of a simulated run: no NaN, latencies at least one batch time τ[1]
    (up to the rounding of times as large as ``horizon``)."""
    assert_no_nan(r)
    assert r.n_jobs == n_jobs - min(warmup, n_jobs - 1)
    assert r.mean_latency_ms >= tau1 * (1 - 1e-9) - 1e-12 * horizon and r.p50_ms <= r.p95_ms <= r.p99_ms
    rounding = 1e-12 * horizon / tau1 if tau1 > 0 else np.inf
    assert r.mean_wait_ms >= -1e-9 - 1e-12 * horizon and 1 <= r.mean_batch_size
    assert 0 <= r.utilization <= 1 + 1e-9 + rounding


# ============================================================ engine.batching.sim

@FUZZ_VECTOR
@given(valid(ALPHA, low=1e-4, high=100.0), valid(TAU0, high=100.0),
       st.one_of(st.none(), st.integers(1, 32)), loads(), st.integers(1, 300),
       st.one_of(st.none(), st.integers(0, 400)), st.one_of(st.just(0.0), valid(DELAY)),
       st.one_of(st.none(), st.integers(1, 32)), st.sampled_from(["alpha", "table", "callable"]),
       st.integers(0, 2 ** 32), st.data())
def test_simulate_batching(alpha, tau0, b_max, rho, n_jobs, warmup, delay, preferred, law,
                           seed, data):
    """simulate_batching, simulate_records, summarize, at stable and unstable loads.

    Loads beyond capacity are simulated too (a finite run is well defined); λ = 0
    and λ = inf raise ``ValueError`` naming lam (nothing to simulate).
    """
    if preferred is not None and b_max is not None:
        preferred = min(preferred, b_max)
    cap = float(batching.capacity(alpha, tau0, b_max))
    tau = alpha * np.arange(1, (b_max or 64) + 1) + tau0
    kw = dict(alpha_ms=alpha, tau0_ms=tau0) if law == "alpha" else dict(
        batch_time_ms=tau if law == "table" else (lambda b: alpha * np.asarray(b) + tau0))
    for lam in at_load(rho, cap):
        args = dict(lam_per_ms=lam, b_max=b_max, n_jobs=n_jobs, seed=seed,
                    max_queue_delay_ms=delay,
                    preferred_batch_size=preferred, **kw)
        if not 0 < lam < np.inf:
            raises_naming("lam_per_ms", b_sim.simulate_batching, **args)
            raises_naming("lam_per_ms", b_sim.simulate_records, **args)
            continue
        r = b_sim.simulate_batching(**args, warmup_jobs=warmup)
        horizon = n_jobs * (1 / lam + tau[-1] + delay)
        check_sim_result(r, n_jobs, n_jobs // 10 if warmup is None else warmup, tau[0], horizon)
        rec = b_sim.simulate_records(**args)
        assert_no_nan(rec)
        assert np.all(rec.finish_ms >= rec.start_ms) and np.all(rec.start_ms >= rec.arrival_ms)
        summary = b_sim.summarize(rec, warmup or 0)
        check_sim_result(summary, n_jobs, warmup or 0, tau[0], horizon)
        for f in (b_sim.simulate_batching, b_sim.simulate_records, b_sim.summarize):
            tally(f)
    params = dict(lam_per_ms=max(float(at_load(rho[0], cap)), 1e-3)
                  if np.isfinite(rho[0]) else 1.0,
                  alpha_ms=alpha, tau0_ms=tau0, b_max=b_max, n_jobs=n_jobs, seed=seed,
                  max_queue_delay_ms=delay, preferred_batch_size=preferred or 1,
                  warmup_jobs=warmup or 0)
    p, bad = corrupt(data, params, SIM_DOMAINS)
    rejects((b_sim.simulate_batching, b_sim.simulate_records), p, bad)


# ============================================ engine.batching: energy, units, operating point


UNIT_DOMAINS = {"lam_per_ms": LAM, "alpha_ms": ALPHA, "tau0_ms": TAU0, "b_max": B_MAX}


@FUZZ_VECTOR
@given(valid(ALPHA), valid(TAU0), sweep(b_maxes()), loads(), valid(BETA), valid(C0), st.data())
def test_batching_units_and_energy(alpha, tau0, b_max, rho, beta, c0, data):
    """below_capacity, utilization_bound, efficiency_from_batch_size, the load units
    (per_ms_to_per_s, per_s_to_per_ms, rate_from_load, load_in): round trips, ranges."""
    cap = batching.capacity(alpha, tau0, b_max)
    lam = at_load(rho, cap)
    stable = b_formulas.below_capacity(lam, alpha, tau0, b_max)
    assert np.array_equal(stable, lam < cap)              # away from the last-bit gap
    bound = b_formulas.utilization_bound(lam, alpha, tau0)
    assert np.all((bound >= 0) & (bound <= 1))
    eb = 1.0 + rho * 100.0
    eta = b_formulas.efficiency_from_batch_size(eb, beta, c0)
    assert np.all(np.isfinite(eta) & (eta > 0) & (eta <= (1 / beta) * (1 + 1e-12)))
    assert close(eta * (beta * eb + c0), eb, 1e-12) or not np.all(np.isfinite(eb))
    finite = np.isfinite(lam)
    per_s = b_formulas.per_ms_to_per_s(lam)
    assert close(per_s, 1000.0 * lam, 1e-15)
    assert close(b_formulas.per_s_to_per_ms(per_s[finite]), lam[finite], 1e-12)
    for unit in b_formulas.LOAD_UNITS:
        x = b_formulas.load_in(lam, alpha, unit)
        assert close(b_formulas.rate_from_load(x[finite], alpha, unit), lam[finite], 1e-12)
    assert close(b_formulas.load_in(lam, alpha, "rho"), lam * alpha, 1e-15)
    b = np.arange(1, POINTS + 1)
    assert close(b_formulas.throughput_per_s(b, alpha, tau0), 1000 * b / (alpha * b + tau0), 1e-12)
    assert close(b_formulas.batch_energy(b, beta, c0), beta * b + c0, 1e-12)
    raises_naming("b", b_formulas.throughput_per_s, [0.0], alpha, tau0)
    raises_naming("b", b_formulas.batch_energy, [np.nan], beta, c0)
    for f in (b_formulas.below_capacity, b_formulas.utilization_bound,
              b_formulas.efficiency_from_batch_size, b_formulas.per_ms_to_per_s,
              b_formulas.per_s_to_per_ms, b_formulas.rate_from_load, b_formulas.load_in,
              b_formulas.throughput_per_s, b_formulas.batch_energy):
        tally(f, POINTS)
    params = dict(lam_per_ms=lam, alpha_ms=alpha, tau0_ms=tau0, b_max=b_max[0])
    p, bad = corrupt(data, params, UNIT_DOMAINS)
    rejects((b_formulas.below_capacity, b_formulas.utilization_bound), p, bad)
    p, bad = corrupt(data, dict(mean_batch_size=eb, beta_j=beta, c0_j=c0),
                     {"mean_batch_size": b_formulas.MEAN_BATCH, "beta_j": BETA, "c0_j": C0})
    rejects((b_formulas.efficiency_from_batch_size,), p, bad)
    bad_rate = data.draw(invalid(b_formulas.RATE_PER_S), label="bad rate_per_s")
    raises_naming("rate_per_s", b_formulas.per_s_to_per_ms, bad_rate)
    raises_naming("unit", b_formulas.load_in, lam, alpha, "furlongs")
    raises_naming("unit", b_formulas.rate_from_load, 0.5, alpha, "furlongs")
    p, bad = corrupt(data, dict(alpha_ms=alpha, tau0_ms=tau0),
                     {"alpha_ms": ALPHA, "tau0_ms": TAU0})
    raises_naming(bad, b_formulas.throughput_per_s, b, p["alpha_ms"], p["tau0_ms"])


# One exact curve and three short simulations a case.
@fuzz(40)
@given(valid(ALPHA, low=1e-4, high=100.0), valid(TAU0, high=100.0),
       st.one_of(st.none(), st.integers(1, 8)), st.integers(200, 2000), st.integers(0, 2 ** 32),
       st.data())
def test_batching_validation(alpha, tau0, b_max, n_jobs, seed, data):
    """validation: φ above the exact mean (Theorem 2: gap ≥ 0), finite z-scores."""
    v = b_answers.validation(alpha, tau0, b_max, n_jobs, seed)
    assert_no_nan(v)
    assert v.phi_gap >= -1e-9 and np.isfinite(v.phi_gap) and v.max_z >= 0
    assert len(v.loads_per_ms) == 3 and all(0 < x < batching.capacity(alpha, tau0, b_max)
                                            for x in v.loads_per_ms)
    tally(b_answers.validation)
    p, bad = corrupt(data, dict(alpha_ms=alpha, tau0_ms=tau0, b_max=b_max), UNIT_DOMAINS)
    raises_naming(bad, b_answers.validation, p["alpha_ms"], p["tau0_ms"], p["b_max"], n_jobs,
                  seed)


# Two exact solves a case (a banded solve each for a finite b_max).
@fuzz(320, POINTS)
@given(valid(ALPHA), valid(TAU0), st.one_of(st.none(), st.integers(1, 8)), loads(),
       st.one_of(st.none(), st.tuples(valid(BETA), valid(C0))), valid(b_answers.PRICE),
       valid(b_answers.PRICE), st.data())
def test_batching_operating_point_at(alpha, tau0, b_max, rho, energy, gpu, kwh, data):
    """operating_point_at: the exact means of ``stationary``, η of eq 19, the cost of
    cost_per_million; inf latency and cost exactly when unstable."""
    beta, c0 = energy if energy else (None, None)
    cap = float(batching.capacity(alpha, tau0, b_max))
    for x in at_load(rho, cap):
        point = b_answers.operating_point_at(float(x), alpha, tau0, b_max, beta, c0, gpu, kwh)
        assert_no_nan(point)
        unstable = not x < cap
        assert point.stable == (not unstable)
        assert np.isinf(point.mean_latency_ms) == unstable
        assert np.isinf(point.usd_per_million) == (unstable or (x == 0 and gpu > 0))
        with pytest.warns(DeprecationWarning, match="mean_latency_ms"):
            assert point.mean_latency == point.mean_latency_ms    # the old name
        st_ = batching.stationary(float(x), alpha, tau0, b_max)
        assert point.mean_batch_size == st_.mean_batch_size
        assert (point.energy_efficiency_per_j is None) == (beta is None)
        if beta is not None:
            assert close(point.energy_efficiency_per_j,
                         batching.energy_efficiency(float(x), alpha, tau0, beta, c0, b_max), 1e-12)
            assert close(point.joules_per_request * point.energy_efficiency_per_j, 1.0, 1e-12)
        assert close(point.rate_per_s, 1000.0 * float(x), 1e-15)
        tally(b_answers.operating_point_at)
        work, overhead = b_answers.busy_split(st_.utilization, st_.mean_batch_size, alpha, tau0)
        assert_no_nan((work, overhead))
        assert 0.0 <= work and 0.0 <= overhead and close(work + overhead, st_.utilization, 1e-12)
        if not unstable and np.isfinite(st_.mean_batch_size):     # stable: λα is the work
            assert close(work, float(x) * alpha, 1e-6) or abs(work - float(x) * alpha) < 1e-12
        tally(b_answers.busy_split)
    p, bad = corrupt(data, dict(lam_per_ms=0.5 * cap, alpha_ms=alpha, tau0_ms=tau0,
                                b_max=b_max), UNIT_DOMAINS)
    raises_naming(bad, b_answers.operating_point_at, p["lam_per_ms"], p["alpha_ms"],
                  p["tau0_ms"], p["b_max"])


# ============================================================ engine.batching: closed loop

import importlib  # noqa: E402

from engine.batching import closed_sim as b_closed_sim  # noqa: E402
from engine.core.domains import (INSTANCES, N_BATCHES, N_CLIENTS, THINK_TIME,  # noqa: E402
                                 WARMUP_BATCHES)

# The package's ``closed_loop`` is the function; the module is reached by its path.
b_closed = importlib.import_module("engine.batching.closed_loop")
CLOSED_DOMAINS = {"n_clients": N_CLIENTS, "alpha_ms": ALPHA, "tau0_ms": TAU0, "b_max": B_MAX,
                  "think_time_ms": THINK_TIME, "instances": INSTANCES}


def check_closed_loop(r, n, alpha, tau0, b_max, theta, c):
    """Finite, Little's law n = X(W + θ), W ≥ τ[1], X ≤ min(N/(τ[1] + θ), c·B/τ[B]) with
    B = min(N, b_max), 1 ≤ E[b] ≤ B, utilization in [0, 1] (all up to rounding)."""
    assert_no_nan(r)
    x, w = arr(r.throughput_per_ms), arr(r.mean_latency_ms)
    assert np.all(np.isfinite(x) & (x > 0) & np.isfinite(w))
    assert close(n, x * (w + theta), 1e-9)
    tau1 = alpha + tau0
    assert np.all(w >= tau1 * (1 - 1e-9))
    big = np.minimum(n, np.inf if b_max is None else b_max)
    assert np.all(x <= n / (tau1 + theta) * (1 + 1e-9))
    assert np.all(x <= c * big / (alpha * big + tau0) * (1 + 1e-9))
    eb = arr(r.mean_batch_size)
    assert np.all((eb >= 1 - 1e-9) & (eb <= big * (1 + 1e-9)))
    assert np.all((arr(r.utilization) >= 0) & (arr(r.utilization) <= 1 + 1e-9))


@FUZZ_VECTOR
@given(sweep(valid(N_CLIENTS, high=300)), valid(ALPHA), valid(TAU0), b_maxes(),
       st.one_of(st.just(0.0), valid(THINK_TIME)), valid(INSTANCES, high=8), st.data())
def test_closed_loop(n, alpha, tau0, b_max, theta, instances, data):
    """closed_loop over every method (cycle, chain, alone, flow-equivalent server)."""
    n = arr(n)
    r = b_closed.closed_loop(n, alpha, tau0, b_max, theta, instances)
    bound = None if b_max is None else float(b_max)
    check_closed_loop(r, n, alpha, tau0, bound, theta, instances)
    assert r.method.shape == n.shape
    tally(b_closed.closed_loop, POINTS)
    params = dict(n_clients=n, alpha_ms=alpha, tau0_ms=tau0, b_max=b_max, think_time_ms=theta,
                  instances=instances)
    p, bad = corrupt(data, params, CLOSED_DOMAINS)
    rejects((b_closed.closed_loop,), p, bad)


CLOSED_SIM_DOMAINS = {**CLOSED_DOMAINS, "n_batches": N_BATCHES, "warmup": WARMUP_BATCHES}


# One short run an example (~5 ms).
@fuzz(1000)
@given(valid(N_CLIENTS, high=64), valid(ALPHA, low=1e-4, high=100.0), valid(TAU0, high=100.0),
       st.one_of(st.none(), st.integers(1, 16)), st.one_of(st.just(0.0), valid(THINK_TIME)),
       st.integers(1, 4), st.integers(1, 300), st.one_of(st.none(), st.integers(0, 50)),
       st.sampled_from(b_closed_sim.THINK_LAWS), st.integers(0, 2 ** 32), st.data())
def test_simulate_closed_loop(n, alpha, tau0, b_max, theta, instances, n_batches, warmup,
                              think, seed, data):
    """simulate_closed_loop: a finite summary, latencies at least τ[1], throughput within
    the model's bounds up to the run's edges; bad arguments name themselves."""
    kw = dict(n_clients=n, alpha_ms=alpha, tau0_ms=tau0, b_max=b_max, think_time_ms=theta,
              instances=instances, n_batches=n_batches, warmup=warmup)
    r = b_closed_sim.simulate_closed_loop(**kw, think=think, rng=np.random.default_rng(seed))
    assert_no_nan(r)
    tau1 = alpha + tau0
    horizon = (n_batches + (warmup or 0) + 1) * (alpha * n + tau0 + theta) * 50
    rounding = 1e-12 * horizon
    assert r.mean_latency_ms >= tau1 * (1 - 1e-9) - rounding and r.p50_ms <= r.p95_ms <= r.p99_ms
    assert r.mean_wait_ms >= -rounding and r.n_batches >= n_batches
    assert 1 <= r.mean_batch_size <= min(n, b_max or n)
    assert 0 <= r.utilization <= 1 + 1e-9 + rounding / tau1
    assert 0 < r.throughput_per_ms and r.n_requests >= r.n_batches
    tally(b_closed_sim.simulate_closed_loop)
    # the same run as records, summarised by the shared summary: the same numbers
    rec = b_closed_sim.simulate_closed_loop_records(**kw, think=think,
                                                    rng=np.random.default_rng(seed))
    assert b_closed_sim.summarize_closed_loop(rec) == r
    assert rec.latency_ms.size == r.n_requests and rec.n_batches == r.n_batches
    assert np.all(rec.wait_ms <= rec.latency_ms) and np.all(np.diff(rec.finish_ms) >= 0)
    assert rec.finish_ms[0] >= rec.span_start_ms and rec.instances == instances
    tally(b_closed_sim.simulate_closed_loop_records)
    tally(b_closed_sim.summarize_closed_loop)
    p, bad = corrupt(data, kw, CLOSED_SIM_DOMAINS)
    rejects((b_closed_sim.simulate_closed_loop,), p, bad, rng=0)
    raises_naming("think", b_closed_sim.simulate_closed_loop, n, alpha, tau0, think="gamma")


# ============================================================ every public function has a case

from tests.sla import test_fuzz as sla_fuzz  # a module: its tests are not collected twice
# Public name -> the test that fuzzes it.  A result or data class (no arguments of its
# own to fuzz) names the test that builds and checks it and the function it comes from.
@fuzz(300, POINTS)
@given(sweep(st.floats(1e-3, 1e5)), sweep(st.floats(-0.5, 1.5)), st.floats(0.0, 1e3),
       st.floats(0.0, 1e3), st.sampled_from([-1.0, math.nan, math.inf, "x"]))
def test_energy_per_request_at_power(rate, u, busy, idle, bad):
    """energy_per_request_at_power: (P_busy·u + P_idle·(1 − u))/λ with u clipped to
    [0, 1], finite and ≥ 0, between P_idle/λ and P_busy/λ (either order); a bad power is
    a ValueError naming it."""
    e = b_answers.energy_per_request_at_power(rate, u, busy, idle)
    tally(b_answers.energy_per_request_at_power, POINTS)
    uc = np.clip(u, 0.0, 1.0)
    assert np.allclose(e, (busy * uc + idle * (1 - uc)) / rate, rtol=1e-12)
    assert np.all(np.isfinite(e)) and np.all(e >= 0)
    lo, hi = np.minimum(busy, idle) / rate, np.maximum(busy, idle) / rate
    assert np.all(e >= lo * (1 - 1e-12)) and np.all(e <= hi * (1 + 1e-12))
    raises_naming("busy_power_w", b_answers.energy_per_request_at_power, rate, u, bad, idle)
    raises_naming("idle_power_w", b_answers.energy_per_request_at_power, rate, u, busy, bad)


FUZZED = {
    b_formulas: {
        "capacity": test_batching_capacity,
        "phi0": test_batching_closed_forms, "phi1": test_batching_closed_forms,
        "phi": test_batching_closed_forms,
        "energy_efficiency_bound": test_batching_closed_forms,
        "below_capacity": test_batching_units_and_energy,
        "utilization_bound": test_batching_units_and_energy,
        "efficiency_from_batch_size": test_batching_units_and_energy,
        "per_ms_to_per_s": test_batching_units_and_energy,
        "per_s_to_per_ms": test_batching_units_and_energy,
        "rate_from_load": test_batching_units_and_energy,
        "load_in": test_batching_units_and_energy,
        "throughput_per_s": test_batching_units_and_energy,
        "batch_energy": test_batching_units_and_energy},
    b_means: {
        "DynamicBatching": test_batching_capacity,
        "stationary": test_batching_exact_unlimited,
        "Stationary": (test_batching_exact_unlimited, "stationary"),
        "mean_latency": test_batching_exact_unlimited, "mean_wait": test_batching_exact_unlimited,
        "mean_batch_size": test_batching_exact_unlimited,
        "utilization": test_batching_exact_unlimited,
        "energy_efficiency": test_batching_exact_unlimited},
    b_exact: {
        "unlimited_idle_weight": test_batching_exact_unlimited,
        "unlimited_moments": test_batching_exact_unlimited,
        "limited_solution": test_batching_exact_capped,
        "LimitedSolution": (test_batching_exact_capped, "limited_solution")},
    b_curves: {
        "load_curves": test_batching_curves, "b_max_family": test_batching_curves,
        "LoadCurves": (test_batching_curves, "load_curves")},
    b_answers: {
        "energy_per_request_at_power": test_energy_per_request_at_power,
        "busy_split": test_batching_operating_point_at,
        "cost_per_million": test_operating_point_costs_and_sweeps,
        "rate_seed": test_operating_point_costs_and_sweeps,
        "sweep_from_results": test_operating_point_costs_and_sweeps,
        "max_rate_for_p99": test_operating_point_costs_and_sweeps,
        "merge_delay_sweeps": test_operating_point_costs_and_sweeps,
        "RateSweep": (test_operating_point_costs_and_sweeps, "sweep_from_results"),
        "DelaySweep": (test_operating_point_costs_and_sweeps, "merge_delay_sweeps"),
        "simulate_rate": test_operating_point_simulated,
        "simulate_rates": test_operating_point_simulated,
        "sweep_queue_delay": test_operating_point_simulated,
        "max_rate_for_mean_latency": sla_fuzz.test_gpu_operating_point,
        "operating_point_at": test_batching_operating_point_at,
        "OperatingPoint": (test_batching_operating_point_at, "operating_point_at"),
        "validation": test_batching_validation,
        "Validation": (test_batching_validation, "validation")},
    b_closed: {
        "closed_loop": test_closed_loop, "ClosedLoop": (test_closed_loop, "closed_loop")},
    b_closed_sim: {
        "simulate_closed_loop": test_simulate_closed_loop,
        "simulate_closed_loop_records": test_simulate_closed_loop,
        "summarize_closed_loop": test_simulate_closed_loop,
        "ClosedLoopRecords": (test_simulate_closed_loop, "simulate_closed_loop_records"),
        "ClosedLoopSimResult": (test_simulate_closed_loop, "simulate_closed_loop")},
    b_sim: {
        "simulate_batching": test_simulate_batching, "simulate_records": test_simulate_batching,
        "summarize": test_simulate_batching,
        "SimRecords": (test_simulate_batching, "simulate_records"),
        "BatchingSimResult": (test_simulate_batching, "simulate_batching")},
}


# ============================================================ engine.batching: MMPP-2 arrivals

from engine.arrivals import MMPP2, Poisson  # noqa: E402
from engine.batching import mmpp as b_mmpp  # noqa: E402

MMPP_DOMAINS = {"alpha_ms": ALPHA, "tau0_ms": TAU0, "b_max": B_MAX}
BAD_ARRIVALS = st.sampled_from([None, object(), np.array([0.0, 1.0]), Poisson(1.0), "MMPP2",
                                2.0])


# One chain solve a case: a few ms, up to ~2 s at ρ = 0.999 without a cap (1,500 levels).
@fuzz(80)
@given(valid(ALPHA), st.floats(0.0, 50.0), st.one_of(st.none(), st.integers(1, 16)),
       rho(), st.floats(1.0, 20.0), st.floats(0.05, 0.95), st.floats(-2.0, 2.0), st.data())
def test_mean_latency_mmpp2(alpha, overhead, b_max, load, ratio, share, period, data):
    """mean_latency_mmpp2 over MMPP-2 shapes (phase rates 1-20 apart, phase 1 for 5-95 %
    of the time, switching every 0.01-100 batch times) and loads ρ of capacity: no NaN,
    inf exactly when unstable, E[W] ≥ τ[1], 1 ≤ E[B] ≤ b_max, utilization in [0, 1],
    throughput λ where the truncation converged; bad arguments name themselves."""
    tau0 = overhead * alpha                       # τ0 from 0 to 50 α: any magnitude of α
    cap = float(batching.capacity(alpha, tau0, b_max))
    lam = float(np.clip(at_load(load, cap), 1e-300, 1e300))
    r2 = lam / (share * ratio + 1.0 - share)
    cycle = (alpha + tau0) * 10.0 ** period
    m = MMPP2(ratio * r2, r2, 1.0 / (cycle * share), 1.0 / (cycle * (1.0 - share)))
    r = b_mmpp.mean_latency_mmpp2(m, alpha, tau0, b_max)
    assert_no_nan(r)
    # the chain's λ = φ D1 1 may differ from m.rate in the last bit: judge at its own λ
    assert close(r.arrival_rate_per_ms, m.rate, 1e-12)
    unstable = not bool(batching.below_capacity(r.arrival_rate_per_ms, alpha, tau0, b_max))
    assert r.stable == (not unstable)
    for name in ("mean_latency_ms", "mean_wait_ms", "mean_processing_ms"):
        assert_inf_iff(getattr(r, name), unstable, name)
    tau1 = alpha + tau0
    assert r.mean_latency_ms >= tau1 * (1 - 1e-9) and r.mean_wait_ms >= 0
    big = np.inf if b_max is None else b_max
    assert 1 - 1e-9 <= r.mean_batch_size <= big and 0 <= r.utilization <= 1
    assert r.tail_mass >= 0 and r.n_levels >= 0
    if unstable:
        assert r.mean_batch_size == big and r.utilization == 1 and r.throughput_per_ms == cap
    elif r.converged:
        assert close(r.throughput_per_ms, m.rate, 1e-6) and r.tail_mass < 1e-12
    tally(b_mmpp.mean_latency_mmpp2)
    p, bad = corrupt(data, dict(alpha_ms=alpha, tau0_ms=tau0, b_max=b_max), MMPP_DOMAINS)
    raises_naming(bad, b_mmpp.mean_latency_mmpp2, m, p["alpha_ms"], p["tau0_ms"], p["b_max"])
    raises_naming("arrivals", b_mmpp.mean_latency_mmpp2, data.draw(BAD_ARRIVALS), alpha, tau0)


FUZZED[b_mmpp] = {"mean_latency_mmpp2": test_mean_latency_mmpp2,
                  "Mmpp2Batching": (test_mean_latency_mmpp2, "mean_latency_mmpp2")}


# ============================================================ engine.batching: other arrivals

from types import SimpleNamespace  # noqa: E402

from engine.batching import profile as b_profile, traffic as b_traffic  # noqa: E402


@FUZZ_VECTOR
@given(valid(ALPHA), valid(TAU0), b_maxes(), sweep(st.floats(1e-3, 0.999)),
       sweep(st.floats(0.0, 50.0)), st.floats(1e-3, 60.0), st.integers(0, POINTS),
       st.sampled_from([-0.1, 1.0, 1.5, math.nan, "x"]))
def test_traffic_loads_and_largest_rate(alpha, tau0, b_max, fractions, steps, target, miss,
                                        bad):
    """loads_of_capacity: f × capacity (eqs 26-27); comparison_loads: ρ/α;
    largest_rate_below over an increasing latency: 0 when the first load misses, the last
    load when none does, else on the chord between the loads around the first miss (its
    end when that miss is infinite); bad fractions and mismatched arrays name themselves."""
    f = np.sort(fractions)
    lam = b_traffic.loads_of_capacity(alpha, tau0, b_max, f)
    assert close(lam, f * float(batching.capacity(alpha, tau0, b_max)), 1e-15)
    assert close(b_traffic.comparison_loads(alpha, f), f / alpha, 1e-15)
    values = np.cumsum(steps) + 1.0                      # a latency growing with λ
    if miss < POINTS:
        values[miss:] = np.inf if miss % 2 else values[miss:]
    got = b_traffic.largest_rate_below(lam, values, target)
    ok = values <= target
    if not ok[0]:
        assert got == 0.0
    elif ok.all():
        assert got == lam[-1]
    else:
        j = int(np.flatnonzero(~ok)[0])
        assert lam[j - 1] <= got <= lam[j]
        if np.isfinite(values[j]):
            share = (target - values[j - 1]) / (values[j] - values[j - 1])   # of the step
            assert 0.0 <= share < 1.0
            assert close(got, lam[j - 1] + share * (lam[j] - lam[j - 1]), 1e-12)
        else:
            assert got == lam[j - 1]
    for fn in (b_traffic.loads_of_capacity, b_traffic.comparison_loads,
               b_traffic.largest_rate_below):
        tally(fn, POINTS)
    raises_naming("fractions", b_traffic.loads_of_capacity, alpha, tau0, b_max, [bad])
    raises_naming("loads", b_traffic.comparison_loads, alpha, [bad])
    raises_naming("alpha_ms", b_traffic.comparison_loads, -alpha, f)
    raises_naming("lam_per_ms", b_traffic.largest_rate_below, lam, values[:-1], target)
    raises_naming("target_ms", b_traffic.largest_rate_below, lam, values, -target)


@FUZZ_VECTOR
@given(sweep(st.floats(1e-4, 10.0)), st.integers(0, POINTS), valid(ALPHA), valid(TAU0),
       valid(BETA), valid(C0), st.floats(1.0, 64.0), st.one_of(st.just(0.0), st.floats(1e-6, 1.0)),
       st.floats(0.0, 10.0), st.floats(0.0, 1.0))
def test_traffic_means_and_operating_point(lam, diverge, alpha, tau0, beta, c0, size, busy,
                                           gpu, kwh):
    """mmpp2_curve: the solver's E[W] at each load, NaN from the first unconverged one,
    which is the last solved; mean_under picks Poisson, else a converged chain, else the
    simulation (inf without one); operating_point_under puts the chosen means in the
    operating point with η = 1/(β + c0/E[B]) (eq 19), the cost and busy split following."""
    lam = np.sort(lam)
    solved = []

    def solve(x):
        solved.append(x)
        return SimpleNamespace(converged=len(solved) <= diverge, mean_latency_ms=2.0 * x + 1.0)

    moved = []
    got_lam, mean = b_traffic.mmpp2_curve(lam, solve, moved.append)
    assert np.array_equal(got_lam, lam) and len(solved) == min(diverge + 1, lam.size)
    assert np.array_equal(mean[:diverge], 2.0 * lam[:diverge] + 1.0)
    assert np.all(np.isnan(mean[diverge:])) and moved[-1] == len(solved) / lam.size
    run = SimpleNamespace(mean_latency_ms=3.0, mean_wait_ms=1.0, mean_batch_size=size,
                          utilization=busy, p99_ms=9.0)
    chain = SimpleNamespace(converged=True, mean_latency_ms=4.0, mean_wait_ms=2.0,
                            mean_batch_size=size, utilization=busy)
    assert b_traffic.mean_under(5.0, chain, run) == (5.0, b_traffic.EXACT)
    assert b_traffic.mean_under(None, chain, run) == (4.0, b_traffic.EXACT)
    off = SimpleNamespace(**{**vars(chain), "converged": False})
    assert b_traffic.mean_under(None, off, run) == (3.0, b_traffic.SIMULATED)
    assert b_traffic.mean_under(None, off, None) == (math.inf, b_traffic.SIMULATED)
    x = float(lam[0]) * 1e-3 / alpha                   # stable: well below 1/α
    here = batching.operating_point_at(x, alpha, tau0, None, beta, c0, gpu, kwh)
    assert b_traffic.operating_point_under(here, alpha, tau0) is here
    for src, other in ((chain, None), (off, run)):
        p = b_traffic.operating_point_under(here, alpha, tau0, src, other, beta, c0, gpu, kwh)
        used = chain if src is chain else run
        assert p.mean_latency_ms == used.mean_latency_ms and p.mean_wait_ms == used.mean_wait_ms
        assert p.mean_batch_size == size and p.utilization == busy
        assert close(p.energy_efficiency_per_j, 1.0 / (beta + c0 / size), 1e-12)
        usd = (gpu / 3600.0 / (x * 1000.0) + p.joules_per_request / 3.6e6 * kwh) * 1e6
        assert close(p.usd_per_million, usd, 1e-9)
        assert close(p.work_share + p.overhead_share, busy, 1e-12)
        assert close(p.work_share * tau0, p.overhead_share * alpha * size, 1e-9)
    for fn in (b_traffic.mmpp2_curve, b_traffic.mean_under, b_traffic.operating_point_under):
        tally(fn, POINTS)
    raises_naming("lam_per_ms", b_traffic.mmpp2_curve, -lam, solve)


@FUZZ_VECTOR
@given(st.lists(st.floats(1e-3, 1e6), min_size=1, max_size=4), valid(ALPHA),
       st.integers(0, 3), st.booleans())
def test_traffic_comparison(p99s, alpha, n_unstable, poisson_unstable):
    """traffic_comparison: per process its mean and how, p99 (inf for an unstable run),
    p99 over Poisson's (NaN where either is infinite) and the p99 over the loads ρ/α."""
    runs = [SimpleNamespace(p99_ms=p) for p in p99s]
    if poisson_unstable:
        runs[0] = None
    means = [(float(i), "exact") for i in range(len(runs))]
    over = [[SimpleNamespace(p99_ms=p)] * (len(b_traffic.LOADS) - n_unstable)
            + [None] * n_unstable for p in p99s]
    c = b_traffic.traffic_comparison(means, runs, over, alpha)
    base = math.inf if poisson_unstable else p99s[0]
    for run, p, ratio in zip(runs, c.p99_ms, c.p99_vs_poisson):
        assert p == (math.inf if run is None else run.p99_ms)
        assert (math.isnan(ratio) if math.isinf(base) or math.isinf(p)
                else close(ratio, p / base, 1e-12))
    assert c.mean_latency_ms == tuple(m for m, _ in means) and c.how == ("exact",) * len(runs)
    assert close(c.lam_per_ms, np.array(b_traffic.LOADS) / alpha, 1e-15)
    for row, p in zip(c.p99_over_loads_ms, p99s):
        assert np.sum(np.isinf(row)) == n_unstable and np.all(row[np.isfinite(row)] == p)
    tally(b_traffic.traffic_comparison, POINTS)
    raises_naming("alpha_ms", b_traffic.traffic_comparison, means, runs, over, 0.0)


@FUZZ_VECTOR
@given(st.lists(st.integers(1, 4096), min_size=2, max_size=12, unique=True),
       st.floats(1e-3, 1e6), st.booleans(), st.integers(2, 200),
       st.sampled_from([1.5, 0.0, -2.0, math.nan]))
def test_batch_profile(sizes, scale, with_power, n_points, bad):
    """sorted_profile: the columns sorted together by batch size; whole, distinct sizes and
    2 rows at least, or a ValueError naming the column; batch_size_grid: whole sizes from 1
    to 1.5 × the largest, increasing."""
    thr = [scale * b / (b + 1.0) for b in sizes]
    power = [100.0 + b for b in sizes] if with_power else None
    p = b_profile.sorted_profile(sizes, thr, power)
    order = np.argsort(sizes)
    assert p["batch_size"].tolist() == sorted(float(b) for b in sizes)
    assert np.array_equal(p["throughput_per_s"], np.asarray(thr)[order])
    assert (p["power_w"] is None) == (not with_power)
    if with_power:
        assert np.array_equal(p["power_w"], np.asarray(power, float)[order])
    grid = b_profile.batch_size_grid(max(sizes), n_points)
    assert grid[0] == 1 and np.all(np.diff(grid) > 0) and np.all(grid == np.round(grid))
    assert grid[-1] <= 1.5 * max(sizes) + 0.5
    tally(b_profile.sorted_profile, POINTS)
    tally(b_profile.batch_size_grid, POINTS)
    raises_naming("batch_size", b_profile.sorted_profile, [sizes[0], bad], thr[:2])
    raises_naming("only once", b_profile.sorted_profile, [sizes[0], sizes[0]], thr[:2])
    raises_naming("throughput_per_s", b_profile.sorted_profile, sizes[:2], [thr[0], -1.0])
    raises_naming("largest", b_profile.batch_size_grid, bad if bad < 1 else math.inf)


@FUZZ_VECTOR
@given(valid(ALPHA), valid(TAU0), st.integers(2, 40), st.floats(1.0, 1000.0),
       st.lists(st.integers(1, 16), min_size=1, max_size=4))
def test_delay_grid_and_datasheet_power(alpha, tau0, n, watts, gpus):
    """delay_grid_ms: n delays from 0 to 4(α + τ0) evenly spaced (to 4 decimals);
    datasheet_power_w: board power × GPUs per profile, naming a bad power."""
    grid = b_answers.delay_grid_ms(alpha, tau0, n)
    assert len(grid) == n and grid[0] == 0.0
    assert abs(grid[-1] - 4.0 * (alpha + tau0)) <= 5e-5 + 1e-12 * grid[-1]
    price = SimpleNamespace(board_power_w=watts, name="gpu", source="sheet",
                            gpus_per_profile=tuple((f"p{i}", g) for i, g in enumerate(gpus)))
    got = b_answers.datasheet_power_w([price])
    assert got == {f"p{i}": (watts * g, "gpu", "sheet") for i, g in enumerate(gpus)}
    tally(b_answers.delay_grid_ms, POINTS)
    tally(b_answers.datasheet_power_w, POINTS)
    raises_naming("alpha_ms", b_answers.delay_grid_ms, -alpha, tau0)
    raises_naming("board_power_w", b_answers.datasheet_power_w,
                  [SimpleNamespace(**{**vars(price), "board_power_w": -1.0})])


FUZZED[b_answers].update({"largest_rate_below": test_traffic_loads_and_largest_rate,
                          "delay_grid_ms": test_delay_grid_and_datasheet_power,
                          "datasheet_power_w": test_delay_grid_and_datasheet_power})
FUZZED[b_traffic] = {
    "loads_of_capacity": test_traffic_loads_and_largest_rate,
    "comparison_loads": test_traffic_loads_and_largest_rate,
    "mmpp2_curve": test_traffic_means_and_operating_point,
    "mean_under": test_traffic_means_and_operating_point,
    "operating_point_under": test_traffic_means_and_operating_point,
    "traffic_comparison": test_traffic_comparison,
    "TrafficComparison": (test_traffic_comparison, "traffic_comparison")}
FUZZED[b_profile] = {"sorted_profile": test_batch_profile, "batch_size_grid": test_batch_profile}
