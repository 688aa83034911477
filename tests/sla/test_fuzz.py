"""Fuzz tests of the autoscaling for a latency SLA (engine.sla and the dispatch simulator): the contract of tests/fuzzing.py
over every public function's declared domains; ``FUZZED`` maps each public name
to the test that fuzzes it (checked by tests/test_fuzz_contract.py)."""
from scipy import stats

from engine.arrivals import Renewal
from engine.core import roots
from engine.core import domains as dom
from engine.core.domains import ARRIVAL_SCV
from engine.core import service_laws as core_laws
from engine.core import units as core_units
from engine.sla import (answers, cdfs, central, checks, curves, gpu, random_dispatch, replicas,
                       traces)
from engine.sla import sim as sla_sim
from engine.batching import answers as b_answers
from tests.fuzzing import *  # noqa: F401,F403 (settings, checks, engine modules, domains)


# ============================================================ engine.sla

SLA_DOMAINS = {"lam": LAM, "mu": MU, "n": N_BACKENDS, "d1": NET_DELAY, "d2": NET_DELAY,
               "delta": NET_DELAY, "p": PERCENTILE, "rt": RESPONSE_TARGET, "t": RESPONSE_TARGET,
               "percentile": PERCENTILE}
DELAYS = valid(NET_DELAY, high=1.0)
# (a retry probability within 1e-3 of 1 with RT/c ~ 1e10 needs ~1e10 terms of eq 7: hours)
PROBABILITY = st.one_of(st.floats(0.0, 0.999), st.sampled_from([0.0, 0.999, 1.0]))


@FUZZ_VECTOR
@given(valid(MU), valid(N_BACKENDS, high=10 ** 4), loads(), DELAYS, DELAYS, DELAYS,
       valid(PERCENTILE), valid(RESPONSE_TARGET, high=1e3), service_laws(),
       st.one_of(st.none(), PROBABILITY), st.data())
def test_sla_closed_forms(mu, n, rho, d1, d2, delta, p, rt, service, q, data):
    """Swayam's eqs 1 and 7 (quantile and printed), Erlang C and the M/M/n closed forms:
    inf percentiles and 0 probabilities exactly at λ ≥ nμ."""
    name, service, mean_s = service
    lam = at_load(rho, n * mu)
    unstable = lam >= n * mu
    args = dict(lam=lam, mu=mu, n=n, d1=d1, d2=d2, delta=delta)
    w = sla.waiting_percentile(p, **args, p_retry_busy=q)
    assert_inf_iff(w, unstable | ((q == 1) & ~unstable & (lam > 0)
                                  & (np.log1p(-p / 100) < np.log(np.where(lam > 0, lam / (n * mu),
                                                                         1.0)))), "waiting")
    printed = sla.waiting_percentile(p, **args, printed=True)
    assert_no_nan(printed)
    assert_inf_iff(printed, unstable, "waiting_percentile(printed=True)")
    cdf = sla.response_cdf(rt, **args, service=service, p_retry_busy=q)
    assert_no_nan(cdf)
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all(cdf[unstable] == 0)
    tally(sla.response_cdf, POINTS)
    miss = cdfs.resolved_miss(cdf)           # documented: nan exactly below the resolution
    assert np.array_equal(np.isnan(miss), 1.0 - cdf < cdfs.MISS_RESOLUTION)
    assert np.all(miss[~np.isnan(miss)] == (1.0 - cdf)[~np.isnan(miss)])
    tally(cdfs.resolved_miss, POINTS)
    offered = lam / mu
    erl = sla.erlang_c(n, offered)
    assert_no_nan(erl)
    assert np.all((erl >= 0) & (erl <= 1)) and np.all(erl[offered >= n] == 1)
    for f in (sla.mmn_response_cdf, sla.mmn_waiting_cdf):
        v = f(rt, lam, mu, n)
        assert_no_nan(v)
        assert np.all((v >= 0) & (v <= 1)) and np.all(v[unstable] == 0)
    wq = sla.mmn_waiting_percentile(p, lam, mu, n)
    assert_inf_iff(wq, unstable, "mmn_waiting_percentile")
    assert np.all(wq >= 0)
    grid = np.arange(1, POINTS + 1)
    within = np.sort(np.where(np.isfinite(lam), lam, 0) / np.max(np.where(np.isfinite(lam),
                                                                         lam, 1)))
    best = sla.fewest_meeting(grid, within, p)
    assert best == np.inf or best in grid
    for f in (sla.waiting_percentile, sla.erlang_c, sla.mmn_response_cdf, sla.mmn_waiting_cdf,
              sla.mmn_waiting_percentile, sla.fewest_meeting):
        tally(f, POINTS)
    kinds = {kind: sla.service_law(kind, mean_s) for kind in sla.SERVICE_LAWS}
    assert close(kinds["exponential"].mean(), mean_s) and kinds["deterministic"] == mean_s
    assert close(kinds["lognormal"].mean(), mean_s, 1e-9)
    hist = sla.empirical_service(np.abs(lam[np.isfinite(lam)]) / max(n * mu, 1e-300) + 1e-3)
    assert_no_nan(hist.mean())
    for f in (sla.service_law, sla.empirical_service):
        tally(f)
    # the helpers behind them: utilization (eq 2), checks, units, service CDF and sampler
    rho_ = sla.utilization(lam, mu, n)
    with pytest.warns(DeprecationWarning, match=r"use utilization"):
        assert np.array_equal(rho_, sla.utilisation(lam, mu, n), equal_nan=True)
    tally(sla.utilisation)
    finite = np.isfinite(lam)
    assert np.all(rho_ >= 0) and close(rho_[finite], lam[finite] / (n * mu))
    assert all(np.array_equal(a, b) for a, b in zip(sla.check_delays(d1, d2, delta),
                                                    (d1, d2, delta)))
    if q is not None:
        assert sla.check_probability(q, "q") == q
    raises_naming("amplitude", checks.check_probability, [0.5, 1.5], "amplitude")
    assert close(sla.ms_from_s(sla.s_from_ms(1000.0 * rt)), 1000.0 * rt)
    assert close(sla.hours_from_s(3600.0 * rt), rt)
    assert sla.ms_from_s is core_units.ms_from_s      # one converter: engine.core.units
    for law in (service, kinds["deterministic"]):
        f = core_laws.service_cdf(law)(np.array([0.0, mean_s, 1e9]))
        assert np.all((f >= 0) & (f <= 1)) and f[-1] == 1
        sampler, mean = core_laws.service_sampler(law)
        draws = sampler(np.random.default_rng(0), 8)
        assert draws.shape == (8,) and np.all(draws >= 0) and mean >= 0
    raises_naming("service", core_laws.service_cdf, "slow")
    raises_naming("service", core_laws.service_sampler, object())
    for f in (sla.utilization, sla.utilization, sla.check_delays, sla.check_probability, sla.ms_from_s,
              sla.s_from_ms, sla.hours_from_s, sla.service_cdf, sla.service_sampler):
        tally(f)
    params = dict(**args, p=p, rt=rt, t=rt, percentile=p)
    pp, bad = corrupt(data, params, SLA_DOMAINS)
    rejects((sla.waiting_percentile,), pp, bad)
    rejects((sla.response_cdf,), pp, bad, service=service)
    rejects((sla.mmn_response_cdf, sla.mmn_waiting_cdf, sla.mmn_waiting_percentile), pp, bad)
    raises_naming("kind", sla.service_law, "weibull", mean_s)
    raises_naming("mean_s", sla.service_law, "exponential", 0.0)
    raises_naming("sigma", sla.service_law, "lognormal", mean_s, 0.0)
    raises_naming("samples_s", sla.empirical_service, [1.0, math.nan])
    raises_naming("p_retry_busy", sla.response_cdf, rt, lam, mu, n, d1, d2, delta, service,
                  p_retry_busy=1.5)


