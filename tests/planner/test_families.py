"""The planner's workload families (engine.planner.families): the two batch families give
the tables they gave before they became plug-ins (recorded from the code before, in
tests/data/planner_before_families); the serving families' answers hold in independent
whole-fleet simulations and one server fewer does not; capacities never exceed the token
budget's bound; bad questions get reasons, not empty tables.  ``FUZZED`` covers the new
modules (tests/test_fuzz_contract.py)."""
from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.fuzzing import *  # noqa: F401,F403 (settings, checks)
from engine.llm_serving import StepCost, simulate_disaggregated, simulate_fleet
from engine.planner import (FAMILIES, PlanSpec, ServingHardware, capacity_plan, default_spec,
                            family, hardware_presets, plan_toml, read_plan)
from engine.planner import __main__ as planner_cli, checks, hardware as planner_hardware
from engine.planner import compare, plan as planner_plan, spec as planner_spec
from engine.planner.families import base, batch, gpu_batching, llm_batch
from engine.planner.families import llm_disaggregated, llm_serving, workload
from engine.planner import families as families_pkg
from engine.presets import token_law_presets

BEFORE = Path(__file__).resolve().parents[1] / "data" / "planner_before_families"
GPU, LLM = hardware_presets("gpu"), hardware_presets("llm")
SERVING = hardware_presets("llm_serving")
A100_TP4, H100_TP8 = SERVING["splitwise_a100_llama2_70b_tp4"], SERVING["splitwise_h100_llama2_70b_tp8"]
LAWS = dict(prompt_law="azure_2023_conv_prompt", token_law="azure_2023_conv_output")

# the plans recorded before the families (code of commit 9b79d01), as keyword arguments
BEFORE_SPECS = {
    "gpu_small": dict(workload="gpu", rate_per_s=1500.0, percentile=99.0, target_ms=12.0,
                      hardware=(GPU["dle_tf_t4_resnet50_amp"],
                                GPU["dle_tf_v100_16gb_resnet50_amp"]),
                      b_max=(4, 16), replicas=tuple(range(1, 7)), confirm=1, seed=3),
    "gpu_bursty_delay": dict(workload="gpu", rate_per_s=800.0, percentile=95.0, target_ms=20.0,
                             hardware=(GPU["dle_tf_t4_resnet50_amp"],), b_max=(8, 32),
                             queue_delay_ms=(0.0, 2.0), replicas=(1, 2, 3), confirm=1, seed=5,
                             arrivals_kind="bursty", arrivals_scv=3.0),
    "llm_small": dict(workload="llm", rate_per_s=0.6, percentile=99.0, target_ms=60_000.0,
                      hardware=(LLM["splitwise_a100_llama2_70b_tp8"],), b_max=(8, 32),
                      token_limit=(0, 512), truncation_cap=0.05,
                      token_law="azure_2023_conv_output", replicas=(1, 2, 3), confirm=1, seed=1),
}
TABLES = ("table", "ranked", "rejected", "per_hardware", "pareto_latency", "pareto_energy")


def _csv(frame) -> pd.DataFrame:
    """``frame`` as the recorded files hold it (written and read back as CSV)."""
    return pd.read_csv(io.StringIO(frame.to_csv(index=False, float_format="%.17g")))


