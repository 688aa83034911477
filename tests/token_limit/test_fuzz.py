"""Fuzz tests of the LLM token limits (engine.token_limit, the M/G/1+D solver): the contract of tests/fuzzing.py
over every public function's declared domains; ``FUZZED`` maps each public name
to the test that fuzzes it (checked by tests/test_fuzz_contract.py)."""
from tests.fuzzing import *  # noqa: F401,F403 (settings, checks, engine modules, domains)
from engine.arrivals import Renewal
from engine.core.domains import ARRIVAL_SCV
from types import SimpleNamespace

from engine.token_limit import (answers as tl_answers, curves as tl_curves,
                                formulas as tl_formulas, patience as tl_patience,
                                queue as tl_queue, sim as tl_sim, sweeps as tl_sweeps)


# ============================================================ engine.token_limit

TOKEN_DOMAINS = {"lam": LAM_PER_S, "a": A_S_PER_TOKEN, "c": C_S, "n_max": N_MAX,
                 "patience": PATIENCE_S, "theta": THETA, "loss_cost": LOSS_COST}
FINITE_N_MAX = valid(N_MAX, high=5000, allow_inf=False)
SUMMABLE = 200_000      # law tops up to this are summed without n_max (above: cost)


def law_top(law) -> float:
    """Top of the token grid without a limit, inf when beyond ``MAX_TOKEN_GRID``."""
    try:
        return token_laws.grid_top(law)
    except ValueError:
        return math.inf


def service_mean(a, c, law, n_max):
    return a * np.asarray(token_limit.clipped_token_moments(law, n_max)[0]) + c


@FUZZ_VECTOR
@given(token_law_specs(), valid(A_S_PER_TOKEN), valid(C_S), sweep(FINITE_N_MAX), loads(),
       valid(THETA), valid(LOSS_COST), st.data())
def test_token_limit_moments(law, a, c, n_max, rho, theta, loss_cost, data):
    """clipped_token_moments, mean_utility, mean_wait, utilization, largest_stable_limit,
    objective_v1/v2: ρ = λE[S] < 1 is the stability condition of the M/G/1 queue."""
    name, law = law
    n_max = np.array(n_max, dtype=float)
    e1, e2 = token_limit.clipped_token_moments(law, n_max)
    assert_no_nan((e1, e2))
    assert np.all((e1 >= 1) & (e1 <= n_max * (1 + 1e-12)) & (e2 >= e1 * e1 * (1 - 1e-9)))
    es = a * e1 + c
    m1, m2 = token_limit.service_moments(a, c, e1, e2)
    assert close(m1, es, 1e-12) and np.all(m2 >= m1 * m1 * (1 - 1e-12))
    tally(token_limit.service_moments, POINTS)
    lam = at_load(rho, 1 / es)
    load = token_limit.utilization(lam, a, c, law, n_max)
    assert close(load, lam * es, 1e-12)
    unstable = lam >= 1 / es                     # capacity 1/E[S]: ρ = λE[S] ≥ 1
    w = token_limit.mean_wait(lam, a, c, law, n_max)
    assert_inf_iff(w, unstable, "mean_wait")
    assert np.all(w >= 0)
    u = token_limit.mean_utility(law, n_max)
    assert_no_nan(u)
    assert np.all((u > 0) & (u <= 1 + 1e-12))
    v1 = token_limit.objective_v1(u, w, theta)
    assert_no_nan(v1)
    assert np.all((v1 == -np.inf) == unstable)
    v2 = token_limit.objective_v2(u, np.where(unstable, 10.0, w), np.zeros_like(u), theta,
                                  loss_cost)
    assert_no_nan(v2)
    for f in (token_limit.clipped_token_moments, token_limit.utilization, token_limit.mean_wait,
              token_limit.mean_utility, token_limit.objective_v1, token_limit.objective_v2):
        tally(f, POINTS)
    top = law_top(law)
    if top <= SUMMABLE or name.startswith("lognormal"):     # exact up to 2^16, then a tail integral
        mean_n = token_limit.mean_requested_tokens(law)
        assert mean_n >= 1 and not math.isnan(mean_n) and mean_n >= np.max(e1) * (1 - 1e-9)
        tally(token_limit.mean_requested_tokens)
        lam_n = token_limit.rate_at_load(rho[0] if np.isfinite(rho[0]) else 1.0, a, c, mean_n)
        assert close(lam_n * (a * mean_n + c), rho[0] if np.isfinite(rho[0]) else 1.0, 1e-12)
        tally(token_limit.rate_at_load)
    if top <= SUMMABLE:                          # no limit: the sums stop at the law's top
        assert np.all(token_limit.mean_utility(law, None) == 1.0)
        assert_no_nan(token_limit.clipped_token_moments(law, None))
    elif math.isinf(top):                        # documented: an unbounded law needs n_max
        raises_naming("n_max", token_limit.clipped_token_moments, law, None)
    if rho[0] >= 0.01 or top <= SUMMABLE:        # below, a heavy tail sums up to 8.4 M terms
        lam0 = float(lam[0])
        m = token_limit.largest_stable_limit(lam0, a, c, law)
        assert not math.isnan(m) and m >= 0
        if 1 <= m < math.inf:
            assert token_limit.utilization(lam0, a, c, law, m) < 1
            assert token_limit.utilization(lam0, a, c, law, m + 1) >= 1
        tally(token_limit.largest_stable_limit)
    params = dict(lam=lam, a=a, c=c, n_max=n_max, theta=theta, loss_cost=loss_cost)
    p, bad = corrupt(data, params, TOKEN_DOMAINS)
    rejects((token_limit.utilization, token_limit.mean_wait), p, bad, dist=law)
    rejects((token_limit.clipped_token_moments, token_limit.mean_utility), p, bad, dist=law)
    if bad in ("theta", "loss_cost"):
        rejects((token_limit.objective_v1,), dict(mean_utility=u, mean_wait=w, **p), bad)
        rejects((token_limit.objective_v2,), dict(mean_utility=u, mean_wait_all=w,
                                                  loss_fraction=0 * u, **p), bad)


