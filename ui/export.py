"""Exports: each chart as CSV data and standalone HTML; the whole page as one report.

The report is one self-contained offline HTML file (plotly.js inlined once,
no external fonts or scripts), ready to mail to a stakeholder: the answer and
the scenario first, then the inputs, the charts, the formulas (readable without
a TeX renderer), the share link, the version and the date.
"""
from __future__ import annotations

import functools
import html
import math
import re
import subprocess
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from ui.plotting import chart_config, readable_axes
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


_UNIT = re.compile(r"\s\(([^()=<>≤≥]*)\)\s*$")      # "mean latency (ms)" -> "ms"


def axis_unit(title: str) -> str:
    """The unit in an axis title's closing parentheses ("latency (ms)" -> "ms"), or ""."""
    found = _UNIT.search(title or "")
    return found.group(1).strip() if found else ""


def _axis_title(fig: go.Figure, ref: str | None, letter: str) -> str:
    name = f"{letter}axis{(ref or letter)[1:]}"
    try:
        return fig.layout[name].title.text or ""
    except (KeyError, AttributeError):
        return ""


def _column(name: str, title: str, extra: str = "") -> str:
    """A series' column: its name with the unit of its axis ("exact (ms)"), or with the
    quantity where the axis has no unit ("eq 7: P(R > RT)")."""
    unit = axis_unit(title)
    if unit:
        return f"{name}{extra} ({unit})" if f"({unit})" not in name else f"{name}{extra}"
    return f"{name}{extra}: {title}" if title and title != name else f"{name}{extra}"


def _categorical(values) -> bool:
    return any(isinstance(v, str) for v in values)


def _trace_frame(trace, name: str, y_title: str) -> pd.DataFrame:
    """One trace as columns indexed by x: its y (a category axis gives one column named
    after the axis, shared by every trace on it), and its error bars if any."""
    y = list(trace.y)
    categorical = _categorical(y)
    data = {(y_title or "category") if categorical else _column(name, y_title): y}
    err = getattr(trace, "error_y", None)
    if not categorical and err is not None and err.array is not None:
        data[_column(name, y_title, " ±95% CI")] = list(err.array)
    frame = pd.DataFrame(data)
    x = pd.Series(list(trace.x), dtype=object)
    n = min(len(x), len(frame))
    frame = frame.iloc[:n].copy()
    frame.insert(0, "_x", x.iloc[:n].to_numpy())
    return frame[frame["_x"].notna()]


