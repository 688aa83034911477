"""Fuzz tests of the capacity planner (engine.planner: spec, price, plan, files and the
command line): the contract of tests/fuzzing.py (valid input: no exception, no NaN, ``inf``
latency exactly where a configuration is unstable; one field out of its range: ``ValueError``
naming it); ``FUZZED`` maps each public name to the test that fuzzes it (checked by
tests/test_fuzz_contract.py).

Cost: pricing a stable configuration simulates 20,000 requests (~1-5 ms for a GPU
batcher, ~5-200 ms for an LLM one, up to ~1 s near saturation) and confirming one
simulates 4 × 100,000 (~50-500 ms), so the plans fuzzed here are tiny (1-2 hardware,
1-3 b_max, 1-3 replicas, ``confirm`` 0-1, percentiles up to 99 so a screening run stays
at 20,000 requests, ``executor="serial"``) and their tests draw few cases (``fuzz``): the
file stays within ~40 s on the shared 2-core machine; ``FUZZ_FULL=1`` restores 2,000.
The file-format, spec and text tests cost no simulation and draw more.
"""
import dataclasses
import io
import zlib

import pandas as pd
from hypothesis import assume, event

from tests.fuzzing import *  # noqa: F401,F403 (settings, checks)
from engine.arrivals import MMPP2, Poisson, Renewal, Replay, Thinned
from engine.planner import (__main__ as planner_cli, files as planner_files,
                            plan as planner_plan, price as planner_price,
                            spec as planner_spec)
from engine.presets import arrival_presets, hardware_prices, token_law_presets

Hardware, PlanSpec = planner_spec.Hardware, planner_spec.PlanSpec
GPU_PRESETS = planner_spec.hardware_presets("gpu")
LLM_PRESETS = planner_spec.hardware_presets("llm")
TOKEN_LAWS = tuple(sorted(token_law_presets()))
ARRIVAL_TRACES = tuple(sorted(arrival_presets()))
NAMES = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                max_size=12).filter(lambda s: s.strip() and s.isprintable())  # Hardware's rule
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


def gpu_capacity_per_s(hw, b_max) -> float:
    """Requests/s one replica of a GPU batcher carries at most: b/τ[b] = b/(αb + τ0)
    (Inoue 2021), τ in ms."""
    return 1000.0 * b_max / (hw.alpha_ms * b_max + hw.tau0_ms)


# ============================================================ strategies

@st.composite
def gpu_hardware(draw, name=None):
    """A GPU candidate: a preset (renamed) or drawn numbers (τ[b] = αb + τ0 ms)."""
    name = draw(NAMES) if name is None else name
    if draw(st.booleans()):
        hw = draw(st.sampled_from(sorted(GPU_PRESETS.values(), key=lambda h: h.profile)))
        return dataclasses.replace(hw, name=name, max_batch=min(hw.max_batch, 64))
    return Hardware(name=name, price_usd_per_hour=draw(st.floats(1e-3, 1e3)),
                    busy_power_w=draw(st.floats(0.0, 1e3)), idle_power_w=draw(st.floats(0.0, 1e2)),
                    alpha_ms=draw(st.floats(0.05, 5.0)), tau0_ms=draw(st.floats(0.0, 20.0)),
                    max_batch=draw(st.integers(1, 64)), source=draw(ANY_TEXT))


@st.composite
def llm_hardware(draw, name=None):
    """An LLM candidate: a preset (renamed) or drawn coefficients k1..k4 (s)."""
    name = draw(NAMES) if name is None else name
    if draw(st.booleans()):
        hw = draw(st.sampled_from(sorted(LLM_PRESETS.values(), key=lambda h: h.profile)))
        return dataclasses.replace(hw, name=name)
    k = (draw(st.floats(1e-3, 1.0)), draw(st.floats(0.0, 1.0)), draw(st.floats(0.0, 1e-3)),
         draw(st.floats(0.0, 0.1)))
    return Hardware(name=name, price_usd_per_hour=draw(st.floats(1e-3, 1e3)),
                    busy_power_w=draw(st.floats(0.0, 1e4)), k_s=k, source=draw(ANY_TEXT))


def _some(values, low, high, size=3):
    return st.lists(values(low, high), min_size=1, max_size=size)


@st.composite
def plan_specs(draw):
    """Any valid PlanSpec (not simulated: the ranges may be wide)."""
    workload = draw(st.sampled_from(("gpu", "llm")))        # the serving families: test_families
    names = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
    make = gpu_hardware if workload == "gpu" else llm_hardware
    kind = draw(st.sampled_from(planner_spec.ARRIVAL_KINDS))
    trace = (draw(st.one_of(st.sampled_from(ARRIVAL_TRACES), NAMES)) if kind == "mmpp2" else
             draw(NAMES) if kind == "replay" else draw(ANY_TEXT))
    gpu = workload == "gpu"
    return PlanSpec(
        workload=workload, rate_per_s=draw(st.floats(1e-3, 1e6)), arrivals_kind=kind,
        arrivals_scv=draw(st.floats(1e-3, 1e4)), arrivals_trace=trace,
        percentile=draw(st.floats(50.0, 99.99)), target_ms=draw(st.floats(1e-3, 1e7)),
        energy_cap_j=draw(st.one_of(st.just(math.inf), st.floats(1e-3, 1e6))),
        truncation_cap=draw(st.floats(0.0, 1.0)),
        hardware=tuple(draw(make(n)) for n in names),
        b_max=draw(_some(st.integers, 1, 4096, 4)),
        queue_delay_ms=draw(_some(st.floats, 0.0, 1e5)) if gpu else (0.0,),
        token_limit=(0,) if gpu else draw(_some(st.integers, 0, 1 << 20)),
        token_law=draw(ANY_TEXT) if gpu else draw(st.sampled_from(TOKEN_LAWS)),
        replicas=draw(_some(st.integers, 1, planner_spec.MAX_REPLICAS)),
        confirm=draw(st.integers(0, planner_spec.MAX_CONFIRM)),
        seed=draw(st.integers(0, 2 ** 63 - 1)))


