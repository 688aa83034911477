"""The capacity-planner page on the LLM serving families (colocated replicas,
prefill/decode disaggregated), driven headless with Streamlit's AppTest.

Each plan is small (one candidate, one scheduler setting, a few server counts, one
confirmation at p90); the expected answers are the engine's, called with the spec the
inputs describe (through the page's memo, so a spec the page priced is not priced again)."""
from __future__ import annotations

import tomllib

import pandas as pd
import pytest

import engine.planner
from app_pages.planner import data
from app_pages.planner import hardware as hw
from engine.planner import default_spec, hardware_presets
from tests.pagetest import charts, link, metric
from ui.arrivals_input import POISSON

from .test_page import errors, open_capturing, open_page, plain, shown_text

PRESETS = hardware_presets("llm_serving")
QWEN, OPT = PRESETS["vllm_rtx4090_qwen2_5_7b"], PRESETS["distserve_vllm_a100_opt_13b"]
SLA = (("ttft", 90.0, 1000.0), ("tpot", 90.0, 100.0))
COMMON = {"plan_rate": "5", "plan_sla": "ttft:90:1000;tpot:90:100", "plan_max_num_seqs": "64",
          "plan_batched_tokens": "2048", "plan_confirm": "1"}
LINKS = {"llm_serving": {**COMMON, "plan_workload": "llm_serving", "plan_hw": hw.encode([QWEN]),
                         "plan_r_min": "1", "plan_r_max": "3"},
         "llm_disaggregated": {**COMMON, "plan_workload": "llm_disaggregated",
                               "plan_hw": hw.encode([OPT]), "plan_prefill": "1,2",
                               "plan_decode": "1,2"}}
SPECS = {"llm_serving": default_spec("llm_serving").with_(
             hardware=(QWEN,), rate_per_s=5.0, sla=SLA, max_num_seqs=(64,),
             max_num_batched_tokens=(2048,), replicas=(1, 2, 3), confirm=1),
         "llm_disaggregated": default_spec("llm_disaggregated").with_(
             hardware=(OPT,), rate_per_s=5.0, sla=SLA, max_num_seqs=(64,),
             max_num_batched_tokens=(2048,), prefill_instances=(1, 2), decode_instances=(1, 2),
             confirm=1)}
BAD_SLA = "ttft:90:1000;tpot:90:1"                 # TPOT below one decode step


@pytest.mark.parametrize("workload", list(LINKS))
def test_each_serving_family_answers_and_its_plan_round_trips(workload):
    """The engine's answer, its confirmed percentiles, the one-fewer check; the SLA rows
    and every input come back from the share link and from the downloaded plan file."""
    at = open_capturing(LINKS[workload])
    assert not at.exception and not errors(at)
    key = (SPECS[workload], POISSON, None)                 # as the page calls it
    assert data.plan.ready(*key)                           # the page priced this spec
    expected = data.plan(*key)
    assert expected.best is not None
    assert plain(at.success[0].value) == expected.answer
    for name in ("p90 TTFT, confirmed", "p90 TPOT, confirmed"):
        assert metric(at, name).endswith(" ms")
    table = next(df.value for df in at.main.dataframe if "cost ($/h)" in df.value.columns)
    assert {"p90 TTFT confirmed (ms)", "p90 TPOT ± 95 % CI (ms)", "binding"} <= set(table.columns)
    fewer = [m.value for m in at.markdown if m.value.startswith("**One server fewer**")]
    if expected.fewer is not None and len(expected.fewer):
        assert fewer and "misses" in fewer[0]
    assert "nan" not in shown_text(at).lower().replace("nanos", "")
    csv_text = at.session_state["_download_plan_ranked_csv"].decode("utf-8")
    header = next(ln for ln in csv_text.splitlines() if not ln.startswith("#")).split(",")
    assert {"ttft_p90_ms", "confirmed_tpot_p90_ms_ci95", "binding"} <= set(header)
    assert "p90 TTFT, confirmed by simulation" in at.session_state["_download_report"]
    params = link(at)
    assert params["plan_sla"] == "ttft:90:1000;tpot:90:100"
    text = at.session_state["_download_plan_toml"]
    assert tomllib.loads(text)["sla"] == [{"metric": m, "percentile": q, "target_ms": t}
                                          for m, q, t in SLA]
    again = open_page(params)                              # the share link
    assert link(again) == params and plain(again.success[0].value) == expected.answer
    at.number_input(key="plan_rate").set_value(1.0).run()
    at.file_uploader(key="planner_plan_upload").set_value(
        ("capacity_plan.toml", text.encode(), "application/toml"))
    at.run()                                               # the plan file
    assert not at.exception
    assert link(at) == params and plain(at.success[0].value) == expected.answer


