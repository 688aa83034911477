"""The arrival-process input shared by the pages: widgets, share link, trace upload.

Usage (a page)::

    from ui import arrivals_input as arr
    FIELDS = [...] + arr.FIELDS + [...]      # or arr.fields({"arrivals": ("arr",)})
    share.restore(FIELDS)
    with st.sidebar:
        arrivals = arr.draw()                # a frozen, hashable ArrivalChoice
    process = arrivals.process(rate)         # engine.arrivals object at the page's mean rate
    simulate(..., arrivals=None if arrivals.is_poisson else process)
    st.caption(f"Arrivals: {arrivals.label}")

The choice (``ArrivalChoice``) is a cache key: its ``kind`` ("poisson", "bursty",
"mmpp2", "replay"), the SCV of a bursty renewal process, and for a trace its
``TraceSummary`` (compared by a preset id or an upload's content digest and file name).
``label`` says in plain words which arrival model an answer assumes ("Poisson
arrivals", "bursty arrivals (SCV 4)", "MMPP-2 fitted to the Azure code trace",
"replay of code.csv (uploaded)").  ``process(rate)`` gives the engine's arrival object at
the page's mean ``rate`` (any time unit: the result's times are in its reciprocal):
``Poisson(rate)``; ``Renewal(rate, scv)``; the fitted MMPP-2 time-scaled to ``rate``
(all four rates × rate/its own rate: the SCV and the IDC at correspondingly scaled
windows are kept); ``Replay(times).scaled(rate)``.  ``scv`` is the inter-arrival SCV
(for two-moment approximations); ``comparison(choice)`` the choices of a "Poisson vs this
traffic" view: Poisson, the fitted MMPP-2 of the trace, the choice itself if it is a
bursty renewal process, and the replay of an uploaded trace if there is one.

The Azure 2023 traces are presets (``engine.presets.arrival_presets``): summaries, not
timestamps, so they can be fitted (MMPP-2) but not replayed; replay takes an uploaded
trace (any format ``engine.measured.read_trace`` reads).  A bad file shows an error and
the last valid trace stays in use.  For a chosen trace its rate over time (a small chart,
``rate_figure``) and SCV are drawn under the input.

API: ``fields(aliases)`` / ``FIELDS`` (URL keys "arrivals", "arrivals_scv",
"arrivals_trace"); ``draw(upload_key)`` (inside the sidebar; give each page its own
upload key); ``ArrivalChoice`` with ``kind``, ``label``, ``scv``, ``is_poisson``,
``process(rate)`` and ``trace`` (a ``TraceSummary``: name, statistics, ``fitted`` MMPP-2,
``uploaded``); the constructors ``POISSON``, ``bursty(scv)``, ``fitted(trace)``,
``replayed(trace)``, ``preset_trace(id)``, ``trace_from_file(data, file_name)``;
``comparison(choice)`` and ``last_upload()`` for a comparison view.  A simulator takes
``arrivals=choice.process(rate)`` (Poisson: pass nothing, so its runs are those of
before); a two-moment approximation takes ``choice.scv``.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field
import hashlib

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from engine import arrivals as arr
from engine.core.domains import ARRIVAL_SCV
from engine.measured import read_trace
from engine.presets import arrival_presets
from ui import share
from ui.memo import memo
from ui.plotting import COLORS
from ui.uploads import MAX_UPLOAD_BYTES, decode_text, keep_last_valid

PRESETS = arrival_presets()
KINDS = ("poisson", "bursty", "mmpp2", "replay")
KIND_NAMES = {"poisson": "Poisson", "bursty": "bursty (renewal, SCV)",
              "mmpp2": "MMPP-2 fitted to a trace", "replay": "replay of a trace (upload)"}
UPLOAD = "upload"
TRACE_NAMES = {**{pid: p.name for pid, p in PRESETS.items()}, UPLOAD: "my trace (upload)"}
LABEL = "Arrivals"
UPLOAD_KEY = "arrivals_upload"
STAT_WINDOWS_S = (1.0, 10.0, 60.0, 300.0)     # the windows of an uploaded trace's statistics
SHOWN_WINDOW_S = 60.0                         # the caption's peak-to-mean window, if there
BINS = 120                                    # bins of an uploaded trace's rate chart, at most
_LAST = "_arrivals_last_trace"                # session state: the last valid uploaded trace
HELP = ("How requests arrive. Poisson: independent, memoryless (the model's assumption). "
        "Bursty: independent gaps with the squared coefficient of variation (SCV) you set "
        "(Poisson: 1; above 1, gaps alternate between short and long). MMPP-2: a two-phase "
        "process fitted to a trace's rate, SCV and burstiness over longer windows. Replay: "
        "the uploaded trace itself. Every process is scaled to the page's mean load. The "
        "Azure traces are kept as summaries (no timestamps): they can be fitted, not "
        "replayed; to replay one, upload its file (e.g. AzureLLMInferenceTrace_code.csv).")


def fields(aliases: dict | None = None) -> list[share.Field]:
    """The share-link fields of the input: the kind, a bursty process's SCV, the trace (a
    preset id or "upload"); ``aliases`` maps a field key to older URL keys."""
    old = aliases or {}
    return [share.Field("arrivals", "poisson", str, choices=KINDS,
                        aliases=tuple(old.get("arrivals", ()))),
            share.Field("arrivals_scv", 4.0, float, 0.0, 400.0, domain=ARRIVAL_SCV,
                        aliases=tuple(old.get("arrivals_scv", ()))),
            share.Field("arrivals_trace", next(iter(PRESETS)), str,
                        choices=(*PRESETS, UPLOAD), aliases=tuple(old.get("arrivals_trace", ())))]


FIELDS = fields()
KIND, SCV, TRACE = FIELDS


@dataclass(frozen=True)
class TraceSummary:
    """A trace as the input shows and uses it (rates per s, times in s): compared by
    ``key`` (a preset id, or "upload:" and the content digest) and ``name`` (words for
    labels: "the Azure code trace", "code.csv (uploaded)"); ``times`` (an upload's arrival
    times, s) is None for a preset."""

    key: str
    name: str
    n_requests: int = dataclass_field(compare=False)
    duration_s: float = dataclass_field(compare=False)
    mean_rate_per_s: float = dataclass_field(compare=False)
    scv: float = dataclass_field(compare=False)
    window_s: tuple = dataclass_field(compare=False)
    peak_to_mean: tuple = dataclass_field(compare=False)
    mmpp2: tuple = dataclass_field(compare=False)        # (rate_1, rate_2, switch_12, switch_21)
    bin_s: float = dataclass_field(compare=False)
    rate_per_s: tuple = dataclass_field(compare=False, repr=False)
    source: str = dataclass_field(default="", compare=False)
    times: np.ndarray | None = dataclass_field(default=None, compare=False, repr=False)

    @property
    def uploaded(self) -> bool:
        return self.times is not None

    @property
    def fitted(self) -> arr.MMPP2:
        """The fitted MMPP-2 at the trace's own rate (per s)."""
        return arr.MMPP2(*self.mmpp2, f"fitted to {self.name}")

    def peak(self) -> tuple[float, float]:
        """(peak-to-mean, window s) for the caption: over 60 s if kept, else the longest."""
        w = np.asarray(self.window_s)
        i = int(np.flatnonzero(w == SHOWN_WINDOW_S)[0]) if SHOWN_WINDOW_S in w else w.size - 1
        return float(self.peak_to_mean[i]), float(w[i])