@pytest.mark.parametrize("name", sorted(BEFORE_SPECS))
def test_batch_families_give_the_tables_they_gave_before(name):
    """The priced table, the ranking, the rejections and the answer of three plans (GPU
    Poisson, GPU bursty with a queue delay, LLM batch with token limits) equal those the
    planner gave before its families were plug-ins, number for number.  Two tables changed
    on purpose since: the fronts run only through configurations passing every test the
    chart does not show (the energy cap, the share of replies cut; for the energy front
    the latency target too), and each candidate's cheapest leaves out configurations the
    longer runs refuted; both are checked against the recorded tables with those rules."""
    spec = PlanSpec(**BEFORE_SPECS[name])
    plan = capacity_plan(spec, executor="serial")
    before = {t: pd.read_csv(BEFORE / f"{name}.{t}.csv") for t in TABLES}
    for table in ("table", "ranked", "rejected"):
        got = _csv(getattr(plan, table))
        assert list(got.columns) == list(before[table].columns), table
        pd.testing.assert_frame_equal(got, before[table], check_dtype=False, rtol=1e-12,
                                      obj=table)
    assert plan.answer + "\n" == (BEFORE / f"{name}.answer.txt").read_text(encoding="utf-8")
    t = before["table"]
    for front, col in (("pareto_latency", "latency_percentile_ms"),
                       ("pareto_energy", "energy_j_per_request")):
        ok = t["stable"].astype(bool) & (t["truncated_fraction"] <= spec.truncation_cap)
        ok &= ((t["latency_percentile_ms"] <= spec.target_ms) if col != "latency_percentile_ms"
               else (t["energy_j_per_request"] <= spec.energy_cap_j))
        rows = t[ok]
        want = rows.iloc[planner_plan.pareto_front(rows["cost_usd_per_hour"], rows[col])]
        pd.testing.assert_frame_equal(_csv(getattr(plan, front)), want.reset_index(drop=True),
                                      check_dtype=False, rtol=1e-12, obj=front)
    ranked = before["ranked"]
    kept = ranked[ranked["confirmed"].astype(str) != "False"].drop_duplicates("hardware")
    got = _csv(plan.per_hardware)
    assert set(kept["hardware"]) <= set(got["hardware"])
    for hw, row in kept.set_index("hardware").iterrows():
        mine = got.set_index("hardware").loc[hw]
        assert mine["cost_usd_per_hour"] == row["cost_usd_per_hour"], hw


# ============================================================ serving families

def colocated_spec(**changes) -> PlanSpec:
    """Two candidates (4×A100 and 8×H100 Llama-2-70B), 7 requests/s of the Azure
    conversation trace's prompts and replies, p95 TTFT ≤ 1.5 s and p95 TPOT ≤ 120 ms."""
    base_ = dict(workload="llm_serving", rate_per_s=7.0,
                 sla=(("ttft", 95.0, 1500.0), ("tpot", 95.0, 120.0)), hardware=(A100_TP4, H100_TP8),
                 max_num_seqs=(64, 256), max_num_batched_tokens=(2048,),
                 replicas=tuple(range(1, 9)), confirm=1, seed=2, **LAWS)
    return PlanSpec(**{**base_, **changes})


def disaggregated_spec(**changes) -> PlanSpec:
    """4×A100 Llama-2-70B on both sides, 3 requests/s, p95 TTFT ≤ 3 s, p95 TPOT ≤ 120 ms."""
    base_ = dict(workload="llm_disaggregated", rate_per_s=3.0,
                 sla=(("ttft", 95.0, 3000.0), ("tpot", 95.0, 120.0)), hardware=(A100_TP4,),
                 max_num_seqs=(128,), max_num_batched_tokens=(2048,),
                 prefill_instances=(1, 2, 3, 4), decode_instances=(1, 2, 3), confirm=1,
                 seed=2, **LAWS)
    return PlanSpec(**{**base_, **changes})


@pytest.fixture(scope="module")
def colocated():
    return capacity_plan(colocated_spec(), executor="serial")


@pytest.fixture(scope="module")
def disaggregated():
    return capacity_plan(disaggregated_spec(), executor="serial")


def _fleet_percentiles(spec, row, replicas, seed):
    """p95 TTFT and TPOT of a whole fleet of ``row``'s servers, simulated here with its
    own stream (not the planner's seeds), 60,000 requests."""
    hw = spec.hardware_named(row["hardware"])
    sched = llm_serving.FAMILY.scheduler_of(hw, row["max_num_seqs"],
                                             row["max_num_batched_tokens"])
    laws = token_law_presets()
    r = simulate_fleet(hw.step_cost, sched, replicas=replicas, dispatch=spec.dispatch,
                       input_tokens=laws[spec.prompt_law].law(),
                       output_tokens=laws[spec.token_law].law(), rate_per_s=spec.rate_per_s,
                       n_requests=60_000, seed=seed)
    return r.ttft_ms.percentile(95), r.tpot_ms.percentile(95), r


