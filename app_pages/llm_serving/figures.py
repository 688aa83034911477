"""Pure figure builders of the LLM serving page: latency percentiles against load, one
run's timeline.  Arrays in, ``go.Figure`` out, no Streamlit; tests read them as data.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.plotting import (COLORS, add_overlays, baseline_trace, finite, fit_log_range,
                         new_figure, target_line, unstable_overlay)

PCT_COLORS = {50: "#6baed6", 90: "#2171b5", 95: "#08519c", 99: "#08306b"}
TIMELINE_COLORS = {"running": "#1f4e79", "waiting": "#ff7f0e", "kv": "#2ca02c",
                   "preemptions": "#d62728"}


def _points(x, y, name, color, *, symbol="circle", error=None, lines=True) -> dict:
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(y)
    trace = dict(type="scatter", x=x[keep].tolist(), y=finite(y[keep]), name=name,
                 mode="lines+markers" if lines else "markers",
                 marker=dict(color=color, size=8, symbol=symbol),
                 line=dict(color=color, width=1.5))
    if error is not None:
        trace["error_y"] = dict(type="data", array=finite(np.asarray(error, float)[keep]),
                                visible=True)
    return trace


def latency_load_figure(title: str, y_title: str, rate, percentiles: dict, mean, ci95,
                        approx_rate, approx_mean, *, capacity: float, x_max: float,
                        limit: float | None = None, limit_label: str = "",
                        approx_label: str = "approximation (mean, no simulation)",
                        sim_suffix: str = "", baseline=None,
                        meets_up_to: float | None = None) -> go.Figure:
    """One latency (TTFT or TPOT) against the load: simulated percentiles (``percentiles``:
    {50: values, 90: ..., 99: ...} at ``rate``), the simulated mean with its 95 % CI
    as error bars, the approximation's mean as a dashed line (``approx_rate``,
    ``approx_mean``; inf past capacity: a gap), the target ``limit`` as a horizontal line,
    loads past ``capacity`` shaded; ``sim_suffix`` ends the simulated series' names (the
    arrival process); ``baseline``: (x, y) of a pinned scenario;
    ``meets_up_to``: the largest load meeting the target, a dotted green line (none if 0)."""
    fig = new_figure(title, "load (requests/s)", y_title, log_y=True)
    traces = [_points(rate, y, f"simulated p{q}{sim_suffix}", PCT_COLORS.get(q, COLORS["exact"]))
              for q, y in percentiles.items()]
    traces.append(_points(rate, mean, f"simulated mean ±95% CI{sim_suffix}", COLORS["sim"],
                          symbol="circle-open", error=ci95, lines=False))
    traces.append(dict(type="scatter", x=np.asarray(approx_rate, float).tolist(),
                       y=finite(approx_mean), name=approx_label, mode="lines",
                       line=dict(color=COLORS["sim"], dash="dash", width=2)))
    shown = [*percentiles.values(), mean, approx_mean]
    if baseline is not None:
        traces.append(baseline_trace(*baseline, name="baseline (pinned), p99"))
        shown.append(baseline[1])
    fig.add_traces(traces)
    shapes, notes = unstable_overlay(capacity, x_max, "unstable past capacity")
    if limit is not None and np.isfinite(limit):
        line, label = target_line(limit, limit_label, log_y=True, color="#d62728")
        shapes, notes = shapes + line, notes + label
        shown.append([limit])
    if meets_up_to is not None and 0 < meets_up_to < x_max:
        line, label = target_line(meets_up_to, "target met up to here", axis="x",
                                  color="#2ca02c", dash="dot", position="bottom left")
        shapes, notes = shapes + line, notes + label
    fit_log_range(fig, *shown)
    fig.update_xaxes(range=[0, x_max])
    return add_overlays(fig, shapes, notes)


def timeline_figure(time_s, running, waiting, kv_blocks, preemptions, kv_blocks_total,
                    *, title: str = "One run, step by step") -> go.Figure:
    """Requests running and waiting (top), KV cache use and preemptions so far (bottom)
    against time, one point per scheduler step.  ``kv_blocks_total`` None (unbounded
    cache): KV use in blocks instead of %."""
    t = np.asarray(time_s, float).tolist()
    fig = new_figure(title, "time (s)", "requests")
    bounded = kv_blocks_total is not None and kv_blocks_total > 0
    kv = np.asarray(kv_blocks, float)
    kv_y = 100.0 * kv / kv_blocks_total if bounded else kv
    kv_title = "KV cache in use (%)" if bounded else "KV blocks in use (blocks)"
    fig.update_layout(
        height=520, hovermode="x unified",
        yaxis=dict(domain=[0.45, 1.0], title=dict(text="requests")),
        xaxis=dict(anchor="y2"),
        yaxis2=dict(domain=[0.0, 0.35], title=dict(text=kv_title),
                    range=[0, 105] if bounded else None),
        yaxis3=dict(overlaying="y2", side="right", title=dict(text="preemptions so far"),
                    rangemode="tozero", showgrid=False, tickformat=",d", nticks=4))
    fig.add_traces([
        dict(type="scatter", x=t, y=np.asarray(running, float).tolist(), name="running",
             mode="lines", line=dict(color=TIMELINE_COLORS["running"], width=1.5)),
        dict(type="scatter", x=t, y=np.asarray(waiting, float).tolist(), name="waiting",
             mode="lines", line=dict(color=TIMELINE_COLORS["waiting"], width=1.5)),
        dict(type="scatter", x=t, y=kv_y.tolist(), name="KV cache in use", mode="lines",
             yaxis="y2", line=dict(color=TIMELINE_COLORS["kv"], width=1.5)),
        dict(type="scatter", x=t, y=np.asarray(preemptions, float).tolist(),
             name="preemptions so far", mode="lines", yaxis="y3",
             line=dict(color=TIMELINE_COLORS["preemptions"], width=1.5, dash="dot"))])
    return fig


MEASURED_COLORS = ("#1f4e79", "#ff7f0e", "#2ca02c", "#9467bd")


def measured_figure(groups: dict, *, title: str = "Predicted against measured") -> go.Figure:
    """Predicted (y) against measured (x) latencies, log-log, with the line where they
    agree; ``groups``: {name: (measured ms, predicted ms, a label per point)}."""
    fig = new_figure(title, "measured (ms)", "predicted (ms)", log_y=True, log_x=True)
    traces, values = [], []
    for (name, (x, y, labels)), color in zip(groups.items(), MEASURED_COLORS * 4):
        x, y = np.asarray(x, float), np.asarray(y, float)
        keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
        traces.append(dict(type="scatter", x=x[keep].tolist(), y=y[keep].tolist(), name=name,
                           mode="markers", text=[t for t, k in zip(labels, keep) if k],
                           hovertemplate="%{text}: measured %{x:.4g} ms, predicted "
                                         "%{y:.4g} ms<extra></extra>",
                           marker=dict(color=color, size=9)))
        values += [x[keep], y[keep]]
    both = np.concatenate(values) if values else np.array([])
    if both.size:
        lo, hi = float(both.min()) / 1.5, float(both.max()) * 1.5
        traces.append(dict(type="scatter", x=[lo, hi], y=[lo, hi], mode="lines",
                           name="prediction = measurement",
                           line=dict(color=COLORS["bound"], dash="dot", width=1)))
        fit_log_range(fig, [lo, hi], pad=1.0)
        fit_log_range(fig, [lo, hi], pad=1.0, axis="x")
    fig.add_traces(traces)
    fig.update_layout(hovermode="closest")
    return fig