# Each solver searches (doubling and bisection) over calls of its closed form: ~5 ms
# (min_backends) to ~0.2 s (response_percentile: ~60 evaluations of eq 7) a call;
# retry_busy_probability is a sparse matrix exponential over ~n + 37/ln(1/ρ) states.
@fuzz(60, 4)
@given(valid(MU, high=1e4), valid(N_BACKENDS, high=200), st.lists(rho(), min_size=4, max_size=4),
       valid(NET_DELAY, high=0.01), valid(NET_DELAY, high=0.01), valid(NET_DELAY, high=0.01),
       valid(PERCENTILE), service_laws(), st.data())
def test_sla_solvers(mu, n, rho, d1, d2, delta, p, service, data):
    """response_percentile, mmn_response_percentile, min_backends, erlang_c_min_servers and
    retry_busy_probability: inf exactly at λ ≥ nμ (percentiles) or when infeasible."""
    name, service, mean_s = service
    mu = max(mu, 1e-3)
    lam = at_load(np.array(rho), n * mu)
    unstable = lam >= n * mu
    rt = 10 * (mean_s + d1) + 1.0 / mu
    args = dict(lam=lam, mu=mu, n=n, d1=d1, d2=d2, delta=delta)
    r = sla.response_percentile(p, **args, service=service)
    assert_no_nan(r)
    assert np.all(r[unstable] == np.inf) and np.all(r >= 0)
    r_mmn = sla.mmn_response_percentile(p, lam, mu, n)
    assert_inf_iff(r_mmn, unstable, "mmn_response_percentile")
    need = sla.min_backends(lam, mu, rt, p, d1, d2, delta, service)
    assert_no_nan(need)
    assert np.all((need >= 1) & (need >= np.floor(np.where(np.isfinite(lam), lam, 0) / mu)))
    need_c = sla.erlang_c_min_servers(lam, mu, rt, p)
    assert_no_nan(need_c)
    steady = sla.stable_replicas(lam, mu)
    assert np.all(need >= steady) and np.all(lam[np.isfinite(steady)] < steady[
        np.isfinite(steady)] * mu) and np.all(need_c >= steady)
    assert close(sla.offered_load(lam, mu), lam / mu)
    tally(sla.stable_replicas, lam.size)
    tally(sla.offered_load, lam.size)
    assert np.all(need_c[np.isinf(lam)] == np.inf)
    # its cost grows with c·nμ (matrix-exponential steps) and 1/(1 − ρ) (states): the
    # delays are scaled to c·nμ ≤ 100 and ρ kept below 0.99
    shrink = min(1.0, 100.0 / ((d1 + d2 + delta) * n * mu)) if d1 + d2 + delta > 0 else 1.0
    x = float(lam[0]) if rho[0] < 0.99 else 0.5 * n * mu
    q = sla.retry_busy_probability(x, mu, n, d1 * shrink, d2 * shrink, delta * shrink)
    assert_no_nan(q)
    assert 0 <= q <= 1
    tally(sla.retry_busy_probability)
    for f in (sla.response_percentile, sla.mmn_response_percentile, sla.min_backends,
              sla.erlang_c_min_servers):
        tally(f, lam.size)
    params = dict(**args, p=p, rt=rt, percentile=p)
    pp, bad = corrupt(data, params, SLA_DOMAINS)
    rejects((sla.response_percentile, sla.min_backends), pp, bad, service=service)
    rejects((sla.mmn_response_percentile, sla.erlang_c_min_servers,
             sla.retry_busy_probability), pp, bad)


