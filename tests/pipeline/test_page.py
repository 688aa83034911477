"""The CPU-GPU pipeline page, driven headless with Streamlit's AppTest."""
from pathlib import Path

import numpy as np
import pytest

from tests import pagetest
from tests.pagetest import charts, metric, trace

from engine import pipeline as pl
from engine.presets import gpu_specs, pipeline_workloads

PAGE = str(Path(__file__).resolve().parents[2] / pagetest.script("pipeline"))


def open_page(query: dict | None = None):
    return pagetest.open_page(PAGE, query)


@pytest.mark.parametrize("query", [{"gpu": g} for g in gpu_specs()] + [{"gpu": "custom"}]
                         + [{"workload": w, "gpu": "t4"} for w in list(pipeline_workloads())[:2]])
def test_page_runs_for_every_preset(query):
    at = open_page(query)
    assert not at.error
    assert charts(at), "the pipeline diagram is drawn"
    assert metric(at, "Bottleneck stage") in ("CPU + host link", "GPU global memory",
                                              "Compute units")


def test_exact_curve_on_the_chart_is_the_engine_tandem():
    at = open_page({"view": "Throughput & latency", "cpu_speedup": "20",
                    "workload": "job_1mib_intensity_16", "K": "8"})
    lat = trace(charts(at)[1], "exact tandem")
    spec, wl = gpu_specs()["a100_40gb_sxm"], pipeline_workloads()["job_1mib_intensity_16"]
    r = pl.group_compute_units(pl.rates_from_specs(spec, wl), 8)
    lam = np.array(lat["x"][::8]) / 1000                      # jobs/s -> per ms
    expected = pl.tandem(lam, 20 * r.mu_cpu_per_ms, r.mu_mem_per_ms, r.mu_cu_per_ms, 8,
                         8).w_total_ms
    assert lat["y"][::8] == pytest.approx(list(expected), rel=1e-8)


def test_moving_sliders_changes_the_figure_data():
    at = open_page({"view": "Throughput & latency", "cpu_speedup": "20"})
    before = trace(charts(at)[1], "exact tandem")["y"]
    at.slider(key="K").set_value(5).run()
    assert not at.exception
    after = trace(charts(at)[1], "exact tandem")["y"]
    assert after != before
    cap_k2 = metric(at, "Max sustainable rate")
    at.slider(key="units").set_value(2).run()
    assert metric(at, "Max sustainable rate") != cap_k2
    at.segmented_control(key="view").set_value("Pipeline").run()
    at.slider(key="frac").set_value(0.95).run()
    text = " ".join(a["text"] for a in charts(at)[0]["layout"]["annotations"])
    assert "95 % of capacity" in text and "bottleneck" in text


@pytest.mark.parametrize("query", [
    {"frac": "0.01", "K": "1", "units": "1"}, {"frac": "0.99", "K": "64", "units": "1"},
    {"units": "128", "K": "1", "blocking": "after", "cpu_speedup": "1000"},
    {"cpu_speedup": "0.01", "load_mode": "rate", "rate_per_s": "0.001"},
    {"gpu": "custom", "mem_gb": "0.01", "workload": "job_16mib_gemm_fp16"}])
def test_extremes_run_without_exception(query):
    at = open_page(query)
    assert not at.exception
    if "mem_gb" in query:                                      # 16 jobs of 16 MiB in 10 MB
        assert any("do not fit" in e.value and "memory_slots" in e.value for e in at.error)


def test_unstable_load_is_reported_not_crashed():
    at = open_page({"load_mode": "rate", "rate_per_s": "1e9", "view": "Throughput & latency"})
    assert any("Unstable" in e.value and "capacity" in e.value for e in at.error)
    assert metric(at, "Mean latency (with blocking)") == "∞ (unstable)"
    fig = charts(at)[0]
    assert any(s["type"] == "rect" for s in fig["layout"].get("shapes", [])), "unstable shaded"


def test_large_phase_space_is_solved_only_on_request(monkeypatch):
    from app_pages.pipeline import data
    monkeypatch.setattr(data, "N_AUTO", 50)          # the page's limit, lowered
    at = open_page({"K": "8", "units": "8"})                  # N = 9·9 = 81 phases
    assert any("Limited" in w.value and "O(N³)" in w.value for w in at.warning)
    assert not at.metric and not charts(at)
    at.button(key="solve_exact").click().run()
    assert not at.exception and metric(at, "Max sustainable rate")
    at.slider(key="frac").set_value(0.6).run()                 # stays solved for this scenario
    assert not at.exception and metric(at, "Max sustainable rate")


