"""Figures of the autoscaling-SLA page (Swayam appendix, eqs 1 and 7, and M/M/n).

Pure builders: arrays in, ``go.Figure`` out (no Streamlit, no model arithmetic);
tests read them as data.  Times arrive in ms (hours on a trace), rates per second.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.plotting import (COLORS, add_overlays, finite, fit_log_range, hline,
                         line_label, new_figure, vband, vline)

NAMES = {"eq7": "approximation (Swayam)", "fix": "approximation, correlated retries",
         "mmn": "one central queue (M/M/n)", "sim": "simulation (random retry)"}


def _line(x, y, name, color, dash=None, width=2.0, shape=None):
    return dict(type="scatter", x=np.asarray(x, float).tolist(), y=finite(y), name=name,
                mode="lines", line=dict(color=color, dash=dash, width=width, shape=shape))


def _positive(y) -> list:
    """y with values ≤ 0 or non-finite as gaps (for a log axis)."""
    y = np.asarray(y, dtype=float)
    return finite(np.where(y > 0, y, np.nan))


def _resolved(x, y) -> tuple[list, list]:
    """The points of a curve with a positive finite y: the rest (below the method's
    resolution, or none late) are not data, so they are left out, not left blank."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(y) & (y > 0)
    return x[keep].tolist(), y[keep].tolist()


def _step(span: float) -> float:
    """A 1-2-5 whole-number tick step giving at most about 8 ticks over ``span``."""
    for scale in 10.0 ** np.arange(0, 9):
        for base in (1, 2, 5):
            if base * scale >= span / 8:
                return float(base * scale)
    return float(span)


def integer_ticks(lo: float, hi: float) -> dict:
    """Axis properties that tick a count axis at whole numbers only (no 6.01, 12.02)."""
    return dict(tickmode="linear", tick0=0, dtick=_step(max(hi - lo, 1.0)), tickformat="d")


def _shade_too_few(fig: go.Figure, n_capacity: float, n_max: float, shapes=(),
                   annotations=()) -> go.Figure:
    """Replica counts n ≤ λ/μ cannot carry the load (no steady state): shade up
    to λ/μ, the mirror image of ``shade_unstable`` (which shades loads above a
    limit), with a few such counts kept in view.  ``shapes``, ``annotations``:
    the figure's other overlays, added in the same layout update."""
    x0 = max(0.5, n_capacity - 3.0)
    fig.update_xaxes(range=[x0, n_max + 0.5], **integer_ticks(x0, n_max + 0.5))
    shapes, annotations = list(shapes), list(annotations)
    if n_capacity > x0:
        shapes += [vband(x0, n_capacity), vline(n_capacity, color="#d62728", dash="dot", width=1)]
        annotations.append(dict(x=n_capacity, y=1.0, yref="paper", text="too few to keep up",
                                showarrow=False, xanchor="right", yanchor="top",
                                font=dict(size=11, color="#d62728")))
    return add_overlays(fig, shapes, annotations)