@dataclass(frozen=True)
class ArrivalChoice:
    """The arrival process chosen on a page (see the module docstring)."""

    kind: str = "poisson"
    renewal_scv: float = 1.0                  # a bursty renewal process's SCV
    trace: TraceSummary | None = None         # mmpp2 and replay

    @property
    def is_poisson(self) -> bool:
        return self.kind == "poisson"

    @property
    def label(self) -> str:
        if self.kind == "bursty":
            c = self.renewal_scv
            word = "bursty" if c > 1 else "regular" if c < 1 else "Poisson"
            return f"{word} arrivals (SCV {c:g})"
        if self.kind == "mmpp2":
            return f"MMPP-2 fitted to {self.trace.name}"
        if self.kind == "replay":
            return f"replay of {self.trace.name}"
        return "Poisson arrivals"

    @property
    def scv(self) -> float:
        """Squared coefficient of variation of the inter-arrival times (Poisson: 1)."""
        if self.kind == "bursty":
            return float(self.renewal_scv)
        if self.kind == "mmpp2":
            return float(self.trace.fitted.scv)
        if self.kind == "replay":
            return float(self.trace.scv)
        return 1.0

    def process(self, rate: float):
        """The engine's arrival process at mean ``rate`` (see the module docstring)."""
        if self.kind == "bursty":
            return arr.Renewal(rate, self.renewal_scv)
        if self.kind == "mmpp2":
            base = self.trace.fitted
            f = float(rate) / base.rate
            return arr.MMPP2(base.rate_1 * f, base.rate_2 * f, base.switch_12 * f,
                             base.switch_21 * f, base.name)
        if self.kind == "replay":
            return arr.Replay(self.trace.times, self.trace.name).scaled(rate)
        return arr.Poisson(rate)

    def keywords_at(self, rate: float) -> dict:
        """The simulators' ``arrivals`` keyword at mean ``rate`` (the simulator's unit):
        none for Poisson (the simulator's own arrivals), else ``process(rate)``."""
        return {} if self.is_poisson else {"arrivals": self.process(rate)}


