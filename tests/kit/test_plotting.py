"""Readable axes (issue 14): log axes ticked at majors only with plain labels (1e-k for
probabilities, never SI suffixes such as "100μ"), whole-number axes at integers, a
labelled target line.  Figures are checked as dicts."""
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from ui.plotting import (add_overlays, fit_log_range, integer_axis, is_probability_title,
                         log_ticks, new_figure, readable_axes, target_line, tick_text)

SI_SUFFIX = re.compile(r"\d[munμpfakMGT]$")


def _labels(fig, axis="yaxis"):
    return list(fig.to_dict()["layout"][axis]["ticktext"])


def test_gpu_latency_axis_reads_as_numbers_not_mantissas():
    """Before: "2, 100, 5, 2, 10, 5, 2" (the top "2" was 200 ms)."""
    fig = new_figure("Mean latency vs load", "load ρ", "mean latency (ms)", log_y=True)
    fig.add_scatter(x=[0.1, 0.5, 0.9], y=[2.0, 20.0, 130.0])
    fit_log_range(fig, [2.0, 20.0, 130.0])
    layout = fig.to_dict()["layout"]["yaxis"]
    labels = _labels(fig)
    assert labels == ["2", "5", "10", "20", "50", "100", "200"]
    assert layout["tickvals"] == [2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0]
    assert all(float(t.replace(",", "")) == v for t, v in zip(labels, layout["tickvals"]))
    assert layout["title"]["text"].endswith("(ms)")                  # the unit stays
    assert layout["minor"]["ticks"] == ""                            # no minor labels


@pytest.mark.parametrize("lo,hi", [(-16, 0), (-4.2, -3.1), (-6, -1), (-13, -2)])
def test_probability_axes_read_1e_minus_k_never_si(lo, hi):
    values, labels = log_ticks(lo, hi, probability=True)
    assert 3 <= len(values) <= 9
    for v, t in zip(values, labels):
        assert not SI_SUFFIX.search(t), t
        assert float(t) == pytest.approx(v)                          # "1e-4" parses back
        assert v >= 0.01 or re.fullmatch(r"\d(\.\d+)?e-\d+", t), t


def test_probability_axis_guessed_from_its_title():
    fig = new_figure("t", "replicas n", "P(R > RT) = 1 − P(R ≤ RT)", log_y=True)
    fig.add_scatter(x=[1, 2, 3], y=[1e-4, 1e-8, 1e-12])
    fit_log_range(fig, [1e-4, 1e-8, 1e-12])
    assert "1e-8" in _labels(fig) and not any(SI_SUFFIX.search(t) for t in _labels(fig))
    assert is_probability_title("share of requests slower than the target")
    assert not is_probability_title("mean latency (ms)")


def test_large_and_small_non_probability_labels():
    assert [tick_text(v) for v in (1e-5, 0.002, 1, 1000, 2e4, 1.5e12)] == \
        ["1e-5", "0.002", "1", "1,000", "20k", "1.5T"]


def test_long_range_thins_decades_and_short_range_uses_1_2_5():
    values, _ = log_ticks(-16, 0.2, probability=True)
    assert len(values) <= 8 and all(np.log10(v) == round(np.log10(v)) for v in values)
    values, labels = log_ticks(np.log10(3), np.log10(40))
    assert labels == ["5", "10", "20"]
    values, labels = log_ticks(np.log10(60), np.log10(90))
    assert labels == ["60", "70", "80", "90"]


def test_readable_axes_covers_a_log_axis_set_by_hand():
    fig = go.Figure(go.Scatter(x=[1, 8, 64, 512], y=[1, 2, 3, 4]))
    fig.update_xaxes(type="log")
    readable_axes(fig)
    assert _labels(fig, "xaxis") == ["1", "10", "100"]
    before = fig.to_dict()
    assert readable_axes(fig).to_dict() == before                   # idempotent


def test_integer_axis_ticks_whole_numbers():
    fig = new_figure("t", "replicas n", "y")
    fig.add_scatter(x=list(range(1, 25)), y=list(range(24)))
    integer_axis(fig, "x")
    ax = fig.to_dict()["layout"]["xaxis"]
    assert ax["dtick"] in (1, 2, 5) and ax["tick0"] == 0 and ax["tickformat"] == ",d"
    assert 24 / ax["dtick"] <= 12
    fig.update_xaxes(range=[0.5, 2400])
    assert integer_axis(fig, "x").layout.xaxis.dtick == 200          # 12 ticks


def test_target_line_carries_its_label():
    fig = new_figure("t", "replicas n", "P(miss)", log_y=True)
    shapes, notes = target_line(0.01, "SLA: at most 1 % late")
    add_overlays(fig, shapes, notes)
    layout = fig.to_dict()["layout"]
    assert layout["shapes"][0]["y0"] == 0.01 and layout["shapes"][0]["xref"] == "x domain"
    assert layout["annotations"][0]["text"] == "SLA: at most 1 % late"
    assert layout["annotations"][0]["y"] == 0.01
    shapes, notes = target_line(3.0, "chosen", axis="x")
    assert shapes[0]["x0"] == 3.0 and notes[0]["x"] == 3.0


def test_a_line_label_on_a_log_axis_sits_at_log10_of_the_line():
    """Plotly places a shape on a log y axis by its value and an annotation by log10 of it:
    a label given the value itself lands off the chart (the GPU page's SLA label did)."""
    from ui.plotting import hline, line_label
    line = hline(10.0)
    assert line_label(line, "SLA 10 ms", "top left")["y"] == 10.0
    assert line_label(line, "SLA 10 ms", "top left", log_y=True)["y"] == 1.0
