"""Pure figure builders of the LLM batching page (Yang et al. Figs 3, 5, 6 and more).

Arrays in, ``go.Figure`` out, no Streamlit; tests read the curves as data.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.plotting import (COLORS, add_overlays, baseline_trace, finite, fit_log_range, line_label,
                         new_figure, unstable_overlay, vline)

STRATEGY_COLORS = {"dynamic": "#1f4e79", "capped": "#9467bd", "fixed": "#2ca02c",
                   "elastic": "#ff7f0e", "continuous": "#d62728"}


def _line(x, y, name, color, dash=None, width=2.0):
    return dict(type="scatter", x=np.asarray(x, float).tolist(), y=finite(y), name=name,
                mode="lines", line=dict(color=color, dash=dash, width=width))


def expected_max_figure(b, expected_max, mean_tokens, b_marks: dict) -> go.Figure:
    """Fig 3a: E[L_b], the mean longest output of a batch of b (eq 23)."""
    fig = new_figure("Longest output in a batch, E[L_b] (eq 23)", "batch size b",
                     "E[L_b] (tokens)")
    fig.add_traces([_line(b, expected_max, "E[L_b]", COLORS["exact"], width=3),
                    _line([b[0], b[-1]], [mean_tokens] * 2, "E[N] (one request)",
                          COLORS["bound"], dash="dot")]
                   + _marks(b, expected_max, b_marks))
    fig.update_xaxes(type="log")
    return fig


def throughput_figure(b, mu, b_opt: int, b_marks: dict) -> go.Figure:
    """Fig 3b: μ[b] = b / E[H(b, L_b)] (eq 24) with the throughput-optimal b marked."""
    fig = new_figure("Throughput vs batch size, μ[b] (eq 24)", "batch size b",
                     "throughput μ[b] (requests/s)")
    i = int(np.flatnonzero(np.asarray(b) == b_opt)[0])
    fig.add_traces([_line(b, mu, "μ[b]", COLORS["exact"], width=3),
                    dict(type="scatter", x=[b_opt], y=[float(mu[i])], mode="markers+text",
                         name=f"throughput-optimal b = {b_opt}", text=[f"b = {b_opt}"],
                         textposition="top center",
                         marker=dict(size=11, color=COLORS["sim"], symbol="star"))]
                   + _marks(b, mu, b_marks))
    fig.update_xaxes(type="log")
    return fig


def _marks(b, y, b_marks: dict) -> list[dict]:
    """One marker trace on the curve per named batch size (those on the chart)."""
    b = np.asarray(b)
    marks = []
    for (name, value), symbol in zip(b_marks.items(), ("diamond", "square", "triangle-up")):
        hit = np.flatnonzero(b == value)
        if hit.size:
            marks.append(dict(type="scatter", x=[float(value)], y=[float(np.asarray(y)[hit[0]])],
                              mode="markers", name=f"{name} = {value}",
                              marker=dict(size=10, symbol=symbol, color=COLORS["bound"])))
    return marks


def strategy_latency_figure(curves, sims, limits: dict, *, x_max, title, y_title,
                            current=None, baseline=None, ends=()) -> go.Figure:
    """Latency vs arrival rate for every strategy (Figs 5, 6).

    ``curves``: (strategy, label, λ, latency, dash) analytic lines; ``sims``:
    (strategy, label, λ, value, ci95 or None) simulated points; ``limits``:
    strategy -> (label, stability limit in requests/s), each drawn as a dotted
    line, and loads beyond every limit shaded.  Curves with no finite value are
    left out.  ``ends``: (strategy, x, y, why) — where a curve ends and why, as an
    annotation at (x, y), or as legend text "strategy: why" when y is None (not drawn).
    """
    fig = new_figure(title, "arrival rate λ (requests/s)", y_title, log_y=True)
    shown, traces = [], []
    for strategy, label, x, y, dash in curves:
        if not np.isfinite(np.asarray(y, float)).any():
            continue                  # nothing to draw (the bound of an unbounded law)
        traces.append(_line(x, y, label, STRATEGY_COLORS[strategy], dash=dash,
                            width=1.5 if dash else 3))
        shown.append(y)
    for strategy, label, x, y, ci in sims:
        keep = np.isfinite(np.asarray(y, float))
        err = None if ci is None else dict(type="data", array=finite(np.asarray(ci)[keep]),
                                           visible=True)
        traces.append(dict(type="scatter", x=np.asarray(x, float)[keep].tolist(),
                           y=finite(np.asarray(y)[keep]), mode="markers", name=label,
                           marker=dict(color=STRATEGY_COLORS[strategy], size=8,
                                       symbol="circle-open"), error_y=err))
        shown.append(y)
    if baseline is not None:
        traces.append(baseline_trace(*baseline, name="baseline (pinned)"))
    shapes, notes = [], []
    for strategy, x, y, why in ends:
        color = STRATEGY_COLORS[strategy]
        if y is None:
            traces.append(dict(type="scatter", x=[None], y=[None], mode="markers", name=why,
                               marker=dict(color=color, symbol="x-thin-open", size=8)))
        else:
            traces.append(dict(type="scatter", x=[float(x)], y=[float(y)], mode="text",
                               name=why, text=[why], textposition="top left", showlegend=False,
                               hoverinfo="skip", textfont=dict(size=9, color=color)))
    fig.add_traces(traces)
    for strategy, (label, limit) in limits.items():
        if 0 < limit < x_max:
            shapes.append(vline(limit, color=STRATEGY_COLORS[strategy], dash="dot", width=1))
            notes.append(dict(x=limit, y=0.0, yref="paper", text=f"{label} limit",
                              textangle=-90, showarrow=False, xanchor="right", yanchor="bottom",
                              font=dict(size=9, color=STRATEGY_COLORS[strategy])))
    if current is not None:
        shapes.append(vline(current, color="#444", dash="dashdot", width=1))
        notes.append(line_label(shapes[-1], "current λ", "top right"))
    if shown:
        fit_log_range(fig, *shown)
    top = max([lim for _, lim in limits.values()] or [np.inf])
    fig.update_xaxes(range=[0, x_max])
    band, band_notes = unstable_overlay(top, x_max, "every strategy unstable")
    return add_overlays(fig, shapes + band, notes + band_notes)


def best_strategy_figure(lam, best: list[str], order: list[str], verdicts=None) -> go.Figure:
    """Which strategy has the smallest mean latency at each load: a label of ``order``,
    "not computed" (stable strategies whose latency is not known) or "none stable"
    ("" also means none stable); ``verdicts``: the answer in words per load (hover)."""
    fig = new_figure("Fastest strategy at each load", "arrival rate (requests/s)", "strategy")
    lam = np.asarray(lam, float)
    best = [b or "none stable" for b in best]
    verdicts = list(verdicts) if verdicts is not None else best
    styles = {"not computed": dict(symbol="circle-open", color="#888"),
              "none stable": dict(symbol="x", color="#d62728")}
    traces = []
    for label in list(order) + list(styles):
        sel = [i for i, name in enumerate(best) if name == label]
        if sel:
            traces.append(dict(type="scatter", x=lam[sel].tolist(), y=[label] * len(sel),
                               mode="markers", name=label, text=[verdicts[i] for i in sel],
                               hovertemplate="%{x:.3g} requests/s: %{text}<extra></extra>",
                               marker={"size": 14, "symbol": "square", **styles.get(label, {})}))
    fig.add_traces(traces)
    fig.update_yaxes(type="category", categoryorder="array",
                     categoryarray=list(order) + list(styles))
    fig.update_layout(hovermode="closest", height=320)
    return fig
