"""Chart exports: a memoised figure is converted to its dict once, however often drawn."""
import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from ui.export import drawn_once


def test_a_drawn_figure_converts_once_and_gives_the_same_spec(monkeypatch):
    x = np.linspace(0.0, 1.0, 200)
    fig = go.Figure(go.Scatter(x=x, y=x ** 2, name="curve"))
    expected = pio.to_json(fig.to_dict(), validate=False)
    original, calls = go.Figure.to_dict, []

    def counting(self):
        calls.append(1)
        return original(self)

    monkeypatch.setattr(go.Figure, "to_dict", counting)
    drawn = drawn_once(fig)
    specs = [pio.to_json(drawn.to_dict(), validate=False) for _ in range(3)]
    assert drawn_once(drawn) is drawn is fig
    assert len(calls) == 1
    assert specs == [expected] * 3


# ------------------------------------------------------------ chart CSVs (issue 14)

import re                                                    # noqa: E402

import pytest                                                # noqa: E402
from plotly.offline import get_plotlyjs                      # noqa: E402

from ui.export import (figure_csv, figure_frame, format_number, human_heading,  # noqa: E402
                       latex_to_text, plain, report_html)
from ui.plotting import new_figure                           # noqa: E402


def _latency_figure():
    fig = new_figure("Mean latency vs load", "arrival rate λ (jobs/s)", "mean latency (ms)",
                     log_y=True)
    fig.add_scatter(x=[1.0, 2.0, 3.0], y=[10.0, 20.0, 40.0], name="exact")
    fig.add_scatter(x=[1.5, 2.0], y=[12.0, 21.0], name="simulation", error_y=dict(array=[1, 2]))
    return fig


def test_csv_has_one_unit_named_column_per_series_joined_on_x():
    frame = figure_frame(_latency_figure())
    assert list(frame.columns) == ["arrival rate λ (jobs/s)", "exact (ms)", "simulation (ms)",
                                   "simulation ±95% CI (ms)"]
    assert list(frame.iloc[:, 0]) == [1.0, 1.5, 2.0, 3.0]            # outer join, sorted
    assert frame["exact (ms)"].tolist()[::2] == [10.0, 20.0]
    assert frame.loc[2].tolist() == [2.0, 20.0, 21.0, 2.0]
    header = figure_csv(_latency_figure()).decode().splitlines()[0]
    assert "series" not in header and header.startswith("arrival rate")


def test_csv_names_a_unitless_quantity_and_drops_what_draws_nothing():
    fig = new_figure("t", "replicas n", "P(R > RT)", log_y=True)
    fig.add_scatter(x=[1, 2], y=[None, None], name="below 1e-12")
    fig.add_scatter(x=[1, 2], y=[1e-3, None], name="eq 7")
    frame = figure_frame(fig)
    assert list(frame.columns) == ["replicas n", "eq 7: P(R > RT)"] and len(frame) == 1


# ------------------------------------------------------------ plain text in the report

@pytest.mark.parametrize("value,text", [
    (4905.5287, "4,906"), (0.012345, "0.01235"), (3e-7, "3e-7"), (12, "12"), (100.0, "100"),
    (1.5e12, "1.5e12"), (float("inf"), "∞"), (float("nan"), "n/a"), (-0.0, "0"),
    (True, "yes")])
def test_format_number_by_magnitude(value, text):
    assert format_number(value) == text


def test_plain_never_prints_a_python_repr():
    assert plain((1, 2.5)) == "1, 2.5"
    assert plain([0.1234567, "a"]) == "0.1235, a"
    assert plain({"α": 0.333333333}) == "α: 0.3333"
    assert plain(np.array([1.0, 2.0])) == "1, 2" and plain(np.float64(2.0)) == "2"
    assert plain(None) == "—"


def test_code_name_headings_get_a_readable_fallback():
    assert human_heading("mean_latency") == "Mean latency"
    assert human_heading("mean_latency", _latency_figure()) == "Mean latency vs load"
    assert human_heading("Users lost to impatience") == "Users lost to impatience"


@pytest.mark.parametrize("tex,text", [
    (r"\mu^{[b]} = \frac{b}{\alpha b+\tau_0}", "μ^([b]) = b/(α b+τ₀)"),
    (r"E[W] = \frac{\lambda E[S^2]}{2(1-\rho)}", "E[W] = (λ E[S²])/(2(1−ρ))"),
    (r"r_{max} = \lfloor (RT-d_1)/c \rfloor", "rₘₐₓ = ⌊ (RT−d₁)/c ⌋"),
    (r"\eta \ge \frac{1}{\beta + c_0}\cdot x", "η ≥ 1/(β + c₀)· x"),
    (r"E[W_{qs}] \le \min(1, \lambda\tau_0)", "E[W_qs] ≤ min(1, λτ₀)"),
    (r"\hat H + \text{mem BW}", "Ĥ + mem BW")])
