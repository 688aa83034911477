"""Figures of the capacity-planner page: cost against each SLA row's percentile and
against energy per request (every stable configuration, faint, coloured by hardware; the
cheapest front; the target or cap; the answer as a star), the cheapest colocated and
disaggregated fleets against the rate, and the ranked table for the report.

Pure builders: lists in, ``go.Figure`` out (no Streamlit, no model arithmetic); tests
read them as data.  Costs in $/h, latencies in the unit given (ms or s), energy in J per
request.  An axis whose values span more than ``LOG_SPAN`` times (ratio) is logarithmic.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.plotting import (COLORS, add_overlays, finite, fit_log_range, line_label, new_figure,
                         target_line, vline)

PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f", "#ff7f0e", "#d62728")
LOG_SPAN = 10.0
GL_POINTS = 5000          # more points than this: WebGL markers
FRONT = "cheapest front (no cheaper configuration is {better})"
BEST = "the answer (confirmed by simulation)"


def spans_decades(*series) -> bool:
    """Whether the finite positive values of ``series`` span more than ``LOG_SPAN``."""
    v = np.concatenate([np.ravel(np.asarray(s, dtype=float)) for s in series] or [[]])
    v = v[np.isfinite(v) & (v > 0)]
    return bool(v.size and v.max() / v.min() > LOG_SPAN)


def _cloud(points: dict, y_name: str, y_fmt: str) -> list[dict]:
    """One faint marker trace per hardware: ``points`` maps a name to (cost, y, text)."""
    kind = "scattergl" if sum(len(p[0]) for p in points.values()) > GL_POINTS else "scatter"
    out = []
    for i, (name, (x, y, text)) in enumerate(points.items()):
        out.append(dict(type=kind, x=finite(x), y=finite(y), text=list(text), name=name,
                        mode="markers", legendgroup=name, opacity=0.4,
                        marker=dict(size=6, color=PALETTE[i % len(PALETTE)]),
                        hovertemplate=f"%{{text}}<br>cost $%{{x:,.4g}}/h<br>{y_name} "
                                      f"%{{y:{y_fmt}}}<extra></extra>"))
    return out


def _front(x, y, text, y_name: str, y_fmt: str, better: str) -> dict:
    """The front as a step line with markers, sorted by cost (then y)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.lexsort((y, x))
    return dict(type="scatter", x=finite(x[order]), y=finite(y[order]),
                text=[list(text)[i] for i in order], name=FRONT.format(better=better),
                mode="lines+markers",
                line=dict(color=COLORS["exact"], width=2.5, shape="hv"),
                marker=dict(size=8, color=COLORS["exact"]),
                hovertemplate=f"%{{text}}<br>cost $%{{x:,.4g}}/h<br>{y_name} "
                              f"%{{y:{y_fmt}}}<extra>front</extra>")


def _best(best: tuple) -> dict:
    """The answer: (cost, y, text[, error half-width])."""
    x, y, text, *err = best
    trace = dict(type="scatter", x=[float(x)], y=[float(y)], text=[text], name=BEST,
                 mode="markers", hovertemplate="%{text}<extra>answer</extra>",
                 marker=dict(symbol="star", size=18, color=COLORS["sim"],
                             line=dict(width=1, color="#333")))
    if err and err[0] is not None and np.isfinite(err[0]):
        trace["error_y"] = dict(type="data", array=[float(err[0])], visible=True,
                                color=COLORS["sim"])
    return trace


def _figure(title: str, y_title: str, points: dict, front: tuple, best, y_name: str,
            better: str, lines: list) -> go.Figure:
    y_fmt = ",.4g"
    xs = [p[0] for p in points.values()] + [front[0]]
    ys = [p[1] for p in points.values()] + [front[1]] + [[v] for v, _ in lines]
    log_x, log_y = spans_decades(*xs), spans_decades(*ys)
    fig = new_figure(title, "cost ($/h)", y_title, log_x=log_x, log_y=log_y,
                     probability=False)
    traces = _cloud(points, y_name, y_fmt)
    if len(front[0]):
        traces.append(_front(*front, y_name, y_fmt, better))
    if best is not None:
        traces.append(_best(best))
    fig.add_traces(traces)
    shapes, notes = [], []
    for value, label in lines:
        s, a = target_line(float(value), label, log_y=log_y)
        shapes += s
        notes += a
    if log_y:
        fit_log_range(fig, *ys, probability=False)
    fig.update_layout(hovermode="closest", legend=dict(orientation="h", yanchor="top",
                                                       y=-0.18, xanchor="left", x=0.0),
                      height=460, margin=dict(l=60, r=20, t=50, b=90))
    return add_overlays(fig, shapes, notes)


