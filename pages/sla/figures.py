"""Figures of the autoscaling-SLA page (Swayam appendix, eqs 1 and 7, and M/M/n).

Pure builders: arrays in, ``go.Figure`` out (no Streamlit, no model arithmetic);
tests read them as data.  Times arrive in ms (hours on a trace), rates per second.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.plotting import (COLORS, add_overlays, baseline_trace, finite, fit_log_range, hline,
                         line_label, new_figure, vband, vline)

NAMES = {"eq7": "Swayam eq 7 (approximation)", "fix": "eq 7, retries correlated (corrected)",
         "mmn": "M/M/n central queue", "sim": "simulation, random retry"}


def _line(x, y, name, color, dash=None, width=2.0, shape=None):
    return dict(type="scatter", x=np.asarray(x, float).tolist(), y=finite(y), name=name,
                mode="lines", line=dict(color=color, dash=dash, width=width, shape=shape))


def _positive(y) -> list:
    """y with values ≤ 0 or non-finite as gaps (for a log axis)."""
    y = np.asarray(y, dtype=float)
    return finite(np.where(y > 0, y, np.nan))


def _shade_too_few(fig: go.Figure, n_capacity: float, n_max: float, shapes=(),
                   annotations=()) -> go.Figure:
    """Replica counts n ≤ λ/μ cannot carry the load (no steady state): shade up
    to λ/μ, the mirror image of ``shade_unstable`` (which shades loads above a
    limit), with a few such counts kept in view.  ``shapes``, ``annotations``:
    the figure's other overlays, added in the same layout update."""
    x0 = max(0.5, n_capacity - 3.0)
    fig.update_xaxes(range=[x0, n_max + 0.5])
    shapes, annotations = list(shapes), list(annotations)
    if n_capacity > x0:
        shapes += [vband(x0, n_capacity), vline(n_capacity, color="#d62728", dash="dot", width=1)]
        annotations.append(dict(x=n_capacity, y=1.0, yref="paper", text="unstable: n ≤ λ/μ",
                                showarrow=False, xanchor="right", yanchor="top",
                                font=dict(size=11, color="#d62728")))
    return add_overlays(fig, shapes, annotations)


def miss_figure(n, within_eq7, within_mmn, *, percentile, n_capacity, fix=None, sim=None,
                chosen=None, baseline=None) -> go.Figure:
    """SLA misses against replicas: P(R > RT) = 1 − P(R ≤ RT) on a log axis, with
    the allowed 1 − p/100.  ``fix``, ``sim``, ``baseline``: (n, P(R ≤ RT))."""
    fig = new_figure("Requests over the response-time target vs replicas", "replicas n",
                     "P(R > RT) = 1 − P(R ≤ RT)", log_y=True)
    miss = [1.0 - np.asarray(within_eq7, float)]
    x = np.asarray(n, float).tolist()
    traces = [dict(type="scatter", x=x, y=_positive(miss[0]), name=NAMES["eq7"], mode="lines",
                   line=dict(color=COLORS["exact"], width=3)),
              dict(type="scatter", x=x, y=_positive(1 - np.asarray(within_mmn)),
                   name=NAMES["mmn"], mode="lines",
                   line=dict(color=COLORS["phi1"], dash="dash", width=2))]
    if fix is not None:
        traces.append(dict(type="scatter", x=np.asarray(fix[0], float).tolist(),
                           y=_positive(1 - np.asarray(fix[1])), name=NAMES["fix"],
                           mode="lines+markers", line=dict(color=COLORS["phi"], dash="dot"),
                           marker=dict(size=5)))
    if sim is not None:
        miss.append(1 - np.asarray(sim[1], float))
        traces.append(dict(type="scatter", x=np.asarray(sim[0], float).tolist(),
                           y=_positive(miss[-1]), name=NAMES["sim"], mode="markers",
                           marker=dict(color=COLORS["sim"], size=9)))
    if baseline is not None:
        traces.append(baseline_trace(baseline[0], _positive(1 - np.asarray(baseline[1], float)),
                                     name="baseline (pinned)"))
    fig.add_traces(traces)
    allowed = 1.0 - percentile / 100.0
    sla = hline(allowed, color="#444", dash="dashdot", width=1)
    shapes = [sla]
    if chosen is not None:
        shapes.append(vline(chosen, color=COLORS["bound"], dash="dot", width=1))
    fit_log_range(fig, *miss, [allowed])
    fig.update_layout(hovermode="closest")
    return _shade_too_few(fig, n_capacity, float(np.max(n)), shapes,
                          [line_label(sla, f"SLA: at most {allowed:.3g} late", "top right")])