# gpu_service_rate bisects up to 200 exact E[W] solves (a banded solve each with a finite
# b_max: 0.2-1 s a call), max_rate_for_mean_latency ~20 plus a root search.  Targets stay
# within 100 lone-job latencies: a target 5000 α away puts the root within 1e-4 of
# capacity, where each of the 200 solves iterates the series 20,000 times (12 s a call).
@fuzz(50)
@given(valid(ALPHA, low=1e-3, high=10.0), valid(TAU0, high=10.0),
       st.one_of(st.none(), st.integers(1, 4)), st.floats(0.5, 100.0), st.data())
def test_gpu_operating_point(alpha, tau0, b_max, factor, data):
    """gpu_service_rate (requests/s) and max_rate_for_mean_latency (per ms): the largest load
    whose exact E[W] meets the target, 0 when even a lone job misses it or just meets it."""
    target = factor * (alpha + tau0)
    rate = sla.gpu_service_rate(alpha, tau0, target, b_max)
    assert_no_nan(rate)
    assert 0 <= rate <= 1000 * batching.capacity(alpha, tau0, b_max) * (1 + 1e-9)
    # E[W] rises from α + τ0 at λ = 0: a target at α + τ0 exactly is met only with no load
    # (FUZZ_FULL found factor = 1 asserted the other way)
    if alpha + tau0 >= target:
        assert rate == 0
    elif alpha + tau0 < target * (1 - 1e-9):
        assert rate > 0
    best = b_answers.max_rate_for_mean_latency(target, alpha, tau0, b_max)
    assert 0 <= best < batching.capacity(alpha, tau0, b_max)
    if best > 0:      # (brentq's rtol 1e-10 in λ leaves ~1e-5 in E[W] right at capacity)
        assert batching.mean_latency(best, alpha, tau0, b_max) <= target * (1 + 1e-4)
    tally(sla.gpu_service_rate)
    tally(b_answers.max_rate_for_mean_latency)
    name = data.draw(st.sampled_from(["alpha", "tau0", "target"]))
    domain = {"alpha": ALPHA, "tau0": TAU0, "target": LATENCY_TARGET_MS}[name]
    bad = data.draw(invalid(domain))
    args = {"alpha": alpha, "tau0": tau0, "target": target, name: bad}
    raises_naming({"alpha": "alpha_ms", "tau0": "tau0_ms"}.get(name, "latency_target_ms"),
                  sla.gpu_service_rate, args["alpha"], args["tau0"], args["target"], b_max)
    raises_naming({"target": "target_ms"}.get(name, name),
                  b_answers.max_rate_for_mean_latency, args["target"], args["alpha"],
                  args["tau0"], b_max)


@FUZZ_VECTOR
@given(valid(LAM, high=1e4, allow_inf=False), sweep(valid(INTERVAL, high=1e4)),
       st.floats(1.0, 48.0), PROBABILITY, st.integers(0, 5), valid(HEADROOM, high=10.0),
       st.integers(0, 2 ** 32), valid(MU, low=1.0, high=1e4), valid(PERCENTILE, high=99.9),
       valid(PROVISIONING_DELAY, high=1e4), valid(COST), st.data())