def miss_figure(n, miss_eq7, miss_mmn, *, percentile, n_capacity, floor, fix=None, sim=None,
                chosen=None, baseline=None) -> go.Figure:
    """Share of requests slower than the target, 1 − P(R ≤ RT), against replicas on a
    log axis, with the SLA's allowance 1 − p/100.  Shares are given with ``nan``
    where below ``floor`` (the method's resolution): such points are left out of the
    curves and the band below ``floor`` says "below 1e-12".  ``fix``, ``sim``,
    ``baseline``: (n, share late)."""
    fig = new_figure("Share of requests slower than the target, by replicas", "replicas",
                     "share of requests slower than the target", log_y=True)
    curves = [(n, miss_eq7, NAMES["eq7"]), (n, miss_mmn, NAMES["mmn"])]
    style = {NAMES["eq7"]: dict(mode="lines", line=dict(color=COLORS["exact"], width=3)),
             NAMES["mmn"]: dict(mode="lines", line=dict(color=COLORS["phi1"], dash="dash",
                                                        width=2)),
             NAMES["fix"]: dict(mode="lines+markers", marker=dict(size=5),
                                line=dict(color=COLORS["phi"], dash="dot")),
             NAMES["sim"]: dict(mode="markers", marker=dict(color=COLORS["sim"], size=9)),
             "baseline (pinned)": dict(mode="lines", line=dict(color=COLORS["baseline"],
                                                               dash="dash", width=2))}
    for name, pair in ((NAMES["fix"], fix), (NAMES["sim"], sim),
                       ("baseline (pinned)", baseline)):
        if pair is not None:
            curves.append((pair[0], pair[1], name))
    traces, shown, below = [], [], False
    for x, y, name in curves:
        xs, ys = _resolved(x, y)
        below |= len(ys) < np.size(y) and name != NAMES["sim"]
        shown.append(ys)
        note = f" (below {floor:.0e} at every n shown)" if not ys and np.size(y) else ""
        traces.append(dict(type="scatter", x=xs, y=ys, name=name + note, **style[name]))
    fig.add_traces(traces)
    allowed = 1.0 - percentile / 100.0
    sla = hline(allowed, color="#444", dash="dashdot", width=1)
    shapes = [sla]
    labels = [line_label(sla, f"SLA: at most {allowed:.3g} of requests slower", "top right",
                         log_y=True)]
    if below:                                         # the unresolved region, labelled
        edge = hline(floor, color="#999", dash="dot", width=1)
        shapes += [edge, dict(type="rect", xref="x domain", x0=0, x1=1, yref="y", y0=floor / 100,
                              y1=floor, fillcolor="rgba(127,127,127,0.12)", line=dict(width=0),
                              layer="below")]
        labels.append(line_label(edge, f"below {floor:.0e}: not resolved, not drawn",
                                 "bottom left", log_y=True))
    if chosen is not None:
        shapes.append(vline(chosen, color=COLORS["bound"], dash="dot", width=1))
    fit_log_range(fig, *shown, [allowed], *([[floor / 10]] if below else []))
    fig.update_layout(hovermode="closest")
    return _shade_too_few(fig, n_capacity, float(np.max(n)), shapes, labels)


def waiting_figure(n, omega_ms, omega_mmn_ms, *, percentile, n_capacity, sim=None,
                   printed_ms=None) -> go.Figure:
    """The p-th percentile wait before service against replicas: the quantile of
    the retry model's geometric law, M/M/n's closed form and simulation.
    ``printed_ms``: eq 1 as printed (r taken as real), drawn only in the "Paper vs
    model" view (it is wrong by design, docs/models/sla.md erratum 1)."""
    title = (f"Paper vs model: p{percentile:g} wait, eq 1 as printed against its own law"
             if printed_ms is not None else f"p{percentile:g} wait before service, by replicas")
    fig = new_figure(title, "replicas", f"p{percentile:g} wait before service (ms)",
                     log_y=True)
    traces = [_line(n, _positive(omega_ms), "retry model (geometric retries)", COLORS["exact"],
                    width=3, shape="hv")]
    series = [omega_ms]
    if printed_ms is not None:
        traces.append(_line(n, _positive(printed_ms), "paper's eq 1 as printed (r real)",
                            COLORS["phi0"], dash="dot"))
        series.append(printed_ms)
    traces.append(_line(n, _positive(omega_mmn_ms), "one central queue (M/M/n, no d1)",
                        COLORS["phi1"], dash="dash"))
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
    fig = new_figure(f"Share of requests answered within a time, {n} replicas",
                     "response time (ms)", "share of requests within the time")
    traces = [_line(t_ms, eq7, NAMES["eq7"], COLORS["exact"], width=3)]
    if fix is not None:
        traces.append(_line(t_ms, fix, NAMES["fix"], COLORS["phi"], dash="dot"))
    traces.append(_line(t_ms, mmn, NAMES["mmn"], COLORS["phi1"], dash="dash"))
    if sim is not None:
        traces.append(_line(sim[0], sim[1], NAMES["sim"], COLORS["sim"], width=2))
    fig.add_traces(traces)
    rt = vline(rt_ms, color="#444", dash="dashdot", width=1)
    sla = hline(percentile / 100.0, color="#444", dash="dot", width=1)
    fig.update_yaxes(range=[0, 1.02])
    return add_overlays(fig, [rt, sla],
                        [line_label(rt, f"target {rt_ms:g} ms", "bottom right"),
                         line_label(sla, f"SLA: {percentile:g} % within the target",
                                    "bottom left")])