def test_colocated_answer_holds_and_one_replica_fewer_does_not(colocated):
    """The colocated answer keeps both percentiles within target in an independent
    whole-fleet simulation; with one replica fewer the same simulation misses (and the
    plan's own check says so)."""
    spec, best = colocated.spec, colocated.best
    assert best is not None and best["confirmed"] is True
    r = int(best["replicas"])
    assert r >= 2
    ttft, tpot, _ = _fleet_percentiles(spec, best, r, seed=11)
    assert ttft <= 1500.0 and tpot <= 120.0
    ttft, tpot, _ = _fleet_percentiles(spec, best, r - 1, seed=12)
    assert ttft > 1500.0 or tpot > 120.0
    assert len(colocated.fewer) == 1 and not bool(colocated.fewer["confirmed"].iloc[0])
    assert int(colocated.fewer["replicas"].iloc[0]) == r - 1
    assert "replicas of 8× H100" in colocated.answer and "confirmed by simulating" in colocated.answer


def test_capacity_never_above_the_token_budget_bound(colocated):
    """Each configuration's capacity is within the token budget's bound: a step computes
    at most B tokens in at least base_ms, and a request needs E[l] + E[o] − 1 of them,
    so R replicas carry at most R·B/((E[l] + E[o] − 1)·base_ms) requests per ms; the
    simulated throughput of the answer is within it too."""
    laws = token_law_presets()
    el = float(laws["azure_2023_conv_prompt"].law().mean())
    eo = float(laws["azure_2023_conv_output"].law().mean())
    t = colocated.table
    for _, row in t.iterrows():
        hw = colocated.spec.hardware_named(row["hardware"])
        bound = (row["replicas"] * row["max_num_batched_tokens"] / (el + eo - 1)
                 / hw.step_cost.base_ms * 1e3)
        assert row["capacity_per_s"] <= bound * (1 + 1e-9)
    best = colocated.best
    _, _, r = _fleet_percentiles(colocated.spec, best, int(best["replicas"]), seed=13)
    hw = colocated.spec.hardware_named(best["hardware"])
    bound = (int(best["replicas"]) * best["max_num_batched_tokens"] / (el + eo - 1)
             / hw.step_cost.base_ms * 1e3)
    assert r.throughput_requests_per_s <= bound


def test_disaggregated_answer_holds_and_fewer_instances_do_not(disaggregated):
    """The disaggregated answer meets both targets simulated again with its own stream;
    one prefill instance fewer misses (and, where there are two, one decode fewer)."""
    spec, best = disaggregated.spec, disaggregated.best
    assert best is not None and best["confirmed"] is True
    assert "prefill instance" in disaggregated.answer and "decode instance" in disaggregated.answer
    laws = token_law_presets()
    hw = A100_TP4
    sched = llm_serving.FAMILY.scheduler_of(hw, best["max_num_seqs"],
                                             best["max_num_batched_tokens"])

    def run(p, d, seed):
        r = simulate_disaggregated(
            hw.step_cost, hw.step_cost, prefill_scheduler=sched, decode_scheduler=sched,
            prefill_instances=p, decode_instances=d, kv_bytes_per_token=hw.kv_bytes_per_token,
            link_gb_per_s=spec.link_gb_per_s, input_tokens=laws[spec.prompt_law].law(),
            output_tokens=laws[spec.token_law].law(), rate_per_s=spec.rate_per_s,
            n_requests=40_000, seed=seed)
        return r.ttft_ms.percentile(95) <= 3000.0 and r.tpot_ms.percentile(95) <= 120.0

    p, d = int(best["prefill_instances"]), int(best["decode_instances"])
    assert run(p, d, 21)
    assert p >= 2 and not run(p - 1, d, 22)
    if d >= 2:
        assert not run(p, d - 1, 23)
    assert (disaggregated.fewer["confirmed"] == False).all()  # noqa: E712