def test_sla_traces(mean_rate, intervals, hours, amplitude, spikes, headroom, seed, mu, p, delay,
                    cost, data):
    """diurnal_trace, trace_rates (rates and timestamps) and plan_replicas."""
    # traces of up to 10^4 intervals (cost); beyond MAX_TRACE_INTERVALS a ValueError
    intervals = [i for i in intervals if hours * 3600 / i <= 1e4] or [60.0]
    raises_naming("interval_s", sla.diurnal_trace, mean_rate, 24.0, 1e-4)   # 8.6e8 intervals
    for interval in intervals:
        trace = sla.diurnal_trace(mean_rate, hours, interval, amplitude, spikes, seed=seed)
        assert_no_nan(trace)
        assert np.all((trace >= 0) & np.isfinite(trace))
        rates = sla.trace_rates(trace, interval)
        assert np.array_equal(rates, trace)
        tally(sla.diurnal_trace)
        tally(sla.trace_rates)
    stamps = np.sort(np.random.default_rng(seed).uniform(0, 10 * intervals[0], 50))
    binned = sla.trace_rates(stamps, intervals[0], "timestamps")
    assert np.isclose(binned.sum() * intervals[0], stamps.size)
    assert np.array_equal(traces.binned_rates(stamps, intervals[0]), binned)
    if binned.size > 3:
        raises_naming("at most 3 (raise", traces.binned_rates, stamps, intervals[0],
                      max_intervals=3)
    raises_naming("row 3 (", traces.binned_rates, [0.0, 2.0, 1.0], 60.0)
    starts = intervals[0] * np.arange(5.0)
    assert traces.even_interval_s(starts) == intervals[0]
    raises_naming("evenly spaced", traces.even_interval_s, [0.0, 1.0, 3.0])
    raises_naming("row 2 (", traces.even_interval_s, [0.0, 0.0])
    raises_naming("too short", traces.even_interval_s, starts, min_interval_s=2 * intervals[0])
    raised = traces.synthetic_interval_s(hours, intervals[0], 100)
    assert close(raised, max(intervals[0], hours * 36.0))
    for f in (traces.binned_rates, traces.even_interval_s, traces.synthetic_interval_s):
        tally(f)
    rt = 20.0 / mu
    plan = sla.plan_replicas(trace[:48], mu, rt, p, interval_s=intervals[-1],
                             provisioning_delay=delay, headroom=headroom, cost_per_gpu_hour=cost)
    assert_no_nan(plan)
    assert np.all(plan.serving <= plan.needed.max()) and plan.cost >= 0
    tally(sla.plan_replicas)
    domains = {"mean_rate": dom.TRACE_MEAN_RATE, "interval_s": INTERVAL, "n_spikes": dom.SPIKES,
               "spike_factor": dom.SPIKE_FACTOR, "noise": dom.TRACE_NOISE,
               "hours": dom.TRACE_HOURS, "spike_minutes": dom.SPIKE_MINUTES,
               "amplitude": dom.PROBABILITY}
    name = data.draw(st.sampled_from(sorted(domains)))
    bad = data.draw(invalid(domains[name]))
    raises_naming(name, sla.diurnal_trace, **{"mean_rate": mean_rate, name: bad})
    raises_naming("trace", sla.trace_rates, [1.0, math.nan], 60.0)
    raises_naming("trace", sla.trace_rates, [1.0, -1.0], 60.0)
    raises_naming("trace", sla.trace_rates, [2.0, 1.0], 60.0, "timestamps")
    raises_naming("kind", sla.trace_rates, [1.0], 60.0, "other")
    for name, value in (("mu", 0.0), ("headroom", -1.0), ("provisioning_delay", math.nan),
                        ("cost_per_gpu_hour", -1.0), ("min_replicas", 0),
                        ("interval_s", 0.0)):
        raises_naming(name, sla.plan_replicas, trace[:4], **{"mu": mu, "rt": rt, "percentile": p,
                                                           name: value})


# ============================================================ engine.sla answers, curves, central

class _Run:
    """A stand-in simulation result: every response time equal to ``t_s``."""

    def __init__(self, t_s):
        self.t_s = t_s

    def fraction_within(self, rt):
        return (np.asarray(rt, float) >= self.t_s).astype(float)[()]

    def waiting_percentile(self, p):
        return 0.5 * self.t_s


# replica_curves solves eq 7 over ≤ 160 counts and the retry chain at ≤ 20: ~0.2 s a case.
# Its cost grows with c·nμ and 1/(1 − ρ) at the first stable n (the chain's states): the
# offered load λ/μ = m + f, f ≤ 0.5, keeps ρ ≤ 0.98 there, and c·μ ≤ 3; c is 0 or at
# least 1e-4 s (the page's slider steps), as RT/c terms of corrected eq 7 are summed with
# a retry busy probability near 1 when c → 0 (hours at c ~ 1e-10 s).
PAGE_DELAYS = st.one_of(st.just(0.0), st.floats(1e-4, 0.01))


@fuzz(40)
@given(valid(MU, low=1.0, high=100.0), st.integers(0, 40), st.floats(0.0, 0.5),
       PAGE_DELAYS, PAGE_DELAYS, PAGE_DELAYS,
       valid(PERCENTILE, low=50.0, high=99.9), service_laws(), st.integers(1, 40),
       valid(ARRIVAL_SCV, high=10.0), st.data())
