"""Figures of the CPU-GPU pipeline page: pure builders, arrays in, ``go.Figure`` out.

``arrivals``: the label of a non-Poisson arrival process (None: Poisson, the figures as
before); the exact and naive curves then say they assume Poisson arrivals and the
simulated points name the process they ran under."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.plotting import (COLORS, add_overlays, baseline_trace, finite, fit_log_range, new_figure,
                         shade_unstable, vline)

NAIVE = "#d62728"
BOTTLENECK = "#d62728"
STAGE_FILL = "#e8eef5"


def _list(x) -> list:
    return np.asarray(x, dtype=float).ravel().tolist()


def pipeline_diagram(stages: list[dict], bottleneck: int, arrival_text: str) -> go.Figure:
    """Boxes and arrows (Kuck-diagram style): arrivals → CPU + link → memory → units → out.

    ``stages``: dicts with ``name``, ``kind`` (the queue type) and ``lines`` (text
    lines of live numbers); the ``bottleneck`` box is drawn in red.  A drawing: its data
    (the stage table) is exported by the page, not read off the boxes.
    """
    width, gap, x0 = 2.4, 0.6, 1.0
    centers, boxes, notes = [], [], []
    for i, st_ in enumerate(stages):
        left = x0 + i * (width + gap)
        hot = i == bottleneck
        edge = dict(color=BOTTLENECK, width=4) if hot else dict(color=COLORS["exact"], width=2)
        boxes.append(dict(type="rect", x0=left, x1=left + width, y0=0.4, y1=3.4, line=edge,
                          fillcolor="rgba(214, 39, 40, 0.10)" if hot else STAGE_FILL))
        text = f"<b>{st_['name']}</b><br><i>{st_['kind']}</i><br>" + "<br>".join(st_["lines"])
        if hot:
            text += "<br><b>bottleneck</b>"
        notes.append(dict(x=left + width / 2, y=1.9, text=text, showarrow=False,
                          font=dict(size=12, color=BOTTLENECK if hot else "#222")))
        centers.append((left, left + width))
    arrows = [(0.1, centers[0][0])] + [(centers[i][1], centers[i + 1][0])
                                       for i in range(len(centers) - 1)] + [(centers[-1][1], 9.95)]
    notes += [dict(x=b, y=1.9, ax=a, ay=1.9, xref="x", yref="y", axref="x", ayref="y",
                   showarrow=True, arrowhead=2, arrowwidth=2, text="") for a, b in arrows]
    notes.append(dict(x=0.1, y=3.8, text=arrival_text, showarrow=False, xanchor="left",
                      font=dict(size=12)))
    fig = go.Figure(layout=dict(
        title=dict(text="The pipeline at this load", x=0.0, xanchor="left", font=dict(size=15)),
        xaxis=dict(visible=False, range=[0, 10]),
        yaxis=dict(visible=False, range=[0, 4]),
        margin=dict(l=10, r=10, t=50, b=10), height=300, showlegend=False,
        shapes=boxes, annotations=notes))
    # invisible trace: the stage names as hover text (the CSV is the page's stage table)
    return fig.add_traces([dict(type="scatter", x=[(a + b) / 2 for a, b in centers],
                                y=[1.9] * len(centers), mode="markers", marker=dict(opacity=0),
                                name="stages", text=[s["name"] for s in stages],
                                hoverinfo="text")])


def _poisson(name: str, arrivals) -> str:
    """A curve's name, saying it assumes Poisson arrivals beside another process."""
    return name if arrivals is None else f"{name}, Poisson arrivals"


def _sim_name(arrivals, name: str) -> str:
    return name if arrivals is None else f"{name}, {arrivals}"