POISSON = ArrivalChoice()


def bursty(scv: float) -> ArrivalChoice:
    """A renewal process of inter-arrival SCV ``scv`` (``engine.arrivals.Renewal``)."""
    return ArrivalChoice("bursty", float(scv))


def fitted(trace: TraceSummary) -> ArrivalChoice:
    """The MMPP-2 fitted to ``trace``."""
    return ArrivalChoice("mmpp2", trace=trace)


def replayed(trace: TraceSummary) -> ArrivalChoice:
    """The replay of an uploaded ``trace`` (``ValueError`` for a preset: no timestamps)."""
    if not trace.uploaded:
        raise ValueError(f"{trace.name} is a summary without timestamps: upload it to replay")
    return ArrivalChoice("replay", trace=trace)


@memo(16)
def preset_trace(preset_id: str) -> TraceSummary:
    """The trace of an arrival preset (``engine.presets.arrival_presets``)."""
    p = PRESETS[preset_id]
    return TraceSummary(preset_id, p.trace_name, p.n_requests, p.duration_s,
                        p.mean_rate_per_s, p.scv, tuple(p.window_s.tolist()),
                        tuple(p.peak_to_mean.tolist()),
                        (p.rate_1_per_s, p.rate_2_per_s, p.switch_12_per_s, p.switch_21_per_s),
                        p.bin_s, tuple(p.rate_per_s.tolist()), p.source)


def _bin_s(span_s: float) -> float:
    """The shortest round bin giving at most ``BINS`` bins over ``span_s``."""
    for scale in 10.0 ** np.arange(-9, 9):
        for step in (1, 2, 5):
            if span_s <= BINS * step * scale:
                return float(min(step * scale, span_s))
    return span_s


@memo(16)
def _read(digest: str, name: str, _text) -> TraceSummary:
    times = read_trace(_text).arrival_s
    span = float(times[-1] - times[0])
    windows = [w for w in STAT_WINDOWS_S if 2 * w <= span] or None
    stats = arr.describe(times, windows)
    p = arr.fit_mmpp2(times, name=name)
    bins = arr.rate_over_time(times, _bin_s(span))
    kept = np.array(times, dtype=float)
    kept.setflags(write=False)
    return TraceSummary(f"upload:{digest}", name, stats.n, span, float(stats.mean_rate),
                        float(stats.scv), tuple(stats.windows.tolist()),
                        tuple(stats.peak_to_mean.tolist()),
                        (p.rate_1, p.rate_2, p.switch_12, p.switch_21), bins.window,
                        tuple(bins.rate.tolist()), "", kept)


def trace_from_file(data: bytes | str, file_name: str) -> TraceSummary:
    """The summary (and times) of an uploaded request trace, named "<file_name>
    (uploaded)"; ``ValueError`` with the reader's message if it is not one."""
    text = decode_text(data)                       # size cap and UTF-8 first
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return _read(digest, f"{file_name} (uploaded)", text)


def rate_figure(trace: TraceSummary) -> go.Figure:
    """The trace's arrival rate over time (requests/s per bin against minutes) with its
    mean: a small chart for the sidebar.  Pure: no Streamlit calls."""
    rate = np.asarray(trace.rate_per_s, dtype=float)
    minutes = trace.bin_s * (np.arange(rate.size) + 0.5) / 60.0
    fig = go.Figure(layout=dict(
        title=dict(text=f"Requests/s per {trace.bin_s:g} s", font=dict(size=12), x=0.0),
        height=170, margin=dict(l=40, r=10, t=30, b=35), showlegend=False,
        xaxis=dict(title=dict(text="minutes", font=dict(size=11))),
        yaxis=dict(rangemode="tozero"), hovermode="x"))
    fig.add_traces([dict(type="bar", x=minutes.tolist(), y=rate.tolist(), name="rate",
                         marker=dict(color=COLORS["exact"]), width=trace.bin_s / 60.0),
                    dict(type="scatter", x=[0.0, float(minutes[-1] + trace.bin_s / 120.0)],
                         y=[trace.mean_rate_per_s] * 2, mode="lines", name="mean",
                         line=dict(color=COLORS["sim"], dash="dash", width=1.5))])
    return fig