def test_sla_page_answers(mu, whole, part, d1, d2, delta, p, service, n_at, ca2, data):
    """The autoscaling page's engine calls: replica answers, curves against n, CDFs at n,
    what-if numbers, simulation grids and summaries, the simulated search (over a known
    monotone fraction within RT) and the central queue's GI/G/n wait."""
    name, service, mean_s = service
    lam = (whole + part) * mu
    rt = 20.0 * (mean_s + d1) + 1.0 / mu
    d = (d1, d2, delta)
    ans = answers.replica_answers(lam, mu, rt, p, *d, service)
    assert ans["stable"] == sla.stable_replicas(lam, mu) and close(ans["offered"], lam / mu)
    assert ans["approx"] == sla.min_backends(lam, mu, rt, p, *d, service)
    assert ans["mmn"] == sla.erlang_c_min_servers(lam, mu, rt, p)
    tally(answers.replica_answers)
    top = curves.curve_top(ans["approx"], ans["mmn"], ans["stable"])
    finite = [a for a in (ans["approx"], ans["mmn"], ans["stable"]) if math.isfinite(a)]
    assert top == max(finite) * 1.25 + 10
    tally(curves.curve_top)
    grid = curves.replica_grid(lam, mu, top)
    assert grid[0] == ans["stable"] and grid.size <= curves.CURVE_POINTS
    assert np.all(np.diff(grid) >= 1) and grid[-1] >= max(top - 1, grid[0] + 5)
    tally(curves.replica_grid)
    cur = curves.replica_curves(lam, mu, rt, p, *d, service, top)
    assert np.array_equal(cur["n"], grid)
    assert np.array_equal(cur["within_eq7"], sla.response_cdf(rt, lam, mu, grid, *d, service))
    assert_no_nan({k: v for k, v in cur.items() if not k.startswith("miss")})
    useful = curves.correction_applies(mu, *d, grid[-1])
    assert useful == (0 < sum(d) * mu <= curves.FIX_MAX_C_MU and grid[-1] <= curves.FIX_MAX_N)
    assert (cur["n_fix"] is None) == (not useful)
    for f in (curves.replica_curves, curves.correction_applies):
        tally(f)
    kept = curves.resolved_curve(cur["n"], cur["miss_eq7"])
    assert all(math.isfinite(m) for m in kept[1]) and len(kept[0]) == len(kept[1])
    tally(curves.resolved_curve)
    n = max(int(ans["stable"]), n_at)
    run = _Run(rt / 2)
    at = answers.at_replicas(lam, mu, n, rt, *d, service, run)
    assert at["stable"] == (lam < n * mu) and close(at["utilization"], lam / (n * mu))
    assert at["within_sim"] == 1.0 and at["miss_sim"] == 0.0 and at["capacity_per_s"] == n * mu
    assert at["within_eq7"] == sla.response_cdf(rt, lam, mu, n, *d, service)
    tally(answers.at_replicas)
    c = curves.cdf_curves(lam, mu, n, rt, *d, service, run)
    assert c["t"].size == curves.CDF_POINTS and c["t"][-1] >= 3 * rt
    assert np.array_equal(c["sim"], c["t"] >= rt / 2) and np.all(np.diff(c["eq7"]) >= -1e-12)
    tally(curves.cdf_curves)
    assert answers.sim_requests(n) == max(100_000, 1000 * n)
    assert answers.simulable(lam, mu, n) == (lam < n * mu and n <= answers.SIM_MAX_N)
    assert not answers.simulable(lam, mu, n, simulate=False)
    ns = answers.sim_grid(lam, mu, ans["approx"])
    assert answers.sim_grid(lam, mu, ans["approx"], False) == ()
    assert ns == () or (len(ns) == answers.SIM_POINTS and ns[0] >= ans["stable"]
                        and ns[-1] <= answers.SIM_MAX_N)
    for f in (answers.sim_requests, answers.simulable, answers.sim_grid):
        tally(f)
    # runs answering within RT from the third count on: the fewest is the third
    ks = tuple(float(k) for k in range(n, n + 5))
    runs = [_Run(2 * rt if k < n + 2 else rt / 4) for k in ks]
    sw = answers.sweep_summary(ks, runs, rt, p)
    assert sw["fewest"] == n + 2 and not sw["all_meet"] and list(sw["within"]) == [0, 0, 1, 1, 1]
    assert close(sw["omega_ms"], [1000 * r.t_s / 2 for r in runs])
    assert answers.sweep_summary((), [], rt, p) is None
    tally(answers.sweep_summary)
    # a fraction within RT of 1 − 1/k: the fewest count meeting p is ⌈1/(1 − p/100)⌉
    within_at = data.draw(st.sampled_from([lambda k: 1.0 - 1.0 / k, lambda k: 0.0]))
    lam_s = 0.5 * mu
    found = answers.fewest_simulated(within_at, lam_s, mu, data.draw(
        st.sampled_from([1.0, 30.0, math.inf])), p)
    need = math.ceil(1.0 / (1.0 - p / 100.0) - 1e-9)
    if within_at(2) == 0.0 or need > answers.SIM_MAX_N:
        assert found["n"] == math.inf
    else:
        assert found["n"] == max(need, 1)
    assert [pt[1] for pt in found["points"]] == [1.0 - within_at(k) for k, _ in found["points"]]
    late = answers.late_curve(found["points"])
    assert list(late[0]) == [k for k, _ in found["points"]]
    for f in (answers.fewest_simulated, answers.late_curve):
        tally(f)
    # central queue: Poisson arrivals and exponential service is Erlang C's M/M/n wait
    cs2 = central.service_scv(service)
    assert close(cs2, {"expon": 1.0, "deterministic": 0.0}.get(name, cs2))
    w = central.central_mean_wait_s(lam, mu, n, d1, ca2, service)
    expect = d1 + sla.mean_wait_ggn(lam, 1.0 / mu, n, ca2, cs2)
    assert close(w, expect)
    if lam < n * mu:
        mmn = d1 + sla.erlang_c(n, lam / mu) / (n * mu - lam)
        assert close(central.central_mean_wait_s(lam, mu, n, d1, 1.0, stats.expon(scale=1 / mu)),
                     mmn, 1e-7)
    for f in (central.service_scv, central.central_mean_wait_s):
        tally(f)
    raises_naming("service", central.service_scv, object())
    raises_naming("answers", curves.curve_top, math.inf, math.inf)
    raises_naming("top", curves.replica_grid, lam, mu, -1.0)
    raises_naming("results", answers.sweep_summary, ks, runs[:2], rt, p)
    raises_naming("miss", curves.resolved_curve, [1.0, 2.0], [0.1])
    raises_naming("rt", answers.at_replicas, lam, mu, n, -1.0, *d, service)