@st.composite
def tiny_gpu_specs(draw, confirm=(0, 1), may_not_fit=False):
    """A GPU plan cheap to run: 1-2 candidates, 1-3 b_max ≤ 32 (one within the first
    candidate's largest batch unless ``may_not_fit``: then the grid may be empty),
    1-2 queue delays, 1-3 replicas ≤ 6, confirm 0-1, at a
    rate ρ × the capacity of one drawn configuration, stable and unstable (the gap
    (0.9, 1.001) left out as in tests/strategies.py: there the verdict rate < capacity
    and the exact chain's λτ < 1 may differ in the last bit)."""
    names = draw(st.lists(NAMES, min_size=1, max_size=2, unique=True))
    hw = tuple(draw(gpu_hardware(n)) for n in names)
    b_max = draw(st.lists(st.integers(1, 32), min_size=1, max_size=3))
    if not (may_not_fit and draw(st.integers(0, 4)) == 0):       # 1 in 5: maybe empty
        b_max.append(draw(st.integers(1, hw[0].max_batch)))
    replicas = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    rho = draw(st.one_of(st.floats(0.05, 0.9), st.floats(1.001, 3.0)))
    rate = rho * gpu_capacity_per_s(hw[0], draw(st.sampled_from(b_max))) * max(replicas)
    kind = draw(st.sampled_from(["poisson", "poisson", "bursty"]))
    return PlanSpec(
        workload="gpu", rate_per_s=rate, arrivals_kind=kind,
        arrivals_scv=draw(st.floats(0.3, 4.0)), percentile=draw(st.floats(50.0, 99.0)),
        target_ms=draw(st.floats(1.0, 300.0)),
        energy_cap_j=draw(st.one_of(st.just(math.inf), st.floats(1e-3, 10.0))),
        hardware=hw, b_max=b_max[:3] if b_max[-1] in b_max[:3] else b_max[1:],
        queue_delay_ms=draw(st.lists(st.sampled_from([0.0, 0.0, 0.5, 3.0]), min_size=1,
                                     max_size=2)),
        replicas=replicas, confirm=draw(st.integers(*confirm)),
        seed=draw(st.integers(0, 2 ** 32)))


# ============================================================ Hardware, PlanSpec

NAN, INF = math.nan, math.inf
BAD_HARDWARE = {
    "name": ["", "  ", 3, None],
    "price_usd_per_hour": [0.0, -1.0, NAN, INF, "1", True, None],
    "busy_power_w": [-1.0, NAN, INF, "x", True], "idle_power_w": [-0.5, NAN, INF, "x", None],
    "alpha_ms": [0.0, -1.0, NAN, INF, "x"], "tau0_ms": [-1.0, NAN, INF, "x"],
    "max_batch": [0, -2, 1.5, NAN, INF, "x", True], "profile": [3, None, b"x"],
    "source": [3, None]}
BAD_K = [(0.0, 0.0, 0.0, 0.0), (1.0, 2.0, 3.0), (1.0, -1.0, 0.0, 0.0), (1.0, NAN, 0.0, 0.0),
         ("a", 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, INF), "abcd", (1.0, 0.0, 0.0, 0.0, 0.0)]
BAD_SPEC = {
    "workload": ["x", None, 3], "rate_per_s": [0.0, -1.0, NAN, INF, "x", True, None],
    "arrivals_kind": ["x", None, 1], "arrivals_scv": [0.0, -1.0, 1e5, NAN, INF, "x", True],
    "arrivals_trace": [3, None], "percentile": [49.0, 100.0, 99.999, NAN, "x", True],
    "target_ms": [0.0, -1.0, NAN, INF, "x"], "energy_cap_j": [0.0, -1.0, NAN, -INF, "x"],
    "truncation_cap": [-0.1, 1.1, NAN, "x"], "hardware": [(), None, (1,), "x"],
    "b_max": [(), (0,), (1.5,), (5000,), "x", 3, (NAN,), None, ("a",), (True,)],
    "queue_delay_ms": [(), (-1.0,), (NAN,), (1e6,), "x", 3, None],
    "token_limit": [(), (-1,), (1.5,), "x", None, ((1 << 20) + 1,)],
    "replicas": [(), (0,), (1.5,), (20_000,), "x", 3, None],
    "confirm": [-1, 51, 1.5, NAN, "x", True, None],
    "seed": [-1, 1.5, 2 ** 64, NAN, "x", True, None]}