@pytest.mark.parametrize("view", ["Throughput & latency", "FLOP/s & bytes/s", "Buffer & units",
                                  "Formulas"])
def test_every_view_renders(view):
    at = open_page({"view": view, "simulate": "true"})
    assert not at.exception
    if view == "Formulas":
        assert at.latex and any("1/(μ − λ)" in m.value for m in at.markdown)
    else:
        assert len(charts(at)) == 2
    if view == "Throughput & latency":
        assert len(trace(charts(at)[1], "simulation ±95% CI")["x"]) == 5


def test_share_link_round_trip():
    at = open_page({"gpu": "h100_sxm", "workload": "job_1mib_streaming", "K": "3",
                    "units": "5", "blocking": "after", "frac": "0.7", "view": "Pipeline"})
    assert at.session_state["K"] == 3 and at.session_state["blocking"] == "after"
    query = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert query["gpu"] == "h100_sxm" and query["units"] == "5"
    again = open_page(query)
    assert (metric(again, "Mean latency (with blocking)")
            == metric(at, "Mean latency (with blocking)"))
    assert again.session_state["view"] == "Pipeline"


def test_the_load_not_drawn_keeps_its_value_when_the_load_is_given_as_a_rate():
    """Issue 24: "Load given as: jobs/s", a rate typed, Enter raised KeyError "frac" (the
    what-if fragment reran alone and read the fraction, whose slider the last full run had
    not drawn, so Streamlit had forgotten it).  AppTest reruns the whole page; the state
    the fragment reads is checked instead."""
    at = open_page()
    at.slider(key="frac").set_value(0.6).run()
    at.radio(key="load_mode").set_value("rate").run()
    assert at.session_state["frac"] == 0.6, "the fragment's next rerun reads it"
    at.number_input(key="rate_per_s").set_value(5000.0).run()
    assert not at.exception and metric(at, "Max sustainable rate")
    assert at.session_state["frac"] == 0.6 and at.query_params["frac"] == "0.6"
    at.radio(key="load_mode").set_value("frac").run()
    assert at.slider(key="frac").value == 0.6 and at.session_state["rate_per_s"] == 5000.0


def test_malformed_link_parameters_fall_back_with_warnings():
    bad = {"frac": "banana", "K": "2.5", "units": "9999", "blocking": "sideways",
           "gpu": "<script>", "cpu_speedup": "nan"}
    at = open_page(bad)
    warned = " ".join(w.value for w in at.warning)
    defaults = {"frac": 0.8, "K": 2, "units": 8, "blocking": "before", "gpu": "a100_40gb_sxm",
                "cpu_speedup": 1.0}                        # FIELDS
    for key, default in defaults.items():
        assert f"`{key}`" in warned
        assert at.session_state[key] == default
    assert metric(at, "Max sustainable rate")


def test_pin_baseline_overlays_and_tabulates():
    at = open_page({"view": "Throughput & latency"})
    at.button(key="pin_pipeline").click().run()
    at.slider(key="K").set_value(3).run()
    assert any(t.get("name") == "baseline (pinned)" for t in charts(at)[1]["data"])
    assert len(at.dataframe) >= 1


# ---- issue 14: the defaults show blocking, plain numbers, the report gets the answer


def _percent(text: str) -> float:
    """The signed percentage in a results cell ("14,779 jobs/s (+3.90 %)")."""
    inside = text[text.index("(") + 1:text.index("%")].strip()
    return 0.0 if inside in ("0", "< 0.01") else float(inside)


def test_defaults_show_a_pipeline_where_blocking_matters():
    """Behaviour changed on purpose (issue 14): the default workload is the double-buffered
    one (K = 2) at 80 % load; blocking costs capacity and latency there, visibly."""
    at = open_page()
    assert at.session_state["workload"] == "job_1mib_double_buffered"
    assert metric(at, "Bottleneck stage") != "CPU + host link"
    exact = float(metric(at, "Mean latency (with blocking)").split()[0])
    naive = float(metric(at, "Mean latency (naive: no blocking)").split()[0])
    assert exact > 1.15 * naive                      # 0.686 ms vs 0.550 ms: 25 % apart
    lost = float(metric(at, "Lost to blocking").split()[0])
    assert lost > 10.0                               # 21.7 % below the slowest stage
    what_ifs = [_percent(v) for k, v in pagetest.results(at).items()
                if k.startswith("Capacity with")]
    assert len(what_ifs) == 4 and all(w > 1.0 for w in what_ifs)
    assert len(set(what_ifs)) == 4


