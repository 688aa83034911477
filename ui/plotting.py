"""Shared pieces of every figure: layout, overlays, unstable-load shading, baselines, config.

Pure functions: data in, ``go.Figure`` (or plain dicts) out, no Streamlit calls.

Overlays (lines, bands, labels) are built as plain dicts and added to a figure in
one layout update by ``add_overlays``: Plotly's ``add_vline``/``add_vrect``/
``add_shape``/``add_annotation`` re-validate the whole layout on every call (tens
of ms a figure, seconds for a trace with hundreds of shaded intervals).  Traces go
in as dicts through one ``fig.add_traces`` call for the same reason: a
``go.Scatter`` handed to ``add_trace`` is validated twice.
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
    yaxis = dict(title=dict(text=y_title), **(dict(type="log") if log_y else {}))
    return go.Figure(layout=dict(
        title=dict(text=title, x=0.0, xanchor="left", font=dict(size=15)),
        xaxis=dict(title=dict(text=x_title)), yaxis=yaxis,
        margin=dict(l=60, r=20, t=50, b=50), height=380,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        hovermode="x unified"))


def finite(y) -> list:
    """y with non-finite values as None (Plotly leaves a gap instead of failing)."""
    y = np.asarray(y, dtype=float).ravel()
    out = y.tolist()
    for i in np.flatnonzero(~np.isfinite(y)):
        out[i] = None
    return out


def fit_log_range(fig: go.Figure, *series, pad: float = 1.6) -> go.Figure:
    """Log y-axis spanning the finite values of ``series`` (bounds that blow up near
    capacity would otherwise squash the curves that matter)."""
    values = np.concatenate([np.ravel(np.asarray(s, dtype=float)) for s in series])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size:
        fig.update_yaxes(range=[np.log10(values.min() / pad), np.log10(values.max() * pad)])
    return fig


def vline(x: float, **line) -> dict:
    """A vertical line at ``x`` across the plot (``add_vline``'s shape); ``line``:
    color, dash, width."""
    return dict(type="line", x0=x, x1=x, xref="x", y0=0, y1=1, yref="y domain", line=line)


def hline(y: float, **line) -> dict:
    """A horizontal line at ``y`` across the plot (``add_hline``'s shape)."""
    return dict(type="line", x0=0, x1=1, xref="x domain", y0=y, y1=y, yref="y", line=line)


def vband(x0: float, x1: float, fillcolor: str = UNSTABLE_FILL) -> dict:
    """A borderless band x0 ≤ x ≤ x1 behind the curves (``add_vrect``'s shape)."""
    return dict(type="rect", x0=x0, x1=x1, xref="x", y0=0, y1=1, yref="y domain",
                fillcolor=fillcolor, line=dict(width=0), layer="below")


# Where add_vline / add_hline put ``annotation_text`` for each ``annotation_position``:
# position -> (end of the line in axis-domain units, xanchor, yanchor).
_VLINE_LABEL = {"top left": (1, "right", "top"), "top right": (1, "left", "top"),
                "top": (1, "center", "bottom"), "bottom left": (0, "right", "bottom"),
                "bottom right": (0, "left", "bottom"), "bottom": (0, "center", "top"),
                "left": (0.5, "right", "middle"), "right": (0.5, "left", "middle")}
_HLINE_LABEL = {"top left": (0, "left", "bottom"), "top right": (1, "right", "bottom"),
                "top": (0.5, "center", "bottom"), "bottom left": (0, "left", "top"),
                "bottom right": (1, "right", "top"), "bottom": (0.5, "center", "top"),
                "left": (0, "right", "middle"), "right": (1, "left", "middle")}


def line_label(line: dict, text: str, position: str = "top right", **props) -> dict:
    """A label for a ``vline``/``hline`` shape, placed like ``annotation_text`` with
    ``annotation_position`` of ``add_vline``/``add_hline``; ``props``: other
    annotation properties (font, ...)."""
    if line["yref"] == "y domain":                       # vertical line
        y, xanchor, yanchor = _VLINE_LABEL[position]
        where = dict(x=line["x0"], xref="x", y=y, yref="y domain")
    else:
        x, xanchor, yanchor = _HLINE_LABEL[position]
        where = dict(x=x, xref="x domain", y=line["y0"], yref="y")
    return dict(text=text, showarrow=False, xanchor=xanchor, yanchor=yanchor, **where, **props)


def add_overlays(fig: go.Figure, shapes=(), annotations=()) -> go.Figure:
    """Append ``shapes`` and ``annotations`` (dicts) to ``fig`` in one layout update."""
    update = {}
    if shapes:
        update["shapes"] = fig.layout.shapes + tuple(shapes)
    if annotations:
        update["annotations"] = fig.layout.annotations + tuple(annotations)
    if update:
        # overwrite: a plain update would merge into the existing shapes one by one
        fig.update_layout(update, overwrite=True)
    return fig


def unstable_overlay(limit: float, x_max: float, label: str) -> tuple[list, list]:
    """Shapes and annotations shading x ≥ limit (the load at which the queue is
    unstable) with a dotted edge and a label; none when ``limit`` is off the chart."""
    if not np.isfinite(limit) or limit >= x_max:
        return [], []
    return ([vband(limit, x_max), vline(limit, color="#d62728", dash="dot", width=1)],
            [dict(x=limit, y=1.0, yref="paper", text=label, showarrow=False, xanchor="left",
                  yanchor="top", font=dict(size=11, color="#d62728"))])


def shade_unstable(fig: go.Figure, limit: float, x_max: float, label: str) -> go.Figure:
    """Shade x ≥ limit (the load at which the queue is unstable) and label it."""
    return add_overlays(fig, *unstable_overlay(limit, x_max, label))


def baseline_trace(x, y, name: str = "baseline") -> dict:
    """A pinned earlier curve, drawn dashed grey (a trace dict for ``fig.add_traces``)."""
    return dict(type="scatter", x=np.asarray(x, float).tolist(), y=finite(y), name=name,
                mode="lines", line=dict(color=COLORS["baseline"], dash="dash", width=2))


def chart_config(image_format: str = "png", filename: str = "chart") -> dict:
    """Plotly modebar: download as PNG or SVG (the user picks the format)."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": image_format, "filename": filename, "scale": 2},
            "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
