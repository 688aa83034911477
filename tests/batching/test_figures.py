"""Figure builders and exports, checked as data (not pixels)."""
import numpy as np
import pandas as pd
import pytest

from app_pages.batching import figures as figs
from ui.export import figure_csv, figure_frame, figure_html, report_html
from app_pages.batching.uploads import parse_profile_csv
from ui.uploads import neutralise_cell


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_latency_figure_carries_the_curves_and_marks_unstable_loads():
    x = np.linspace(0.1, 0.9, 5)
    exact = np.array([1.0, 2.0, 3.0, np.inf, np.inf])
    fig = figs.latency_figure(x, exact, exact * 1.2, exact * 1.1, exact * 1.1, x_title="ρ",
                              unstable_at=0.7, x_max=1.0, sim=(x[:2], [1.01, 2.02], [0.01, 0.02]),
                              baseline=(x, exact * 0.5), sla_ms=2.5)
    assert list(_trace(fig, "exact E[W]").y) == [1.0, 2.0, 3.0, None, None]   # inf -> gap
    sim = _trace(fig, "simulation ±95% CI")
    assert list(sim.error_y.array) == [0.01, 0.02]
    assert list(_trace(fig, "baseline (pinned)").y[:3]) == [0.5, 1.0, 1.5]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(rects) == 1 and rects[0].x0 == 0.7 and rects[0].x1 == 1.0
    assert fig.layout.yaxis.type == "log"
    label = next(a for a in fig.layout.annotations if a.text == "SLA 2.5 ms")
    assert label.y == pytest.approx(np.log10(2.5))          # on the chart: log axes take log10


def test_no_shading_when_capacity_is_off_the_chart():
    fig = figs.utilization_figure([0.1, 0.5], [0.2, 0.9], [0.3, 1.0], x_title="ρ",
                                  unstable_at=1.0, x_max=1.0)
    assert not [s for s in fig.layout.shapes if s.type == "rect"]


def test_throughput_fit_figure_draws_eq26():
    fig = figs.throughput_fit_figure([1, 2, 4], [500, 900, 1500], 0.1, 1.0, 0.99)
    fit = fig.data[0]
    b = np.asarray(fit.x)
    np.testing.assert_allclose(fit.y, 1000 * b / (0.1 * b + 1.0))
    assert list(fig.data[1].y) == [500, 900, 1500]


def test_figure_frame_and_csv_neutralise_formulas():
    fig = figs.residuals_figure([1, 2], [0.1, -0.2], "ms")
    fig.data[0].name = "=cmd|' /C calc'!A0"
    frame = figure_frame(fig)
    # one column per series named with its unit, x named after the axis (issue 14)
    assert list(frame.columns) == ["batch size b (requests)", "=cmd|' /C calc'!A0 (ms)"]
    assert len(frame) == 2
    text = figure_csv(fig).decode()
    assert "'=cmd" in text and "\n=cmd" not in text
    assert neutralise_cell("+1") == "'+1" and neutralise_cell("ok") == "ok"


def test_report_is_offline_and_escapes_user_text():
    fig = figs.residuals_figure([1, 2], [0.1, -0.2], "ms")
    html = report_html("<b>title</b>", {"profile": "<script>alert(1)</script>"},
                       [("chart", fig, "caption")], ["E[W] = ..."], ["a note"])
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "cdn" not in html.lower().split("plotly.js")[0][:2000]
    assert html.count("<h2>") >= 3 and "a note" in html
    standalone = figure_html(fig, "residuals")
    assert "Plotly.downloadImage" in standalone and "'svg'" in standalone


@pytest.mark.parametrize("text,match", [
    ("a,b\n1,2\n3,4\n", "missing column"),
    ("batch_size,throughput_per_s\n1,100\n", "at least 2 rows"),
    ("batch_size,throughput_per_s\n1,100\n2,inf\n", "finite"),
    ("batch_size,throughput_per_s\n1,100\n2,-5\n", "positive"),
    ("batch_size,throughput_per_s\n1,100\n1.5,200\n", "whole"),
    ("batch_size,throughput_per_s\n1,100\n1,200\n", "only once"),
    ("", "empty"),
    (b"\xff\xfe\x00bad", "UTF-8"),
    (b"x" * 3_000_000, "limit"),
])
def test_profile_csv_errors_are_clear(text, match):
    with pytest.raises(ValueError, match=match):
        parse_profile_csv(text)


def test_profile_csv_aliases_and_sorting():
    out = parse_profile_csv("Batch Size,Throughput,Power\n4,1500,130\n1,500,100\n2,900,110\n"
                            .replace("Batch Size", "batch_size"))
    assert list(out["batch_size"]) == [1, 2, 4]
    assert list(out["power_w"]) == [100, 110, 130]
    assert isinstance(pd.DataFrame(out), pd.DataFrame)
