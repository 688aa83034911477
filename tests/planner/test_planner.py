"""The capacity planner (engine.planner) against independent computations: an exhaustive
serial search written with the models' own functions, a simulation of the whole fleet
(every request dispatched at random to one of the replicas), the exact means of the
batching chains, and the cost and energy formulas worked by hand."""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
import math

import numpy as np
import pandas as pd
import pytest

from engine.batching import capacity, mean_latency, simulate_batching
from engine.llm_batching import dynamic_solution
from engine.planner import (PlanSpec, capacity_plan, configuration_seed, default_spec,
                            hardware_presets, plan_toml, price_configuration, ranked_csv,
                            read_plan)
from engine.planner.price import screen_jobs, token_law
from engine.presets import token_law_presets

GPU = hardware_presets("gpu")
LLM = hardware_presets("llm")
T4, V100 = GPU["dle_tf_t4_resnet50_amp"], GPU["dle_tf_v100_16gb_resnet50_amp"]


def small_spec(**changes) -> PlanSpec:
    """Two GPUs, two b_max, 1-6 replicas: 24 configurations."""
    base = dict(workload="gpu", rate_per_s=1500.0, percentile=99.0, target_ms=12.0,
                hardware=(T4, V100), b_max=(4, 16), replicas=tuple(range(1, 7)), confirm=1,
                seed=3)
    return PlanSpec(**{**base, **changes})


@pytest.fixture(scope="module")
def small_plan():
    return capacity_plan(small_spec(), executor="serial")


def exhaustive(spec: PlanSpec) -> pd.DataFrame:
    """Every configuration by direct calls to the models: stable when λ/R < b/τ[b]
    (Inoue eq 6), the percentile from the simulator with the configuration's own stream,
    cost R × price; sorted as the planner ranks (cost, then percentile)."""
    rows = []
    for hw in spec.hardware:
        for b in spec.b_max:
            if b > hw.max_batch:
                continue
            for r in spec.replicas:
                lam_ms = spec.rate_per_s / r / 1000.0
                if lam_ms >= b / (hw.alpha_ms * b + hw.tau0_ms):
                    continue
                sim = simulate_batching(lam_ms, hw.alpha_ms, hw.tau0_ms, b_max=b,
                                        n_jobs=screen_jobs(spec.percentile),
                                        seed=configuration_seed(spec, hw.name, b, 0.0, 0, r))
                p = sim.p99_ms                                   # the simulator's own p99
                assert spec.percentile == 99.0
                if p <= spec.target_ms:
                    rows.append(dict(hardware=hw.name, b_max=b, replicas=r,
                                     cost=r * hw.price_usd_per_hour, p=p))
    return pd.DataFrame(rows).sort_values(["cost", "p"], kind="stable").reset_index(drop=True)


def test_best_matches_exhaustive_serial_search(small_plan):
    """The planner's ranking is the exhaustive search's: same configurations meeting the
    SLA, same order, same cheapest."""
    ref = exhaustive(small_plan.spec)
    got = small_plan.ranked
    assert len(ref) > 3 and len(got) == len(ref)
    assert list(zip(got.hardware, got.b_max, got.replicas)) == list(
        zip(ref.hardware, ref.b_max, ref.replicas))
    np.testing.assert_allclose(got.cost_usd_per_hour, ref.cost, rtol=1e-12)
    np.testing.assert_allclose(got.latency_percentile_ms, ref.p, rtol=1e-12)
    best = small_plan.best
    assert (best["hardware"], best["replicas"]) == (ref.hardware[0], ref.replicas[0])


def fleet_percentile(spec: PlanSpec, row, n_jobs=400_000, seed=11) -> float:
    """The whole fleet simulated: Poisson requests at the total rate, each sent to one of
    the R replicas at random, every replica simulated on its own arrivals, the
    percentile over all requests together (no use of the planner's thinning)."""
    hw = spec.hardware_named(row["hardware"])
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(1000.0 / spec.rate_per_s, n_jobs))       # ms
    to = rng.integers(0, int(row["replicas"]), n_jobs)
    runs = [simulate_batching(None, hw.alpha_ms, hw.tau0_ms, b_max=int(row["b_max"]),
                              arrivals=t[to == i], seed=seed, return_latencies=True)
            for i in range(int(row["replicas"]))]
    # the simulator's latencies, ms (``latencies_ms``; ``latencies`` before its rename)
    lat = [r.latencies_ms if hasattr(r, "latencies_ms") else r.latencies for r in runs]
    return float(np.percentile(np.concatenate(lat), spec.percentile))