def trace_figure(t_h, rate, needed, serving, sla_met, overloaded, interval_h) -> go.Figure:
    """Load over time (left axis) with the replicas needed and serving (right
    axis, steps), SLA-violation markers and ``overloaded`` intervals shaded."""
    fig = new_figure("Load trace and autoscaled replicas", "time (h)", "load (requests/s)")
    t = np.asarray(t_h, float)
    rate = np.asarray(rate, float)
    miss = ~np.asarray(sla_met, bool)
    fig.add_traces([
        _line(t, rate, "load (requests/s)", COLORS["bound"], shape="hv"),
        dict(type="scatter", x=t.tolist(), y=finite(needed), name="replicas needed",
             mode="lines", yaxis="y2", line=dict(color=COLORS["exact"], dash="dot", shape="hv")),
        dict(type="scatter", x=t.tolist(), y=finite(serving), name="replicas serving",
             mode="lines", yaxis="y2", line=dict(color=COLORS["exact"], width=2.5, shape="hv")),
        dict(type="scatter", x=t[miss].tolist(), y=finite(rate[miss]), name="SLA missed",
             mode="markers", marker=dict(symbol="x", size=9, color=COLORS["phi0"]))])
    top = float(np.nanmax(np.asarray(needed, float), initial=1.0))
    fig.update_layout(yaxis2=dict(title=dict(text="replicas"), overlaying="y", side="right",
                                  rangemode="tozero", showgrid=False,
                                  **integer_ticks(0.0, top)),
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


TRAFFIC_COLORS = (COLORS["exact"], COLORS["phi0"], COLORS["phi"], COLORS["sim"])


def traffic_figure(curves, *, percentile, needed) -> go.Figure:
    """Poisson vs this traffic: the simulated share of requests slower than the target
    against replicas, one curve per arrival process (``curves``: (label, n, share late)),
    with the SLA's allowance and each process's fewest replicas meeting it (``needed``,
    inf: none simulated) marked."""
    fig = new_figure("Poisson vs this traffic: share of requests slower than the target "
                     "(simulated)", "replicas", "share of requests slower than the target",
                     log_y=True)
    traces, shown = [], []
    for (label, n, late), color, best in zip(curves, TRAFFIC_COLORS * 2, needed):
        xs, ys = _resolved(n, late)
        shown.append(ys)
        traces.append(dict(type="scatter", x=xs, y=ys, name=label, mode="lines+markers",
                           line=dict(color=color, width=2), marker=dict(size=6)))
        if np.isfinite(best) and best in list(n):
            y = float(np.asarray(late)[list(n).index(best)])
            if y > 0:
                traces.append(dict(type="scatter", x=[float(best)], y=[y], mode="markers",
                                   name=f"{label}: {best:.0f} replicas", showlegend=False,
                                   marker=dict(color=color, size=13, symbol="star")))
    fig.add_traces(traces)
    allowed = 1.0 - percentile / 100.0
    sla = hline(allowed, color="#444", dash="dashdot", width=1)
    fit_log_range(fig, *[s for s in shown if s], [allowed])
    fig.update_layout(hovermode="closest")
    fig.update_xaxes(**integer_ticks(*_span(curves)))
    return add_overlays(fig, [sla], [line_label(sla, f"SLA: at most {allowed:.3g} of requests "
                                                     "slower", "top right", log_y=True)])


def _span(curves) -> tuple[float, float]:
    n = np.concatenate([np.asarray(c[1], float) for c in curves] or [np.array([1.0])])
    return (float(n.min()), float(n.max())) if n.size else (1.0, 2.0)
