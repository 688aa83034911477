"""Figures of the autoscaling-SLA page (Swayam appendix, eqs 1 and 7, and M/M/n).

Pure builders: arrays in, ``go.Figure`` out (no Streamlit); tests read them as
data.  Times arrive in ms, rates per second, replica counts as numbers.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.plotting import COLORS, UNSTABLE_FILL, add_baseline, finite, fit_log_range, new_figure

NAMES = {"eq7": "Swayam eq 7 (approximation)", "fix": "eq 7, retries correlated (corrected)",
         "mmn": "M/M/n central queue", "sim": "simulation, random retry"}


def _line(x, y, name, color, dash=None, width=2.0, shape=None):
    return go.Scatter(x=list(np.asarray(x, float)), y=finite(y), name=name, mode="lines",
                      line=dict(color=color, dash=dash, width=width, shape=shape))


def _positive(y) -> list:
    """y with values ≤ 0 or non-finite as gaps (for a log axis)."""
    y = np.asarray(y, dtype=float)
    return finite(np.where(y > 0, y, np.nan))


def _shade_too_few(fig: go.Figure, n_capacity: float, n_max: float) -> go.Figure:
    """Replica counts n ≤ λ/μ cannot carry the load (no steady state): shade up
    to λ/μ, the mirror image of ``shade_unstable`` (which shades loads above a
    limit), with a few such counts kept in view."""
    x0 = max(0.5, n_capacity - 3.0)
    fig.update_xaxes(range=[x0, n_max + 0.5])
    if n_capacity <= x0:
        return fig
    fig.add_vrect(x0=x0, x1=n_capacity, fillcolor=UNSTABLE_FILL, line_width=0, layer="below")
    fig.add_vline(x=n_capacity, line=dict(color="#d62728", dash="dot", width=1))
    fig.add_annotation(x=n_capacity, y=1.0, yref="paper", text="unstable: n ≤ λ/μ",
                       showarrow=False, xanchor="right", yanchor="top",
                       font=dict(size=11, color="#d62728"))
    return fig


def miss_figure(n, within_eq7, within_mmn, *, percentile, n_capacity, fix=None, sim=None,
                chosen=None, baseline=None) -> go.Figure:
    """SLA misses against replicas: P(R > RT) = 1 − P(R ≤ RT) on a log axis, with
    the allowed 1 − p/100.  ``fix``, ``sim``, ``baseline``: (n, P(R ≤ RT))."""
    fig = new_figure("Requests over the response-time target vs replicas", "replicas n",
                     "P(R > RT) = 1 − P(R ≤ RT)", log_y=True)
    miss = [1.0 - np.asarray(within_eq7, float)]
    fig.add_trace(go.Scatter(x=list(np.asarray(n, float)), y=_positive(miss[0]),
                             name=NAMES["eq7"], mode="lines", line=dict(color=COLORS["exact"],
                                                                        width=3)))
    fig.add_trace(go.Scatter(x=list(np.asarray(n, float)), y=_positive(1 - np.asarray(within_mmn)),
                             name=NAMES["mmn"], mode="lines",
                             line=dict(color=COLORS["phi1"], dash="dash", width=2)))
    if fix is not None:
        fig.add_trace(go.Scatter(x=list(np.asarray(fix[0], float)),
                                 y=_positive(1 - np.asarray(fix[1])), name=NAMES["fix"],
                                 mode="lines+markers", line=dict(color=COLORS["phi"], dash="dot"),
                                 marker=dict(size=5)))
    if sim is not None:
        miss.append(1 - np.asarray(sim[1], float))
        fig.add_trace(go.Scatter(x=list(np.asarray(sim[0], float)), y=_positive(miss[-1]),
                                 name=NAMES["sim"], mode="markers",
                                 marker=dict(color=COLORS["sim"], size=9)))
    if baseline is not None:
        add_baseline(fig, baseline[0], _positive(1 - np.asarray(baseline[1], float)),
                     name="baseline (pinned)")
    allowed = 1.0 - percentile / 100.0
    fig.add_hline(y=allowed, line=dict(color="#444", dash="dashdot", width=1),
                  annotation_text=f"SLA: at most {allowed:.3g} late", annotation_position="top right")
    if chosen is not None:
        fig.add_vline(x=chosen, line=dict(color=COLORS["bound"], dash="dot", width=1))
    fit_log_range(fig, *miss, [allowed])
    fig.update_layout(hovermode="closest")
    return _shade_too_few(fig, n_capacity, float(np.max(n)))


def waiting_figure(n, omega_ms, omega_printed_ms, omega_mmn_ms, *, percentile, n_capacity,
                   sim=None) -> go.Figure:
    """ω_p, the p-th percentile wait, against replicas: eq 1 as printed, the
    quantile of its own geometric law, M/M/n's closed form and simulation."""
    fig = new_figure(f"p{percentile:g} waiting time ω_p vs replicas", "replicas n",
                     f"ω_p, p{percentile:g} waiting time (ms)", log_y=True)
    fig.add_trace(_line(n, _positive(omega_ms), "eq 1, geometric quantile", COLORS["exact"],
                        width=3, shape="hv"))
    fig.add_trace(_line(n, _positive(omega_printed_ms), "eq 1 as printed (r real)",
                        COLORS["phi0"], dash="dot"))
    fig.add_trace(_line(n, _positive(omega_mmn_ms), "M/M/n central queue (no d1)",
                        COLORS["phi1"], dash="dash"))
    series = [omega_ms, omega_printed_ms]
    if sim is not None:
        fig.add_trace(go.Scatter(x=list(np.asarray(sim[0], float)), y=_positive(sim[1]),
                                 name=NAMES["sim"], mode="markers",
                                 marker=dict(color=COLORS["sim"], size=9)))
        series.append(sim[1])
    fit_log_range(fig, *series)
    fig.update_layout(hovermode="closest")
    return _shade_too_few(fig, n_capacity, float(np.max(n)))