@pytest.mark.parametrize("workload", list(LINKS))
def test_a_tpot_target_below_one_step_says_why_each_candidate_fails(workload):
    at = open_page({**LINKS[workload], "plan_sla": BAD_SLA})
    assert not at.exception and not at.success and not at.metric
    assert errors(at)[0].startswith("No configuration searched keeps p90 TTFT ≤ 1 s and p90 "
                                    "TPOT ≤ 1 ms")
    why = at.main.dataframe[-1].value
    assert list(why.columns) == ["candidate", "why it fails", "closest it came"]
    assert set(why["why it fails"]) == {"TPOT above the target"}
    assert all("one decode step alone takes" in d and "no load meets it" in d
               for d in why["closest it came"])
    assert "nan" not in shown_text(at).lower()


def test_sla_rows_are_edited_in_a_table_and_a_bad_row_is_named():
    at = open_page({**LINKS["llm_serving"], "plan_sla": BAD_SLA})
    before = link(at)["plan_sla"]
    cases = [({1: {"percentile": 101.0}}, [],
              "row 2, column 'p (%)': must be within 50–99.99, got 101"),
             ({}, [{"metric": "TTFT", "percentile": 90.0, "target_ms": 5.0}],
              "row 3: p90 TTFT appears twice"),
             ({0: {"target_ms": -1.0}}, [], "row 1, column 'target (ms)': must be above 0")]
    for edited, added, says in cases:
        at.session_state["plan_sla_table"] = {"edited_rows": edited, "added_rows": added,
                                              "deleted_rows": []}
        at.run()
        assert not at.exception
        found = [plain(e.value) for e in at.sidebar.error]
        assert found and found[0].startswith(f"SLA not used: {says}"), found
        assert "Still using the last valid SLA (p90 TTFT ≤ 1 s and p90 TPOT ≤ 1 ms)" in found[0]
        assert link(at)["plan_sla"] == before
    at.session_state["plan_sla_table"] = {
        "edited_rows": {1: {"target_ms": 2.0}}, "deleted_rows": [],
        "added_rows": [{"metric": "e2e", "percentile": 90.0, "target_ms": 60000.0}]}
    at.run()
    assert not at.exception and not at.sidebar.error
    assert link(at)["plan_sla"] == "ttft:90:1000;tpot:90:2;e2e:90:60000"
    assert errors(at)[0].startswith("No configuration searched keeps p90 TTFT ≤ 1 s and p90 "
                                    "TPOT ≤ 2 ms and p90 e2e ≤ 60 s")


def test_switching_families_keeps_each_ones_inputs():
    """Each family keeps its own traffic, SLA, table and ranges; one not shown yet starts
    from its defaults; the serving defaults (confirming 5 at p99) wait for the button."""
    at = open_page({"plan_b_max": "4,8", "plan_r_min": "7", "plan_r_max": "9",
                    "plan_confirm": "1"})
    at.number_input(key="plan_rate").set_value(2500.0).run()
    at.radio(key="plan_workload").set_value("llm_serving").run()
    ss = at.session_state
    assert not at.exception and at.button(key="plan_run").label.startswith("Price ")
    assert (ss["plan_rate"], ss["plan_sla"]) == (1.0, default_spec("llm_serving").sla)
    assert hw.decode(ss["plan_hw"], "llm_serving") == default_spec("llm_serving").hardware
    at.number_input(key="plan_rate").set_value(3.0).run()
    at.multiselect(key="plan_max_num_seqs").set_value([64]).run()
    at.radio(key="plan_workload").set_value("llm_disaggregated").run()
    assert ss["plan_rate"] == 1.0 and ss["plan_prefill"] == [1, 2, 3]
    at.multiselect(key="plan_prefill").set_value([2]).run()
    at.radio(key="plan_workload").set_value("llm_serving").run()
    assert (ss["plan_rate"], ss["plan_max_num_seqs"]) == (3.0, [64])
    at.radio(key="plan_workload").set_value("gpu").run()
    assert (ss["plan_rate"], ss["plan_b_max"], ss["plan_target_unit"]) == (2500.0, [4, 8], "ms")
    assert at.success and not at.exception
    at.radio(key="plan_workload").set_value("llm_disaggregated").run()
    assert ss["plan_prefill"] == [2] and not at.exception