@FUZZ_VECTOR
@given(loads(), valid(A_S_PER_TOKEN, low=1e-4, high=100.0), valid(PATIENCE_S), st.data())
@example(np.full(POINTS, 0.001), 0.05, 300.0, None).via("λτ = 6, τ/d = 6000: Erlang's series")
def test_patience_closed_forms(rho, service, patience, data):
    """M/M/1+D and M/D/1+D exactly (π, E[W_q], E[W_qs]): no stability condition with a
    finite patience, inf means at ρ ≥ 1 without one."""
    lam = at_load(rho, 1 / service)
    unstable = ~(lam * service < 1) & (patience == math.inf)
    with np.errstate(invalid="ignore"):        # λτ: M/D/1+D solves a grid of ≥ λτ points
        arrivals = np.where(lam > 0, lam * patience, 0.0)
    beyond = np.isfinite(arrivals) & (arrivals > token_limit.EXACT_LAM_TAU)
    if beyond.any():                            # documented: beyond the exact solver
        raises_naming("patience", token_limit.md1_deterministic_patience, lam[beyond], service,
                      patience)
    # 12 < λτ: one Volterra solve a point: the first two only (cost)
    volterra = np.isfinite(arrivals) & (arrivals > 12) & ~beyond
    costly = volterra & ((arrivals > 256) | (np.cumsum(volterra) > 2))
    for f in (token_limit.mm1_deterministic_patience, token_limit.md1_deterministic_patience):
        keep = ~(beyond | costly) if f is token_limit.md1_deterministic_patience else \
            np.ones(POINTS, dtype=bool)
        loss, w_all, w_served = (np.asarray(x) for x in f(lam[keep], service, patience))
        assert_no_nan((loss, w_all, w_served))
        assert np.all((loss >= 0) & (loss <= 1))
        assert_inf_iff(w_all, unstable[keep], f"{f.__name__} E[W_q]")
        if patience < math.inf:
            assert np.all((w_all >= -1e-9 * patience) & (w_all <= patience * (1 + 1e-9)))
        tally(f, int(keep.sum()))
    if data is None:
        return
    params = dict(lam=lam, mean_service=service, patience=patience)
    p, bad = corrupt(data, params, {"lam": LAM_PER_S, "mean_service": A_S_PER_TOKEN,
                                    "patience": PATIENCE_S})
    rejects((token_limit.mm1_deterministic_patience,), p, bad)
    p["service"] = p.pop("mean_service")
    rejects((token_limit.md1_deterministic_patience,), p,
            "service" if bad == "mean_service" else bad)