def test_answer_confirmed_by_fleet_simulation(small_plan):
    """The best configuration meets the SLA when the whole fleet is simulated, within the
    confirmation's own interval of its percentile, and one replica fewer (same hardware
    and b_max) does not."""
    spec, best = small_plan.spec, small_plan.best
    assert best is not None and best["confirmed"] is True
    p = fleet_percentile(spec, best)
    assert p <= spec.target_ms
    assert abs(p - best["confirmed_percentile_ms"]) <= 4 * best["confirmed_ci_ms"] + 0.02 * p
    if best["replicas"] > 1:
        fewer = dict(best, replicas=best["replicas"] - 1)
        hw = spec.hardware_named(best["hardware"])
        lam_ms = spec.rate_per_s / fewer["replicas"] / 1000.0
        unstable = lam_ms >= float(capacity(hw.alpha_ms, hw.tau0_ms, int(best["b_max"])))
        assert unstable or fleet_percentile(spec, fewer) > spec.target_ms


def test_exact_means_are_the_models(small_plan):
    """Poisson arrivals, greedy batcher: the mean is Inoue's exact E[W] at λ/R (ms), and
    the screening simulation agrees with it within its confidence interval."""
    spec = small_plan.spec
    rows = small_plan.table[small_plan.table.stable]
    assert (rows.method == "exact").all()
    for row in rows.itertuples():
        hw = spec.hardware_named(row.hardware)
        lam = spec.rate_per_s / row.replicas / 1000.0
        assert row.mean_latency_ms == pytest.approx(
            float(mean_latency(lam, hw.alpha_ms, hw.tau0_ms, row.b_max)), rel=1e-12)


def test_screening_simulation_agrees_with_exact_mean():
    """The per-replica simulation (thinned stream, ms units) reproduces the exact mean:
    z within 4 at a moderate and a heavy load."""
    from engine.planner import simulate_configuration
    spec = small_spec()
    for r in (2, 5):
        sim = simulate_configuration(spec, T4.name, 16, 0.0, 0, r, n_jobs=200_000)
        exact = price_configuration(spec, T4.name, 16, replicas=r).mean_latency_ms
        assert abs(sim["mean_latency_ms"] - exact) <= 4 * sim["ci95_ms"] / 1.96


def test_cost_energy_and_instability_by_hand():
    """Cost R × price; $ per million = cost / (rate · 3600) · 1e6; energy per request
    (P_busy u + P_idle (1 − u)) / λ_R with u the exact utilization λ_R E[τ[B]]/E[B];
    unstable exactly when λ/R ≥ b/τ[b]."""
    from engine.batching import stationary
    hw = T4.__class__(**{**T4.__dict__, "idle_power_w": 20.0})
    spec = small_spec(hardware=(hw,))
    got = price_configuration(spec, hw.name, 16, replicas=3)
    lam_s = 1500.0 / 3
    st = stationary(lam_s / 1000.0, hw.alpha_ms, hw.tau0_ms, 16)
    u = float(st.utilization)
    assert got.cost_usd_per_hour == pytest.approx(3 * 0.526)
    assert got.cost_usd_per_million == pytest.approx(3 * 0.526 / (1500.0 * 3600) * 1e6)
    assert got.energy_j_per_request == pytest.approx((70.0 * u + 20.0 * (1 - u)) / lam_s)
    # u = λ E[τ[B]] / E[B] (time busy per request), from the mean batch size
    tau_mean = hw.alpha_ms * float(st.mean_batch_size) + hw.tau0_ms
    assert u == pytest.approx(lam_s / 1000.0 * tau_mean / float(st.mean_batch_size), rel=1e-9)
    cap_per_s = 1000.0 * 16 / (hw.alpha_ms * 16 + hw.tau0_ms)
    r_edge = math.ceil(1500.0 / cap_per_s)          # fewest replicas that carry the load
    assert not price_configuration(spec, hw.name, 16, replicas=r_edge - 1).stable
    assert price_configuration(spec, hw.name, 16, replicas=r_edge).stable


