"""Figure builders of the CPU-GPU pipeline page, checked as data (not pixels)."""
import numpy as np
import pytest

from app_pages.pipeline import figures as figs
from ui.export import figure_frame


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def _boxes():
    return [dict(name=n, kind="k", lines=["busy 50 %"]) for n in ("CPU", "memory", "units")]


def test_pipeline_diagram_draws_three_stages_and_highlights_the_bottleneck():
    fig = figs.pipeline_diagram(_boxes(), 1, "λ = 5 jobs/s")
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(rects) == 3
    assert [r.line.color for r in rects] == [figs.COLORS["exact"], figs.BOTTLENECK,
                                              figs.COLORS["exact"]]
    texts = [a.text for a in fig.layout.annotations]
    assert sum("bottleneck" in t for t in texts) == 1 and "bottleneck" in texts[1]
    assert sum(1 for a in fig.layout.annotations if a.showarrow) == 4      # in, 2 links, out
    assert list(_trace(fig, "stages").text) == ["CPU", "memory", "units"]


def test_throughput_figure_carries_curves_sim_and_shades_beyond_capacity():
    lam = np.array([1.0, 2.0, 3.0])
    fig = figs.throughput_figure(lam, lam, [1, 2, 3, 4], [0.9, 1.8, 2.5, 2.6], unstable_at=3.5,
                                 x_max=4.0, sim=([1.0, 2.0], [1.01, 1.98]))
    assert list(_trace(fig, "exact tandem").y) == [1.0, 2.0, 3.0]
    assert list(_trace(fig, "independent stations (naive)").y) == [0.9, 1.8, 2.5, 2.6]
    assert list(_trace(fig, "exact capacity").y) == [3.5, 3.5]
    assert list(_trace(fig, "simulation").x) == [1.0, 2.0]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(rects) == 1 and rects[0].x0 == 3.5 and rects[0].x1 == 4.0
    assert "jobs/s" in fig.layout.xaxis.title.text and "jobs/s" in fig.layout.yaxis.title.text


def test_latency_figure_gaps_infinities_and_is_log():
    fig = figs.latency_figure([1, 2], [0.5, 1.0], [1, 2, 3], [0.5, 1.1, np.inf], unstable_at=2.5,
                              x_max=3.0, sim=([1.0], [0.51], [0.02]), baseline=([1, 2], [1, 2]))
    assert list(_trace(fig, "independent stations (naive)").y) == [0.5, 1.1, None]
    assert list(_trace(fig, "simulation ±95% CI").error_y.array) == [0.02]
    assert _trace(fig, "baseline (pinned)").line.dash == "dash"
    assert fig.layout.yaxis.type == "log" and "(ms)" in fig.layout.yaxis.title.text


def test_ceiling_figure_draws_ceilings_as_flat_lines():
    lam = np.linspace(1, 10, 4)
    fig = figs.ceiling_figure("t", "bytes/s", lam, [("memory", lam * 1e6), ("link", lam * 1e5)],
                              [("memory bandwidth", 1.5e12), ("link bandwidth", 3.2e10)],
                              unstable_at=8.0, x_max=10.0)
    assert list(_trace(fig, "memory bandwidth").y) == [1.5e12, 1.5e12]
    assert list(_trace(fig, "link").y) == pytest.approx(list(lam * 1e5))
    lo, hi = fig.layout.yaxis.range
    assert lo < np.log10(1e5) and hi > np.log10(1.5e12), "ceilings inside the axis range"
    frame = figure_frame(fig)
    assert {"memory: bytes/s", "link: bytes/s", "memory bandwidth: bytes/s"} <= set(frame.columns)
    assert len(frame) == 4 + 1                                 # the 4 loads and x_max


def test_sensitivity_figure_marks_the_current_value():
    fig = figs.sensitivity_figure("cap vs K", "K", [1, 2, 4, 8], [1.0, 1.5, 1.8, 1.9],
                                  current=4, limit=2.0)
    assert fig.layout.xaxis.type == "log"
    assert list(_trace(fig, "slowest stage alone").y) == [2.0, 2.0]
    assert any(s.type == "line" and s.x0 == 4 for s in fig.layout.shapes)


def test_percentages_never_read_negative_zero():
    from ui.export import format_percent as fmt_pct
    assert fmt_pct(0.0) == fmt_pct(-0.0) == fmt_pct(0.0, signed=True) == "0 %"
    assert fmt_pct(-1e-7, signed=True) == fmt_pct(4e-5) == "< 0.01 %"
    assert fmt_pct(-0.0004, 1, signed=True) == "< 0.1 %"
    assert fmt_pct(-0.12345, signed=True) == "-12.35 %" and fmt_pct(0.039, 1) == "3.9 %"
    assert fmt_pct(0.039, signed=True) == "+3.90 %" and fmt_pct(float("nan")) == "n/a"