def test_bad_questions_get_reasons():
    """A target no configuration meets names the binding metric and by how much; prompts
    longer than every candidate's KV cache say so with both numbers; a TPOT target below
    one decode step says no load meets it; the answer says nothing was found."""
    plan = capacity_plan(colocated_spec(sla=(("ttft", 95.0, 50.0),), confirm=0),
                         executor="serial")
    assert plan.best is None and "No configuration" in plan.answer
    assert set(plan.rejected.reason) == {"ttft"}
    assert all("TTFT" in d and ("over" in d or "× the target" in d) for d in plan.rejected.detail)
    small = dataclasses.replace(A100_TP4, name="small KV", kv_cache_tokens=2_000)
    plan = capacity_plan(colocated_spec(hardware=(small,), confirm=0), executor="serial")
    assert list(plan.rejected.reason) == ["kv"] and plan.table["reason"].eq("kv").all()
    assert "2,000 tokens" in plan.rejected.detail[0] and "longest" in plan.rejected.detail[0]
    plan = capacity_plan(colocated_spec(sla=(("tpot", 95.0, 5.0),), confirm=0),
                         executor="serial")
    one = A100_TP4.step_cost.base_ms + A100_TP4.step_cost.decode_ms_per_seq
    detail = plan.rejected.set_index("hardware").detail[A100_TP4.name]
    assert f"{one:.3g} ms" in detail and "no load meets it" in detail
    plan = capacity_plan(disaggregated_spec(hardware=(dataclasses.replace(
        A100_TP4, kv_cache_tokens=2_000),), confirm=0), executor="serial")
    assert list(plan.rejected.reason) == ["kv"] and "KV cache holds 2,000" in plan.rejected.detail[0]