def test_latex_reads_as_unicode(tex, text):
    assert latex_to_text(tex) == text


def _report(sections, **kw):
    return report_html("GPU dynamic batching", {"profile": "V100", "grid": (0.1, 0.5, 0.9),
                                                "rate (jobs/s)": 4905.5287},
                       sections, [(r"\frac{b}{\alpha b+\tau_0}", "throughput (eq 26)")],
                       ["a note"], answer=[("Mean latency", "12.3 ms"), ("p99", "40 ms")],
                       scenario="A V100 at 60 % load.", **kw)


def test_report_opens_with_the_answer_then_inputs_charts_formulas_link_version():
    html = _report([("mean_latency", _latency_figure(), "caption")],
                   link="http://127.0.0.1:8501/gpu-batching?rho=0.6")
    order = [html.index(s) for s in ("<h1>GPU dynamic batching</h1>", "A V100 at 60 % load.",
                                     "<h2>Answer</h2>", "12.3 ms", "<h2>Inputs</h2>",
                                     "<h2>Mean latency vs load</h2>", "<h2>Formulas</h2>",
                                     "b/(α b+τ₀)", "\\frac{b}", "About this report")]
    assert order == sorted(order)
    assert "<td>0.1, 0.5, 0.9</td>" in html and "<td>4,906</td>" in html
    assert "(0.1, 0.5, 0.9)" not in html and "4905.5287" not in html
    assert "mean_latency" not in html
    assert '<a href="http://127.0.0.1:8501/gpu-batching?rho=0.6">' in html
    assert re.search(r"version\s+0\.\d+", html) and re.search(r"\d{4}-\d\d-\d\d", html)


def test_report_wraps_a_long_share_link_and_names_the_pinned_baseline():
    """Issue 24: one unbroken share link made the report 2,500-3,400 px wide, and a pinned
    baseline was never named in it."""
    from ui.compare import difference_table
    link = "http://127.0.0.1:8501/gpu-batching?" + "&".join(f"p{i}=v{i}" for i in range(200))
    current = {"label": "now", "metrics": {"mean latency (ms)": 12.3}}
    pinned = {"label": "V100, b_max=∞", "metrics": {"mean latency (ms)": 10.0}}
    html = _report([], link=link, baseline=("V100, b_max=∞", difference_table(current, pinned)))
    assert re.search(r"a[^{}]*\{overflow-wrap:anywhere\}", html)        # links break anywhere
    assert "<h2>Compared with the pinned baseline</h2><p>Baseline: V100, b_max=∞</p>" in html
    assert "<td>10 ms</td><td>12.3 ms</td><td>+2.3 ms</td><td>+23 %</td>" in html
    assert html.index("<h2>Answer</h2>") < html.index("pinned baseline") < html.index("Inputs")


def test_report_link_is_escaped_and_never_a_script_href():
    html = _report([], link="javascript:alert(1)")
    assert 'href="javascript' not in html and "javascript:alert(1)" in html


def test_report_inlines_plotly_js_once_and_stays_near_its_size():
    x = np.linspace(0.0, 1.0, 400)
    sections = []
    for k in range(5):
        fig = new_figure(f"chart {k}", "load ρ", "mean latency (ms)", log_y=True)
        fig.add_scatter(x=x, y=1 + x ** 2 * (k + 1), name="exact")
        fig.add_scatter(x=x, y=1 + x * (k + 1), name="bound")
        sections.append((f"Chart {k}", fig, ""))
    html = _report(sections)
    js = get_plotlyjs()
    assert html.count(js[:200]) == 1
    assert html.count('class="plotly-graph-div"') == 5
    data = 5 * 2 * 2 * 400 * 20                 # 5 charts, 2 traces, x and y, ~20 chars a number
    assert len(html) < len(js) + data + 60_000, (len(html) - len(js))


def test_a_marked_figure_adds_one_point_and_leaves_the_figure_alone():
    from ui.export import marked, operating_marker as Marker
    x = np.linspace(0.0, 1.0, 200)
    fig = go.Figure(go.Scatter(x=x, y=x ** 2, name="curve"))
    before = pio.to_json(fig.to_dict(), validate=False)
    shown = marked(fig, Marker(0.5, 0.25, "here"))
    spec = shown.to_dict()
    assert len(spec["data"]) == 2 and spec["data"][-1]["x"] == [0.5]
    assert spec["data"][-1]["y"] == [0.25] and spec["data"][-1]["text"] == ["here"]
    assert len(fig.to_dict()["data"]) == 1                       # the memoised figure unchanged
    assert pio.to_json(fig.to_dict(), validate=False) == before
    assert marked(fig, Marker(0.5, float("inf"), "unstable")).to_dict() == fig.to_dict()
    assert marked(fig, None) is fig
