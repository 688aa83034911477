"""The output-token law input shared by the LLM pages: widgets, share link, upload.

Usage (a page)::

    from ui import token_law_input as tli
    FIELDS = [...] + tli.fields() + [...]     # or tli.fields({"log_mean": ("ln_mu",), ...})
    share.restore(FIELDS)
    with st.sidebar:
        choice = tli.draw()                  # a frozen, hashable TokenLawChoice
    dist = choice.law                        # the token law (engine.core.token_laws)

``choice`` is a cache key (``choice.key``: the family and parameters, or for
token counts the content digest, the file name and the count) with a label for
captions; ``law(key)`` is the memoised law of a key.  ``fields(aliases)`` takes
older URL keys per field (``{"log_mean": ("ln_mu",)}``) so older links still open.
Parametric laws, the measured laws of request traces (``engine.presets.
token_law_presets``, output-token presets: one choice each, named by the preset id, so a
link names the preset) and the upload/paste of token counts or a request trace
(``ui.token_counts``) are drawn by ``draw``; a bad upload shows an error and keeps the
last valid sample.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field
import hashlib

import streamlit as st

from engine.core import domains, token_laws
from engine.core.token_laws import mean_tokens
from engine.presets import token_law_presets
from ui import share
from ui.memo import memo
from ui.token_counts import MAX_TOKEN_ROWS, read_token_sample
from ui.uploads import MAX_UPLOAD_BYTES

MEASURED = {pid: p for pid, p in token_law_presets().items() if p.kind == "output"}
PROMPT_PRESETS = {pid: p for pid, p in token_law_presets().items() if p.kind == "prompt"}
LAWS = ("lognormal", "uniform", "truncnorm", "empirical", *MEASURED)
LAW_NAMES = {"lognormal": "lognormal", "uniform": "uniform", "truncnorm": "truncated normal",
             "empirical": "empirical (your token counts or trace)",
             **{pid: f"measured: {p.name}" for pid, p in MEASURED.items()}}
LABEL = "Output-token law"
LOG_MEAN_LABEL = "log-mean μ (log tokens)"
LOG_SD_LABEL = "log-sd σ"
UPLOAD_KEY = "tokens_upload"
PASTE_KEY = "tokens_paste"
_LAST = "_token_law_last_sample"        # session state: (sample, source) last accepted


def fields(aliases: dict | None = None) -> list[share.Field]:
    """The share-link fields of the token law; ``aliases`` maps a field key to older
    URL keys of the same input (accepted when a link is opened)."""
    old = aliases or {}

    def make(key, default, kind, low, high, domain=None, choices=None):
        return share.Field(key, default, kind, low, high, choices=choices, domain=domain,
                           aliases=tuple(old.get(key, ())))
    return [
        make("law", "lognormal", str, None, None, choices=LAWS),
        make("log_mean", 7.0, float, 0.0, 12.0, domains.TOKEN_LOG_MEAN),
        make("log_sd", 0.7, float, 0.05, 3.0, domains.TOKEN_LOG_SD),
        make("uni_low", 0.0, float, 0.0, 100_000.0, domains.TOKEN_BOUND),
        make("uni_high", 1000.0, float, 1.0, 100_000.0, domains.TOKEN_BOUND),
        make("tn_mean", 500.0, float, 0.0, 100_000.0, domains.TOKEN_BOUND),
        make("tn_sd", 200.0, float, 1.0, 100_000.0, domains.TOKEN_SD),
    ]


FIELDS = fields()
_BY_KEY = {f.key: f for f in FIELDS}
_FACTORIES = {"lognormal": token_laws.lognormal, "uniform": token_laws.uniform,
              "truncnorm": token_laws.truncated_normal}


@memo(64)
def law(key: tuple, _sample=None):
    """The token law of ``key``: ("lognormal", μ, σ), ("uniform", low, high),
    ("truncnorm", mean, sd), ("measured", preset id), or ("empirical", digest, source,
    n) with its sample passed as ``_sample`` (not part of the key) the first time."""
    family, *args = key
    if family == "measured":
        return MEASURED[args[0]].law()
    if family == "empirical":
        if _sample is None:
            raise ValueError("an empirical law's sample is needed the first time")
        return _sample
    return _FACTORIES[family](*args)


@dataclass(frozen=True)
class TokenLawChoice:
    """The token law chosen on a page: ``key`` (hashable, names the law; an upload
    by its content digest and source name) and ``label`` (for captions)."""

    key: tuple
    label: str
    sample: token_laws.EmpiricalTokens | None = dataclass_field(
        default=None, compare=False, hash=False, repr=False)
    detail: str = dataclass_field(default="", compare=False, hash=False, repr=False)

    @property
    def family(self) -> str:
        return self.key[0]

    @property
    def law(self):
        """The law object (a scipy frozen law or ``EmpiricalTokens``)."""
        return law(self.key, self.sample)


def parametric(family: str, a: float, b: float) -> TokenLawChoice:
    """The choice of a parametric law with its label."""
    label = {"lognormal": f"lognormal({a:g}, {b:g})",
             "uniform": f"uniform on [{a:g}, {b:g}]",
             "truncnorm": f"normal({a:g}, {b:g}²) truncated to n ≥ 0"}[family]
    return TokenLawChoice((family, float(a), float(b)), label)


@memo(16)
def prompt_mean_tokens(preset_id: str) -> float:
    """Mean prompt tokens of a measured prompt-token law (``PROMPT_PRESETS``)."""
    return mean_tokens(PROMPT_PRESETS[preset_id].law())


def measured(preset_id: str) -> TokenLawChoice:
    """The choice of a measured output-token law (``engine.presets.token_law_presets``)."""
    return TokenLawChoice(("measured", preset_id), f"measured: {MEASURED[preset_id].name}")


@memo(16)
def _parse(digest: str, source: str, _data) -> TokenLawChoice:
    got = read_token_sample(_data)
    sample = got.law
    return TokenLawChoice(("empirical", digest, source, sample.n_samples),
                          f"empirical, {sample.n_samples} counts ({source})", sample,
                          got.description)


def from_counts(data: bytes | str, source: str) -> TokenLawChoice:
    """The choice of the empirical law of uploaded/pasted ``data``: a CSV of token counts
    or a request trace whose output tokens are taken (``ui.token_counts.
    read_token_sample``; ``ValueError`` if it is neither); ``source`` names it (a file
    name)."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    digest = hashlib.sha256(raw).hexdigest()
    return _parse(digest, source, data)