def caption(trace: TraceSummary) -> str:
    """The trace in one line: "SCV 173, peak 4.2× the mean over 60 s; 8,819 requests over
    57 min (2.57/s); fitted MMPP-2: SCV 171."."""
    peak, window = trace.peak()
    span = trace.duration_s
    over = (f"{span:.3g} s" if span < 120 else f"{span / 60:.0f} min" if span < 3 * 3600
            else f"{span / 3600:.3g} h")
    return (f"SCV {trace.scv:.3g}, peak {peak:.2g}× the mean over {window:g} s; "
            f"{trace.n_requests:,} requests over {over} "
            f"({trace.mean_rate_per_s:.3g}/s); fitted MMPP-2: SCV {trace.fitted.scv:.3g}.")


def _upload(upload_key: str) -> TraceSummary | None:
    """The uploader; the last valid trace stays in use on an error."""
    upload = st.file_uploader(
        "Upload a request trace", type=["csv", "txt", "jsonl", "json"], key=upload_key,
        help="The Azure LLM trace CSV (TIMESTAMP, ContextTokens, GeneratedTokens), JSON lines "
             "with timestamp in ms (Mooncake), or a CSV with timestamp_s (one row per "
             f"request). At most {MAX_UPLOAD_BYTES // 1_000_000} MB. Replay needs the "
             "timestamps themselves: the Azure presets keep only a summary.")
    return keep_last_valid(upload, trace_from_file, _LAST)


def draw(upload_key: str = UPLOAD_KEY) -> ArrivalChoice:
    """Draw the input (call inside the sidebar; the fields restored by ``share.restore``)
    and return the choice.  Without a valid upload, replay (or a fit to an upload) falls
    back to Poisson, saying so."""
    kind = st.selectbox(LABEL, KINDS, key=KIND.key, format_func=KIND_NAMES.get, help=HELP)
    if kind == "poisson":
        return POISSON
    if kind == "bursty":
        share.number_input(SCV, "Inter-arrival SCV (Poisson: 1)", step=1.0,
                           help="Squared coefficient of variation of the gaps between "
                                "requests: 0 evenly spaced, 1 Poisson, above 1 bursty "
                                "(two-phase hyperexponential gaps); the Azure code trace's "
                                "is about 170.")
        return bursty(st.session_state[SCV.key])
    source = UPLOAD
    if kind == "mmpp2":
        source = st.selectbox("Trace", TRACE.choices, key=TRACE.key,
                              format_func=TRACE_NAMES.get)
    trace = preset_trace(source) if source != UPLOAD else _upload(upload_key)
    if trace is None:
        st.info("No trace uploaded yet: Poisson arrivals meanwhile.")
        return POISSON
    st.plotly_chart(rate_figure(trace), config={"displayModeBar": False},
                    key=f"{KIND.key}_rate_chart")
    st.caption(share.inert(caption(trace)),
               help=f"Source: {trace.source}" if trace.source else None)
    return ArrivalChoice(kind, trace=trace)


def last_upload() -> TraceSummary | None:
    """The last valid trace uploaded in this session (None if none)."""
    return st.session_state.get(_LAST)


def comparison(choice: ArrivalChoice) -> tuple[ArrivalChoice, ...]:
    """The arrival processes a "Poisson vs this traffic" view compares, at one mean load:
    Poisson; the MMPP-2 fitted to the chosen trace (else the trace field's preset, or the
    upload); the choice itself if it is a bursty renewal process; the replay of the
    uploaded trace (the chosen one, else the session's last), if any."""
    trace = choice.trace
    if trace is None:
        pid = st.session_state.get(TRACE.key, TRACE.default)
        trace = preset_trace(pid) if pid in PRESETS else last_upload() or preset_trace(
            TRACE.default)
    upload = trace if trace.uploaded else last_upload()
    out = [POISSON, fitted(trace)]
    if choice.kind == "bursty":
        out.append(choice)
    if upload is not None:
        out.append(replayed(upload))
    return tuple(out)