def waiting_figure(n, omega_ms, omega_printed_ms, omega_mmn_ms, *, percentile, n_capacity,
                   sim=None) -> go.Figure:
    """ω_p, the p-th percentile wait, against replicas: eq 1 as printed, the
    quantile of its own geometric law, M/M/n's closed form and simulation."""
    fig = new_figure(f"p{percentile:g} waiting time ω_p vs replicas", "replicas n",
                     f"ω_p, p{percentile:g} waiting time (ms)", log_y=True)
    traces = [_line(n, _positive(omega_ms), "eq 1, geometric quantile", COLORS["exact"],
                    width=3, shape="hv"),
              _line(n, _positive(omega_printed_ms), "eq 1 as printed (r real)",
                    COLORS["phi0"], dash="dot"),
              _line(n, _positive(omega_mmn_ms), "M/M/n central queue (no d1)",
                    COLORS["phi1"], dash="dash")]
    series = [omega_ms, omega_printed_ms]
    if sim is not None:
        traces.append(dict(type="scatter", x=np.asarray(sim[0], float).tolist(),
                           y=_positive(sim[1]), name=NAMES["sim"], mode="markers",
                           marker=dict(color=COLORS["sim"], size=9)))
        series.append(sim[1])
    fig.add_traces(traces)
    fit_log_range(fig, *series)
    fig.update_layout(hovermode="closest")
    return _shade_too_few(fig, n_capacity, float(np.max(n)))


def cdf_figure(t_ms, eq7, mmn, *, rt_ms, percentile, n, fix=None, sim=None) -> go.Figure:
    """Response-time CDF at n replicas; ``sim``: (t_ms, fraction within)."""
    fig = new_figure(f"Response-time CDF at n = {n}", "response time R (ms)", "P(R ≤ t)")
    traces = [_line(t_ms, eq7, NAMES["eq7"], COLORS["exact"], width=3)]
    if fix is not None:
        traces.append(_line(t_ms, fix, NAMES["fix"], COLORS["phi"], dash="dot"))
    traces.append(_line(t_ms, mmn, NAMES["mmn"], COLORS["phi1"], dash="dash"))
    if sim is not None:
        traces.append(_line(sim[0], sim[1], NAMES["sim"], COLORS["sim"], width=2))
    fig.add_traces(traces)
    rt = vline(rt_ms, color="#444", dash="dashdot", width=1)
    fig.update_yaxes(range=[0, 1.02])
    return add_overlays(fig, [rt, hline(percentile / 100.0, color="#444", dash="dot", width=1)],
                        [line_label(rt, f"RT {rt_ms:g} ms", "bottom right")])


def trace_figure(t_h, rate, needed, serving, sla_met, overloaded, interval_h) -> go.Figure:
    """Load over time (left axis) with the replicas needed and serving (right
    axis, steps), SLA-violation markers and ``overloaded`` intervals shaded."""
    fig = new_figure("Load trace and autoscaled replicas", "time (h)", "load (requests/s)")
    t = np.asarray(t_h, float)
    rate = np.asarray(rate, float)
    miss = ~np.asarray(sla_met, bool)
    fig.add_traces([
        _line(t, rate, "load (requests/s)", COLORS["bound"], shape="hv"),
        dict(type="scatter", x=t.tolist(), y=finite(needed), name="replicas needed (eq 7)",
             mode="lines", yaxis="y2", line=dict(color=COLORS["exact"], dash="dot", shape="hv")),
        dict(type="scatter", x=t.tolist(), y=finite(serving), name="replicas serving",
             mode="lines", yaxis="y2", line=dict(color=COLORS["exact"], width=2.5, shape="hv")),
        dict(type="scatter", x=t[miss].tolist(), y=finite(rate[miss]), name="SLA missed",
             mode="markers", marker=dict(symbol="x", size=9, color=COLORS["phi0"]))])
    fig.update_layout(yaxis2=dict(title=dict(text="replicas"), overlaying="y", side="right",
                                  rangemode="tozero", showgrid=False),
                      yaxis=dict(rangemode="tozero"), margin=dict(r=60))
    return add_overlays(fig, [vband(float(start), float(start + interval_h))
                              for start in t[np.asarray(overloaded, bool)]])


def cost_figure(end_h, autoscaled, static, static_replicas) -> go.Figure:
    """Cumulative cost ($) at the end of each interval (``end_h``, hours): autoscaled
    against a static fleet of ``static_replicas`` sized for the peak."""
    fig = new_figure("Cost: autoscaled vs static peak", "time (h)", "cumulative cost ($)")
    return fig.add_traces([_line(end_h, static, f"static peak ({int(static_replicas)} replicas)",
                                 COLORS["bound"], dash="dash"),
                           _line(end_h, autoscaled, "autoscaled", COLORS["exact"], width=3)])
