"""Exports: each chart as CSV data and standalone HTML; the whole page as one report.

The report is one self-contained offline HTML file (plotly.js inlined once,
no external fonts or scripts), with the parameters and formulas beside the
charts, ready to mail to a stakeholder.
"""
from __future__ import annotations

import html
from datetime import datetime, timezone

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from ui.plotting import chart_config
from ui.uploads import to_safe_csv

# Standalone HTML gets both image formats as modebar buttons (JavaScript is fine there).
_BOTH_FORMATS_JS = """
<script>
document.querySelectorAll('.plotly-graph-div').forEach(function (gd) {
  var add = function (fmt) { return {name: 'Download ' + fmt.toUpperCase(),
    icon: Plotly.Icons.camera, click: function () { Plotly.downloadImage(gd,
    {format: fmt, filename: gd.id, scale: 2}); }}; };
  Plotly.newPlot(gd, gd.data, gd.layout, {displaylogo: false,
    modeBarButtonsToAdd: [add('png'), add('svg')]});
});
</script>
"""


def figure_html(fig: go.Figure, title: str) -> str:
    """One chart as a standalone interactive HTML page (works offline)."""
    body = pio.to_html(fig, full_html=False, include_plotlyjs=True)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title></head><body>{body}{_BOTH_FORMATS_JS}</body></html>")


def figure_frame(fig: go.Figure) -> pd.DataFrame:
    """The curves of a figure as one long table (series, x, y[, ci95]) for CSV export."""
    frames = []
    for trace in fig.data:
        if trace.x is None or trace.y is None:
            continue
        frame = pd.DataFrame({"series": trace.name, "x": list(trace.x), "y": list(trace.y)})
        err = getattr(trace, "error_y", None)
        if err is not None and err.array is not None:
            frame["ci95"] = list(err.array)
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=["series", "x", "y"])
    return pd.concat(frames, ignore_index=True)


def figure_csv(fig: go.Figure) -> bytes:
    """A figure's data as CSV bytes, formula-looking text neutralised."""
    return to_safe_csv(figure_frame(fig))


def report_html(title: str, parameters: dict, sections: list[tuple[str, go.Figure, str]],
                formulas: list[str], notes: list[str] = (), *, answer=(), scenario: str = "") -> str:
    """The page as one offline HTML report: parameters, charts (with captions),
    formulas and notes.  Every user-supplied string is HTML-escaped."""
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in parameters.items())
    answer_rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                          for k, v in answer)
    opening = (f"<p>{html.escape(scenario)}</p>" if scenario else "") + (
        f"<h2>Answer</h2><table>{answer_rows}</table>" if answer_rows else "")
    parts = []
    for i, (heading, fig, caption) in enumerate(sections):
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append(pio.to_html(fig, full_html=False, include_plotlyjs=(i == 0)))
        if caption:
            parts.append(f"<p class='cap'>{html.escape(caption)}</p>")
    formula_list = "".join(f"<li><code>{html.escape(f)}</code></li>" for f in formulas)
    note_list = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>body{{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1000px;
margin:2em auto;color:#222}} table{{border-collapse:collapse}} th,td{{border:1px solid #ccc;
padding:4px 8px;text-align:left}} .cap{{color:#555;font-size:0.9em}} code{{font-size:0.95em}}</style>
</head><body><h1>{html.escape(title)}</h1><p>Inference Queueing Lab report, {stamp}.</p>
{opening}<h2>Inputs</h2><table>{rows}</table>{''.join(parts)}
<h2>Formulas</h2><ul>{formula_list}</ul>{f'<h2>Notes</h2><ul>{note_list}</ul>' if notes else ''}
{_BOTH_FORMATS_JS}</body></html>"""


def drawn_once(fig: go.Figure) -> go.Figure:
    """``fig`` with its ``to_dict()`` computed once and kept on the figure.

    ``st.plotly_chart`` converts the figure to a dict on every rerun (every numpy
    array to base64 again), which is most of what drawing a chart costs; the pages'
    figures are memoised and never modified after building, so a rerun that draws
    the same figure object again reuses the dict.  Callers must not modify the
    returned dict (plotly and Streamlit only read it).
    """
    if "to_dict" in vars(fig):                       # already done
        return fig
    build = fig.to_dict
    kept = []

    def to_dict():
        if not kept:
            kept.append(build())
        return kept[0]

    object.__setattr__(fig, "to_dict", to_dict)
    return fig


def show_chart(fig: go.Figure, name: str, image_format_key: str = "img") -> None:
    """Draw a chart with its exports: the modebar camera downloads PNG or SVG (the
    format chosen in ``st.session_state[image_format_key]``), and one row of
    buttons gives the data as CSV and the chart as standalone HTML (generated
    only when clicked)."""
    import streamlit as st

    fmt = st.session_state.get(image_format_key, "png")
    st.plotly_chart(drawn_once(fig), config=chart_config(fmt, name), key=f"chart_{name}")
    row = st.container(horizontal=True, gap="small")
    row.download_button("CSV", lambda: figure_csv(fig), f"{name}.csv", "text/csv",
                        key=f"csv_{name}", on_click="ignore", icon=":material/download:")
    row.download_button("HTML", lambda: figure_html(fig, name), f"{name}.html", "text/html",
                        key=f"html_{name}", on_click="ignore", icon=":material/download:")


def report_button(title: str, parameters: dict, sections, formulas, notes, file_name: str,
                  where=None, *, answer=(), scenario: str = "") -> None:
    """"Download report": the offline HTML report, built only when clicked.

    ``answer``: the page's result rows [(label, value with units)], ``scenario``: one
    plain sentence; the report opens with them.  ``sections``: a callable returning
    [(human title, figure, caption)] (every chart of the page); ``formulas``:
    [(latex, what)] as the pages list them; ``where``: the container to draw the
    button in (the page by default).
    """
    import streamlit as st

    answer = list(answer)
    (st if where is None else where).download_button(
        "Download report (all charts, offline HTML)",
        lambda: report_html(title, parameters, sections(),
                            [what + ": " + tex for tex, what in formulas], notes,
                            answer=answer, scenario=scenario),
        file_name, "text/html", key="report", on_click="ignore",
        icon=":material/description:")