def _all_text(at) -> str:
    parts = [e.value for kind in (at.markdown, at.caption, at.error, at.warning, at.info)
             for e in kind]
    for fig in charts(at):
        parts += [a.get("text", "") for a in fig["layout"].get("annotations", [])]
        parts += [t.get("name", "") for t in fig["data"]]
    return " ".join(str(p) for p in parts)


@pytest.mark.parametrize("gpu", list(gpu_specs()))
@pytest.mark.parametrize("workload", list(pipeline_workloads()))
def test_no_negative_zero_on_any_preset(gpu, workload):
    at = open_page({"gpu": gpu, "workload": workload})
    assert not at.exception
    text = _all_text(at)
    assert "Capacity with" in text and "-0.0" not in text and "−0.0" not in text
    assert "+0.00 %" not in text


def test_report_gets_the_answer_rows_and_plain_inputs(monkeypatch):
    import ui.export
    seen = {}
    monkeypatch.setattr(ui.export, "report_button",
                        lambda *a, **kw: seen.update(args=a, kw=kw))
    at = open_page()
    assert not at.exception
    title, params, sections = seen["args"][:3]
    answer = dict(seen["kw"]["answer"])
    assert answer == {k: v for k, v in pagetest.results(at).items() if k in answer}
    assert answer["Max sustainable rate"].endswith("jobs/s") and len(answer) >= 8
    assert "A100" in seen["kw"]["scenario"] and seen["kw"]["scenario"].endswith(".")
    assert all(isinstance(v, str) and "(" != v[:1] for v in params.values())
    assert params["Jobs the GPU memory holds (K)"] == "2 jobs"
    heads = [h for h, _, _ in sections()]
    assert "The pipeline at this load" in heads and not any("_" in h for h in heads)


def test_diagram_csv_is_the_stage_table(monkeypatch):
    """Behaviour changed on purpose (issue 14): the diagram's CSV held its boxes' centres;
    it now holds the stage table, columns named with units, the numbers shown on the boxes."""
    import ui.export
    shown = {}
    real = ui.export.show_chart
    monkeypatch.setattr(ui.export, "show_chart",
                        lambda fig, name, *a, table=None, **kw: (shown.update({name: table}),
                                                                 real(fig, name, *a, table=table,
                                                                      **kw)))
    at = open_page()
    assert not at.exception and callable(shown["pipeline"])
    frame = shown["pipeline"]()
    assert list(frame["stage"]) == list(pl.STAGES)
    assert {"rate alone (jobs/s)", "utilization (%)", "time held up by the next stage (%)",
            "room (jobs)"} <= set(frame.columns)
    boxes = " ".join(a["text"] for a in charts(at)[0]["layout"]["annotations"])
    for _, row in frame.iterrows():
        assert f"utilization {row['utilization (%)']:.1f} %" in boxes
    text = ui.export.figure_csv(None, frame).decode()
    assert "Compute units" in text and "2.2," not in text


def test_moving_the_load_moves_the_marker_on_the_memoised_latency_chart(monkeypatch):
    """Issue 14: the load is marked on the latency chart of "Throughput & latency" at the
    table's mean latency and follows the slider; the figure is memoised on the scenario
    (the same object after the move: only the point is new)."""
    drawn = pagetest.record_marked(monkeypatch)
    at = open_page({"view": "Throughput & latency"})
    before = pagetest.marked_figure(drawn)
    x = charts(at)[1]["data"][-1]["x"][0]
    drawn.clear()
    at.slider(key="frac").set_value(0.5).run()
    point = charts(at)[1]["data"][-1]
    assert point["x"][0] == pytest.approx(x * 0.5 / 0.8)        # the default load is 0.8
    assert point["name"] == "now: " + metric(at, "Mean latency (with blocking)")
    assert pagetest.marked_figure(drawn) is before
    assert len(charts(at)) == 2 and "hroughput" in charts(at)[0]["layout"]["title"]["text"]