def test_unreachable_load_and_target_say_why():
    """More load than every configuration carries: no answer, each candidate rejected as
    unstable with its most; a target below a lone request's time: rejected on latency;
    an energy cap below the least energy: rejected on energy."""
    over = capacity_plan(small_spec(rate_per_s=1e6, confirm=0), executor="serial")
    assert over.best is None and over.ranked.empty and "No configuration" in over.answer
    assert set(over.rejected.reason) == {"unstable"}
    tight = capacity_plan(small_spec(target_ms=1.0), executor="serial")
    assert set(tight.rejected.reason) == {"latency"} and tight.best is None
    energy = capacity_plan(small_spec(energy_cap_j=1e-4), executor="serial")
    assert set(energy.rejected.reason) == {"energy"}


def test_llm_plan_exact_means_and_truncation():
    """LLM workload: the mean is the exact dynamic-batching chain with the reply law cut
    at the token limit; the share cut is P(n > limit) of the trace's law; a cap on it
    rejects the small limits."""
    spec = default_spec("llm").with_(b_max=(16,), token_limit=(0, 256), replicas=(2, 3),
                                     confirm=1, hardware=(LLM["splitwise_h100_llama2_70b_tp8"],))
    plan = capacity_plan(spec, executor="serial")
    law = token_law_presets()[spec.token_law].law()
    for row in plan.table.itertuples():
        cut_law, cut = token_law(spec.token_law, row.token_limit)
        assert cut == (float(law.sf(row.token_limit)) if row.token_limit else 0.0)
        sol = dynamic_solution(spec.rate_per_s / row.replicas, cut_law, spec.hardware[0].k_s, 16)
        assert row.mean_latency_ms == pytest.approx(1000.0 * sol.mean_sojourn_s, rel=1e-12)
    capped = capacity_plan(spec.with_(truncation_cap=0.01, target_ms=1e7), executor="serial")
    assert (capped.ranked.token_limit == 0).all() and len(capped.ranked)


def test_bursty_traffic_needs_at_least_as_much():
    """The MMPP-2 fitted to the Azure code trace (SCV 173): simulated means, and the
    cheapest plan costs at least the Poisson one."""
    spec = small_spec(confirm=1)
    poisson = capacity_plan(spec, executor="serial")
    bursty = capacity_plan(spec.with_(arrivals_kind="mmpp2", arrivals_trace="azure_2023_code"),
                           executor="serial")
    assert (bursty.table[bursty.table.stable].method == "simulated").all()
    assert "MMPP-2" in bursty.answer
    cheapest = lambda p: math.inf if p.best is None else p.best["cost_usd_per_hour"]  # noqa: E731
    assert cheapest(bursty) >= cheapest(poisson)


def test_same_tables_in_process_and_on_local_processes():
    """The plan (a partial of the pricing function over a list of points) gives identical
    tables in this process and on a two-process pool."""
    spec = small_spec(replicas=(2, 3, 4), queue_delay_ms=(0.0, 2.0), confirm=1)
    serial = capacity_plan(spec, executor="serial")
    with ProcessPoolExecutor(2) as pool:
        pooled = capacity_plan(spec, executor=pool, chunksize=3)
    pd.testing.assert_frame_equal(serial.table, pooled.table)
    pd.testing.assert_frame_equal(serial.ranked, pooled.ranked)
    assert serial.answer == pooled.answer


def test_plan_file_round_trip_and_csv(small_plan, tmp_path):
    """The TOML file reads back to the same plan; the CSV carries units in its headers and
    one row per ranked configuration."""
    assert read_plan(plan_toml(small_plan.spec)) == small_plan.spec
    text = ranked_csv(small_plan)
    assert text.startswith("# Cheapest")
    table = pd.read_csv(__import__("io").StringIO(text), comment="#")
    assert len(table) == len(small_plan.ranked)
    for col in ("cost_usd_per_hour", "cost_usd_per_million_requests",
                "screened_percentile_latency_ms", "energy_J_per_request"):
        assert col in table.columns


