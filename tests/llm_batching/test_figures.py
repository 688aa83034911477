"""Figure builders of the LLM batching-strategy page, checked as data (not pixels)."""
import numpy as np
import pytest

from engine import llm_batching as lb
from engine.core import token_laws as tl
from app_pages.llm_batching import figures as figs
from ui.export import figure_frame, report_html

K = (0.06, 0.126, 0.0003, 0.02269)


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_throughput_figure_marks_the_optimum_of_eq24():
    dist = tl.lognormal(7.0, 0.7)
    b = np.arange(1, 513)
    mu = lb.throughput(b, dist, K)
    fig = figs.throughput_figure(b, mu, int(b[np.argmax(mu)]), {"fixed b": 16, "b_max": 2000})
    star = _trace(fig, "throughput-optimal b = 272")            # module docstring: μ peaks at 272
    assert star.x == (272,) and star.y[0] == pytest.approx(0.306, abs=1e-3)
    assert _trace(fig, "fixed b = 16").y[0] == pytest.approx(float(mu[15]))
    assert not any(t.name.startswith("b_max") for t in fig.data)     # off the chart: no marker
    assert fig.layout.xaxis.type == "log" and "requests/s" in fig.layout.yaxis.title.text


def test_expected_max_figure_uniform_closed_form():
    b = np.arange(1, 9)
    dist = tl.uniform(0.0, 1000.0)
    fig = figs.expected_max_figure(b, lb.expected_max_tokens(dist, b), 500.0, {})
    np.testing.assert_allclose(fig.data[0].y, 1000 * b / (b + 1), rtol=1e-6)   # E[max of b U(0,m)]
    assert list(fig.data[1].y) == [500.0, 500.0]
    assert "tokens" in fig.layout.yaxis.title.text


def test_strategy_figure_draws_limits_gaps_points_and_shading():
    lam = np.array([0.1, 0.2, 0.3])
    curves = [("fixed", "fixed exact", lam, [10.0, 20.0, np.inf], None),
              ("dynamic", "bound", lam, [np.inf] * 3, "dot")]
    sims = [("elastic", "elastic sim", lam, [5.0, np.nan, 7.0], [0.5, np.nan, 0.7])]
    limits = {"fixed": ("fixed b", 0.25), "elastic": ("elastic", 0.35),
              "dynamic": ("dynamic", 0.0)}
    fig = figs.strategy_latency_figure(curves, sims, limits, x_max=0.4, title="t",
                                       y_title="mean latency (s)", current=0.15,
                                       baseline=(lam, [1.0, 2.0, 3.0]))
    assert list(_trace(fig, "fixed exact").y) == [10.0, 20.0, None]        # inf -> gap
    assert "bound" not in [t.name for t in fig.data]                        # nothing finite
    sim = _trace(fig, "elastic sim")
    assert list(sim.x) == [0.1, 0.3] and list(sim.error_y.array) == [0.5, 0.7]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(rects) == 1 and rects[0].x0 == 0.35 and rects[0].x1 == 0.4  # beyond every limit
    lines = sorted(s.x0 for s in fig.layout.shapes if s.type == "line")
    assert lines == [0.15, 0.25, 0.35, 0.35]           # current λ, two limits, shading edge
    assert fig.layout.yaxis.type == "log" and "requests/s" in fig.layout.xaxis.title.text
    assert _trace(fig, "baseline (pinned)").line.dash == "dash"


def test_where_a_curve_ends_is_said_at_its_last_point():
    """An end with a point is a text label at that point (data coordinates on the log
    axis); one without is a legend entry."""
    ends = [("dynamic", 0.2, 30.0, "chain ends: 256 states"),
            ("elastic", None, None, "elastic: not simulated")]
    fig = figs.strategy_latency_figure([], [], {}, x_max=1.0, title="t", y_title="s",
                                       ends=ends)
    label = _trace(fig, "chain ends: 256 states")
    assert label.mode == "text" and list(label.x) == [0.2] and list(label.y) == [30.0]
    assert list(label.text) == ["chain ends: 256 states"] and label.showlegend is False
    assert _trace(fig, "elastic: not simulated").x == (None,)


def test_no_shading_when_some_strategy_is_stable_across_the_axis():
    fig = figs.strategy_latency_figure([], [], {"elastic": ("elastic", 2.0)}, x_max=1.0,
                                       title="t", y_title="s")
    assert not [s for s in fig.layout.shapes if s.type == "rect"]


def test_best_strategy_figure_and_report():
    fig = figs.best_strategy_figure([0.1, 0.2, 0.3], ["elastic", "continuous", ""],
                                    ["elastic", "continuous"])
    assert _trace(fig, "elastic").x == (0.1,) and _trace(fig, "none stable").x == (0.3,)
    assert list(fig.layout.yaxis.categoryarray) == ["elastic", "continuous", "not computed",
                                                    "none stable"]
    frame = figure_frame(fig)
    # wide (issue 14): the strategy axis is one column, named after the axis
    assert list(frame.iloc[:, 1]) == ["elastic", "continuous", "none stable"]
    assert list(frame.iloc[:, 0]) == [0.1, 0.2, 0.3]
    html = report_html("LLM batching", {"law": "<b>x</b>"}, [("best", fig, "")], ["f"], ["e"])
    assert "&lt;b&gt;x&lt;/b&gt;" in html
