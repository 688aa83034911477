"""Figure builders of the token-limit page and its upload parser, checked as data."""
import numpy as np
import pytest

from app_pages.token_limit import figures as figs
from ui.token_counts import parse_token_counts


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_wait_figure_gaps_unstable_limits_and_shades_them():
    n = np.array([100.0, 500.0, 1000.0, 2000.0])
    w = np.array([1.0, 5.0, np.inf, np.inf])
    fig = figs.wait_figure(n, w, stable_limit=900, sim=([100, 500], [1.1, 4.9], [0.1, 0.2]),
                           limit=500, baseline=(n, w / 2))
    assert list(_trace(fig, "E[W], M/G/1 (eqs 1-5)").y) == [1.0, 5.0, None, None]
    assert list(_trace(fig, "simulation ±95% CI").error_y.array) == [0.1, 0.2]
    assert list(_trace(fig, "baseline (pinned)").y[:2]) == [0.5, 2.5]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(rects) == 1 and rects[0].x0 == 901 and rects[0].x1 == 2000
    assert any(s.type == "line" and s.x0 == 500 for s in fig.layout.shapes)   # chosen limit
    assert "(s)" in fig.layout.yaxis.title.text and "tokens" in fig.layout.xaxis.title.text


def test_no_shading_when_every_limit_is_stable():
    fig = figs.served_wait_figure([100, 200], [1, 2], [0.5, 1], [0.6, 1.1], 60.0,
                                  stable_limit=np.inf)
    assert not [s for s in fig.layout.shapes if s.type == "rect"]
    assert [t.name for t in fig.data][-1] == "impatient, exact M/G/1+D"


def test_loss_and_objective_figures_carry_the_curves_and_optima():
    fig = figs.loss_figure([1, 2], [0.1, 0.2], [0.12, 0.19], 60.0, limit=2)
    assert list(_trace(fig, "exact M/G/1+D").y) == [0.1, 0.2]
    fig = figs.objective_figure([100, 200, 300], [0.5, 0.7, -np.inf], [0.2, 0.1, 0.0],
                                (200, 0.7), (100, 0.2))
    assert list(fig.data[0].y) == [0.5, 0.7, None]
    stars = [t for t in fig.data if "optimum" in t.name]
    assert [(t.x[0], t.y[0]) for t in stars] == [(200, 0.7), (100, 0.2)]


def test_token_law_figure_marks_the_limit_with_the_clipped_share():
    fig = figs.token_law_figure([5.0, 15.0], [10.0, 10.0], [0.4, 0.6], [1, 10, 20],
                                [0.05, 0.4, 1.0], limit=10, clipped_share=0.6, label="test")
    assert list(fig.data[0].y) == [0.4, 0.6] and list(fig.data[0].x) == [5.0, 15.0]
    assert list(fig.data[0].width) == [10.0, 10.0]
    assert fig.data[1].yaxis == "y2"
    assert "60.0% clipped" in fig.layout.annotations[0].text
    fig = figs.clipped_share_figure([100, 200], [0.3, 0.1], [0.9, 0.97])
    assert list(fig.data[0].y) == [30.0, 10.0]


def test_latency_fit_figure_draws_the_line_and_the_points():
    n = np.linspace(0.0, 300.0, 50)
    fig = figs.latency_fit_figure([128, 256], [128, 128], [2.91, 5.88], 0.023, 0.49, 0.99,
                                  [2.9, 5.9], 0.995, line=(n, 0.023 * n + 0.49))
    line = fig.data[0]
    np.testing.assert_allclose(line.y, 0.023 * np.asarray(line.x) + 0.49)
    assert list(fig.data[1].y) == [2.91, 5.88] and list(fig.data[2].y) == [2.9, 5.9]
    res = figs.fit_residuals_figure(["a", "b"], [0.1, -0.1], [0.05, -0.05])
    assert len(res.data) == 2


def test_parse_token_counts_accepts_named_headerless_and_single_columns():
    law = parse_token_counts("request_id,output_tokens\na,10\nb,30\nc,30\n")
    assert list(law.values) == [10, 30] and law.n_samples == 3
    assert parse_token_counts("5\n7\n").n_samples == 2
    assert parse_token_counts(b"whatever\n5\n7\n").mean() == 6


@pytest.mark.parametrize("text,match", [
    ("size,speed\n1,100\n2,200\n", "no token-count column"),
    ("tokens\n5\n", "at least 2"),
    ("tokens\n5\nnan\n", "row 3"),
    ("tokens\n5\n\n-1\n", "≥ 1"),
    ("tokens\n5\n2.5\n", "whole numbers"),
    ("", "empty"),
    (b"\xff\xfe\x00bad", "UTF-8"),
    (b"1\n" * 1_500_000, "limit"),
])
def test_token_count_errors_are_clear(text, match):
    with pytest.raises(ValueError, match=match):
        parse_token_counts(text)


def test_token_count_row_cap():
    with pytest.raises(ValueError, match="at most 10"):
        parse_token_counts("tokens\n" + "5\n" * 11, max_rows=10)