@fuzz(200)          # a spec reads the presets it names (an LLM one ~15 ms on a busy machine)
@given(plan_specs(), st.data())
def test_plan_spec(spec, data):
    """PlanSpec and Hardware with random valid fields construct (hashable, the ranges
    sorted without repeats, n_configurations their product); one field out of its range
    (or candidates of the other workload, a name twice, an unknown preset, too many
    configurations) is a ValueError naming the field."""
    assert hash(spec) == hash(dataclasses.replace(spec))
    for field in ("b_max", "queue_delay_ms", "token_limit", "replicas"):
        values = getattr(spec, field)
        assert isinstance(values, tuple) and list(values) == sorted(set(values))
    assert spec.n_configurations == (len(spec.hardware) * len(spec.b_max)
                                     * len(spec.queue_delay_ms) * len(spec.token_limit)
                                     * len(spec.replicas))
    assert all(h.workload == spec.workload for h in spec.hardware)
    assert spec.hardware_named(spec.hardware[-1].name) is spec.hardware[-1]
    tally(PlanSpec)
    tally(Hardware, len(spec.hardware))
    raises_naming("hardware", spec.hardware_named, "\x00 no such candidate")
    # one field of the spec out of its range (each example: one of them, to bound the cost)
    other = LLM_PRESETS if spec.workload == "gpu" else GPU_PRESETS
    structural = {
        "hardware": [dict(hardware=(next(iter(other.values())),)),
                     dict(hardware=spec.hardware + spec.hardware[:1])],
        "arrivals_trace": [dict(arrivals_kind="mmpp2", arrivals_trace=""),
                           dict(arrivals_kind="replay", arrivals_trace="")],
        "replicas": [dict(b_max=range(1, 22), replicas=range(1, 10_001), queue_delay_ms=(0.0,),
                          token_limit=(0,), hardware=spec.hardware[:1])],
        "token_law": [dict(token_law="\x00 no such law")] if spec.workload == "llm" else [],
        "queue_delay_ms": [dict(queue_delay_ms=(1.0,))] if spec.workload == "llm" else [],
        "token_limit": [dict(token_limit=(0, 256))] if spec.workload == "gpu" else []}
    field = data.draw(st.sampled_from(sorted(BAD_SPEC)), label="field")
    changes = data.draw(st.sampled_from([{field: bad} for bad in BAD_SPEC[field]]
                                        + structural.get(field, [])), label="changes")
    raises_naming(field, spec.with_, **changes)
    # one field of a candidate out of its range
    hw = spec.hardware[0]
    if hw.workload == "gpu":
        field = data.draw(st.sampled_from(sorted(BAD_HARDWARE)), label="hardware field")
        bad = data.draw(st.sampled_from(BAD_HARDWARE[field]), label="bad hardware")
    else:
        field = data.draw(st.sampled_from(["k_s"] + sorted(set(BAD_HARDWARE) - {
            "alpha_ms", "tau0_ms", "max_batch"})), label="hardware field")
        bad = data.draw(st.sampled_from(BAD_K if field == "k_s" else BAD_HARDWARE[field]),
                        label="bad hardware")
    raises_naming(field, lambda: dataclasses.replace(hw, **{field: bad}))


# ============================================================ plan_toml, read_plan

VALUES = ["-1", "0", "nan", "inf", "-inf", '"x"', '""', "[]", "{}", "true", "1979-05-27",
          '[1, "a"]', "[[1]]", "{ from = 1, to = 3 }", "{ from = 3, to = 1 }",
          '{ from = "a", to = 3 }', "{ to = 3 }", "1.5", "1e300", "[0]", '["dle_tf_t4"]']


@fuzz(150)          # 4 files read: their presets, a spec (~5-60 ms)
@given(plan_specs(), st.binary(max_size=200), st.floats(0.0, 1.0), st.data())
def test_plan_files(spec, garbage, cut, data):
    """read_plan(plan_toml(spec)) == spec (as text and as UTF-8 bytes); garbage bytes, a
    truncated file, an unknown field, any line's value replaced by another TOML value:
    a PlanSpec or a ValueError, never another exception; a non-spec is refused."""
    text = planner_files.plan_toml(spec)
    assert planner_files.read_plan(text) == spec
    assert planner_files.read_plan(text.encode("utf-8")) == spec
    tally(planner_files.plan_toml)
    tally(planner_files.read_plan, 2)
    raises_naming("spec", planner_files.plan_toml, dataclasses.asdict(spec))
    raises_naming("text", planner_files.read_plan, data.draw(
        st.sampled_from([None, 3, ["x"], {"workload": "gpu"}]), label="not text"))

    def read_or_refuse(t):
        try:
            assert isinstance(planner_files.read_plan(t), PlanSpec)
        except ValueError as err:
            assert str(err)

    read_or_refuse(garbage)
    read_or_refuse(text[:int(cut * len(text))])
    lines = text.split("\n")      # (not splitlines: a value may hold U+0085, U+2028)
    at = data.draw(st.integers(0, len(lines)), label="unknown at")
    raises_naming("bogus_field", planner_files.read_plan,
                  "\n".join(lines[:at] + ["bogus_field = 1"] + lines[at:]))
    keyed = [j for j, ln in enumerate(lines) if " = " in ln and not ln.startswith("#")]
    j = data.draw(st.sampled_from(keyed), label="line")
    key = lines[j].split(" = ")[0]
    read_or_refuse("\n".join(lines[:j] + [f"{key} = {data.draw(st.sampled_from(VALUES))}"]
                             + lines[j + 1:]))


# ============================================================ price_configuration

@fuzz(120)          # a stable configuration simulates 20,000 requests (~1-200 ms)
@given(st.one_of(tiny_gpu_specs(confirm=(0, 0)), tiny_gpu_specs(confirm=(0, 0)),
                 st.builds(lambda hw, law: PlanSpec(workload="llm", rate_per_s=1.0,
                                                    hardware=(hw,), token_law=law,
                                                    b_max=(1,), replicas=(1,), confirm=0),
                           llm_hardware(), st.sampled_from(TOKEN_LAWS))),
       st.sampled_from([1, 4, 16]), st.sampled_from([0, 256, 2048]),
       st.one_of(st.floats(0.05, 0.7), st.floats(1.001, 3.0)), st.data())