def test_serving_plan_files_and_command_line(tmp_path, capsys):
    """A serving plan round-trips through its file; the command line runs one with a
    token trace named relative to the file (prompts and replies taken together) and
    prints the answer and the one-fewer check; an SLA given both ways is refused."""
    spec = colocated_spec(hardware=(H100_TP8,), max_num_seqs=(64,), replicas=(2, 3, 4),
                          token_trace="trace.csv")
    rng = np.random.default_rng(0)
    lines = ["timestamp_s,input_tokens,output_tokens"] + [
        f"{i * 0.1:.1f},{rng.integers(100, 2000)},{rng.integers(20, 400)}" for i in range(300)]
    (tmp_path / "trace.csv").write_text("\n".join(lines), encoding="utf-8")
    text = plan_toml(spec)
    assert read_plan(text) == spec
    (tmp_path / "plan.toml").write_text(text, encoding="utf-8")
    assert planner_cli.main([str(tmp_path / "plan.toml")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Cheapest: ") and "trace.csv" not in out.split("\n")[0][:10]
    assert "misses the SLA in simulation" in out
    assert planner_cli.shown_columns(spec)[:3] == ["hardware", "max_num_seqs",
                                                   "max_num_batched_tokens"]
    both = text.replace("rate_per_s = 7.0", "rate_per_s = 7.0\npercentile = 90.0")
    with pytest.raises(ValueError, match="percentile"):
        read_plan(both)


# ============================================================ fuzz cases of the modules

COSTS = st.builds(StepCost, base_ms=st.floats(1.0, 50.0),
                  prefill_ms_per_token=st.floats(0.0, 0.5),
                  decode_ms_per_seq=st.floats(0.0, 1.0))


@fuzz(200)
@given(NAMES_ := st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                         max_size=10).filter(lambda s: s.strip() and s.isprintable()),
       st.floats(1e-3, 1e3), COSTS, st.one_of(st.none(), st.integers(1, 10 ** 9)),
       st.floats(1.0, 1e7), st.integers(1, 64), st.data())
def test_serving_hardware_and_checks(name, price, cost, kv, kv_bytes, gpus, data):
    """ServingHardware holds what it is given, checked; a bad field is a ValueError naming
    it; number_in, whole_in and values_in keep valid values and name bad ones."""
    hw = planner_hardware.ServingHardware(name=name, price_usd_per_hour=price, step_cost=cost,
                                          kv_cache_tokens=kv, kv_bytes_per_token=kv_bytes,
                                          gpus=gpus)
    tally(planner_hardware.ServingHardware)
    assert hw.workload == "serving" and hw.kv_cache_tokens == kv and hw.gpus == gpus
    assert_no_nan(hw)
    field, bad = data.draw(st.sampled_from([
        ("price_usd_per_hour", 0.0), ("price_usd_per_hour", math.nan), ("step_cost", 3),
        ("kv_cache_tokens", 0), ("kv_cache_tokens", 1.5), ("kv_bytes_per_token", -1.0),
        ("gpus", 0), ("block_size", 0), ("busy_power_w", -1.0), ("model", 3), ("name", "")]))
    raises_naming("name" if field == "name" else field,
                  lambda: dataclasses.replace(hw, **{field: bad}))
    with pytest.raises(ValueError, match="price_usd_per_hour"):
        planner_hardware.Hardware(name="x", price_usd_per_hour=-1.0, alpha_ms=1.0, tau0_ms=1.0,
                                  max_batch=4)
    tally(planner_hardware.Hardware)
    v = data.draw(st.floats(0.0, 1e6))
    assert checks.number_in(v, "v", low=0.0) == v
    assert checks.whole_in(int(v), "w", 0, 10 ** 6) == int(v)
    assert checks.values_in([v, v, 1.0], "vs", low=0.0) == tuple(sorted({v, 1.0}))
    for fn, args in ((checks.number_in, (math.nan, "v")), (checks.whole_in, (1.5, "v", 0, 9)),
                     (checks.values_in, ([], "v"))):
        raises_naming("v", fn, *args)
        tally(fn)


@fuzz(200)
@given(st.floats(1e-3, 1e4), st.floats(1e-3, 1e6))
def test_usd_per_million_requests(cost_usd_per_hour, rate_per_s):
    """A million requests at ``rate_per_s`` take 10⁶ / rate s = 10⁶ / (3600·rate) hours of
    the fleet, at ``cost_usd_per_hour`` each hour."""
    hours = 1e6 / rate_per_s / 3600.0
    assert math.isclose(base.usd_per_million_requests(cost_usd_per_hour, rate_per_s),
                        cost_usd_per_hour * hours, rel_tol=1e-12)
    tally(base.usd_per_million_requests)


@fuzz(200)
@given(st.sampled_from(["PLAN_RATE_PER_S", "PLAN_PERCENTILE", "PLAN_TRUNCATION_CAP",
                        "PLAN_B_MAX", "PLAN_SEED", "PLAN_ENERGY_CAP_J", "POWER_W"]),
       st.one_of(st.floats(allow_nan=True), st.integers(-10, 2 ** 64), st.booleans(),
                 st.text(max_size=3)),
       st.lists(st.floats(-1.0, 1.0), min_size=4, max_size=4), st.data())
def test_checks_go_through_the_declared_domains(name, value, k, data):
    """number_in, whole_in and values_in with a declared domain take a value exactly when
    it is a number (not a bool, not text) the domain holds, as written here from the
    domain's bounds (whole_in: an exact whole number); k_in takes (k1, k2, k3, k4) exactly
    when k1 > 0 and k2, k3, k4 >= 0, all finite, and names the bad coefficient."""
    from engine.core import domains
    dom = getattr(domains, name)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    x = float(value) if number else math.nan
    inside = (number and not math.isnan(x) and (math.isfinite(x) or (dom.allow_inf and x > 0))
              and (x > dom.low if dom.low_open else x >= dom.low)
              and (x < dom.high if dom.high_open else x <= dom.high)
              and (not dom.integer or not math.isfinite(x) or x == round(x)))
    if inside:
        assert checks.number_in(value, dom) == x
        assert checks.values_in([value, value], dom) == ((int(x),) if dom.integer else (x,))
    else:
        raises_naming(dom.name, checks.number_in, value, dom)
        raises_naming("where", checks.values_in, [value], dom, "where")
    whole = (isinstance(value, int) and not isinstance(value, bool)
             and dom.low <= value <= dom.high) or (
        isinstance(value, float) and math.isfinite(value) and value == round(value)
        and abs(value) < 2 ** 53 and dom.low <= value <= dom.high)
    if whole and (value > dom.low or not dom.low_open) and (value < dom.high
                                                             or not dom.high_open):
        assert checks.whole_in(value, dom) == int(value)
    else:
        raises_naming(dom.name, checks.whole_in, value, dom)
    if k[0] > 0 and min(k[1:]) >= 0:
        assert checks.k_in(k, "hw k_s") == tuple(k)
        tally(checks.k_in)
    else:
        bad = next(i for i, v in enumerate(k) if (v <= 0 if i == 0 else v < 0))
        raises_naming(f"hw k_s k{bad + 1}", checks.k_in, k, "hw k_s")
    raises_naming("k_s", checks.k_in, k[:3])
    raises_naming("k_s", checks.k_in, "1234")


@fuzz(40)
@given(st.sampled_from(sorted(FAMILIES)), st.data())
def test_family_declarations(name, data):
    """Each family: its knobs name PlanSpec fields within their domains; its presets it
    accepts; its default spec valid, of it, with as many grid points as configurations
    (the disaggregated one: pairs serving the same model); its words for a grid point;
    a name not a family is a ValueError naming workload."""
    fam = family(name)
    tally(family)
    assert fam.name == name and fam.title and fam.metrics and fam.default_metric in fam.metrics
    assert isinstance(fam, base.Family) and repr(fam).startswith("<planner family")
    tally(base.Family)
    default = default_spec(name)
    for knob in fam.knobs:
        assert isinstance(knob, base.Knob) and knob.label
        tally(base.Knob)
        values = getattr(default, knob.name)
        assert all(knob.domain.low <= v <= knob.domain.high for v in values)
    assert all(fam.accepts(h) for h in fam.presets().values())
    points = fam.grid(default)
    if name == "llm_disaggregated":
        pairs = sum(1 for a in default.hardware for b in default.hardware if a.model == b.model)
        assert len(points) == default.n_configurations // len(default.hardware) ** 2 * pairs
        assert llm_disaggregated.pair_name("a", "b") == "prefill a → decode b"
        tally(llm_disaggregated.pair_name)
        tally(llm_disaggregated.LlmServingDisaggregated)
    elif name in ("llm_serving",):
        assert len(points) == default.n_configurations
        tally(llm_serving.LlmServingColocated)
        tally(llm_serving.ServingFamily)
    else:
        assert len(points) <= default.n_configurations
        tally(batch.BatchFamily)
        tally(gpu_batching.GpuBatching if name == "gpu" else llm_batch.LlmBatch)
        knobs = batch.batch_knobs(fam.knobs[1])
        tally(batch.batch_knobs)
        assert [k.name for k in knobs] == [k.name for k in fam.knobs]
    # the work a plan costs: a GPU configuration with Poisson arrivals is the unit (~400 µs);
    # an LLM batch one solves a chain (10), a serving one an approximation (2); simulated
    # arrivals 3× more; a serving confirmation 4 runs of each confirmed configuration and
    # each "one server fewer" check (1 colocated, 2 disaggregated), per request 0.05 / 0.012
    weight = {"gpu": 1, "llm": 10, "llm_serving": 2, "llm_disaggregated": 2}[name]
    assert fam.work(default) == default.n_configurations * weight
    assert fam.work(default, poisson=False) == 3 * default.n_configurations * weight
    checks_fewer = {"llm_serving": 1, "llm_disaggregated": 2}.get(name)
    if checks_fewer is None:
        assert fam.confirm_work(default) == 0
    else:
        per_request = {"llm_serving": 0.05, "llm_disaggregated": 0.012}[name]
        assert fam.confirm_work(default) == int(4 * (default.confirm + checks_fewer)
                                                * fam.confirm_requests(default) * per_request)
    assert math.isclose(fam.work_seconds(default),
                        4e-4 * (fam.work(default) + fam.confirm_work(default)))
    point = data.draw(st.sampled_from(points))
    row = {**point, "hardware": point.get("hardware", "x"), "replicas": point.get("replicas", 1)}
    assert fam.settings_text(default, row) and fam.fleet_text(row)
    cols = fam.sla_columns(default)
    assert len(cols) == len(default.sla)
    m, q, t = default.sla[0]
    assert base.sla_column(m, q) == f"{m}_p{q:g}_ms"
    assert base.METRICS[m][1] in base.sla_text(default.sla)
    assert base.ratio_text(t * 1.5, t) == "50 % over" and base.ratio_text(math.inf, 1) == "unstable"
    assert all(fam.reason_text(r) for r in ("", "unstable", "kv", *fam.metrics))
    assert ("servers" in fam.reason_text("unstable")) == (name == "llm_disaggregated")
    for fn in (base.sla_column, base.sla_text, base.ratio_text):
        tally(fn)
    raises_naming("workload", family, data.draw(st.sampled_from(["", "GPU", 3, None])))


@fuzz(60)
@given(st.lists(st.tuples(st.integers(1, 5000), st.integers(1, 2000)), min_size=2,
                max_size=40), st.sampled_from(sorted(token_law_presets())),
       st.sampled_from(sorted(token_law_presets())), st.data())
def test_workloads(pairs, prompt_law, reply_law, data):
    """A workload from two laws (independent) or from a trace's pairs (taken together,
    drawn with replacement as pairs); its longest request; bad pairs and unknown laws are
    ValueErrors naming them."""
    p, r = (np.array(x) for x in zip(*pairs))
    wl = llm_serving.workload_from_pairs(p, r, "t")
    tally(llm_serving.workload_from_pairs)
    tally(llm_serving.ServingWorkload)
    assert wl.paired and wl.longest() == int(np.max(p + r)) and wl.longest_prompt() == p.max()
    ins, outs = wl.draw(500, 1)
    index = {(a, b) for a, b in zip(p.tolist(), r.tolist())}
    assert set(zip(ins.tolist(), outs.tolist())) <= index
    assert wl == llm_serving.workload_from_pairs(p.copy(), r.copy(), "other name")
    law = llm_serving.workload_from_laws(prompt_law, reply_law)
    tally(llm_serving.workload_from_laws)
    assert not law.paired and law.longest() > 0 and math.isfinite(law.mean_prompt())
    spec = colocated_spec(prompt_law=prompt_law, token_law=reply_law, confirm=0)
    assert llm_serving.workload_of(spec) == law
    tally(llm_serving.workload_of)
    raises_naming("token_trace", llm_serving.workload_of, spec.with_(token_trace="missing.csv"))
    raises_naming("prompt_law", llm_serving.workload_from_laws, "nope", reply_law)
    with pytest.raises(ValueError, match="token"):
        llm_serving.workload_from_pairs(p, r[:-1], "t")
    with pytest.raises(ValueError, match="token"):
        llm_serving.workload_from_pairs(p * 0, r, "t")


@fuzz(40)
@given(st.sampled_from(["gpu", "llm", "llm_serving", "llm_disaggregated"]), st.data())
def test_price_point_and_helpers(name, data):
    """price_point prices a grid point of any family (its SLA columns present, stable
    or not, never NaN); price_of finds each preset's price and GPUs; shown_columns are
    columns of the ranked table."""
    spec = default_spec(name)
    if name == "gpu":
        spec = spec.with_(replicas=(8,), b_max=(8,))
    elif name == "llm":
        spec = spec.with_(replicas=(2,), b_max=(8,), token_limit=(0,))
    point = data.draw(st.sampled_from(spec.family.grid(spec)))
    context = spec.family.prepare(spec)
    row = planner_plan.price_point(spec, **point, **context)
    tally(planner_plan.price_point)
    row = dataclasses.asdict(row) if dataclasses.is_dataclass(row) else row
    assert set(spec.family.sla_columns(spec)) <= set(row)
    assert_no_nan(row)
    for pid in spec.family.presets():
        price, gpus = planner_spec.price_of(pid)
        assert price is not None and gpus >= 1
    assert planner_spec.price_of("no such profile") == (None, 0)
    tally(planner_spec.price_of)
    assert planner_hardware.short_name("A · B (x) · C") == "A · B · C"
    tally(planner_hardware.short_name)
    cols = planner_cli.shown_columns(spec)
    tally(planner_cli.shown_columns)
    assert "cost_usd_per_hour" in cols and "confirmed" in cols


@fuzz(6)
@given(st.lists(st.sampled_from([0.5, 1.0, 2.0, 5.0]), min_size=1, max_size=2, unique=True),
       st.sampled_from(["llm_serving", "llm_disaggregated"]))
def test_disaggregation_pays(rates, workload):
    """One row per rate: each family's cheapest cost (inf: none) and fleet in words, the
    cheaper named from the two costs, the saving their relative difference; a rate out of
    its domain or a plan of a batch family is a ValueError naming it."""
    spec = colocated_spec(workload=workload, hardware=(A100_TP4, H100_TP8), max_num_seqs=(64,),
                          replicas=(1, 2, 3), prefill_instances=(1, 2), decode_instances=(1, 2),
                          confirm=0)
    table = compare.disaggregation_pays(spec, rates, executor="serial")
    tally(compare.disaggregation_pays)
    assert list(table.rate_per_s) == rates
    for _, row in table.iterrows():
        c, d = row.colocated_cost_usd_per_hour, row.disaggregated_cost_usd_per_hour
        want = ("neither" if math.isinf(c) and math.isinf(d) else "same cost" if c == d
                else "colocated" if c < d else "disaggregated")
        assert row.cheaper == want and (row.colocated_fleet == "") == math.isinf(c)
        if math.isfinite(c) and math.isfinite(d):
            assert close(row.saving_fraction, abs(c - d) / max(c, d))
        assert row.confirmed is False or row.confirmed == False  # noqa: E712 (confirm = 0)
    raises_naming("rates_per_s", compare.disaggregation_pays, spec, [0.0])
    raises_naming("spec", compare.disaggregation_pays, default_spec("gpu"), rates)


@fuzz(100)
@given(st.lists(st.tuples(st.booleans(), st.floats(1.0, 1e5), st.floats(0.0, 10.0),
                          st.floats(0.0, 1.0)), min_size=0, max_size=30),
       st.floats(1.0, 1e5), st.floats(0.1, 10.0), st.floats(0.0, 1.0))
def test_front_rows(rows, target, energy_cap, cut_cap):
    """front_rows: a latency front keeps the stable rows within the energy cap and the
    share of replies cut; the energy front those within the latency target and the cut."""
    spec = default_spec("llm").with_(target_ms=target, energy_cap_j=energy_cap,
                                     truncation_cap=cut_cap)
    t = pd.DataFrame(rows, columns=["stable", "latency_percentile_ms", "energy_j_per_request",
                                    "truncated_fraction"])
    lat = planner_plan.front_rows(spec, t, "latency_percentile_ms")
    energy = planner_plan.front_rows(spec, t, "energy_j_per_request")
    tally(planner_plan.front_rows)
    for i, (stable, p, e, cut) in enumerate(rows):
        assert lat[i] == (stable and e <= energy_cap and cut <= cut_cap)
        assert energy[i] == (stable and p <= target and cut <= cut_cap)


FUZZED = {
    planner_hardware: {"Hardware": test_serving_hardware_and_checks,
                       "ServingHardware": test_serving_hardware_and_checks,
                       "price_of": test_price_point_and_helpers,
                       "short_name": test_price_point_and_helpers},
    checks: {"number_in": test_serving_hardware_and_checks,
             "whole_in": test_serving_hardware_and_checks,
             "values_in": test_serving_hardware_and_checks,
             "k_in": test_checks_go_through_the_declared_domains},
    families_pkg: {"family": test_family_declarations},
    base: {"Family": (test_family_declarations, "family"), "Knob": test_family_declarations,
           "sla_column": test_family_declarations, "sla_text": test_family_declarations,
           "ratio_text": test_family_declarations,
           "usd_per_million_requests": test_usd_per_million_requests},
    gpu_batching: {"GpuBatching": test_family_declarations},
    llm_batch: {"LlmBatch": test_family_declarations},
    llm_serving: {"LlmServingColocated": test_family_declarations,
                  "ServingFamily": test_family_declarations},
    workload: {"ServingWorkload": test_workloads, "workload_of": test_workloads,
               "workload_from_laws": test_workloads, "workload_from_pairs": test_workloads},
    compare: {"disaggregation_pays": test_disaggregation_pays},
    llm_disaggregated: {"LlmServingDisaggregated": test_family_declarations,
                        "pair_name": test_family_declarations},
}