def throughput_figure(lam, thr, lam_naive, thr_naive, *, unstable_at, x_max,
                      sim=None, baseline=None, arrivals=None) -> go.Figure:
    """Departure rate vs arrival rate (jobs/s): exact tandem, naive decomposition, simulation."""
    fig = new_figure("Throughput vs offered load", "arrival rate λ (jobs/s)",
                     "throughput (jobs/s)")
    traces = [dict(type="scatter", x=_list(lam), y=finite(thr),
                   name=_poisson("exact tandem", arrivals),
                   mode="lines", line=dict(color=COLORS["exact"], width=3)),
              dict(type="scatter", x=_list(lam_naive), y=finite(thr_naive),
                   name=_poisson("independent stations (naive)", arrivals), mode="lines",
                   line=dict(color=NAIVE, dash="dot", width=2)),
              dict(type="scatter", x=[0.0, float(x_max)], y=[float(unstable_at)] * 2,
                   name="exact capacity", mode="lines",
                   line=dict(color=COLORS["bound"], dash="dash", width=1))]
    if sim is not None:
        traces.append(dict(type="scatter", x=_list(sim[0]), y=_list(sim[1]),
                           name=_sim_name(arrivals, "simulation"),
                           mode="markers", marker=dict(color=COLORS["sim"], size=9)))
    if baseline is not None:
        traces.append(baseline_trace(*baseline, name="baseline (pinned)"))
    fig.add_traces(traces)
    return shade_unstable(fig, unstable_at, x_max, "unstable")


def latency_figure(lam, w, lam_naive, w_naive, *, unstable_at, x_max,
                   sim=None, baseline=None, arrivals=None) -> go.Figure:
    """Mean time in the pipeline (ms) vs arrival rate (jobs/s), log scale."""
    fig = new_figure("Mean latency vs offered load", "arrival rate λ (jobs/s)",
                     "mean time in the pipeline (ms)", log_y=True)
    traces = [dict(type="scatter", x=_list(lam), y=finite(w),
                   name=_poisson("exact tandem", arrivals),
                   mode="lines", line=dict(color=COLORS["exact"], width=3)),
              dict(type="scatter", x=_list(lam_naive), y=finite(w_naive),
                   name=_poisson("independent stations (naive)", arrivals), mode="lines",
                   line=dict(color=NAIVE, dash="dot", width=2))]
    if sim is not None:
        traces.append(dict(type="scatter", x=_list(sim[0]), y=_list(sim[1]),
                           name=_sim_name(arrivals, "simulation ±95% CI"), mode="markers",
                           marker=dict(color=COLORS["sim"], size=9),
                           error_y=dict(type="data", array=_list(sim[2]))))
    if baseline is not None:
        traces.append(baseline_trace(*baseline, name="baseline (pinned)"))
    fig.add_traces(traces)
    if arrivals is not None and sim is not None:     # bursty points may lie above the curve
        fit_log_range(fig, w, np.asarray(sim[1]) + np.asarray(sim[2]))
    else:
        fit_log_range(fig, w)
    return shade_unstable(fig, unstable_at, x_max, "unstable")


def ceiling_figure(title: str, y_title: str, lam, series: list[tuple[str, np.ndarray]],
                   ceilings: list[tuple[str, float]], *, unstable_at, x_max) -> go.Figure:
    """Sustained rates (e.g. FLOP/s, bytes/s) vs λ with the hardware ceilings drawn."""
    fig = new_figure(title, "arrival rate λ (jobs/s)", y_title, log_y=True)
    palette = [COLORS["exact"], COLORS["phi1"], COLORS["phi"]]
    x = _list(lam)
    fig.add_traces([dict(type="scatter", x=x, y=finite(y), name=name, mode="lines",
                         line=dict(color=palette[i % 3], width=3))
                    for i, (name, y) in enumerate(series)]
                   + [dict(type="scatter", x=[0.0, float(x_max)], y=[float(level)] * 2, name=name,
                           mode="lines", line=dict(color=palette[i % 3], dash="dash", width=1.5))
                      for i, (name, level) in enumerate(ceilings)])
    fit_log_range(fig, *[y for _, y in series], [v for _, v in ceilings])
    return shade_unstable(fig, unstable_at, x_max, "unstable")


def sensitivity_figure(title: str, x_title: str, x, cap, *, current: float,
                       limit: float) -> go.Figure:
    """Exact capacity (jobs/s) against K or c, with the slowest stage's rate as a ceiling."""
    fig = new_figure(title, x_title, "max sustainable rate (jobs/s)")
    fig.update_xaxes(type="log")
    fig.add_traces([dict(type="scatter", x=_list(x), y=finite(cap), name="exact capacity",
                         mode="lines+markers", line=dict(color=COLORS["exact"], width=3)),
                    dict(type="scatter", x=[float(np.min(x)), float(np.max(x))],
                         y=[float(limit)] * 2, name="slowest stage alone", mode="lines",
                         line=dict(color=COLORS["bound"], dash="dash", width=1.5))])
    return add_overlays(fig, [vline(current, color=COLORS["sim"], dash="dot", width=1)])