# ============================================================ engine.sla.RandomDispatch

# One solve of each kind a case (min_backends ~5 ms, response_percentile ~0.2 s, a
# 2,000-request simulation): ~2 s; at least one replica beyond the first stable count.
@fuzz(24)
@given(valid(MU, low=1.0, high=100.0), st.integers(0, 20), st.floats(0.0, 0.5),
       valid(NET_DELAY, high=0.01), valid(NET_DELAY, high=0.01), valid(NET_DELAY, high=0.01),
       st.sampled_from(sla.SERVICE_LAWS), st.floats(0.1, 2.0), valid(PERCENTILE, high=99.9),
       st.integers(2, 30), st.data())
def test_random_dispatch(mu, whole, part, d1, d2, delta, law, sigma, p, extra, data):
    """RandomDispatch: each method is its module function with the bound parameters
    (numpy.polynomial's two layers), the service law built from the name with mean 1/μ,
    equal models hash equal, and a bad field raises naming it."""
    lam = (whole + part) * mu
    m = random_dispatch.RandomDispatch(lam, mu, d1, d2, delta, law, sigma)
    d = (d1, d2, delta)
    service = sla.service_law(law, 1.0 / mu, sigma)
    assert m == random_dispatch.RandomDispatch(lam, mu, d1, d2, delta, law, sigma)
    assert hash(m) == hash(random_dispatch.RandomDispatch(lam, mu, d1, d2, delta, law, sigma))
    assert close(service if law == "deterministic" else service.mean(),
                 m.service if law == "deterministic" else m.service.mean())
    n = int(sla.stable_replicas(lam, mu)) + extra
    bound = m.with_replicas(n)
    rt = 10.0 * (1.0 / mu + d1)
    assert bound.n == n and bound.utilization() == sla.utilization(lam, mu, n)
    assert m.offered_load() == sla.offered_load(lam, mu)
    assert m.stable_replicas() == sla.stable_replicas(lam, mu)
    assert m.min_backends(rt, p) == sla.min_backends(lam, mu, rt, p, *d, service)
    assert m.erlang_c_min_servers(rt, p) == sla.erlang_c_min_servers(lam, mu, rt, p)
    t = np.linspace(0.0, 2 * rt, 5)
    assert np.array_equal(bound.response_cdf(t), sla.response_cdf(t, lam, mu, n, *d, service))
    assert np.array_equal(bound.mmn_response_cdf(t), sla.mmn_response_cdf(t, lam, mu, n))
    assert bound.waiting_percentile(p, printed=True) == sla.waiting_percentile(
        p, lam, mu, n, *d, printed=True)
    assert m.waiting_percentile(p, n) == sla.waiting_percentile(p, lam, mu, n, *d)
    assert bound.mmn_waiting_percentile(p) == sla.mmn_waiting_percentile(p, lam, mu, n)
    assert close(bound.mmn_response_percentile(p), sla.mmn_response_percentile(p, lam, mu, n))
    assert close(bound.response_percentile(p), sla.response_percentile(p, lam, mu, n, *d,
                                                                       service))
    if n <= 50:
        assert bound.retry_busy_probability() == sla.retry_busy_probability(lam, mu, n, *d)
    assert repr(m.replica_answers(rt, p)) == repr(answers.replica_answers(lam, mu, rt, p, *d,
                                                                          service))
    top = 1.25 * n + 10
    assert np.array_equal(m.replica_grid(top), curves.replica_grid(lam, mu, top))
    assert repr(m.at_replicas(rt, n)) == repr(answers.at_replicas(lam, mu, n, rt, *d, service))
    assert m.simulable(n) == answers.simulable(lam, mu, n)
    assert m.sim_grid(float(n)) == answers.sim_grid(lam, mu, float(n))
    assert close(bound.central_mean_wait_s(2.0), central.central_mean_wait_s(
        lam, mu, n, d1, 2.0, service))
    # a simulated fraction within RT of 1 − 1/k meets p90 from k = 10 on
    found = m.fewest_simulated(lambda k: 1.0 - 1.0 / k, float(n), 90.0)
    assert found["n"] == max(10.0, m.stable_replicas())
    if lam > 0 and sum(d) >= 1e-4 and n <= 40:
        r = bound.simulate(n_requests=2000, seed=1)
        expect = sla.simulate_dispatch("random_retry", lam, service, n, *d, 2000, 1)
        assert (r.mean_response_s, r.p99_response_s) == (expect.mean_response_s, expect.p99_response_s)
    tally(random_dispatch.RandomDispatch)
    bad = data.draw(st.sampled_from(["rate_per_s", "mu_per_s", "d1_s", "d2_s", "delta_s", "n",
                                     "law", "sigma"]))
    value = {"rate_per_s": -1.0, "mu_per_s": 0.0, "d1_s": -1.0, "d2_s": math.nan,
             "delta_s": -1.0, "n": 0.5, "law": "weibull", "sigma": 0.0}[bad]
    kw = dict(rate_per_s=lam, mu_per_s=mu, d1_s=d1, d2_s=d2, delta_s=delta, law="lognormal")
    raises_naming(bad, random_dispatch.RandomDispatch, **{**kw, bad: value})
    raises_naming("n", m.utilization)