def check_impatience(r, lam, tau, unstable_without_patience):
    """π in [0, 1], 0 ≤ E[W_q] ≤ τ (inf only for τ = inf at ρ ≥ 1), no NaN."""
    assert_no_nan(r)
    loss, w_all = np.asarray(r.loss_fraction), np.asarray(r.mean_wait_all_s)
    assert np.all((loss >= 0) & (loss <= 1))
    finite_tau = np.isfinite(tau)
    assert_inf_iff(w_all, ~finite_tau & unstable_without_patience, "mean_wait_all")
    assert np.all(w_all[finite_tau] <= np.broadcast_to(tau, w_all.shape)[finite_tau]
                  * (1 + 1e-9))


LIGHT_LAWS = token_law_specs(heavy=False, max_log_mean=6.0)
SOLVABLE_LAM_TAU = 1024     # the exact solver's grid has ≥ λτ points, O(n²) work a point


def arrivals_within(lam, patience):
    """(beyond, keep): points with λτ above ``EXACT_LAM_TAU`` (a documented ``ValueError``),
    and those solved here: λτ ≤ ``SOLVABLE_LAM_TAU``, no patience, or λ = inf (no grid).
    Points in between (seconds each) are left to the unit tests."""
    lam = np.asarray(lam, dtype=float)
    with np.errstate(invalid="ignore"):
        arrivals = np.where(lam > 0, lam * patience, 0.0)
    finite = np.isfinite(arrivals)
    beyond = finite & (arrivals > token_limit.EXACT_LAM_TAU)
    keep = (finite & (arrivals <= SOLVABLE_LAM_TAU)) | (patience == np.inf) | np.isinf(lam)
    return beyond, keep


# One exact solve per point (a Volterra equation on 1024-4096 grid points);
# the interpolation is vectorised.
@fuzz(96, POINTS)
@given(LIGHT_LAWS, valid(A_S_PER_TOKEN), valid(C_S, high=5.0),
       st.one_of(st.none(), st.integers(1, 2000)), loads(), valid(PATIENCE_S, high=1e4),
       st.data())
def test_impatience(law, a, c, n_max, rho, patience, data):
    """impatience (exact and interpolation), ServiceLaw, over loads beyond capacity too:
    with a finite patience every load has a steady state."""
    name, law = law
    if n_max is None and law_top(law) > SUMMABLE:
        n_max = 2000
    es = float(service_mean(a, c, law, n_max))
    lam = at_load(rho, 1 / es)
    unstable = lam >= 1 / es
    beyond, keep = arrivals_within(lam, patience)
    for method in ("exact", "interpolation"):
        if beyond.any():               # documented: λτ beyond the exact solver's grid
            raises_naming("patience", token_limit.impatience, lam[beyond], a, c, law, n_max,
                          patience, method)
        r = token_limit.impatience(lam[keep], a, c, law, n_max, patience, method)
        check_impatience(r, lam[keep], patience, unstable[keep])
        tally(token_limit.impatience, int(keep.sum()))
    law_s = token_limit.ServiceLaw.clipped(a, c, law, np.inf if n_max is None else n_max)
    assert close(law_s.mean, es, 1e-9) and close(law_s.probs.sum(), 1.0, 1e-12)
    i1, i2 = law_s.integrated_tails(np.array([0.0, es, 10 * es]))
    assert_no_nan((i1, i2))
    det = token_limit.ServiceLaw.deterministic(es)
    assert det.mean == es
    tally(token_limit.ServiceLaw, 2)
    params = dict(lam=lam, a=a, c=c, n_max=n_max, patience=patience)
    p, bad = corrupt(data, params, TOKEN_DOMAINS)
    for method in ("exact", "interpolation"):
        rejects((token_limit.impatience,), p, bad, dist=law, method=method)
    raises_naming("method", token_limit.impatience, lam, a, c, law, n_max, patience, "other")


# limit_point and limit_curves solve the exact impatience model at each limit,
# optimal_limit up to every integer limit: costly cases, fewer of them.
@fuzz(60)
@given(LIGHT_LAWS, valid(A_S_PER_TOKEN), valid(C_S, high=5.0), rho(), st.integers(1, 2000),
       valid(PATIENCE_S, high=1e3), valid(THETA), valid(LOSS_COST),
       st.sampled_from(["exact", "interpolation"]), st.data())