def test_price_configuration(spec, llm_b_max, llm_limit, llm_rho, data):
    """price_configuration: a ConfigPrice without NaN; unstable exactly where the load per
    replica reaches its capacity (GPU: b/(αb + τ0)), and then inf latency and energy;
    cost = replicas × price; $ per million = cost / (λ·3600)·10⁶; the reason consistent
    with the SLA; the GPU mean exact for Poisson arrivals and queue delay 0; an unknown
    candidate or a bad setting is a ValueError naming it."""
    hw = data.draw(st.sampled_from(spec.hardware), label="hardware")
    if spec.workload == "gpu":
        b_max = data.draw(st.sampled_from(spec.b_max), label="b_max")
        delay = data.draw(st.sampled_from(spec.queue_delay_ms), label="delay")
        limit, replicas = 0, data.draw(st.sampled_from(spec.replicas), label="replicas")
    else:                       # the rate set from the configuration's own capacity
        b_max, delay, limit, replicas = llm_b_max, 0.0, llm_limit, 1
        probe = spec.with_(rate_per_s=1e12)           # unstable: no simulation
        cap = planner_price.price_configuration(probe, hw.name, b_max, 0.0, limit).capacity_per_s
        spec = spec.with_(rate_per_s=llm_rho * cap, target_ms=data.draw(
            st.floats(1e3, 1e6), label="target"))
    arrivals = planner_files.arrival_process(spec)
    r = planner_price.price_configuration(spec, hw.name, b_max, delay, limit, replicas,
                                          arrivals=arrivals)
    tally(planner_price.price_configuration)
    event(f"{spec.workload}, {'stable' if r.stable else 'unstable'}, {r.method}, "
          f"{r.reason or 'meets the SLA'}")
    assert isinstance(r, planner_price.ConfigPrice)
    assert_no_nan(r)
    per_replica = spec.rate_per_s / replicas
    # stable below capacity, less the share no chain or run resolves (NEAR_CAPACITY)
    edge = r.capacity_per_s / replicas * (1.0 - planner_price.NEAR_CAPACITY)
    assert r.stable == (per_replica < edge)
    if spec.workload == "gpu":
        assert close(r.capacity_per_s, replicas * gpu_capacity_per_s(hw, b_max), 1e-9)
        assert r.truncated_fraction == 0.0
        assert r.method == ("exact" if not r.stable or (arrivals is None and delay == 0)
                            else "simulated")
    else:
        law = token_law_presets()[spec.token_law].law()
        assert close(r.truncated_fraction, law.sf(limit) if limit else 0.0, 1e-12)
    for value in (r.latency_percentile_ms, r.mean_latency_ms, r.energy_j_per_request):
        assert_inf_iff(value, not r.stable)
    assert close(r.cost_usd_per_hour, replicas * hw.price_usd_per_hour, 1e-12)
    assert close(r.cost_usd_per_million, r.cost_usd_per_hour / (spec.rate_per_s * 3600) * 1e6,
                 1e-12)
    assert 0.0 <= r.utilization <= 1.0 and r.reason in planner_price.REASONS
    assert r.meets_sla == (r.reason == "")
    if r.stable:
        assert r.latency_percentile_ms >= 0 and 1 - 1e-9 <= r.mean_batch_size <= b_max + 1e-9
        assert (r.reason == "latency") == (r.latency_percentile_ms > spec.target_ms)
    if r.meets_sla:
        assert r.latency_percentile_ms <= spec.target_ms
        assert r.energy_j_per_request <= spec.energy_cap_j
        assert r.truncated_fraction <= spec.truncation_cap
    raises_naming("hardware", planner_price.price_configuration, spec, "\x00 none", b_max)
    name = data.draw(st.sampled_from(["b_max", "replicas", "token_limit", "queue_delay_ms"]))
    bad = {"b_max": 0, "replicas": 0, "token_limit": -1, "queue_delay_ms": -1.0}[name]
    args = dict(b_max=b_max, queue_delay_ms=delay, token_limit=limit, replicas=replicas)
    raises_naming(name, planner_price.price_configuration, spec, hw.name, **{**args, name: bad})


# ============================================================ simulation helpers

@fuzz(40)           # two screening runs of up to 20,000 requests
@given(tiny_gpu_specs(confirm=(0, 0)), st.integers(200, 5000), st.floats(50.0, 99.99),
       st.data())
def test_simulation_helpers(spec, n_jobs, percentile, data):
    """simulate_configuration: finite percentile, mean, CI, batch and utilization for a
    stable configuration, the same numbers for the same configuration (its seed:
    configuration_seed, the same state for the same arguments); screen_jobs within its
    bounds and enough for TAIL_JOBS beyond the percentile; replica_arrivals thins."""
    hw = spec.hardware[0]
    b_max = max(b for b in spec.b_max if b <= hw.max_batch)
    replicas = max(spec.replicas)
    rho = data.draw(st.floats(0.05, 0.9), label="rho")
    spec = spec.with_(rate_per_s=rho * gpu_capacity_per_s(hw, b_max) * replicas)
    delay = data.draw(st.sampled_from(spec.queue_delay_ms), label="delay")
    arrivals = planner_files.arrival_process(spec)
    config = (spec, hw.name, b_max, delay, 0, replicas)
    first = planner_price.simulate_configuration(*config, arrivals=arrivals, n_jobs=n_jobs)
    again = planner_price.simulate_configuration(*config, arrivals=arrivals, n_jobs=n_jobs)
    tally(planner_price.simulate_configuration, 2)
    assert first == again
    assert set(first) == {"latency_percentile_ms", "mean_latency_ms", "ci95_ms",
                          "mean_batch_size", "utilization"}
    assert_no_nan(first)
    assert all(math.isfinite(v) and v >= 0 for k, v in first.items() if k != "ci95_ms")
    assert 1 - 1e-9 <= first["mean_batch_size"] <= b_max and first["utilization"] <= 1 + 1e-9
    seeds = [planner_price.configuration_seed(*config) for _ in range(2)]
    assert seeds[0].entropy == seeds[1].entropy
    assert np.array_equal(seeds[0].generate_state(4), seeds[1].generate_state(4))
    assert seeds[0].entropy == [spec.seed, zlib.crc32(hw.name.encode()), b_max,
                                int(round(delay * 1e6)), 0, replicas]
    assert planner_price.configuration_seed(spec, hw.name, b_max, delay, 0,
                                            replicas + 1).entropy != seeds[0].entropy
    tally(planner_price.configuration_seed, 3)
    n = planner_price.screen_jobs(percentile)
    tally(planner_price.screen_jobs)
    assert planner_price.SCREEN_JOBS <= n <= planner_price.MAX_SCREEN_JOBS
    assert n >= min(planner_price.MAX_SCREEN_JOBS,
                    planner_price.TAIL_JOBS / (1 - percentile / 100) - 1e-6)
    assert planner_price.screen_jobs(min(percentile + 0.001, 99.99)) >= n
    assert planner_price.replica_arrivals(None, replicas) is None
    thin = planner_price.replica_arrivals(Poisson(spec.rate_per_s), replicas)
    assert isinstance(thin, Poisson) and close(thin.rate, spec.rate_per_s / replicas, 1e-12)
    bursty = planner_price.replica_arrivals(Renewal(spec.rate_per_s, 4.0), replicas)
    assert isinstance(bursty, Thinned) and bursty.fraction == 1.0 / replicas
    assert close(bursty.rate, spec.rate_per_s / replicas, 1e-12)
    tally(planner_price.replica_arrivals, 3)


