"""The capacity-planner page, driven headless with Streamlit's AppTest.

Each test keeps its plan small (a few b_max and replica counts, one confirmation), so a
run prices tens of configurations; the expected answers come from the engine called
directly with the spec the inputs describe."""
from __future__ import annotations

import csv
import io
import json
import re
import tomllib

import numpy as np
from streamlit.testing.v1 import AppTest

from app_pages.planner import inputs
from engine.planner import capacity_plan, default_spec, plan_toml, ranked_csv
from tests import pagetest
from tests.pagetest import charts, link, metric

PAGE = str(pagetest.ROOT / pagetest.script("planner"))
# The default GPU plan narrowed to 3 candidates × 2 b_max × 3 replica counts.
FAST = {"plan_b_max": "4,8", "plan_r_min": "7", "plan_r_max": "9", "plan_confirm": "1"}
FAST_SPEC = default_spec("gpu").with_(b_max=(4, 8), replicas=(7, 8, 9), confirm=1)
LLM_FAST = {"plan_workload": "llm", "plan_b_max": "16,32", "plan_token_limits": "0,512",
            "plan_r_min": "1", "plan_r_max": "2", "plan_confirm": "1"}


def open_page(query: dict | None = None) -> AppTest:
    return pagetest.open_page(PAGE, query)


def plain(text: str) -> str:
    """Markdown text as shown (the page escapes user-typed punctuation: share.inert)."""
    return re.sub(r"\\(.)", r"\1", text)


def errors(at) -> list[str]:
    return [plain(e.value) for e in at.error]


def shown_text(at) -> str:
    """Every text element and table cell on the page, for "never NaN" checks."""
    parts = [plain(getattr(e, "value", "") or "") for e in (*at.markdown, *at.caption,
                                                          *at.error, *at.success, *at.info,
                                                          *at.warning)]
    parts += [m.value for m in at.metric]
    parts += [df.value.to_csv() for df in at.dataframe]
    return "\n".join(parts)


def ranked(at):
    """The ranked table (the first table with a cost and a b_max column)."""
    return next(df.value for df in at.dataframe
                if {"cost ($/h)", "b_max"} <= set(df.value.columns))


def per_candidate(at):
    """The table of each candidate at its cheapest."""
    return next(df.value for df in at.dataframe if "cost against the cheapest" in df.value.columns)


def _page_capturing_downloads(page):
    """The page with every download's data (generated at once when deferred) kept in
    session state under "_download_<key>" (AppTest does not click download buttons)."""
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    real = DeltaGenerator.download_button

    def capture(self, label, data, *args, **kwargs):
        key = kwargs.get("key")
        if callable(data):
            data = data()
        st.session_state[f"_download_{key}"] = data
        return real(self, label, data, *args, **kwargs)

    DeltaGenerator.download_button = capture
    try:
        exec(compile(open(page, encoding="utf-8").read(), page, "exec"), {"__name__": "__main__"})
    finally:
        DeltaGenerator.download_button = real