def test_token_limit_answers(law, a, c, rho, n_max, patience, theta, loss_cost, method, data):
    """limit_point, limit_curves, optimal_limit (V1 and V2)."""
    name, law = law
    es = float(service_mean(a, c, law, n_max))
    lam = float(at_load(rho, 1 / es))
    unstable = not lam < 1 / es
    beyond, keep = arrivals_within(lam, patience)
    if beyond:                          # documented: λτ beyond the exact solver's grid
        raises_naming("patience", token_limit.limit_point, lam, a, c, law, n_max, patience,
                      method)
    if keep:
        pt = token_limit.limit_point(lam, a, c, law, n_max, patience, method)
        assert_no_nan(pt)
        assert_inf_iff(pt.mean_wait_s, unstable, "limit_point.mean_wait_s")
        assert close(pt.capacity_per_s, 1 / es, 1e-12) and 0 <= pt.loss_fraction <= 1
        tally(token_limit.limit_point)
    grid = np.unique([1, n_max, max(1, n_max // 2)])
    if keep:
        curves = token_limit.limit_curves(lam, a, c, law, grid, patience)
        assert_no_nan(curves)
        assert_inf_iff(curves.mean_wait_s, lam >= 1 / service_mean(a, c, law, grid),
                       "limit_curves.mean_wait_s")
        tally(token_limit.limit_curves)
    lim = token_limit.limit_grid(1, n_max, data.draw(st.integers(1, 40)))
    assert np.all(np.diff(lim) > 0) and lim[0] == 1 and lim[-1] == n_max
    tally(token_limit.limit_grid)
    summary = token_limit.token_law_summary(law)
    assert_no_nan(summary)
    assert np.all(np.diff(summary.cdf) >= 0) and abs(summary.probs.sum() - 1) < 0.01
    e = summary.edges
    assert list(summary.bin_widths_tokens) == [hi - lo for lo, hi in zip(e[:-1], e[1:])]
    assert list(summary.bin_centers_tokens) == [(hi + lo) / 2 for lo, hi in zip(e[:-1], e[1:])]
    tally(token_limit.token_law_summary)
    cand = np.unique([1, n_max, 2 * n_max])
    v1 = token_limit.optimal_limit(lam, a, c, law, theta, candidates=None if rho < 1 else cand)
    assert_no_nan(v1, allowed=("objectives",))
    assert v1.n_max in v1.candidates and v1.objective == np.max(v1.objectives)
    if keep:
        v2 = token_limit.optimal_limit(lam, a, c, law, theta, loss_cost, patience, method=method,
                                       candidates=cand, printed_sign=data.draw(st.booleans()))
        assert_no_nan(v2)
        assert 0 <= v2.loss_fraction <= 1
    tally(token_limit.optimal_limit)
    params = dict(lam=lam, a=a, c=c, n_max=n_max, patience=patience, theta=theta,
                  loss_cost=loss_cost)
    p, bad = corrupt(data, params, TOKEN_DOMAINS)
    rejects((token_limit.limit_point,), p, bad, dist=law, method=method)
    if bad != "n_max":
        rejects((token_limit.optimal_limit,), p, bad, dist=law, candidates=cand)


# The exact model behind §V-B's numbers: the costliest case (a few of them).
@fuzz(4)
@given(valid(A_S_PER_TOKEN, low=0.01, high=0.05), valid(C_S, high=2.0),
       st.sampled_from(["interpolation", "interpolation", "exact"]),
       st.sampled_from([0.0, -1.0, math.nan]))
def test_token_paper_comparison(a, c, method, bad):
    """paper_comparison: no NaN (E[W] and its change are inf where §V-B's load is unstable
    for these a, c), each row with its note."""
    rows = token_limit.paper_comparison(a, c, method=method)
    assert_no_nan(rows)
    assert all(r.note for r in rows)
    tally(token_limit.paper_comparison)
    for new, old, want in ((2.0, 1.0, 100.0), (math.inf, 1.0, math.inf), (1.0, math.inf, -100.0),
                           (0.0, 0.0, 0.0), (a, c or 1.0, 100.0 * (a / (c or 1.0) - 1.0))):
        assert close(token_limit.percent_change(new, old), want, 1e-12)
    tally(token_limit.percent_change, 5)
    raises_naming("a", token_limit.paper_comparison, bad, c)


# One simulation loop of n_jobs requests a case, POINTS loads an example.
@fuzz(1000, POINTS)
@given(token_law_specs(), valid(A_S_PER_TOKEN), valid(C_S), valid(N_MAX, high=10 ** 6),
       st.one_of(st.none(), valid(PATIENCE_S)), loads(), st.integers(1, 300),
       st.one_of(st.none(), st.integers(0, 400)), st.integers(0, 2 ** 32), st.data())
def test_simulate_token_queue(law, a, c, n_max, patience, rho, n_jobs, warmup, seed, data):
    """simulate_token_queue at stable and unstable loads, with and without patience."""
    name, law = law
    es = float(service_mean(a, c, law, min(n_max, 2000)))
    for lam in at_load(rho, 1 / es):
        args = dict(lam=lam, a=a, c=c, dist=law, n_max=n_max, patience=patience, n_jobs=n_jobs,
                    seed=seed, warmup_jobs=warmup)
        if not 0 < lam < np.inf:
            raises_naming("lam", token_limit.simulate_token_queue, **args)
            continue
        r = token_limit.simulate_token_queue(**args)
        assert_no_nan(r)
        assert 0 <= r.loss_fraction <= 1 and r.mean_wait_all_s >= 0 and r.mean_service_s > 0
        if patience is not None:
            assert r.mean_wait_all_s <= patience * (1 + 1e-9)
        rec = tl_sim.simulate_token_queue_records(**args)     # the same run, as records
        assert tl_sim.token_queue_summary(rec) == r
        assert set(np.unique(rec.served)) <= {0.0, 1.0} and np.all(rec.wait_s <= rec.patience_s)
        assert close(rec.latency_s, rec.wait_s + rec.served * rec.service_s, 0)
        assert close(rec.arrival_s[-1], rec.gap_s.sum(), 1e-9)
        for f in (token_limit.simulate_token_queue, tl_sim.simulate_token_queue_records,
                  tl_sim.token_queue_summary):
            tally(f)
    lam = float(at_load(rho[0], 1 / es))
    if 0 < lam < np.inf:            # ``arrivals``: a renewal process at λ, then its replay
        process = Renewal(lam, data.draw(valid(ARRIVAL_SCV, high=100.0), label="scv"))
        args = dict(lam=None, a=a, c=c, dist=law, n_max=n_max, patience=patience,
                    n_jobs=n_jobs, seed=seed, warmup_jobs=warmup)
        times = process.sample(n_jobs, np.random.default_rng(seed))
        for arrivals in (process, times):
            r = token_limit.simulate_token_queue(**args, arrivals=arrivals)
            assert_no_nan(r)
            assert r.n_jobs == n_jobs - min(n_jobs // 10 if warmup is None else warmup,
                                            n_jobs - 1)
        raises_naming("arrivals", token_limit.simulate_token_queue, **args,
                      arrivals=np.append(times, -1.0))
    params = dict(lam=max(float(at_load(rho[0], 1 / es)), 1e-6) if np.isfinite(rho[0])
                  else 1.0, a=a, c=c, n_max=n_max, patience=patience or 10.0, n_jobs=n_jobs,
                  warmup_jobs=warmup or 0)
    p, bad = corrupt(data, params, {**TOKEN_DOMAINS, "n_jobs": N_JOBS, "warmup_jobs": WARMUP})
    rejects((token_limit.simulate_token_queue,), p, bad, dist=law)


@FUZZ_VECTOR
@given(LIGHT_LAWS, valid(A_S_PER_TOKEN), valid(C_S, high=5.0), rho(), st.integers(1, 2000),
       valid(ARRIVAL_SCV, high=50.0), valid(PATIENCE_S, high=1e3), st.floats(0.1, 2.0),
       st.floats(0.0, 2e3), st.floats(0.0, 2e5))
def test_token_limit_sweeps(law, a, c, rho, n_max, scv, patience, max_load, tpot_ms, ttft_ms):
    """approx_mean_wait (Kingman: P-K at ca² = 1, (ca² − 1)/2 · ρ/(1 − ρ) · E[S] above it),
    the simulated sweep's plan and summaries, and a profile from a vLLM benchmark."""
    name, law = law
    limits = np.unique([1, n_max, max(1, n_max // 3)]).astype(float)
    es = np.asarray(service_mean(a, c, law, limits), dtype=float)
    lam = float(at_load(rho, 1 / es[-1]))
    loads = lam * es
    approx = token_limit.approx_mean_wait(lam, a, c, law, limits, scv)
    exact = np.asarray(token_limit.mean_wait(lam, a, c, law, limits), dtype=float)
    assert_no_nan(approx)
    assert_inf_iff(approx, ~(loads < 1), "approx_mean_wait")
    stable = loads < 1
    gap = (scv - 1) / 2 * loads[stable] / (1 - loads[stable]) * es[stable]
    assert close(approx[stable] - exact[stable], gap, 1e-6) or \
        np.allclose(approx[stable] - exact[stable], gap, rtol=1e-6, atol=1e-9 * exact[stable])
    assert close(token_limit.approx_mean_wait(lam, a, c, law, limits, 1.0)[stable],
                 exact[stable], 1e-9)
    tally(token_limit.approx_mean_wait, limits.size)
    plan = token_limit.sim_plan(lam, a, c, law, limits, patience, max_load)
    plain = [n for n, r in zip(limits, loads) if r < max_load]
    assert [p[0] for p in plan] == plain + list(limits)
    assert [p[1] for p in plan] == [None] * len(plain) + [patience] * limits.size
    assert [p[2] for p in plan] == [list(limits).index(n) for n in plain] + \
        list(range(limits.size))
    runs = [SimpleNamespace(mean_wait_all_s=i, ci95_wait_all_s=i + 1, mean_wait_served_s=i + 2,
                            ci95_wait_served_s=i + 3, loss_fraction=i / 100, ci95_loss=i / 200)
            for i in range(len(plan))]
    sweep = token_limit.limit_sim_sweep(plan, runs)
    assert list(sweep.plain_n) == plain and list(sweep.n) == list(limits)
    assert list(sweep.plain_wait_s) == list(range(len(plain)))
    assert list(sweep.served_wait_s) == [i + 2 for i in range(len(plain), len(plan))]
    one = token_limit.sim_plan(lam, a, c, law, limits[-1:], patience, max_load, stream=99)
    assert {p[2] for p in one} == {99} and len(one) == 1 + (loads[-1] < max_load)
    point = token_limit.traffic_point(approx[-1], one, runs[:len(one)])
    assert point.patient is runs[len(one) - 1]
    assert (point.plain is None) == (len(one) == 1)
    raises_naming("plan", token_limit.traffic_point, approx[-1], plan + plan, runs + runs)
    for f in (token_limit.sim_plan, token_limit.limit_sim_sweep, token_limit.traffic_point):
        tally(f)
    bench = SimpleNamespace(mean_tpot_ms=tpot_ms, mean_ttft_ms=ttft_ms)
    a_s, c_s = tpot_ms / 1000, ttft_ms / 1000
    if 1e-4 <= a_s <= 1.0 and 0.0 <= c_s <= 60.0:
        assert token_limit.profile_from_bench(bench) == (a_s, c_s)
        tally(token_limit.profile_from_bench)
    else:
        raises_naming("mean T", token_limit.profile_from_bench, bench)


# One exact impatience solve and two short simulated runs an example: a few dozen.
@fuzz(40)
@given(LIGHT_LAWS, valid(A_S_PER_TOKEN), valid(C_S, high=5.0), rho(), st.integers(1, 2000),
       valid(PATIENCE_S, high=1e3), valid(THETA), valid(LOSS_COST), st.data())
def test_token_limit_queue(law, a, c, rho, n_max, patience, theta, loss_cost, data):
    """TokenLimitQueue: each method answers as the module function of its name with the
    queue's λ, a, c, law and patience; bad parameters named by their field."""
    name, law = law
    es = float(service_mean(a, c, law, n_max))
    lam = float(at_load(rho, 1 / es))
    q = token_limit.TokenLimitQueue(lam, a, c, law, patience)
    args = (lam, a, c, law)
    grid = np.unique([1, n_max, max(1, n_max // 2)])
    assert close(q.utilization(grid), token_limit.utilization(*args, grid), 0)
    assert close(q.mean_wait(grid), token_limit.mean_wait(*args, grid), 0)
    assert close(q.largest_stable_limit(), token_limit.largest_stable_limit(*args), 0)
    assert close(q.approx_mean_wait(grid, 2.0), token_limit.approx_mean_wait(*args, grid, 2.0), 0)
    assert q.sim_plan(grid) == token_limit.sim_plan(*args, grid, patience)
    _, keep = arrivals_within(lam, patience)
    if keep and np.isfinite(lam):
        assert q.limit_point(n_max) == token_limit.limit_point(*args, n_max, patience, "exact")
        got, want = q.curves(grid), token_limit.limit_curves(*args, grid, patience)
        assert close(got.mean_wait_s, want.mean_wait_s, 0)
        assert close(got.exact.loss_fraction, want.exact.loss_fraction, 0)
        imp = q.impatience(grid, "interpolation")
        assert close(imp.loss_fraction, token_limit.impatience(*args, grid, patience,
                                                               "interpolation").loss_fraction, 0)
        v2 = q.optimal_limit(theta, loss_cost, candidates=grid)
        assert v2.n_max == token_limit.optimal_limit(*args, theta, loss_cost, patience,
                                                     candidates=grid).n_max
    v1 = q.optimal_limit(theta, candidates=grid)
    assert v1.n_max == token_limit.optimal_limit(*args, theta, candidates=grid).n_max
    if 0 < lam < np.inf:
        run = q.simulate(n_max, 2_000, 7)
        assert run == token_limit.simulate_token_queue(*args, n_max, patience, 2_000, 7)
        free = q.simulate(n_max, 2_000, 7, patience_s=None)
        assert free == token_limit.simulate_token_queue(*args, n_max, None, 2_000, 7)
    raises_naming("patience_s", token_limit.TokenLimitQueue(lam, a, c, law).limit_point, n_max)
    bad = data.draw(st.sampled_from(["lam_per_s", "a_s_per_token", "c_s", "patience_s"]))
    fields = dict(lam_per_s=lam, a_s_per_token=a, c_s=c, tokens=law, patience_s=patience)
    raises_naming(bad, token_limit.TokenLimitQueue, **{**fields, bad: -1.0})
    tally(token_limit.TokenLimitQueue)


# ============================================================ every public function has a case

# Public name -> the test that fuzzes it.  A result or data class (no arguments of its
# own to fuzz) names the test that builds and checks it and the function it comes from.
FUZZED = {
    tl_formulas: {
        "clipped_token_moments": test_token_limit_moments,
        "mean_utility": test_token_limit_moments, "mean_wait": test_token_limit_moments,
        "utilization": test_token_limit_moments, "largest_stable_limit": test_token_limit_moments,
        "objective_v1": test_token_limit_moments, "objective_v2": test_token_limit_moments,
        "service_moments": test_token_limit_moments,
        "mean_requested_tokens": test_token_limit_moments,
        "rate_at_load": test_token_limit_moments},
    tl_patience: {
        "mm1_deterministic_patience": test_patience_closed_forms,
        "md1_deterministic_patience": test_patience_closed_forms,
        "impatience": test_impatience, "ServiceLaw": test_impatience,
        "Impatience": (test_impatience, "impatience")},
    tl_curves: {
        "limit_curves": test_token_limit_answers, "limit_grid": test_token_limit_answers,
        "token_law_summary": test_token_limit_answers,
        "approx_mean_wait": test_token_limit_sweeps,
        "LimitCurves": (test_token_limit_answers, "limit_curves"),
        "TokenLawSummary": (test_token_limit_answers, "token_law_summary")},
    tl_answers: {
        "limit_point": test_token_limit_answers, "optimal_limit": test_token_limit_answers,
        "LimitPoint": (test_token_limit_answers, "limit_point"),
        "OptimalLimit": (test_token_limit_answers, "optimal_limit"),
        "paper_comparison": test_token_paper_comparison,
        "percent_change": test_token_paper_comparison,
        "PaperValue": (test_token_paper_comparison, "paper_comparison"),
        "profile_from_bench": test_token_limit_sweeps},
    tl_queue: {"TokenLimitQueue": test_token_limit_queue},
    tl_sweeps: {
        "sim_plan": test_token_limit_sweeps, "limit_sim_sweep": test_token_limit_sweeps,
        "traffic_point": test_token_limit_sweeps,
        "LimitSimSweep": (test_token_limit_sweeps, "limit_sim_sweep"),
        "TrafficPoint": (test_token_limit_sweeps, "traffic_point")},
    tl_sim: {
        "simulate_token_queue": test_simulate_token_queue,
        "TokenQueueSimResult": (test_simulate_token_queue, "simulate_token_queue"),
        "simulate_token_queue_records": test_simulate_token_queue,
        "token_queue_summary": test_simulate_token_queue,
        "TokenQueueRecords": (test_simulate_token_queue, "simulate_token_queue_records")},
}