# ============================================================ capacity_plan, ranked_csv

def csv_table(text: str) -> pd.DataFrame:
    """The CSV ``ranked_csv`` writes, its '#' comment lines left out."""
    rows = [ln for ln in text.split("\n") if not ln.startswith("#")]
    return pd.read_csv(io.StringIO("\n".join(rows)), dtype={"hardware": str},
                       keep_default_na=False, na_values=[""])    # a name "NA" or "TRUE" too


@fuzz(50)           # ≤ 36 configurations priced, ≤ 1 confirmed (~10-60 ms, ~1 s at worst)
@given(tiny_gpu_specs(may_not_fit=True))
def test_capacity_plan(spec):
    """capacity_plan (serial) on tiny plans: the table holds every configuration of
    plan_grid (none: every candidate "not searched"); ranked holds exactly those meeting
    the SLA, cheapest first, and at most ``confirm`` confirmed; best is the cheapest
    confirmed (confirm = 0: the cheapest screened); the fronts are stable, non-dominated
    and sorted by cost; a candidate is rejected exactly when none of its configurations
    meets the SLA; progress ends at the total; ranked_csv reads back with units in its
    column names and spreadsheet-safe names."""
    calls = []
    plan = planner_plan.capacity_plan(spec, executor="serial",
                                      progress=lambda d, t: calls.append((d, t)))
    tally(planner_plan.capacity_plan)
    event(f"{'no' if plan.table.empty else 'some'} configurations, "
          f"{'no' if plan.ranked.empty else 'some'} ranked, best: {plan.best is not None}, "
          f"confirm {spec.confirm}, {len(plan.rejected)} rejected")
    points = planner_plan.plan_grid(spec)
    table, ranked = plan.table, plan.ranked
    assert len(table) == len(points)
    assert table[list(planner_plan.PARAMETERS)].to_dict("records") == points
    assert_no_nan(table.drop(columns=["hardware", "method", "reason"]).to_numpy(float))
    assert not points or calls[-1] == (len(points), len(points))
    assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))
    assert len(ranked) == int(table["meets_sla"].sum()) and ranked["meets_sla"].all()
    cost = ranked["cost_usd_per_hour"].to_numpy(float)
    assert np.all(np.diff(cost) >= 0)
    confirmed = ranked["confirmed"] == True  # noqa: E712 (object column: True/False/NaN)
    assert confirmed.sum() <= spec.confirm
    def same(row, frame):                    # a dict and a DataFrame's first row (NaN = NaN)
        return pd.Series(row, dtype=object).equals(frame.iloc[0].astype(object))

    if spec.confirm == 0:
        assert plan.best is None if ranked.empty else same(plan.best, ranked)
    elif plan.best is None:
        assert not confirmed.any()
    else:
        assert plan.best["confirmed"] is True and same(plan.best, ranked[confirmed])
        assert plan.best["confirmed_percentile_ms"] <= spec.target_ms
    assert isinstance(plan.answer, str) and plan.answer
    assert plan.answer.startswith("Cheapest") == (plan.best is not None)
    if not points:
        assert set(plan.rejected["reason"]) == {"not searched"}
    for front, col in ((plan.pareto_latency, "latency_percentile_ms"),
                       (plan.pareto_energy, "energy_j_per_request")):
        assert front["stable"].all() and np.all(np.diff(front["cost_usd_per_hour"]) >= 0)
        # the front runs through the configurations passing every other test: none of
        # those beats one of its points on both axes
        stable = table[planner_plan.front_rows(spec, table, col)] if len(table) else table
        for row in front.itertuples():
            beats = ((stable["cost_usd_per_hour"] <= row.cost_usd_per_hour)
                     & (stable[col] <= getattr(row, col))
                     & ((stable["cost_usd_per_hour"] < row.cost_usd_per_hour)
                        | (stable[col] < getattr(row, col))))
            assert not beats.any()
    meets = set(table.loc[table["meets_sla"], "hardware"])
    assert set(plan.rejected["hardware"]) == {h.name for h in spec.hardware} - meets
    assert plan.rejected["reason"].isin(list(planner_price.REASONS) + ["not searched"]).all()
    text = planner_plan.ranked_csv(plan)
    tally(planner_plan.ranked_csv)
    back = csv_table(text)
    assert len(back) == len(ranked) and list(back["rank"]) == list(range(1, len(ranked) + 1))
    assert "cost_usd_per_hour" in back.columns and "token_limit_tokens" not in back.columns
    assert np.allclose(back["cost_usd_per_hour"].to_numpy(float), cost, rtol=1e-12)
    assert list(back["hardware"]) == [planner_plan.spreadsheet_safe(h) for h in ranked["hardware"]]
    raises_naming("spec", planner_plan.capacity_plan, dataclasses.asdict(spec))
    raises_naming("plan", planner_plan.ranked_csv, table)


# ============================================================ pareto_front

POINT = st.one_of(st.floats(-1e6, 1e6), st.sampled_from([0.0, 1.0, INF, -INF, NAN]))