def cost_latency(points: dict, front: tuple, *, target: float, percentile: float,
                 unit: str, best: tuple | None = None, name: str | None = None) -> go.Figure:
    """Cost ($/h) against one SLA row's screened percentile of every stable
    configuration (``points``: candidate name -> (cost, percentile, hover text)), the
    cheapest front (``front``: (cost, percentile, text), the configurations no cheaper
    one beats), the target as a horizontal line, the answer as a star (``best``: (cost,
    confirmed percentile, text, CI half-width)).  ``name``: the row's short name ("p95
    TTFT"; default "p<percentile> latency")."""
    label = name or f"p{percentile:g} latency"
    return _figure(f"Cost against {label}: every configuration that keeps up",
                   f"{label} ({unit})", points, front, best, f"{label} ({unit})", "faster",
                   [(target, f"target: {name or f'p{percentile:g}'} ≤ {target:,.4g} {unit}")])


def cost_energy(points: dict, front: tuple, *, cap: float | None = None,
                best: tuple | None = None) -> go.Figure:
    """Cost ($/h) against energy per request (J) of every stable configuration, the
    cheapest front, the cap as a horizontal line if any (``cap``: None or inf: none),
    the answer as a star."""
    lines = [] if cap is None or not np.isfinite(cap) else [
        (cap, f"cap: {cap:,.4g} J per request")]
    return _figure("Cost against energy per request: every configuration that keeps up",
                   "energy per request (J)", points, front, best, "energy (J)",
                   "more frugal", lines)


def disaggregation(frame, *, rate_unit: str = "requests/s",
                   at_rate: float | None = None) -> go.Figure:
    """The cheapest colocated fleet and the cheapest disaggregated fleet meeting the SLA
    against the request rate: ``frame`` has the columns rate_per_s,
    colocated_cost_usd_per_hour, disaggregated_cost_usd_per_hour, colocated_fleet and
    disaggregated_fleet (texts: the hover); a rate where none meets the SLA (cost NaN or
    inf) is a gap.  ``at_rate``: the plan's own rate, a vertical line."""
    x = np.asarray(frame["rate_per_s"], dtype=float)
    sides = (("colocated", "colocated (prefill and decode on every replica)", COLORS["exact"],
              "circle"),
             ("disaggregated", "disaggregated (prefill and decode instances)", COLORS["sim"],
              "diamond"))
    costs = [np.asarray(frame[f"{k}_cost_usd_per_hour"], dtype=float) for k, *_ in sides]
    log_x = spans_decades(x)
    fig = new_figure("Cheapest fleet meeting the SLA: colocated against disaggregated",
                     f"request rate ({rate_unit})", "cost ($/h)", log_x=log_x,
                     log_y=spans_decades(*costs), probability=False)
    traces = []
    for (key, name, color, symbol), y in zip(sides, costs):
        text = [str(t) for t in frame[f"{key}_fleet"]]
        traces.append(dict(type="scatter", x=x.tolist(), y=finite(y), text=text, name=name,
                           mode="lines+markers", line=dict(color=color, width=2.5),
                           marker=dict(size=9, color=color, symbol=symbol),
                           hovertemplate=f"%{{x:,.4g}} {rate_unit}<br>$%{{y:,.4g}}/h<br>"
                                         "%{text}<extra>" + key + "</extra>"))
    fig.add_traces(traces)
    if spans_decades(*costs):
        fit_log_range(fig, *costs, probability=False)
    shapes, notes = [], []
    if at_rate is not None:
        line = vline(float(at_rate), color="#444", dash="dashdot", width=1)
        note = line_label(line, f"the plan's rate: {at_rate:,.4g}", log_x=log_x,
                          font=dict(size=11, color="#444"))
        shapes, notes = [line], [note]
    fig.update_layout(hovermode="closest", legend=dict(orientation="h", yanchor="top",
                                                       y=-0.18, xanchor="left", x=0.0),
                      height=460, margin=dict(l=60, r=20, t=50, b=90))
    return add_overlays(fig, shapes, notes)


def ranked_figure(header: list, columns: list, title: str) -> go.Figure:
    """A table as a figure (the report's ranked configurations): ``header`` names,
    ``columns`` one list of cell texts each."""
    fig = go.Figure(layout=dict(title=dict(text=title, x=0.0, xanchor="left",
                                           font=dict(size=15)),
                                margin=dict(l=10, r=10, t=50, b=10),
                                height=120 + 28 * max((len(c) for c in columns), default=0)))
    fig.add_traces([dict(type="table", header=dict(values=list(header), align="left",
                                                   fill=dict(color="#e8eef5")),
                         cells=dict(values=[list(c) for c in columns], align="left"))])
    return fig