# ============================================================ engine.sla.sim

# ~5 ms a case (numba loops over n_requests), POINTS loads an example.
@fuzz(1000, POINTS)
@given(st.sampled_from(sla_sim.POLICIES), service_laws(), valid(N_BACKENDS, high=64),
       DELAYS, DELAYS, DELAYS, loads(), st.integers(1, 300),
       st.one_of(st.none(), st.integers(0, 400)), st.integers(0, 2 ** 32), st.data())
def test_dispatch_sim(policy, service, n, d1, d2, delta, rho, n_requests, warmup, seed, data):
    """simulate_dispatch and simulate_records for every policy: a load at or beyond n/E[S]
    and retries without a delay are the documented ``ValueError``."""
    name, service, mean_s = service
    cap = n / (float(service.mean()) if hasattr(service, "mean") else service)   # n/E[S]
    c = d1 + d2 + delta
    for lam in at_load(rho, cap):
        kw = dict(policy=policy, lam=lam, service=service, n=n, d1=d1, d2=d2, delta=delta,
                  n_requests=n_requests, seed=seed)
        if not 0 < lam < cap or policy == "random_retry" and c == 0:
            with pytest.raises(ValueError):
                sla_sim.simulate_dispatch(**kw)
            continue
        if policy == "random_retry" and c < 1e-3 * n / cap:
            continue        # ~E[S]/c retries a request (~1e7 at c = 1e-8 s): minutes (cost)
        r = sla_sim.simulate_dispatch(**kw, warmup_requests=warmup)
        assert_no_nan(r, allowed=("p_busy_retry",))     # documented: NaN when no retries
        assert r.mean_response_s >= r.mean_waiting_s >= -1e-12 and r.mean_attempts >= 1
        assert 0 <= r.fraction_within(r.p50_response_s) <= 1
        assert r.response_percentile(50) >= 0 and r.waiting_percentile(99) >= 0
        assert 0 <= r.waiting_fraction_within(0.0) <= 1
        assert r.p50_response_s <= r.p95_response_s <= r.p99_response_s
        assert r.p50_waiting_s <= r.p99_waiting_s <= r.p99_response_s
        rec = sla_sim.simulate_records(**kw)
        assert_no_nan(rec)
        again = sla_sim.summarised(rec, policy, warmup)      # the same seed: the same path
        assert (again.mean_response_s, again.p99_waiting_s, again.ci95_s) == (
            r.mean_response_s, r.p99_waiting_s, r.ci95_s)
        tally(sla_sim.summarised)
        tally(sla_sim.simulate_dispatch)
        tally(sla_sim.simulate_records)
    lam = float(at_load(rho[0], cap))
    if 0 < lam < cap and (policy != "random_retry" or c >= 1e-3 * n / cap):
        # ``arrivals``: a renewal process at λ, then its replay (bursts beyond n/E[S] pass)
        process = Renewal(lam, data.draw(valid(ARRIVAL_SCV, high=100.0), label="scv"))
        times = process.sample(n_requests, np.random.default_rng(seed))
        kw = dict(policy=policy, lam=None, service=service, n=n, d1=d1, d2=d2, delta=delta,
                  n_requests=n_requests, seed=seed)
        for arrivals in (process, times):
            try:
                r = sla_sim.simulate_dispatch(**kw, warmup_requests=0, arrivals=arrivals)
            except ValueError as err:   # documented: a trace's mean rate at or beyond n/E[S]
                assert arrivals is times and "mean rate of arrivals" in str(err)
                continue
            assert_no_nan(r, allowed=("p_busy_retry",))
            assert r.n_requests == n_requests and r.mean_response_s >= r.mean_waiting_s >= -1e-12
        raises_naming("arrivals", sla_sim.simulate_records, **kw,
                      arrivals=np.append(times, np.inf))
    params = dict(lam=0.5 * cap, n=n, d1=d1, d2=d2, delta=delta + 1e-3, n_requests=n_requests,
                  warmup_requests=warmup or 0)
    p, bad = corrupt(data, params, {"lam": LAM, "n": N_BACKENDS, "d1": NET_DELAY,
                                    "d2": NET_DELAY, "delta": NET_DELAY,
                                    "n_requests": N_REQUESTS, "warmup_requests": WARMUP})
    rejects((sla_sim.simulate_dispatch, sla_sim.simulate_records), p, bad,
            policy=policy, service=service, seed=seed)
    raises_naming("policy", sla_sim.simulate_dispatch, "round_robin", 1.0, service, n)
    raises_naming("policy", sla_sim.summarised, sla_sim.DispatchRecords(
        np.zeros(1), np.zeros(1), np.zeros(1), np.ones(1, dtype=np.int64)), "round_robin")