def _indexed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` indexed by (x, occurrence of that x) so repeated x values join in order."""
    x = frame.pop("_x")
    frame.index = pd.MultiIndex.from_arrays([x.to_numpy(), x.groupby(x).cumcount().to_numpy()])
    return frame


def figure_frame(fig: go.Figure) -> pd.DataFrame:
    """The curves of a figure as one wide table for CSV export: the x column named after
    the x-axis title, then one column per series named with its unit (from the trace
    name and its y-axis title), and a ±95 % CI column where a trace has error bars.
    Series on different x grids are joined on x (outer join, sorted when numeric);
    traces on a category axis share one column; what draws nothing leaves no cell."""
    frames, x_title = {}, None
    for i, trace in enumerate(fig.data):
        if trace.x is None or trace.y is None:
            continue
        if x_title is None:
            x_title = _axis_title(fig, getattr(trace, "xaxis", None), "x") or "x"
        y_title = _axis_title(fig, getattr(trace, "yaxis", None), "y")
        name = trace.name if trace.name not in (None, "") else f"series {i + 1}"
        frame = _trace_frame(trace, name, y_title)
        key = tuple(frame.columns[1:])
        if key not in frames or not _categorical(frame.iloc[:, 1]):
            taken = {c for k in frames for c in k}
            k = 2
            while taken & set(key):                                     # same name twice
                key = tuple(f"{c} #{k}" for c in frame.columns[1:])
                k += 1
            frame.columns = ["_x", *key]
        frames[key] = frame if key not in frames else pd.concat([frames[key], frame])
    if not frames:
        return pd.DataFrame(columns=["x"])
    wide = pd.concat([_indexed(f) for f in frames.values()], axis=1, join="outer", sort=False)
    wide = wide.dropna(axis=1, how="all").dropna(axis=0, how="all")   # nothing drawn: no cell
    xs = list(wide.index.get_level_values(0))
    wide = wide.reset_index(drop=True)
    wide.insert(0, x_title if x_title not in wide.columns else f"{x_title} (x)", xs)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in xs):
        wide = wide.iloc[pd.Series(xs, dtype=float).argsort(kind="stable")]
        wide = wide.reset_index(drop=True)
        wide[wide.columns[0]] = wide[wide.columns[0]].astype(float)
    return wide


def figure_csv(fig: go.Figure, table: pd.DataFrame | None = None) -> bytes:
    """A figure's data as CSV bytes (``table`` instead, where a chart is a diagram whose
    data is a table), formula-looking text neutralised."""
    return to_safe_csv(figure_frame(fig) if table is None else table)


# ---------------------------------------------------------------- plain values

VERSION = "0.14"            # the app's version where git is unavailable (an installed copy)
_ROOT = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=1)
def app_version() -> str:
    """``git describe`` of the checkout the app runs from, else ``VERSION``."""
    try:
        out = subprocess.run(["git", "describe", "--tags", "--always", "--dirty"], cwd=_ROOT,
                             capture_output=True, text=True, timeout=3)
        described = out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        described = ""
    return f"{VERSION} ({described})" if described else VERSION


def format_number(value: float, digits: int = 4) -> str:
    """A number with ``digits`` significant digits and thousands separators, by
    magnitude: 4905.5287 -> "4,906", 0.012345 -> "0.01235", 3e-7 -> "3e-7"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or (hasattr(value, "dtype") and value.dtype.kind in "iu"):
        return f"{int(value):,}"
    value = float(value)
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    exp = math.floor(math.log10(abs(value)))
    if exp >= 9 or exp < -4:
        mantissa, power = f"{value:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(power)}"
    decimals = max(0, digits - 1 - exp)
    text = f"{round(value, decimals):,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "−0") else text


def plain_number(value: float, digits: int = 3, smallest: float = 1e-4) -> str:
    """A number for an answer, in plain digits: ``format_number`` (``digits`` significant
    digits, thousands separators, "∞", "n/a") but never in e-notation: down to
    ``smallest`` in decimals (6e-7 with ``smallest`` 1e-9: "0.0000006"), below it
    "< 0.0001"; large values in full (1.2e9: "1,200,000,000")."""
    if isinstance(value, bool) or isinstance(value, int) or (
            hasattr(value, "dtype") and value.dtype.kind in "iub"):
        return format_number(value)
    v = float(value)
    if not math.isfinite(v) or v == 0:
        return format_number(v)
    size = abs(v)
    if size >= 1e9:
        return f"{v:,.0f}".replace("-", "−")
    if size >= 1e-4:
        return format_number(v, digits)
    floor = f"{smallest:.{max(0, -math.floor(math.log10(smallest)))}f}"
    if size < smallest:
        return f"< {floor}" if v > 0 else f"> −{floor}"
    decimals = digits - 1 - math.floor(math.log10(size))
    text = f"{v:.{decimals}f}".rstrip("0").rstrip(".")
    return text.replace("-", "−")


def format_percent(fraction: float, digits: int = 2, signed: bool = False) -> str:
    """A fraction as a percentage with ``digits`` decimals (``signed``: with its sign); a
    value that rounds to zero reads "0 %" (exactly zero) or "< 0.01 %" (the smallest step
    shown), never "-0.00 %"."""
    value = 100.0 * float(fraction)
    if value != value:
        return "n/a"
    if abs(value) < 0.5 * 10.0 ** -digits:
        return "0 %" if value == 0 else f"< {10.0 ** -digits:.{digits}f} %"
    return f"{value:{'+' if signed else ''},.{digits}f} %"


def plain(value) -> str:
    """A parameter value as plain text: numbers by magnitude, sequences joined with
    commas, mappings as "key: value", never a Python repr."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)) or hasattr(value, "dtype") and not hasattr(
            value, "__len__"):
        return format_number(value)
    if isinstance(value, dict):
        return "; ".join(f"{plain(k)}: {plain(v)}" for k, v in value.items())
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(plain(v) for v in value)
    return str(value)


_CODE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+|[a-z][a-z0-9]*")


def human_heading(heading: str, fig: go.Figure | None = None) -> str:
    """A chart's heading for the report: given as a code name ("mean_latency",
    "b_max_family"), the figure's own title, else the name in words ("Mean latency")."""
    heading = str(heading)
    if not _CODE_NAME.fullmatch(heading):
        return heading
    title = ""
    if fig is not None:
        title = re.sub(r"<[^>]+>", "", fig.layout.title.text or "").strip()
    if title:
        return title
    words = heading.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


# ---------------------------------------------------------------- LaTeX as text

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ",
    "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈",
    "sim": "~", "cdot": "·", "times": "×", "pm": "±", "infty": "∞", "to": "→",
    "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "in": "∈", "sum": "Σ",
    "prod": "∏", "int": "∫", "partial": "∂", "ldots": "…", "cdots": "⋯", "dots": "…",
    "prime": "′", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "mid": "|",
    "quad": "\u2003", "qquad": "\u2003\u2003", ",": "\u2009", ";": " ", ":": " ", "!": "",
    " ": " ", "{": "{", "}": "}", "%": "%", "|": "‖", "_": "_", "#": "#", "&": "&",
    "min": "min", "max": "max", "ln": "ln", "log": "log", "exp": "exp", "Pr": "Pr",
    "lim": "lim", "sup": "sup", "inf": "inf", "det": "det",
}
_DROP = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
         "biggl", "biggr", "displaystyle", "textstyle", "limits"}
_TEXT = {"text", "mathrm", "mathbf", "mathit", "mathsf", "mathbb", "mathcal", "operatorname",
         "textrm", "textbf", "textit", "boldsymbol"}
_ACCENT = {"hat": "\u0302", "bar": "\u0304", "tilde": "\u0303", "dot": "\u0307", "vec": "\u20d7",
           "overline": "\u0304", "widehat": "\u0302"}
_SUP = dict(zip("0123456789+-−=()nibcdefghjklmoprstuvwxyz",
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱᵇᶜᵈᵉᶠᵍʰʲᵏˡᵐᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"), a="ᵃ")
_SUB = dict(zip("0123456789+-−=()aehijklmnoprstuvxβγρφχ",
                "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ"))


def _group(tex: str, i: int) -> tuple[str, int]:
    """The argument at ``tex[i]``: a {group} (converted), a command or one character."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        return _convert(tex, i + 1, closing=True)
    if tex[i] == "\\":
        return _command(tex, i)
    return ("−" if tex[i] == "-" else tex[i]), i + 1


def _command(tex: str, i: int) -> tuple[str, int]:
    """``tex[i]`` is a backslash: the command's text and where it ends."""
    j = i + 1
    while j < len(tex) and tex[j].isalpha():
        j += 1
    name = tex[i + 1:j] or tex[i + 1:i + 2]
    j = max(j, i + 2)
    if name in _DROP:
        return "", j
    if name == "frac" or name in ("dfrac", "tfrac"):
        top, j = _group(tex, j)
        bottom, j = _group(tex, j)
        return f"{_wrap(top)}/{_wrap(bottom)}", j
    if name == "sqrt":
        inner, j = _group(tex, j)
        return f"√{_wrap(inner)}", j
    if name in _TEXT:
        return _group(tex, j)
    if name in _ACCENT:
        inner, j = _group(tex, j)
        return (inner + _ACCENT[name]) if len(inner) == 1 else f"{inner}{_ACCENT[name]}", j
    return _SYMBOLS.get(name, name), j


def _one_term(text: str) -> bool:
    """A name, number, f(...) / E[...], or one parenthesised group: no parentheses
    needed around it in a fraction."""
    if re.fullmatch(r"[\w.′\u0300-\u036f]+", text):
        return True
    head = re.match(r"[^\W\d][\w′\u0300-\u036f]*(?=[(\[])|(?=\()", text)
    if head is None:
        return False
    depth, rest = 0, text[head.end():]
    for i, c in enumerate(rest):
        depth += c in "([" and 1 or c in ")]" and -1 or 0
        if depth == 0:
            return i == len(rest) - 1
    return False


def _wrap(text: str) -> str:
    """``text`` in parentheses unless it is one term (a fraction's numerator, a root)."""
    plain = text.strip()
    return plain if _one_term(plain) else f"({plain})"


def _script(text: str, table: dict, mark: str) -> str:
    if text and all(c in table for c in text):
        return "".join(table[c] for c in text)
    return mark + (text if re.fullmatch(r"\w+", text) else f"({text})")


def _convert(tex: str, i: int = 0, closing: bool = False) -> tuple[str, int]:
    out, last_frac = [], False
    while i < len(tex):
        c = tex[i]
        last_frac = last_frac and c == "\\"
        if c == "}" and closing:
            return "".join(out), i + 1
        if c == "{":
            inner, i = _convert(tex, i + 1, closing=True)
            out.append(inner)
        elif c == "\\":
            frac = re.match(r"\\[dt]?frac\b", tex[i:]) is not None
            if frac and last_frac:                       # \frac{3}{2}\frac{a}{b}: 3/2 · a/b
                out.append("·")
            text, i = _command(tex, i)
            out.append(text)
            last_frac = frac
            continue
        elif c in "^_":
            arg, i = _group(tex, i + 1)
            out.append(_script(arg, _SUP if c == "^" else _SUB, c))
        elif c == "-":
            out.append("−")
            i += 1
        elif c == "~":
            out.append(" ")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out), i


def latex_to_text(tex: str) -> str:
    r"""LaTeX as readable Unicode text, for a report read offline without a TeX renderer:
    ``\frac{b}{\alpha b+\tau_0}`` -> ``b/(αb+τ₀)``, ``E[B^2]`` -> ``E[B²]``."""
    text, _ = _convert(str(tex))
    return unicodedata.normalize("NFC", re.sub(r"[ ]{2,}", " ", text)).strip()


def _rows(pairs) -> str:
    return "".join(f"<tr><th>{html.escape(plain(k))}</th><td>{html.escape(plain(v))}</td></tr>"
                   for k, v in pairs)


def _formula(item) -> str:
    """One formula: what it is, the LaTeX as readable text, and the LaTeX source.
    ``item``: (latex, what) as the pages list them, or one string (LaTeX or text)."""
    tex, what = (item if isinstance(item, (tuple, list)) else (str(item), ""))
    readable = latex_to_text(tex)
    parts = [f"<b>{html.escape(what)}</b><br>" if what else "",
             f"<span class='f'>{html.escape(readable)}</span>"]
    if readable != tex.strip():
        parts.append(f"<br><small>LaTeX: <code>{html.escape(tex)}</code></small>")
    return "<li>" + "".join(parts) + "</li>"


def _link(link: str) -> str:
    if not link:
        return ""
    shown = html.escape(link)
    if re.match(r"https?://", link):
        return f"<p>Share link (opens this scenario in the app): <a href=\"{shown}\">{shown}</a></p>"
    return f"<p>Share link: {shown}</p>"


def _baseline(baseline) -> str:
    """The pinned baseline's section: its name and the metric-by-metric table."""
    if baseline is None:
        return ""
    label, table = baseline
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(plain(v))}</td>" for v in row) + "</tr>"
                   for row in table.itertuples(index=False))
    return (f"<h2>Compared with the pinned baseline</h2><p>Baseline: {html.escape(label)}</p>"
            f"<table><tr>{head}</tr>{body}</table>")


def report_html(title: str, parameters: dict, sections: list[tuple[str, go.Figure, str]],
                formulas: list, notes: list[str] = (), *, answer=(), scenario: str = "",
                link: str = "", baseline=None) -> str:
    """The page as one offline HTML report: the title, the scenario in one sentence and
    the answer table; the pinned baseline, named, and the metrics against it; the inputs
    as a table; the charts (human titles, captions); the formulas as readable text with
    their LaTeX; the notes; the share link (wrapped: the page keeps its width), the app's
    version and the date.  plotly.js is inlined once.  Every user-supplied string is
    HTML-escaped.  ``formulas``: [(latex, what)] or plain strings; ``baseline``: (its
    label, ``ui.compare.difference_table``) or None."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    version = app_version()
    opening = (f"<p class='scenario'>{html.escape(scenario)}</p>" if scenario else "") + (
        f"<h2>Answer</h2><table>{_rows(answer)}</table>" if answer else "") + _baseline(baseline)
    parts = []
    for heading, fig, caption in sections:
        if "to_dict" not in vars(fig):          # a figure drawn already has its ticks
            readable_axes(fig)
        parts.append(f"<h2>{html.escape(human_heading(heading, fig))}</h2>")
        parts.append(pio.to_html(fig, full_html=False, include_plotlyjs=False,
                                 config={"displaylogo": False}))
        if caption:
            parts.append(f"<p class='cap'>{html.escape(caption)}</p>")
    formula_list = "".join(_formula(f) for f in formulas)
    note_list = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    plotly_js = get_plotlyjs() if sections else ""
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>body{{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1000px;
margin:2em auto;color:#222}} table{{border-collapse:collapse}} th,td{{border:1px solid #ccc;
padding:4px 8px;text-align:left;vertical-align:top}} .cap,.meta{{color:#555;font-size:0.9em}}
.scenario{{font-size:1.1em}} .f{{font-family:Cambria Math,STIX Two Math,serif;font-size:1.05em;
white-space:pre-wrap}} li{{margin-bottom:0.6em}} code{{font-size:0.9em}}
p,li,td,th,a,code{{overflow-wrap:anywhere}}</style>
<script type="text/javascript">{plotly_js}</script>
</head><body><h1>{html.escape(title)}</h1>
<p class="meta">Inference Queueing Lab {html.escape(version)}, report of {stamp}.</p>
{opening}<h2>Inputs</h2><table>{_rows(parameters.items())}</table>{''.join(parts)}
<h2>Formulas</h2><ul>{formula_list}</ul>{f'<h2>Notes</h2><ul>{note_list}</ul>' if notes else ''}
<h2>About this report</h2>{_link(link)}<p class="meta">Inference Queueing Lab version
{html.escape(version)}; generated {stamp}.</p>
{_BOTH_FORMATS_JS if sections else ''}</body></html>"""


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


def operating_marker(x: float, y: float, label: str) -> dict:
    """The operating point on a chart: a point at (x, y) labelled ``label`` (x, y in the
    chart's axis units; an infinite or NaN y draws nothing)."""
    return {"x": float(x), "y": float(y), "label": str(label)}


def marked(fig: go.Figure, marker: dict | None) -> go.Figure:
    """``fig`` with the operating point drawn on it, cheaply: ``fig`` (memoised, never
    modified) is converted to its dict once (``drawn_once``) and the point is added to a
    copy of that dict's trace list, so a slider move costs one small trace, not a new
    figure.  The returned figure is only for drawing: export ``fig`` itself."""
    if marker is None or not np.isfinite(marker["y"]) or not np.isfinite(marker["x"]):
        return drawn_once(fig)
    base = drawn_once(fig).to_dict()
    point = {"type": "scatter", "x": [marker["x"]], "y": [marker["y"]],
             "mode": "markers+text", "name": marker["label"], "text": [marker["label"]],
             "textposition": "top center", "showlegend": False, "hoverinfo": "x+y+name",
             "marker": {"size": 13, "color": "#111", "symbol": "diamond",
                        "line": {"width": 2, "color": "white"}}}
    spec = {**base, "data": [*base["data"], point]}
    shown = go.Figure()
    object.__setattr__(shown, "to_dict", lambda: spec)
    return shown


def show_chart(fig: go.Figure, name: str, image_format_key: str = "img", table=None,
               marker: dict | None = None) -> None:
    """Draw a chart with its exports: the modebar camera downloads PNG or SVG (the
    format chosen in ``st.session_state[image_format_key]``), and one row of
    buttons gives the data as CSV and the chart as standalone HTML (generated
    only when clicked).  ``table``: a DataFrame (or a function returning one) that the
    CSV holds instead of the traces, for a chart that is a diagram.  ``marker``
    (``operating_marker``): the operating point, drawn on the chart (not exported)."""
    import streamlit as st

    if "to_dict" not in vars(fig):                    # first draw: readable log ticks
        readable_axes(fig)
    fmt = st.session_state.get(image_format_key, "png")
    st.plotly_chart(marked(fig, marker), config=chart_config(fmt, name), key=f"chart_{name}")
    row = st.container(horizontal=True, gap="small")
    row.download_button("CSV", lambda: figure_csv(fig, table() if callable(table) else table),
                        f"{name}.csv", "text/csv",
                        key=f"csv_{name}", on_click="ignore", icon=":material/download:")
    row.download_button("HTML", lambda: figure_html(fig, name), f"{name}.html", "text/html",
                        key=f"html_{name}", on_click="ignore", icon=":material/download:")


def _share_link():
    """A function giving the page's share link (``st.context.url`` and the query
    string as it stands when called: the pages publish their inputs after drawing
    the report button); "" outside a browser session."""
    import streamlit as st
    from urllib.parse import urlencode

    try:
        base = st.context.url or ""
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        state = get_script_run_ctx().session_state
        drawn = st.query_params.to_dict()
    except Exception:                         # no browser session (AppTest, bare mode)
        return lambda: ""

    def link() -> str:
        try:
            with state.query_params() as qp:
                params = qp.to_dict()
        except Exception:
            params = drawn
        return base + ("?" + urlencode(params) if base and params else "")
    return link


def report_of(title: str, parameters: dict, sections, formulas, notes, *, answer=(),
              scenario: str = "", link: str = "", compared=None) -> str:
    """The report ``report_button`` hands out when clicked (its arguments, the share link
    as text): ``compared`` (current, pinned) becomes the baseline's section."""
    baseline = None
    if compared is not None and compared[1] is not None:
        from ui.compare import difference_table
        current, pinned = compared
        baseline = (pinned["label"], difference_table(current, pinned))
    return report_html(title, parameters, sections(), list(formulas), notes, answer=answer,
                       scenario=scenario, link=link, baseline=baseline)


def report_button(title: str, parameters: dict, sections, formulas, notes, file_name: str,
                  where=None, *, answer=(), scenario: str = "", compared=None) -> None:
    """"Download report": the offline HTML report, built only when clicked.

    ``answer``: the page's result rows [(label, value with units)], ``scenario``: one
    plain sentence; the report opens with them.  ``sections``: a callable returning
    [(human title, figure, caption)] (every chart of the page); ``formulas``:
    [(latex, what)] as the pages list them; ``where``: the container to draw the
    button in (the page by default).  The report carries the page's share link.
    ``compared``: (the current scenario, the pinned baseline) as ``ui.compare`` keeps
    them, or None: the report names the baseline and compares the metrics with it.
    """
    import streamlit as st

    answer = list(answer)
    link = _share_link()
    (st if where is None else where).download_button(
        "Download report (all charts, offline HTML)",
        lambda: report_of(title, parameters, sections, formulas, notes, answer=answer,
                          scenario=scenario, link=link(), compared=compared),
        file_name, "text/html", key="report", on_click="ignore",
        icon=":material/description:")


def rounded(values, decimals: int):
    """Numbers (a scalar or an array) rounded to ``decimals`` places for a displayed table
    (display only: the engine's numbers stay exact)."""
    return np.round(values, decimals)


def significant(values, digits: int = 4):
    """Numbers (a scalar or an array) rounded to ``digits`` significant digits for a
    displayed table, nan and inf kept (display only: the engine's numbers stay exact)."""
    x = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.where(np.isfinite(x) & (x != 0), np.floor(np.log10(np.abs(x))), 0)
        scale = 10.0 ** (digits - 1 - mag)
        return np.where(np.isfinite(x), np.round(x * scale) / scale, x)