@FUZZ
@given(st.lists(st.tuples(POINT, POINT), max_size=30))
def test_pareto_front(points):
    """pareto_front: indices of finite points sorted by cost, none beaten on both by
    another finite point, and every other finite point weakly dominated by one of them."""
    cost = np.array([p[0] for p in points], dtype=float)
    other = np.array([p[1] for p in points], dtype=float)
    idx = planner_plan.pareto_front(cost, other)
    tally(planner_plan.pareto_front)
    assert idx.dtype.kind == "i" and len(set(idx.tolist())) == idx.size
    finite = np.flatnonzero(np.isfinite(cost) & np.isfinite(other))
    assert set(idx.tolist()) <= set(finite.tolist())
    assert np.all(np.diff(cost[idx]) >= 0)
    for i in idx:
        strictly = ((cost[finite] <= cost[i]) & (other[finite] <= other[i])
                    & ((cost[finite] < cost[i]) | (other[finite] < other[i])))
        assert not strictly.any()
    for j in set(finite.tolist()) - set(idx.tolist()):
        assert np.any((cost[idx] <= cost[j]) & (other[idx] <= other[j]))


# ============================================================ arrival_process

@fuzz(200)          # a trace file written and read, a process built (~1-3 ms)
@given(plan_specs(), st.lists(st.floats(0.0, 1e4), min_size=2, max_size=50), st.data())
def test_arrival_process(tmp_path_factory, spec, times, data):
    """arrival_process: None for Poisson; Poisson or Renewal at the spec's rate and SCV
    for "bursty"; for "mmpp2" the arrival preset's MMPP-2 time-scaled to the rate (same
    SCV), or the MMPP-2 fitted to a trace file at the rate; the trace file, a plain CSV
    of timestamps, replayed at the rate for "replay"; a missing file names
    arrivals.trace; a non-spec is refused."""
    assume(max(times) - min(times) > 1e-3)
    folder = tmp_path_factory.mktemp("plan")
    (folder / "trace.csv").write_text("timestamp_s\n" + "\n".join(map(repr, times)) + "\n")
    rate = spec.rate_per_s
    kind = data.draw(st.sampled_from(planner_spec.ARRIVAL_KINDS), label="kind")
    trace = {"mmpp2": data.draw(st.sampled_from(ARRIVAL_TRACES + ("trace.csv",))),
             "replay": "trace.csv"}
    spec = spec.with_(arrivals_kind=kind, arrivals_trace=trace.get(kind, ""))
    process = planner_files.arrival_process(spec, base_dir=folder)
    tally(planner_files.arrival_process)
    if kind == "poisson":
        assert process is None
        return
    assert_no_nan([process.rate, process.scv])
    assert close(process.rate, rate, 1e-9) and isinstance(process.label, str)
    if kind == "bursty":
        assert isinstance(process, Poisson if spec.arrivals_scv == 1 else Renewal)
        assert close(process.scv, spec.arrivals_scv, 1e-12)
    elif kind == "mmpp2" and spec.arrivals_trace in ARRIVAL_TRACES:
        base = arrival_presets()[spec.arrivals_trace].mmpp2()
        assert isinstance(process, MMPP2) and close(process.scv, base.scv, 1e-9)
    elif kind == "mmpp2":
        assert isinstance(process, MMPP2) and "trace.csv" in process.label
    else:
        assert isinstance(process, Replay) and process.arrival_times.size == len(times)
    if kind in ("mmpp2", "replay"):
        raises_naming("arrivals.trace", planner_files.arrival_process,
                      spec.with_(arrivals_trace="missing.csv"), base_dir=folder)
    raises_naming("spec", planner_files.arrival_process, "plan.toml")


# ============================================================ texts

@FUZZ
@given(st.floats(0.0, 1e12), st.floats(0.0, 1e9),
       st.one_of(st.text(max_size=8), st.sampled_from(["=", "+", "-", "@", "'"]).flatmap(
           lambda c: st.text(max_size=8).map(lambda t: c + t)), st.integers(), st.floats()))
def test_texts(ms, usd, cell):
    """duration_text: ms below 1 s, s from 1 s up, the number to 3 significant digits,
    "unstable" for inf; money_text: $ and the amount (3 significant digits below $10,
    cents below $1,000, whole dollars above); spreadsheet_safe: an apostrophe before a
    leading = + - @ (a formula to a spreadsheet), any other text as it is."""
    text = planner_plan.duration_text(ms)
    tally(planner_plan.duration_text)
    number, unit = text.rsplit(" ", 1)
    assert unit == ("s" if ms >= 1000 else "ms")
    value = float(number.replace(",", "")) * (1000.0 if unit == "s" else 1.0)
    assert abs(value - ms) <= 5e-3 * ms
    assert planner_plan.duration_text(math.inf) == "unstable"
    money = planner_plan.money_text(usd)
    tally(planner_plan.money_text)
    assert money.startswith("$")
    amount = float(money[1:].replace(",", ""))
    assert abs(amount - usd) <= (5e-3 * usd if usd < 10 else 0.005 if usd < 1000 else 0.5)
    safe = planner_plan.spreadsheet_safe(cell)
    tally(planner_plan.spreadsheet_safe)
    text = str(cell)
    assert safe == ("'" + text if text[:1] in ("=", "+", "-", "@") else text)


@fuzz(300)
@given(st.sampled_from(("gpu", "llm")), st.integers(1, 4096),
       st.floats(0.0, 1e5, allow_nan=False), st.integers(0, 1 << 20),
       st.sampled_from([{}, {"b_max": "x"}, {"b_max": None}, {"token_limit": 1.5}]))