def open_capturing(query: dict) -> AppTest:
    at = AppTest.from_function(_page_capturing_downloads, args=(PAGE,), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_defaults_show_the_engines_answer_first():
    """The default plan (768 configurations): the first result is the engine's answer in
    words, then its numbers; the tables and charts come after."""
    at = open_page()
    assert not at.error
    expected = capacity_plan(default_spec("gpu"), executor="serial")
    answer = at.success[0]
    assert plain(answer.value) == expected.answer
    best = expected.best
    assert metric(at, "Cost") == f"${best['cost_usd_per_hour']:.3g}/h"
    assert metric(at, "Replicas").startswith(f"{int(best['replicas'])} × ")
    assert metric(at, "p99 latency, confirmed").endswith(" ms")
    kinds = [e.type for e in at.main]
    first = kinds.index("success")          # only the title, inputs and a caption above
    assert not {"metric", "plotly_chart", "alert"} & set(kinds[:first])
    ranked = len(kinds) - 1 - kinds[::-1].index("dataframe")
    assert first < kinds.index("metric") < ranked < kinds.index("plotly_chart")
    assert "768 configurations" in " ".join(c.value for c in at.caption)
    assert "nan" not in shown_text(at).lower().replace("nanos", "")


def test_share_link_round_trips_every_input():
    hw = json.loads(link(open_page(FAST))["plan_hw"])[:1]
    hw.append(["", "My GPU", 1.25, 150.0, 30.0, 0.5, 2.0, 64])
    query = {"plan_rate": "1500", "arrivals": "bursty", "arrivals_scv": "2.5",
             "plan_pct": "95", "plan_target": "0.02", "plan_target_unit": "s",
             "plan_energy_cap": "true", "plan_energy_j": "5", "plan_cut_pct": "10",
             "plan_token_law": "azure_2023_code_output", "plan_hw": json.dumps(hw),
             "plan_b_max": "8,16", "plan_delay_ms": "0,2", "plan_token_limits": "0,256",
             "plan_r_min": "3", "plan_r_max": "5", "plan_confirm": "2", "plan_seed": "7",
             "plan_view": "Cost vs energy", "img": "svg"}
    at = open_page(query)
    assert not at.exception and not at.warning and not at.error
    params, fields = link(at), {f.key: f for f in inputs.FIELDS}
    for key, value in query.items():
        assert params[key] == fields[key].format(fields[key].parse(value)), key
    again = open_page(params)
    assert link(again) == params
    for key in query:
        assert again.session_state[key] == at.session_state[key], key
    assert again.session_state["plan_target"] == 0.02          # 20 ms, typed in s
    assert plain(again.success[0].value) == plain(at.success[0].value)


def test_a_bad_hardware_row_is_named_and_the_last_valid_table_stays():
    at = open_page(FAST)
    before, answer = link(at)["plan_hw"], plain(at.success[0].value)
    t4 = "T4 16GB · ResNet-50 · mixed precision · TensorFlow"
    half = {"name": "Half typed", "price_usd_per_hour": 1.0}
    cases = [({"edited_rows": {1: {"price_usd_per_hour": -5.0}}, "added_rows": []},
              r"row 2 \(V100 16GB.*\), column 'price \(\$/h\)': must be a number in \(0, inf\), got -5"),
             ({"edited_rows": {}, "added_rows": [half]},
              r"row 4 \(Half typed\), column 'busy power \(W\)': empty cell"),
             ({"edited_rows": {2: {"name": t4}}, "added_rows": []},
              r"row 3 .*column 'name': the same name as row 1"),
             ({"edited_rows": {0: {"tau0_ms": -1.0}}, "added_rows": []},
              r"row 1 \(T4 16GB.*\), column 'τ0 \(ms per batch\)': must be a number in \[0, inf\)"),
             ({"edited_rows": {0: {"name": "=HYPERLINK(1)"}}, "added_rows": []},
              r"row 1 \(=HYPERLINK\(1\)\), column 'name': must not start with =")]
    for edits, says in cases:
        at.session_state["plan_hw_table"] = {**edits, "deleted_rows": []}
        at.run()
        assert not at.exception, at.exception
        found = [e for e in errors(at) if e.startswith("Hardware table not used")]
        assert found and re.search(says, found[0]), (says, errors(at))
        assert "Still using the last valid table (3 candidates" in found[0]
        assert link(at)["plan_hw"] == before
        assert plain(at.success[0].value) == answer
    at.session_state["plan_hw_table"] = {"edited_rows": {1: {"price_usd_per_hour": 0.5}},
                                         "added_rows": [], "deleted_rows": []}
    at.run()
    assert not errors(at)
    assert json.loads(link(at)["plan_hw"])[1][2] == 0.5
    assert "V100" in plain(at.success[0].value)        # at $0.50/h the V100 is cheapest


def test_an_unreachable_target_says_why_each_candidate_fails():
    at = open_page({**FAST, "plan_target": "0.5"})
    assert not at.exception and not at.success and not at.metric
    assert errors(at)[0].startswith("No configuration searched keeps 99 % of requests within "
                                    "0.5 ms")
    why = at.dataframe[-1].value
    assert list(why.columns) == ["candidate", "why it fails", "closest it came"]
    assert len(why) == 3 and set(why["why it fails"]) == {"latency above the target"}
    assert all(re.match(r"best p99 [\d.]+ ms \(b_max \d+, \d+ replicas\) > 0.5 ms", d)
               for d in why["closest it came"])
    assert "nan" not in shown_text(at).lower()


def test_a_rate_no_configuration_carries_gives_the_capacity_limit():
    at = open_page({**FAST, "plan_rate": "1000000"})
    assert not at.exception and not at.success and not at.metric
    why = at.dataframe[-1].value
    assert set(why["why it fails"]) == {"unstable: more load than the replicas can carry"}
    expected = capacity_plan(FAST_SPEC.with_(rate_per_s=1e6), executor="serial").rejected
    assert list(why["closest it came"]) == list(expected["detail"])
    assert all("images/s with 9 replicas, below the 1e+06 images/s offered" in d
               for d in why["closest it came"])
    assert not charts(at)
    assert any("nothing to draw" in i.value for i in at.info)
    assert "nan" not in shown_text(at).lower()


def test_inputs_the_engine_refuses_are_named_not_raised():
    at = open_page({**FAST, "plan_b_max": ""})
    assert not at.exception
    assert any(e.startswith("Plan not run: b_max must hold at least one value")
               for e in errors(at))
    at = open_page({**FAST, "plan_b_max": "512"})
    assert any("every b_max picked is above the largest batch" in e for e in errors(at))


def test_llm_workload_renders_with_its_own_inputs():
    at = open_page(LLM_FAST)
    assert not at.exception and not at.error
    ss = at.session_state
    assert (ss["plan_rate"], ss["plan_target"], ss["plan_target_unit"]) == (1.0, 60.0, "s")
    expected = capacity_plan(default_spec("llm").with_(b_max=(16, 32), token_limit=(0, 512),
                                                       replicas=(1, 2), confirm=1),
                             executor="serial")
    assert plain(at.success[0].value) == expected.answer
    table = ranked(at)
    assert "token limit (tokens)" in table.columns and "mean latency (s)" in table.columns
    assert "replies cut (%)" in table.columns
    assert metric(at, "p99 latency, confirmed").endswith(" s")
    assert at.sidebar.selectbox(key="plan_token_law").value == "azure_2023_conv_output"


def test_switching_workloads_keeps_each_ones_inputs():
    at = open_page({**FAST, "plan_token_limits": "0"})   # the LLM plan: 80 configurations
    at.number_input(key="plan_rate").set_value(2500.0).run()
    at.radio(key="plan_workload").set_value("llm").run()
    ss = at.session_state
    assert (ss["plan_rate"], ss["plan_r_max"], ss["plan_target_unit"]) == (1.0, 8, "s")
    at.multiselect(key="plan_b_max").set_value([16]).run()
    at.number_input(key="plan_r_max").set_value(2).run()
    at.radio(key="plan_workload").set_value("gpu").run()
    assert (ss["plan_rate"], ss["plan_r_min"], ss["plan_r_max"]) == (2500.0, 7, 9)
    assert ss["plan_b_max"] == [4, 8] and ss["plan_target_unit"] == "ms"
    at.radio(key="plan_workload").set_value("llm").run()
    assert ss["plan_b_max"] == [16] and ss["plan_r_max"] == 2 and not at.exception


def test_target_unit_converts_the_value():
    at = open_page(FAST)
    at.radio(key="plan_target_unit").set_value("s").run()
    assert at.session_state["plan_target"] == 0.01
    assert "within 10 ms" in plain(at.success[0].value)


def test_plan_file_download_is_the_inputs_and_opening_it_restores_them():
    at = open_capturing(FAST)
    text = at.session_state["_download_plan_toml"]
    assert text == plan_toml(FAST_SPEC)
    assert tomllib.loads(text)["search"]["b_max"] == [4, 8]
    before = link(at)
    at.number_input(key="plan_rate").set_value(3000.0).run()
    at.number_input(key="plan_confirm").set_value(2).run()
    assert link(at) != before
    at.file_uploader(key="planner_plan_upload").set_value(
        ("capacity_plan.toml", text.encode(), "application/toml"))
    at.run()
    assert not at.exception
    assert any("Inputs filled from capacity_plan.toml" in plain(s.value) for s in at.success)
    assert link(at) == before
    bad = text.replace("percentile = 99.0", "percentile = 101.0")
    at.number_input(key="plan_rate").set_value(2500.0).run()
    kept = link(at)
    at.file_uploader(key="planner_plan_upload").set_value(("bad.toml", bad.encode(),
                                                           "application/toml"))
    at.run()
    assert not at.exception
    assert any(e.startswith("Plan file not used: percentile must be a number in [50, 99.99]") for e in errors(at))
    assert link(at) == kept


def test_ranked_csv_and_report():
    at = open_capturing(FAST)
    data = at.session_state["_download_plan_ranked_csv"]
    plan = capacity_plan(FAST_SPEC, executor="serial")
    expected = ranked_csv(plan)
    text = data.decode("utf-8")
    assert text.replace("\r\n", "\n") == expected.replace("\r\n", "\n")
    rows = list(csv.reader(io.StringIO("\n".join(ln for ln in text.splitlines()
                                                 if not ln.startswith("#")))))
    header = rows[0]
    for column in ("cost_usd_per_hour", "cost_usd_per_million_requests", "mean_latency_ms",
                   "screened_percentile_latency_ms", "confirmed_percentile_latency_ms",
                   "utilization_fraction", "energy_J_per_request", "queue_delay_ms"):
        assert column in header, column
    assert len(rows) - 1 == len(plan.ranked)
    report = at.session_state["_download_report"]
    opening, rest = report.split("<h2>Inputs</h2>", 1)
    assert plan.answer.replace("'", "&#x27;") in opening
    assert "<th>Cheapest configuration</th>" in opening
    assert "<th>Confirmed by simulation</th><td>1 of 1 tried</td>" in opening
    assert "Cost against the SLA&#x27;s latency percentile" in rest or \
        "Cost against the SLA's latency percentile" in rest
    assert "The cheapest configurations meeting the SLA" in rest


def test_every_view_renders():
    at = open_page(FAST)
    first = charts(at)[-1]
    assert first["layout"]["title"]["text"].startswith("Cost against p99 latency")
    at.segmented_control(key="plan_view").set_value("Cost vs energy").run()
    assert charts(at)[-1]["layout"]["title"]["text"].startswith("Cost against energy")
    at.segmented_control(key="plan_view").set_value("All configurations").run()
    table = at.dataframe[-1].value
    assert len(table) == 18 and list(table["cost ($/h)"]) == sorted(table["cost ($/h)"])
    at.segmented_control(key="plan_view").set_value("How it works").run()
    assert len(at.latex) >= 6 and not at.exception
    assert any("Random dispatch" in m.value and "conservative" in m.value for m in at.markdown)


def test_garbage_in_the_link_falls_back_with_a_warning():
    at = open_page({**FAST, "plan_hw": "<script>alert(1)</script>", "plan_b_max": "3,x",
                    "plan_delay_ms": "inf", "plan_workload": "tpu"})
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    for key in ("plan_hw", "plan_b_max", "plan_delay_ms", "plan_workload"):
        assert f"`{key}`" in warned, key
    assert at.success


def test_a_gpu_table_in_an_llm_link_gives_way_to_the_llm_defaults():
    gpu_table = link(open_page(FAST))["plan_hw"]
    at = open_page({**LLM_FAST, "plan_hw": gpu_table})
    assert not at.exception
    assert any("Hardware table ignored" in w.value for w in at.warning)
    assert "A100" in plain(at.success[0].value) or "H100" in plain(at.success[0].value)



def test_presets_multiselect_adds_and_removes_rows():
    at = open_page(FAST)
    picked = at.multiselect(key="plan_hw_presets")
    assert picked.value == ["dle_tf_t4_resnet50_amp", "dle_tf_v100_16gb_resnet50_amp",
                            "dle_tf_a100_40gb_resnet50_amp"]
    picked.set_value(["dle_tf_t4_resnet50_amp", "p4_resnet50_int8"]).run()
    assert not at.exception and not errors(at)
    rows = json.loads(link(at)["plan_hw"])
    assert [r[0] for r in rows] == ["dle_tf_t4_resnet50_amp", "p4_resnet50_int8"]
    assert at.multiselect(key="plan_hw_presets").value == [r[0] for r in rows]


def test_a_large_plan_waits_for_the_button_and_too_large_a_one_is_refused():
    at = open_page({"plan_r_max": "200"})                    # 3 × 8 × 200 = 4,800
    assert not at.success and at.button(key="plan_run").label == "Price 4,800 configurations"
    assert any("press the button" in i.value for i in at.info)
    at = open_page({"plan_r_max": "10000"})                  # 240,000 > 200,000
    assert any(e.startswith("Plan not run: the ranges make 240,000 configurations, at most "
                            "200,000") for e in errors(at))


def test_the_arrival_choice_goes_into_the_plan_and_its_file():
    """Bursty: the SCV; MMPP-2 of a preset: its id; an uploaded trace replayed: its file
    name (and an MMPP-2 fitted to an upload is recorded as its replay, said so)."""
    at = open_capturing({**FAST, "arrivals": "bursty", "arrivals_scv": "3"})
    plan = tomllib.loads(at.session_state["_download_plan_toml"])["arrivals"]
    assert plan == {"kind": "bursty", "scv": 3.0, "trace": ""}
    assert metric(at, "Arrivals") == "bursty arrivals (SCV 3)"
    assert "simulated" in set(ranked(at)["mean from"])          # no exact mean off Poisson
    at = open_capturing({**FAST, "arrivals": "mmpp2", "arrivals_trace": "azure_2023_conv"})
    plan = tomllib.loads(at.session_state["_download_plan_toml"])["arrivals"]
    assert (plan["kind"], plan["trace"]) == ("mmpp2", "azure_2023_conv")
    assert "MMPP-2 fitted to the Azure conv trace" in plain(at.success[0].value)
    times = ", ".join(f"{t:.3f}" for t in np.cumsum(np.random.default_rng(1).exponential(
        0.5, 400)))
    trace = ("timestamp_s\n" + times.replace(", ", "\n") + "\n").encode()
    at.selectbox(key="arrivals").set_value("replay").run()
    at.file_uploader(key="planner_arrivals_upload").set_value(("mine.csv", trace, "text/csv"))
    at.run()
    assert not at.exception
    plan = tomllib.loads(at.session_state["_download_plan_toml"])["arrivals"]
    assert (plan["kind"], plan["trace"]) == ("replay", "mine.csv")
    assert "replay of mine.csv (uploaded)" in plain(at.success[0].value)
    at.selectbox(key="arrivals").set_value("mmpp2").run()
    at.selectbox(key="arrivals_trace").set_value("upload").run()
    plan = tomllib.loads(at.session_state["_download_plan_toml"])["arrivals"]
    assert (plan["kind"], plan["trace"]) == ("replay", "mine.csv")
    assert any("records the uploaded trace as a replay of mine.csv" in c.value
               for c in at.caption)


def test_each_candidate_at_its_cheapest():
    """One row per candidate: the cheapest of them at × 1.00, the others' cost against it
    from the engine's per-hardware rows, or why they fail."""
    at = open_page(FAST)
    table = per_candidate(at)
    spec = default_spec("gpu")
    assert len(table) == len(spec.hardware)
    assert table["cost against the cheapest"].iloc[0] == "× 1.00"
    assert all(v.startswith("meets the SLA") or ":" in v for v in table["verdict"])


def test_plan_work_weighs_llm_and_simulated_plans():
    """A plan's work in GPU-configuration units: LLM configurations and non-Poisson
    arrivals weigh more, so a large one runs on local processes or waits for the button;
    the default plans of both workloads run at once, in this process."""
    from app_pages.planner import data
    from ui import arrivals_input
    gpu, llm = default_spec("gpu"), default_spec("llm")
    poisson, bursty = arrivals_input.POISSON, arrivals_input.bursty(4.0)
    assert data.plan_work(gpu, poisson) == gpu.n_configurations
    assert data.plan_work(gpu, bursty) == data.SIMULATED_WEIGHT * gpu.n_configurations
    assert data.plan_work(llm, poisson) == data.COST_WEIGHT["llm"] * llm.n_configurations
    for spec in (gpu, llm):
        assert data.executor_for(data.plan_work(spec, poisson)) == "serial"
    from ui.budget import shared_pool
    assert data.executor_for(data.SERIAL_MAX + 1) is shared_pool()   # one for every session