# ============================================================ engine.core.roots

@FUZZ_VECTOR
@given(sweep(st.floats(1e-9, 1e9)), sweep(st.floats(0.0, 0.999)), sweep(st.floats(0.0, 1e12)),
       sweep(st.integers(0, 3)), sweep(st.booleans()), sweep(st.floats(0.0, 1e12)),
       sweep(st.floats(1e-12, 1e12)))
def test_roots(scale, target, x, back, feasible, square, top):
    """smallest_reaching, smallest_integer and largest_satisfying against the closed-form
    roots of x/(x + s) = p, n ≥ x and x² ≤ y."""
    s, p = np.array(scale), np.array(target)
    root = s * p / (1.0 - p)
    found = roots.smallest_reaching(lambda t: t / (t + s), p, s.shape)
    assert_no_nan(found)
    reach = root <= roots.LIMIT
    assert np.all(np.abs(found[reach] - root[reach])
                  <= 2e-9 * np.maximum(found[reach], 1e-6) + 1e-12 * root[reach])
    assert np.all(found[~reach] == np.inf)
    x = np.array(x)
    lo = np.maximum(np.floor(x) - np.array(back), 0.0)
    feasible = np.array(feasible)
    n = roots.smallest_integer(lambda k: k >= x, lo, feasible)
    expected = np.maximum(np.ceil(x), lo + 1.0)
    assert np.array_equal(n, np.where(feasible, expected, np.inf))
    y, top = np.array(square), np.array(top)
    best = roots.largest_satisfying(lambda v: v * v <= y, np.zeros(y.shape), top)
    exact = np.minimum(np.sqrt(y), top)
    assert np.all(best <= exact * (1 + 1e-15)) and np.all(exact - best <= 4e-12 * top)
    for f in (roots.smallest_reaching, roots.smallest_integer, roots.largest_satisfying):
        tally(f, POINTS)


# ============================================================ every public function has a case

# Public name -> the test that fuzzes it.  A result or data class (no arguments of its
# own to fuzz) names the test that builds and checks it and the function it comes from.
FUZZED = {
    cdfs: {
        "waiting_percentile": test_sla_closed_forms, "response_cdf": test_sla_closed_forms,
        "erlang_c": test_sla_closed_forms, "mmn_response_cdf": test_sla_closed_forms,
        "mmn_waiting_cdf": test_sla_closed_forms,
        "mmn_waiting_percentile": test_sla_closed_forms, "utilization": test_sla_closed_forms,
        "utilisation": test_sla_closed_forms,
        "response_percentile": test_sla_solvers, "mmn_response_percentile": test_sla_solvers,
        "retry_busy_probability": test_sla_solvers, "resolved_miss": test_sla_closed_forms},
    checks: {"check_delays": test_sla_closed_forms, "check_probability": test_sla_closed_forms},
    replicas: {
        "fewest_meeting": test_sla_closed_forms, "stable_replicas": test_sla_solvers,
        "offered_load": test_sla_solvers,
        "min_backends": test_sla_solvers, "erlang_c_min_servers": test_sla_solvers},
    core_laws: {
        "service_law": test_sla_closed_forms, "empirical_service": test_sla_closed_forms,
        "service_cdf": test_sla_closed_forms, "service_sampler": test_sla_closed_forms},
    gpu: {"gpu_service_rate": test_gpu_operating_point},
    traces: {
        "diurnal_trace": test_sla_traces, "trace_rates": test_sla_traces,
        "plan_replicas": test_sla_traces, "ReplicaPlan": (test_sla_traces, "plan_replicas"),
        "synthetic_interval_s": test_sla_traces, "even_interval_s": test_sla_traces,
        "binned_rates": test_sla_traces},
    sla_sim: {
        "simulate_records": test_dispatch_sim, "simulate_dispatch": test_dispatch_sim,
        "summarised": test_dispatch_sim,
        "DispatchRecords": (test_dispatch_sim, "simulate_records"),
        "DispatchSimResult": (test_dispatch_sim, "simulate_dispatch")},
    answers: {name: test_sla_page_answers for name in (
        "replica_answers", "at_replicas", "sim_requests", "sim_grid", "simulable",
        "sweep_summary", "fewest_simulated", "late_curve")},
    curves: {name: test_sla_page_answers for name in (
        "replica_grid", "curve_top", "correction_applies", "replica_curves", "cdf_curves",
        "resolved_curve")},
    random_dispatch: {"RandomDispatch": test_random_dispatch},
    central: {"service_scv": test_sla_page_answers, "central_mean_wait_s": test_sla_page_answers},
    roots: {"smallest_reaching": test_roots, "smallest_integer": test_roots,
            "largest_satisfying": test_roots},
}
