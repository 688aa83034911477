"""Shared pieces of every figure: layout, unstable-load shading, baselines, config.

Pure functions: data in, ``go.Figure`` out (or modified), no Streamlit calls.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

COLORS = {"exact": "#1f4e79", "phi0": "#d62728", "phi1": "#2ca02c", "phi": "#9467bd",
          "sim": "#ff7f0e", "bound": "#7f7f7f", "baseline": "#555555"}
UNSTABLE_FILL = "rgba(214, 39, 40, 0.08)"


def new_figure(title: str, x_title: str, y_title: str, *, log_y: bool = False) -> go.Figure:
    # No named template: Streamlit themes the chart, and loading a template deep-copies
    # it (~70 ms a figure, most of a rerun).
    fig = go.Figure(layout=dict(
        title=dict(text=title, x=0.0, xanchor="left", font=dict(size=15)),
        xaxis=dict(title=dict(text=x_title)), yaxis=dict(title=dict(text=y_title)),
        margin=dict(l=60, r=20, t=50, b=50), height=380,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        hovermode="x unified"))
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def finite(y) -> list:
    """y with non-finite values as None (Plotly leaves a gap instead of failing)."""
    y = np.asarray(y, dtype=float)
    return [float(v) if np.isfinite(v) else None for v in y]


def fit_log_range(fig: go.Figure, *series, pad: float = 1.6) -> go.Figure:
    """Log y-axis spanning the finite values of ``series`` (bounds that blow up near
    capacity would otherwise squash the curves that matter)."""
    values = np.concatenate([np.ravel(np.asarray(s, dtype=float)) for s in series])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size:
        fig.update_yaxes(range=[np.log10(values.min() / pad), np.log10(values.max() * pad)])
    return fig


def shade_unstable(fig: go.Figure, limit: float, x_max: float, label: str) -> go.Figure:
    """Shade x ≥ limit (the load at which the queue is unstable) and label it."""
    if not np.isfinite(limit) or limit >= x_max:
        return fig
    fig.add_vrect(x0=limit, x1=x_max, fillcolor=UNSTABLE_FILL, line_width=0, layer="below")
    fig.add_vline(x=limit, line=dict(color="#d62728", dash="dot", width=1))
    fig.add_annotation(x=limit, y=1.0, yref="paper", text=label, showarrow=False,
                       xanchor="left", yanchor="top", font=dict(size=11, color="#d62728"))
    return fig


def add_baseline(fig: go.Figure, x, y, name: str = "baseline") -> go.Figure:
    fig.add_trace(go.Scatter(x=list(np.asarray(x, float)), y=finite(y), name=name, mode="lines",
                             line=dict(color=COLORS["baseline"], dash="dash", width=2)))
    return fig


def chart_config(image_format: str = "png", filename: str = "chart") -> dict:
    """Plotly modebar: download as PNG or SVG (the user picks the format)."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": image_format, "filename": filename, "scale": 2},
            "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
