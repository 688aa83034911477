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

import re

import numpy as np
import plotly.graph_objects as go

COLORS = {"exact": "#1f4e79", "phi0": "#d62728", "phi1": "#2ca02c", "phi": "#9467bd",
          "sim": "#ff7f0e", "bound": "#7f7f7f", "baseline": "#555555"}
UNSTABLE_FILL = "rgba(214, 39, 40, 0.08)"


def new_figure(title: str, x_title: str, y_title: str, *, log_y: bool = False,
               log_x: bool = False, probability: bool | None = None) -> go.Figure:
    """An empty figure with the house layout.  Log axes tick at decades only, numbers
    written out ("0.01", "100", "1e-6"), never SI suffixes; ``probability`` (guessed
    from ``y_title`` when None: "P(...)", "probability", "share", "fraction") makes a
    log y-axis read as 1e-k.  ``fit_log_range`` / ``readable_axes`` then place the
    ticks from the data."""
    # No named template: Streamlit themes the chart, and loading a template deep-copies
    # it (~70 ms a figure, most of a rerun).
    if probability is None:
        probability = is_probability_title(y_title)
    yaxis = dict(title=dict(text=y_title), **(_log_axis(probability) if log_y else {}))
    xaxis = dict(title=dict(text=x_title), **(_log_axis(False) if log_x else {}))
    return go.Figure(layout=dict(
        title=dict(text=title, x=0.0, xanchor="left", font=dict(size=15)),
        xaxis=xaxis, yaxis=yaxis,
        margin=dict(l=60, r=20, t=50, b=50), height=380,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        hovermode="x unified"))


# ------------------------------------------------------------------ readable axes

_PROBABILITY = re.compile(r"^\s*(P|Pr|π)\s*\(|probabilit|\bshare\b|\bfraction\b", re.I)
_PROB_FORMAT = "e"        # the mark of a probability axis (exponentformat), see _log_axis


def is_probability_title(title: str) -> bool:
    """Whether an axis titled ``title`` shows a probability or a share (0-1)."""
    return bool(_PROBABILITY.search(title or ""))


def _log_axis(probability: bool) -> dict:
    """A log axis ticked at decades, plain numbers (1e-k for probabilities), no minor labels."""
    return dict(type="log", dtick=1, exponentformat=_PROB_FORMAT if probability else "none",
                showexponent="all", minor=dict(ticks="", showgrid=False))


def tick_text(value: float, probability: bool = False) -> str:
    """A log-axis label: "0.01", "200", "5,000", "20k", "1e-6" (never "100μ" or "10f")."""
    if value <= 0 or not np.isfinite(value):
        return ""
    exp = int(np.floor(np.log10(value) + 1e-9))
    mantissa = round(value / 10.0 ** exp, 6)
    if mantissa >= 10:
        mantissa, exp = mantissa / 10, exp + 1
    m = f"{mantissa:g}"
    if exp < (-2 if probability else -3):
        return f"{m}e{exp}"
    if probability or exp < 4:
        return f"{value:,.{max(0, -exp + (len(m) - 2 if '.' in m else 0))}f}"
    for power, suffix in ((12, "T"), (9, "G"), (6, "M"), (3, "k")):  # large counts only
        if exp >= power:
            return f"{value / 10.0 ** power:,g}{suffix}"
    return f"{value:,g}"