def _empirical(upload_key: str, paste_key: str) -> TokenLawChoice | None:
    """Upload or paste token counts or a trace; the last valid sample stays in use on an
    error."""
    upload = st.file_uploader("Upload token counts or a request trace", key=upload_key,
                              type=["csv", "txt", "jsonl", "json"],
                              help=f"A CSV with one column output_tokens (or tokens), whole "
                                   f"numbers ≥ 1, at most {MAX_TOKEN_ROWS:,} rows; or a request "
                                   "trace, whose generated tokens are taken: the Azure LLM "
                                   "trace CSV (TIMESTAMP, ContextTokens, GeneratedTokens), JSON "
                                   "lines with timestamp (ms) and output_length (Mooncake), or "
                                   "a CSV with timestamp_s and output_tokens. At most "
                                   f"{MAX_UPLOAD_BYTES // 1_000_000} MB.")
    pasted = st.text_area("…or paste CSV", key=paste_key, height=100,
                          placeholder="output_tokens\n512\n1033\n87", max_chars=MAX_UPLOAD_BYTES)
    last = st.session_state.get(_LAST)
    try:
        if upload is not None:
            got = from_counts(upload.getvalue(), f"upload {upload.name}")
        elif (pasted or "").strip():
            got = from_counts(pasted, "pasted counts")
        else:
            got = None
    except ValueError as err:
        st.error(f"Token counts not used: {err}", icon=":material/error:")
        if last is not None:
            st.info(f"Still using the last valid sample ({last.sample.n_samples} counts).")
    else:
        if got is not None:
            st.session_state[_LAST] = last = got
            st.caption(share.inert(got.detail))
    if last is None:
        st.info("No token counts yet: showing the lognormal law meanwhile.")
    return last


def _measured_caption(preset_id: str) -> None:
    p = MEASURED[preset_id]
    st.caption(share.inert(f"Generated tokens of {p.n_requests:,} requests, kept as a "
                           f"histogram (mean {mean_tokens(law(('measured', preset_id))):,.1f} "
                           f"tokens). Source: {p.source}."))


def draw(upload_key: str = UPLOAD_KEY, paste_key: str = PASTE_KEY) -> TokenLawChoice:
    """Draw the token-law widgets (call inside the sidebar) and return the choice.

    Widget keys are the field keys; the fields must have been restored
    (``share.restore``).  An invalid uniform range falls back to the lognormal law."""
    family = st.selectbox(LABEL, LAWS, key="law", format_func=LAW_NAMES.get)
    s = st.session_state
    if family in MEASURED:
        _measured_caption(family)
        return measured(family)
    if family == "empirical":
        got = _empirical(upload_key, paste_key)
        if got is not None:
            return got
    elif family == "uniform":
        share.number_input(_BY_KEY["uni_low"], "lowest (tokens)", step=100.0, format="%.0f")
        share.number_input(_BY_KEY["uni_high"], "highest (tokens)", step=100.0, format="%.0f")
        if s["uni_low"] < s["uni_high"]:
            return parametric("uniform", s["uni_low"], s["uni_high"])
        st.error("The lowest count must be below the highest: using the lognormal law.",
                 icon=":material/error:")
    elif family == "truncnorm":
        share.number_input(_BY_KEY["tn_mean"], "mean (tokens)", step=50.0)
        share.number_input(_BY_KEY["tn_sd"], "sd (tokens)", step=50.0)
        return parametric("truncnorm", s["tn_mean"], s["tn_sd"])
    share.slider(_BY_KEY["log_mean"], LOG_MEAN_LABEL, step=0.05)
    share.slider(_BY_KEY["log_sd"], LOG_SD_LABEL, step=0.05)
    return parametric("lognormal", s["log_mean"], s["log_sd"])