def test_command_line_runs_a_plan_file(tmp_path, capsys):
    """``python -m engine.planner PLAN.toml --out results.csv`` prints the answer and
    writes the ranked CSV; a bad file is an error message and exit status 2."""
    from engine.planner.__main__ import main
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_toml(small_spec(replicas=(2, 3, 4))), encoding="utf-8")
    out = tmp_path / "results.csv"
    assert main([str(plan), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("Cheapest") and out.read_text().startswith("# Cheapest")
    plan.write_text("workload = 'gpu'\nrate_per_s = -1\n[[hardware]]\nprofile = "
                    "'dle_tf_t4_resnet50_amp'\n", encoding="utf-8")
    assert main([str(plan)]) == 2
    assert "rate_per_s" in capsys.readouterr().err


def test_answers_at_the_edges(monkeypatch):
    """No b_max within any measured batch: an empty plan that says so; confirm = 0: the
    cheapest screened configuration, the answer saying it was not confirmed; every
    confirmation missing the target: no best, and the answer says what came closest."""
    empty = capacity_plan(small_spec(b_max=(512,)), executor="serial")
    assert empty.table.empty and empty.best is None and "No configuration" in empty.answer
    assert set(empty.rejected.reason) == {"not searched"}
    unconfirmed = capacity_plan(small_spec(confirm=0), executor="serial")
    assert unconfirmed.best is not None and "not confirmed" in unconfirmed.answer
    assert unconfirmed.best["hardware"] == unconfirmed.ranked.hardware[0]
    spec = small_spec(confirm=2)
    monkeypatch.setattr(type(spec.family), "confirm", lambda self, s, row, a: {
        "latency_percentile_ms": (s.target_ms * 1.1, 0.1)})
    missed = capacity_plan(spec, executor="serial")
    assert missed.best is None and len(missed.ranked) > 0
    assert (missed.ranked.confirmed.iloc[:6] == False).all()  # noqa: E712 (3 x confirm tried)
    assert missed.ranked.confirmed.iloc[6:].isna().all()
    assert "none of the 6 cheapest" in missed.answer
    # each candidate at its cheapest is never a configuration the longer runs refuted
    assert not missed.per_hardware["confirmed"].eq(False).any()
    assert len(missed.per_hardware) == len(spec.hardware)


def test_spreadsheet_safe_csv():
    """A hardware name a spreadsheet would run as a formula is written as text."""
    from engine.planner import spreadsheet_safe
    evil = T4.__class__(**{**T4.__dict__, "name": "=HYPERLINK(\"x\")"})
    plan = capacity_plan(small_spec(hardware=(evil,), confirm=1), executor="serial")
    assert "\n1,'=HYPERLINK" in ranked_csv(plan).replace('"', "")
    assert spreadsheet_safe("-1") == "'-1" and spreadsheet_safe("T4") == "T4"


def test_mmpp2_fitted_to_a_trace_file(tmp_path):
    """arrivals "mmpp2" with a file: the MMPP-2 fitted to it (engine.arrivals.fit_mmpp2),
    time-scaled to the plan's rate; "replay" of the same file: the trace itself."""
    from engine.arrivals import fit_mmpp2
    from engine.planner import arrival_process
    rng = np.random.default_rng(5)
    t = np.sort(np.concatenate([rng.uniform(0, 10, 300), rng.uniform(50, 52, 300)]))
    (tmp_path / "trace.csv").write_text("timestamp\n" + "\n".join(f"{x:.6f}" for x in t))
    spec = small_spec(arrivals_kind="mmpp2", arrivals_trace="trace.csv")
    fitted = arrival_process(spec, base_dir=tmp_path)
    ref = fit_mmpp2(t)
    assert fitted.rate == pytest.approx(1500.0) and fitted.scv == pytest.approx(ref.scv)
    assert "trace.csv" in fitted.label
    replay = arrival_process(spec.with_(arrivals_kind="replay"), base_dir=tmp_path)
    assert replay.rate == pytest.approx(1500.0)
    with pytest.raises(ValueError, match="arrivals.trace"):
        arrival_process(spec, base_dir=tmp_path / "elsewhere")


def test_per_hardware_is_each_candidates_cheapest(small_plan):
    """One row per candidate: the first ranked row of that hardware (cheapest meeting the
    SLA in the screening run), sorted by cost; a rejected one carries its reason."""
    per = small_plan.per_hardware
    assert sorted(per.hardware) == sorted(h.name for h in small_plan.spec.hardware)
    for row in per.itertuples():
        mine = small_plan.ranked[small_plan.ranked.hardware == row.hardware]
        if len(mine):
            assert (row.b_max, row.replicas) == (mine.b_max.iloc[0], mine.replicas.iloc[0])
        else:
            assert row.reason in ("unstable", "latency", "energy", "truncation")
    costs = per.cost_usd_per_hour.dropna().to_numpy()
    assert np.all(np.diff(costs) >= 0)
    # each candidate's cost against the cheapest: the first row is 1, a rejected one NaN
    ratio = per.cost_vs_cheapest.to_numpy()
    assert ratio[0] == 1.0
    assert np.allclose(ratio[: len(costs)], costs / costs[0], rtol=1e-15, atol=0)
    assert np.isnan(ratio[len(costs):]).all()