def test_an_uploaded_trace_drives_the_plan_and_the_plan_file_names_it():
    at = open_capturing({**LINKS["llm_serving"], "plan_sla": BAD_SLA})
    laws = list(at.main.dataframe[-1].value["closest it came"])
    at.radio(key="plan_tokens").set_value("trace").run()
    assert any("No trace uploaded yet" in i.value for i in at.sidebar.info)
    at.file_uploader(key="planner_token_trace_upload").set_value(
        ("bad.csv", b"input_tokens,output_tokens\n", "text/csv"))
    at.run()
    assert any(plain(e.value).startswith("Trace not used") for e in at.sidebar.error)
    rows = "\n".join(f"{0.1 * i:.1f},{100 + 37 * i % 900},{20 + 13 * i % 300}"
                     for i in range(200))
    at.file_uploader(key="planner_token_trace_upload").set_value(
        ("mine.csv", f"timestamp_s,input_tokens,output_tokens\n{rows}\n".encode(), "text/csv"))
    at.run()
    assert not at.exception and not at.sidebar.error
    plan = tomllib.loads(at.session_state["_download_plan_toml"])
    assert plan["serving"]["token_trace"] == "mine.csv"
    assert any("names the uploaded trace mine.csv" in c.value for c in at.caption)
    report = at.session_state["_download_report"]
    assert "prompts and replies of mine.csv (uploaded) (200 requests)" in report
    assert errors(at)[0].startswith("No configuration searched keeps")
    assert list(at.main.dataframe[-1].value["closest it came"]) != laws   # its requests


def test_where_disaggregation_pays(monkeypatch):
    """Without the engine's ``disaggregation_pays`` the view says so; with it, one call
    at five rates around the plan's, on request, drawn and tabled (the engine's own is
    checked in tests/planner: here a hand-made answer)."""
    monkeypatch.delattr(engine.planner, "disaggregation_pays", raising=False)
    query = {**LINKS["llm_disaggregated"], "plan_view": "Where disaggregation pays"}
    at = open_page(query)
    assert any("Not available yet" in i.value for i in at.info)
    calls = []

    def fake(spec, rates_per_s, *, arrivals=None, workload=None, executor=None):
        calls.append((spec, tuple(rates_per_s)))
        return pd.DataFrame({
            "rate_per_s": rates_per_s, "colocated_cost_usd_per_hour": [1, 2, 4, 8, float("nan")],
            "disaggregated_cost_usd_per_hour": [2, 2, 3, 6, 12],
            "colocated_fleet": ["1 replica", "2 replicas", "4 replicas", "8 replicas", ""],
            "disaggregated_fleet": ["1P+1D", "1P+1D", "1P+2D", "2P+3D", "4P+6D"],
            "cheaper": ["colocated", "same cost", "disaggregated", "disaggregated",
                        "disaggregated"],
            "saving_fraction": [0.5, 0.0, 0.25, 0.25, float("nan")], "confirmed": True})

    monkeypatch.setattr(engine.planner, "disaggregation_pays", fake, raising=False)
    at.run()
    assert at.button(key="plan_disaggregation_run").label == "Compare at 5 rates" and not calls
    at.button(key="plan_disaggregation_run").click().run()
    assert not at.exception and len(calls) == 1
    assert calls[0][1] == (1.25, 2.5, 5.0, 10.0, 20.0)
    fig = charts(at)[-1]
    assert [t["name"].split(" ")[0] for t in fig["data"]] == ["colocated", "disaggregated"]
    table = at.main.dataframe[-1].value
    assert list(table["cheaper"]) == ["colocated", "the same cost", "disaggregated",
                                      "disaggregated", "disaggregated"]
    assert list(table["saving (%)"]) == ["50", "0", "25", "25", "—"]
    assert (table["colocated ($/h)"].iloc[-1], table["colocated fleet"].iloc[-1]) == (
        "none meets the SLA", "—")


def test_serving_plans_wait_for_the_button_when_confirming_takes_seconds():
    serving, small = default_spec("llm_serving"), SPECS["llm_serving"]
    assert data.waits_for_button(serving, POISSON)              # 5 confirmed at p99
    assert not data.waits_for_button(small, POISSON)            # 1 at p90
    assert data.confirm_work(default_spec("gpu")) == 0