def test_settings_text(workload, b_max, delay, limit, bad):
    """settings_text: "b_max N", then the GPU's delay when above 0 or the LLM's token limit
    ("no token limit" for 0); a row missing a setting or holding a non-number is a
    ValueError naming row."""
    spec = (planner_spec.default_spec(workload) if workload == "llm"
            else PlanSpec(hardware=(CANDIDATE,)))
    row = {"b_max": b_max, "queue_delay_ms": delay, "token_limit": limit}
    text = planner_plan.settings_text(spec, row)
    tally(planner_plan.settings_text)
    assert text.startswith(f"b_max {b_max}")
    if workload == "gpu":
        assert ("max queue delay" in text) == (delay > 0)
    else:
        assert ("no token limit" in text) == (limit == 0)
    if bad:
        raises_naming("row", planner_plan.settings_text, spec, {**row, **bad})
    raises_naming("spec", planner_plan.settings_text, "spec", row)


# ============================================================ presets, grid

@fuzz(60)           # the presets read from files (~10 ms)
@given(st.sampled_from(planner_spec.WORKLOADS), plan_specs(),
       st.lists(st.text(st.sampled_from("ab ·(x)"), max_size=6), min_size=1, max_size=6),
       st.sampled_from(["x", "", None, 3, "GPU"]))
def test_presets_and_grid(workload, spec, parts, bad_workload):
    """hardware_presets: one candidate per priced profile, of the workload, at its GPUs'
    share of the instance's price; default_spec: a valid plan of the workload on them
    that round-trips through its file; short_name: the parts without remarks, at most 4;
    plan_grid: every combination, GPU b_max within the candidate's largest batch; a bad
    workload is a ValueError naming it."""
    presets_ = planner_spec.hardware_presets(workload)
    tally(planner_spec.hardware_presets)
    prices = {pid: (p, n) for p in hardware_prices().values() for pid, n in p.gpus_per_profile}
    assert presets_ and all(planner_spec.default_spec(workload).family.accepts(h)
                            and h.profile == pid for pid, h in presets_.items())
    for pid, hw in presets_.items():
        price, gpus = prices[pid]
        assert close(hw.price_usd_per_hour, price.usd_per_gpu_hour * gpus, 1e-12)
    default = planner_spec.default_spec(workload)
    tally(planner_spec.default_spec)
    assert default.workload == workload
    assert {h.name for h in default.hardware} <= {h.name for h in presets_.values()}
    assert planner_files.read_plan(planner_files.plan_toml(default)) == default
    raises_naming("workload", planner_spec.hardware_presets, bad_workload)
    raises_naming("workload", planner_spec.default_spec, bad_workload)
    name = " · ".join(parts)
    short = planner_spec.short_name(name)
    tally(planner_spec.short_name)
    kept = [p.split(" (")[0].strip() for p in name.split(" · ")]
    assert short == " · ".join(kept[:4] if len(kept) > 4 else kept)
    for hw in presets_.values():
        assert " (" not in planner_spec.short_name(hw.name)
    points = planner_plan.plan_grid(spec)
    tally(planner_plan.plan_grid)
    fits = sum(sum(1 for b in spec.b_max if h.workload == "llm" or b <= h.max_batch)
               for h in spec.hardware)
    assert len(points) == fits * (len(spec.queue_delay_ms) * len(spec.token_limit)
                                  * len(spec.replicas))
    assert all(tuple(p) == planner_plan.PARAMETERS for p in points)
    assert all(spec.hardware_named(p["hardware"]).workload == "llm"
               or p["b_max"] <= spec.hardware_named(p["hardware"]).max_batch for p in points)


# ============================================================ command line