def log_ticks(lo: float, hi: float, probability: bool = False, most: int = 8):
    """Tick values and labels for a log axis spanning 10**lo..10**hi: decades (every
    2nd, 3rd... when there are more than ``most``), else 1-2-5 steps, else 1..9."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        return [], []
    decades = np.arange(np.ceil(lo - 1e-9), np.floor(hi + 1e-9) + 1)
    if decades.size >= 3:
        step = int(np.ceil(decades.size / most))
        values = [float(10.0 ** k) for k in decades if k % step == 0]
    else:
        values = []
        for mantissas in ((1, 2, 5), tuple(range(1, 10))):
            values = [float(m * 10.0 ** k) for k in range(int(np.floor(lo)), int(np.ceil(hi)) + 1)
                      for m in mantissas if lo - 1e-9 <= np.log10(m * 10.0 ** k) <= hi + 1e-9]
            if len(values) >= 3:
                break
    return values, [tick_text(v, probability) for v in values]


def _axis_name(axis: str) -> str:
    """"x", "y", "x2", "xaxis2" -> the layout key ("xaxis", "yaxis2", ...)."""
    return axis if "axis" in axis else f"{axis[0]}axis{axis[1:]}"


def set_log_ticks(fig: go.Figure, lo: float, hi: float, axis: str = "y",
                  probability: bool | None = None) -> go.Figure:
    """Label a log axis spanning 10**lo..10**hi with ``log_ticks`` (major ticks only)."""
    name = _axis_name(axis)
    layout_axis = fig.layout[name]
    if probability is None:
        probability = (layout_axis.exponentformat == _PROB_FORMAT
                       or is_probability_title(layout_axis.title.text))
    values, labels = log_ticks(lo, hi, probability)
    if values:
        fig.update_layout({name: dict(type="log", tickmode="array", tickvals=values,
                                      ticktext=labels, minor=dict(ticks="", showgrid=False))})
    return fig


def _trace_values(fig: go.Figure, axis: str) -> np.ndarray:
    """Every finite positive number drawn on ``axis`` ("x", "y", "x2", ...)."""
    letter, suffix = axis[0], axis[1:]
    out = []
    for trace in fig.data:
        if (getattr(trace, f"{letter}axis", None) or letter) != letter + suffix:
            continue
        data = getattr(trace, letter, None)
        if data is None:
            continue
        try:
            values = np.asarray(data, dtype=float).ravel()
        except (TypeError, ValueError):
            continue
        out.append(values[np.isfinite(values) & (values > 0)])
    return np.concatenate(out) if out else np.array([])


def readable_axes(fig: go.Figure) -> go.Figure:
    """Give every log axis that has no explicit ticks yet readable major ticks from its
    range (or the data drawn on it).  Idempotent; the kit applies it before drawing or
    exporting a figure, so a figure builder that only sets ``type="log"`` is covered."""
    for name in [k for k in fig.layout.to_plotly_json() if k[1:5] == "axis"]:
        ax = fig.layout[name]
        if ax.type != "log" or ax.tickvals is not None:
            continue
        if ax.range is not None:
            lo, hi = ax.range
        else:
            values = _trace_values(fig, name[0] + name[5:])
            if not values.size:
                continue
            lo, hi = np.log10(values.min()), np.log10(values.max())
            if hi - lo < 0.3:                    # one value: a decade around it
                lo, hi = lo - 0.5, hi + 0.5
        set_log_ticks(fig, lo, hi, name)
    return fig


def integer_axis(fig: go.Figure, axis: str = "x", values=None, most: int = 12) -> go.Figure:
    """Tick ``axis`` at whole numbers (replicas, batch sizes) in steps of 1, 2, 5, 10...,
    so that at most ``most`` ticks show; the span is the axis range if set, else
    ``values``, else the data drawn on the axis."""
    name = _axis_name(axis)
    if fig.layout[name].range is not None:
        lo, hi = fig.layout[name].range
    else:
        letter = name[0]
        data = (np.asarray(values, float).ravel() if values is not None else np.concatenate(
            [np.asarray(t[letter], float).ravel() for t in fig.data
             if getattr(t, letter, None) is not None] or [np.array([])]))
        data = data[np.isfinite(data)]
        lo, hi = (data.min(), data.max()) if data.size else (0.0, 1.0)
    span = max(float(hi) - float(lo), 1.0)
    step = next(s * 10 ** k for k in range(0, 12) for s in (1, 2, 5) if span / (s * 10 ** k) <= most)
    fig.update_layout({name: dict(tickmode="linear", tick0=0, dtick=step, tickformat=",d",
                                  minor=dict(ticks="", showgrid=False))})
    return fig


def finite(y) -> list:
    """y with non-finite values as None (Plotly leaves a gap instead of failing)."""
    y = np.asarray(y, dtype=float).ravel()
    out = y.tolist()
    for i in np.flatnonzero(~np.isfinite(y)):
        out[i] = None
    return out


def fit_log_range(fig: go.Figure, *series, pad: float = 1.6, axis: str = "y",
                  probability: bool | None = None) -> go.Figure:
    """Log ``axis`` spanning the finite values of ``series`` (bounds that blow up near
    capacity would otherwise squash the curves that matter), ticked at decades (or
    1-2-5 on a short range) with readable labels and units left to the title."""
    values = np.concatenate([np.ravel(np.asarray(s, dtype=float)) for s in series])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size:
        lo, hi = np.log10(values.min() / pad), np.log10(values.max() * pad)
        fig.update_layout({_axis_name(axis): dict(range=[lo, hi])})
        set_log_ticks(fig, lo, hi, axis, probability)
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


def line_label(line: dict, text: str, position: str = "top right", *, log_y: bool = False,
               log_x: bool = False, **props) -> dict:
    """A label for a ``vline``/``hline`` shape, placed like ``annotation_text`` with
    ``annotation_position`` of ``add_vline``/``add_hline``; ``log_y``: the line is
    horizontal on a log y axis (Plotly places annotations there by log10 of the value;
    shapes by the value itself); ``log_x``: the line is vertical on a log x axis (the
    same); ``props``: other annotation properties (font, ...)."""
    if line["yref"] == "y domain":                       # vertical line
        y, xanchor, yanchor = _VLINE_LABEL[position]
        x = float(np.log10(line["x0"])) if log_x else line["x0"]
        where = dict(x=x, xref="x", y=y, yref="y domain")
    else:
        x, xanchor, yanchor = _HLINE_LABEL[position]
        y = float(np.log10(line["y0"])) if log_y else line["y0"]
        where = dict(x=x, xref="x domain", y=y, yref="y")
    return dict(text=text, showarrow=False, xanchor=xanchor, yanchor=yanchor, **where, **props)


def target_line(value: float, label: str, *, axis: str = "y", color: str = "#444",
                dash: str = "dashdot", position: str = "top right",
                log_y: bool = False) -> tuple[list, list]:
    """An SLA / target line at ``value`` on ``axis`` ("y": horizontal, "x": vertical)
    with its label, as (shapes, annotations) for ``add_overlays`` (``log_y``: a
    horizontal line on a log y axis)."""
    line = (hline if axis.startswith("y") else vline)(value, color=color, dash=dash, width=1)
    return [line], [line_label(line, label, position, log_y=log_y,
                               font=dict(size=11, color=color))]


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
