"""Figure builders of the autoscaling-SLA page and the trace parser, checked as data."""
import numpy as np
import pytest

from engine import sla

from app_pages.sla import figures as figs
from ui.export import figure_frame
from app_pages.sla.uploads import parse_trace_csv


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_miss_figure_plots_the_share_late_and_shades_too_few_replicas():
    """Changed on purpose: the builder takes shares late (nan below the method's
    resolution), leaves unresolved points out of the data, labels the SLA line on the
    log axis (annotation y in log10) and ticks replicas at whole numbers."""
    n = np.arange(9.0, 15.0)
    miss = sla.resolved_miss([0.9, 0.98, 0.995, 0.999, 1.0, 1.0])
    fig = figs.miss_figure(n, miss, miss * 1.5, percentile=99, n_capacity=8.7,
                           floor=sla.MISS_RESOLUTION, sim=([10.0, 11.0], [0.03, 0.007]),
                           fix=([9.0, 12.0], [0.2, 0.01]), baseline=(n, miss), chosen=11)
    eq7 = _trace(fig, figs.NAMES["eq7"])
    assert list(eq7.x) == [9.0, 10.0, 11.0, 12.0]            # n = 13, 14: below, left out
    assert list(eq7.y) == pytest.approx([0.1, 0.02, 0.005, 0.001])
    assert None not in eq7.y
    assert list(_trace(fig, figs.NAMES["sim"]).y) == pytest.approx([0.03, 0.007])
    assert _trace(fig, "baseline (pinned)").y[0] == pytest.approx(0.1)
    assert fig.layout.yaxis.type == "log"
    rects = [s for s in fig.layout.shapes if s.type == "rect" and s.xref == "x"]
    assert len(rects) == 1 and rects[0].x0 == pytest.approx(5.7) and rects[0].x1 == 8.7
    sla_line = [s for s in fig.layout.shapes if s.type == "line" and s.y0 == s.y1]
    assert sla_line and sla_line[0].y0 == pytest.approx(0.01)
    label = next(a for a in fig.layout.annotations if a.text.startswith("SLA"))
    assert label.y == pytest.approx(-2.0)                    # log10(0.01): on the chart
    lo, hi = fig.layout.yaxis.range
    assert lo < label.y < hi
    assert any(a.text.startswith("below 1e-12") for a in fig.layout.annotations)
    assert fig.layout.xaxis.tickformat == "d" and fig.layout.xaxis.dtick == int(fig.layout.xaxis.dtick)


def test_miss_figure_draws_no_rounding_noise():
    """The P4 preset's noise: P(R ≤ RT) = 1 − 1.1e-16 at every n.  None of it is data
    (no value below 1e-12, no blank cell in the CSV); the legend says why the curve is
    empty."""
    n = np.arange(1.0, 12.0)
    within = 1.0 - np.array([1.44e-15, 0, 1.1e-16, 1.1e-16, 0, 0, 2.2e-16, 0, 0, 1.1e-16, 0])
    miss = sla.resolved_miss(within)
    fig = figs.miss_figure(n, miss, miss, percentile=99, n_capacity=0.6,
                           floor=sla.MISS_RESOLUTION, fix=(n[:2], [1.08e-8, np.nan]))
    frame = figure_frame(fig)        # wide (issue 14): x, then one column per drawn series
    values = frame[frame.columns[1:]].to_numpy(float).ravel()
    assert frame.notna().all().all() and (values >= sla.MISS_RESOLUTION).all()
    assert list(values) == pytest.approx([1.08e-8])
    assert any("below 1e-12 at every n" in t.name for t in fig.data)


def test_integer_ticks_are_whole_numbers():
    for lo, hi in [(0.5, 19.5), (0, 3), (5.7, 180.5), (0, 2400)]:
        ticks = figs.integer_ticks(lo, hi)
        assert ticks["dtick"] == int(ticks["dtick"]) >= 1 and ticks["tickformat"] == "d"
        assert (hi - lo) / ticks["dtick"] <= 8


def test_waiting_figure_keeps_eq1_as_printed_for_the_paper_view_only():
    """Changed on purpose: eq 1 as printed (wrong by design) is drawn only when asked
    for (the "Paper vs model" view), not in the replicas chart."""
    n = np.array([10.0, 11.0, 12.0])
    fig = figs.waiting_figure(n, [3.0, 1.0, 0.25], [1.0, 0.2, 0.0], percentile=99,
                              n_capacity=0.4, sim=(n, [4.0, 1.5, 0.3]))
    assert not any("as printed" in t.name for t in fig.data)
    assert list(_trace(fig, "retry model (geometric retries)").y) == [3.0, 1.0, 0.25]
    assert "ms" in fig.layout.yaxis.title.text
    assert not [s for s in fig.layout.shapes if s.type == "rect"]   # no unstable n in view
    paper = figs.waiting_figure(n, [3.0, 1.0, 0.25], [1.0, 0.2, 0.0], percentile=99,
                                n_capacity=0.4, printed_ms=[2.5, 0.4, -0.3])
    assert list(_trace(paper, "paper's eq 1 as printed (r real)").y) == [2.5, 0.4, None]
    assert paper.layout.title.text.startswith("Paper vs model")


def test_cdf_figure_marks_rt_and_the_percentile():
    t = np.linspace(0, 300, 4)
    fig = figs.cdf_figure(t, [0, 0.9, 0.99, 1.0], [0, 0.95, 0.999, 1.0], rt_ms=100,
                          percentile=99, n=11, sim=(t, [0, 0.88, 0.985, 1.0]))
    assert list(_trace(fig, figs.NAMES["sim"]).y) == [0, 0.88, 0.985, 1.0]
    assert any(s.x0 == 100 for s in fig.layout.shapes)
    assert any(s.y0 == pytest.approx(0.99) for s in fig.layout.shapes)
    assert any(a.text.startswith("SLA: 99 %") for a in fig.layout.annotations)
    assert fig.layout.xaxis.title.text == "response time (ms)"