@fuzz(6)            # a plan of one configuration, confirmed or not (~10-30 ms, ~0.5 s at worst)
@given(tiny_gpu_specs(), st.integers(1, 100), st.integers(0, 60))
def test_command_line(tmp_path_factory, capsys, spec, total, width):
    """main: a plan file of one configuration prices in this process, prints the answer,
    writes --out as the ranked CSV and returns 0; an unreadable or invalid file returns 2
    with the reason on stderr; progress_bar draws a bar of ``width`` and a last line."""
    spec = spec.with_(hardware=spec.hardware[:1], b_max=(min(spec.b_max),),
                      queue_delay_ms=spec.queue_delay_ms[:1], replicas=spec.replicas[:1])
    folder = tmp_path_factory.mktemp("cli")
    path, out = folder / "plan.toml", folder / "ranked.csv"
    path.write_text(planner_files.plan_toml(spec), encoding="utf-8")
    capsys.readouterr()
    assert planner_cli.main([str(path), "--out", str(out)]) == 0
    tally(planner_cli.main)
    printed = capsys.readouterr().out
    answer = printed.split("\n")[0]
    assert answer.endswith(".") and ("Cheapest" in answer) == ("Rejected" not in printed)
    assert len(csv_table(out.read_text(encoding="utf-8"))) in (0, 1)
    bad = folder / "bad.toml"
    bad.write_text(planner_files.plan_toml(spec).replace("rate_per_s = ", "rate_per_s = -"))
    assert planner_cli.main([str(bad)]) == 2
    assert "rate_per_s" in capsys.readouterr().err
    assert planner_cli.main([str(folder / "missing.toml")]) == 2
    assert "missing.toml" in capsys.readouterr().err
    stream = io.StringIO()
    draw = planner_cli.progress_bar(stream, width, tty=True)
    tally(planner_cli.progress_bar)
    for done in sorted({0, total // 3, total}):
        draw(done, total)
    lines = stream.getvalue().split("\r")[1:]
    assert len(lines) == len({0, total // 3, total}) and lines[-1].endswith("\n")
    assert all(ln.startswith("[") and ln[width + 1] == "]" for ln in lines)
    assert lines[-1].startswith("[" + "#" * width + "]") and f"{total:,}/{total:,}" in lines[-1]
    log = io.StringIO()                         # a file or a pipe: plain lines, no returns
    draw = planner_cli.progress_bar(log, width)
    for done in range(total + 1):
        draw(done, total)
    text = log.getvalue()
    assert "\r" not in text and text.endswith("\n")
    assert 1 <= text.count("\n") <= 12 and f"{total:,}/{total:,}" in text.splitlines()[-1]


# ============================================================ edge cases found by fuzzing

CANDIDATE = Hardware(name="g", price_usd_per_hour=1.0, alpha_ms=0.5, tau0_ms=5.0, max_batch=8)


def test_read_plan_overflow():
    """TOML a user may write: a range up to inf, a 400-digit number: ValueErrors."""
    hw = '[[hardware]]\nprofile = "dle_tf_t4_resnet50_amp"\n'
    for text in ("[search]\nreplicas = { from = 1, to = inf }\n" + hw,
                 "rate_per_s = " + "1" * 400 + "\n" + hw,
                 "[search]\nb_max = [" + "9" * 400 + "]\n" + hw):
        with pytest.raises(ValueError):
            planner_files.read_plan(text)


def test_read_plan_profile_not_text():
    """A hardware profile that is a list or a table is a ValueError naming profile."""
    for value in ('[1, "a"]', "{ a = 1 }"):
        raises_naming("profile", planner_files.read_plan, f"[[hardware]]\nprofile = {value}\n")


def test_plan_spec_seed_range():
    """Every seed of the documented range 0..2**63 − 1 is kept exactly."""
    for seed in (2 ** 53 + 1, 2 ** 63 - 1):
        assert PlanSpec(hardware=(CANDIDATE,), seed=seed).seed == seed


def test_plan_toml_control_character():
    """A source holding U+007F (DEL) and a newline survives the file round trip; a name
    holding one is refused (names go into one-line answers and CSV cells)."""
    spec = PlanSpec(hardware=(dataclasses.replace(CANDIDATE, source="g\x7f\nnext"),))
    assert planner_files.read_plan(planner_files.plan_toml(spec)) == spec
    raises_naming("name", lambda: dataclasses.replace(CANDIDATE, name="g\x7f"))


def test_plan_spec_token_law_type():
    """token_law must be text whatever the workload (a GPU plan ignores its value)."""
    raises_naming("token_law", PlanSpec, hardware=(CANDIDATE,), token_law=None)
    llm = next(iter(LLM_PRESETS.values()))
    raises_naming("token_law", PlanSpec, workload="llm", hardware=(llm,), token_law=["x"])
    raises_naming("token_law", planner_files.read_plan,
                  f'workload = "llm"\n[search]\ntoken_law = []\n[[hardware]]\n'
                  f'profile = "{llm.profile}"\n')


def test_ranked_csv_newline_in_name():
    """A name with a line break is refused; the CSV of a plan reads back whatever
    printable name the candidate has."""
    raises_naming("name", lambda: dataclasses.replace(CANDIDATE, name="a\nb"))
    spec = PlanSpec(hardware=(dataclasses.replace(CANDIDATE, name="a, \"b\""),),
                    rate_per_s=100.0, b_max=(8,), replicas=(1,), confirm=1, target_ms=1000.0)
    plan = planner_plan.capacity_plan(spec, executor="serial")
    assert list(csv_table(planner_plan.ranked_csv(plan))["hardware"]) == ['a, "b"']


def test_price_configuration_settings():
    """Each setting out of its range is a ValueError naming it, never truncated."""
    spec = PlanSpec(hardware=(CANDIDATE,), rate_per_s=100.0, b_max=(8,), replicas=(1,))
    args = dict(b_max=8, queue_delay_ms=0.0, token_limit=0, replicas=1)
    for name, bad in (("b_max", 1.5), ("b_max", NAN), ("b_max", INF), ("b_max", "x"),
                      ("replicas", 0.5), ("replicas", NAN), ("queue_delay_ms", INF),
                      ("queue_delay_ms", "x")):
        raises_naming(name, planner_price.price_configuration, spec, "g", **{**args, name: bad})
    raises_naming("spec", planner_price.price_configuration, "spec", "g", 8)


def test_hardware_k_s_not_a_list():
    """k_s that is not a list of numbers is a ValueError naming k_s."""
    raises_naming("k_s", lambda: Hardware(name="l", price_usd_per_hour=1.0, k_s=5))


def test_texts_plain_numbers():
    """The texts are plain numbers, as the docstrings show ("16.9 ms", "$0.292")."""
    assert planner_plan.duration_text(2500.0) == "2.5 s"
    assert "e" not in planner_plan.money_text(1e-5)


from tests.planner.test_families import (test_family_declarations,  # noqa: E402
                                         test_front_rows, test_price_point_and_helpers)
from engine.planner import words as planner_words  # noqa: E402
from engine.planner.families import batch as planner_batch  # noqa: E402

FUZZED = {
    planner_spec: {"PlanSpec": test_plan_spec, "hardware_presets": test_presets_and_grid,
                   "default_spec": test_presets_and_grid},
    planner_price: {"price_configuration": test_price_configuration,
                    "simulate_configuration": test_simulation_helpers},
    planner_batch: {"ConfigPrice": (test_price_configuration, "price_configuration"),
                    "configuration_seed": test_simulation_helpers,
                    "screen_jobs": test_simulation_helpers,
                    "replica_arrivals": test_simulation_helpers,
                    "simulate_replica": (test_simulation_helpers, "simulate_configuration"),
                    "BatchFamily": test_family_declarations,
                    "batch_knobs": test_family_declarations},
    planner_words: {"duration_text": test_texts, "money_text": test_texts},
    planner_plan: {"capacity_plan": test_capacity_plan, "ranked_csv": test_capacity_plan,
                   "CapacityPlan": (test_capacity_plan, "capacity_plan"),
                   "pareto_front": test_pareto_front, "plan_grid": test_presets_and_grid,
                   "spreadsheet_safe": test_texts, "settings_text": test_settings_text,
                   "price_point": test_price_point_and_helpers,
                   "front_rows": test_front_rows},
    planner_files: {"read_plan": test_plan_files, "plan_toml": test_plan_files,
                    "arrival_process": test_arrival_process},
    planner_cli: {"main": test_command_line, "progress_bar": test_command_line,
                  "shown_columns": test_price_point_and_helpers},
}