def cdf_figure(t_ms, eq7, mmn, *, rt_ms, percentile, n, fix=None, sim=None) -> go.Figure:
    """Response-time CDF at n replicas; ``sim``: (t_ms, fraction within)."""
    fig = new_figure(f"Response-time CDF at n = {n}", "response time R (ms)", "P(R ≤ t)")
    fig.add_trace(_line(t_ms, eq7, NAMES["eq7"], COLORS["exact"], width=3))
    if fix is not None:
        fig.add_trace(_line(t_ms, fix, NAMES["fix"], COLORS["phi"], dash="dot"))
    fig.add_trace(_line(t_ms, mmn, NAMES["mmn"], COLORS["phi1"], dash="dash"))
    if sim is not None:
        fig.add_trace(_line(sim[0], sim[1], NAMES["sim"], COLORS["sim"], width=2))
    fig.add_vline(x=rt_ms, line=dict(color="#444", dash="dashdot", width=1),
                  annotation_text=f"RT {rt_ms:g} ms", annotation_position="bottom right")
    fig.add_hline(y=percentile / 100.0, line=dict(color="#444", dash="dot", width=1))
    fig.update_yaxes(range=[0, 1.02])
    return fig


def trace_figure(t_h, rate, needed, serving, sla_met, mu, interval_h) -> go.Figure:
    """Load over time (left axis) with the replicas needed and serving (right
    axis, steps), SLA-violation markers and overloaded intervals shaded."""
    fig = new_figure("Load trace and autoscaled replicas", "time (h)", "load (requests/s)")
    t = np.asarray(t_h, float)
    rate = np.asarray(rate, float)
    fig.add_trace(_line(t, rate, "load (requests/s)", COLORS["bound"], shape="hv"))
    fig.add_trace(go.Scatter(x=list(t), y=finite(needed), name="replicas needed (eq 7)",
                             mode="lines", yaxis="y2",
                             line=dict(color=COLORS["exact"], dash="dot", shape="hv")))
    fig.add_trace(go.Scatter(x=list(t), y=finite(serving), name="replicas serving",
                             mode="lines", yaxis="y2",
                             line=dict(color=COLORS["exact"], width=2.5, shape="hv")))
    miss = ~np.asarray(sla_met, bool)
    fig.add_trace(go.Scatter(x=list(t[miss]), y=finite(rate[miss]), name="SLA missed",
                             mode="markers", marker=dict(symbol="x", size=9,
                                                         color=COLORS["phi0"])))
    over = rate >= np.asarray(serving, float) * mu
    for start in t[over]:
        fig.add_vrect(x0=float(start), x1=float(start + interval_h), fillcolor=UNSTABLE_FILL,
                      line_width=0, layer="below")
    fig.update_layout(yaxis2=dict(title=dict(text="replicas"), overlaying="y", side="right",
                                  rangemode="tozero", showgrid=False),
                      yaxis=dict(rangemode="tozero"), margin=dict(r=60))
    return fig


def cost_figure(t_h, ordered, static_replicas, interval_h, usd_per_gpu_hour) -> go.Figure:
    """Cumulative cost ($): autoscaled (replicas paid for each interval) against
    a static fleet sized for the peak."""
    fig = new_figure("Cost: autoscaled vs static peak", "time (h)", "cumulative cost ($)")
    t = np.asarray(t_h, float) + interval_h
    auto = np.cumsum(np.asarray(ordered, float)) * interval_h * usd_per_gpu_hour
    static = np.arange(1, t.size + 1) * float(static_replicas) * interval_h * usd_per_gpu_hour
    fig.add_trace(_line(t, static, f"static peak ({int(static_replicas)} replicas)",
                        COLORS["bound"], dash="dash"))
    fig.add_trace(_line(t, auto, "autoscaled", COLORS["exact"], width=3))
    return fig