def test_trace_figure_marks_violations_and_overloaded_intervals():
    t = np.arange(4) / 12
    rate = np.array([100.0, 300.0, 900.0, 200.0])
    serving = np.array([2, 2, 4, 3])
    fig = figs.trace_figure(t, rate, [2, 4, 10, 3], serving, [True, False, False, True],
                            rate >= serving * 100.0, 1 / 12)
    assert list(_trace(fig, "SLA missed").y) == [300.0, 900.0]
    assert fig.layout.yaxis2.tickformat == "d" and fig.layout.yaxis2.dtick == 2   # up to 10
    assert _trace(fig, "replicas serving").yaxis == "y2"
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [r.x0 for r in rects] == pytest.approx([1 / 12, 2 / 12])   # rate ≥ serving·μ


def test_cost_figure_accumulates_both_fleets():
    """Three half-hour intervals of 1, 3, 2 replicas at $2/h (static peak: 3 replicas)."""
    plan = sla.plan_replicas([100.0, 300.0, 200.0], 100.0, 0.5, 90, interval_s=1800.0,
                             cost_per_gpu_hour=2.0)
    assert list(plan.ordered) == [2.0, 4.0, 3.0]
    fig = figs.cost_figure(plan.end_h, plan.cumulative_cost, plan.cumulative_static_cost,
                           plan.static_replicas)
    assert list(_trace(fig, "autoscaled").x) == [0.5, 1.0, 1.5]
    assert list(_trace(fig, "autoscaled").y) == [2.0, 6.0, 9.0]
    assert list(_trace(fig, "static peak (4 replicas)").y) == [4.0, 8.0, 12.0]
    fig = figs.cost_figure([0.5, 1.0, 1.5], [1.0, 4.0, 6.0], [3.0, 6.0, 9.0], 3)
    assert list(_trace(fig, "autoscaled").y) == [1.0, 4.0, 6.0]
    assert list(_trace(fig, "static peak (3 replicas)").y) == [3.0, 6.0, 9.0]
    frame = figure_frame(fig)
    assert list(frame.columns) == ["time (h)", "static peak (3 replicas) ($)", "autoscaled ($)"]


@pytest.mark.parametrize("text,match", [
    ("size,speed\n1,2\n3,4\n", "expected columns"),
    ("time_s,rate_per_s\n0,10\n300,nan\n", "row 3.*finite"),
    ("time_s,rate_per_s\n0,10\n300,-4\n", "negative"),
    ("time_s,rate_per_s\n0,10\n", "at least 2 rows"),
    ("time_s,rate_per_s\n300,10\n0,12\n", "sorted"),
    ("time_s,rate_per_s\n0,10\n300,12\n900,3\n", "evenly spaced"),
    ("timestamp_s\n0.5\n0.2\n", "sorted"),
    ("", "empty"),
])
def test_trace_csv_errors_are_clear(text, match):
    with pytest.raises(ValueError, match=match):
        parse_trace_csv(text, 60.0)


def test_trace_csv_rates_and_timestamps():
    rates = parse_trace_csv("time_s,rate_per_s\n0,10\n300,0\n600,12.5\n", 60.0)
    assert rates["interval_s"] == 300.0 and list(rates["rate_per_s"]) == [10.0, 0.0, 12.5]
    stamps = parse_trace_csv("timestamp_s\n0\n1\n61\n62\n63\n", 60.0)
    assert stamps["interval_s"] == 60.0
    assert list(stamps["rate_per_s"]) == pytest.approx([2 / 60, 3 / 60])


def test_report_carries_every_sla_chart_under_a_human_title():
    from ui.export import report_html
    from app_pages.sla import views
    n = np.arange(9.0, 13.0)
    t = np.arange(3) * 0.5
    miss = [0.1, 0.01, 0.001, np.nan]
    figures = {
        "sla_vs_replicas": figs.miss_figure(n, miss, miss, percentile=99, n_capacity=8.0,
                                            floor=sla.MISS_RESOLUTION),
        "waiting_vs_replicas": figs.waiting_figure(n, [3, 2, 1, 0.5], [1, 0.5, 0.2, 0.1],
                                                   percentile=99, n_capacity=8.0),
        "paper_vs_model_waiting": figs.waiting_figure(n, [3, 2, 1, 0.5], [1, 0.5, 0.2, 0.1],
                                                      percentile=99, n_capacity=8.0,
                                                      printed_ms=[3, 2, 1, 0.5]),
        "response_cdf": figs.cdf_figure([0, 50, 100], [0, 0.9, 0.99], [0, 0.95, 0.999],
                                        rt_ms=100, percentile=99, n=10),
        "trace_replicas": figs.trace_figure(t, [100, 200, 150], [2, 3, 2], [2, 2, 2],
                                            [True, False, True], [False] * 3, 0.5),
        "cost": figs.cost_figure(t + 0.5, [2.5, 6.25, 8.75], [3.75, 7.5, 11.25], 3)}
    assert set(figures) == set(views.TITLES)
    sections = [(views.TITLES[name], fig, "") for name, fig in figures.items()]
    html = report_html("Autoscaling for a latency SLA", {"Arrival rate": "900 requests/s"},
                       sections, ["eq 7"])
    assert all(f"<h2>{title}</h2>" in html for title, _, _ in sections)
    assert "_" not in "".join(views.TITLES.values())
