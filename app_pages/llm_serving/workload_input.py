"""The LLM serving page's workload input: the prompt-token law (fixed, lognormal, the
measured Azure prompt laws) beside the shared reply (output-token) law, or an uploaded
request trace whose prompts and replies are taken together, request by request.

``draw()`` (inside the sidebar) returns a frozen, hashable ``Workload``; its
``tokens()`` are what the engine takes (laws, or the trace's paired counts).
"""
from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field, replace

import streamlit as st

from engine.core import domains, token_laws
from engine.llm_serving import TraceTokens
from ui import share
from ui import token_law_input as tli
from ui import trace_upload
from ui.memo import memo

TRACE = "trace"
PROMPT_LAWS = ("fixed", "lognormal", *tli.PROMPT_PRESETS, TRACE)
PROMPT_NAMES = {"fixed": "the same for every request", "lognormal": "lognormal",
                **{pid: f"measured: {p.name}" for pid, p in tli.PROMPT_PRESETS.items()},
                TRACE: "a request trace: prompts and replies together (upload)"}
DEFAULT_PROMPT = next((p for p in tli.PROMPT_PRESETS if "conv" in p), "lognormal")
DEFAULT_REPLY = next((p for p in tli.MEASURED if "conv" in p), "lognormal")
UPLOAD_KEY = "serving_trace_upload"
_LAST = "_serving_last_trace"              # session state: the last valid uploaded trace

PROMPT_LAW = share.Field("prompt_law", DEFAULT_PROMPT, str, choices=PROMPT_LAWS)
PROMPT_FIXED = share.Field("prompt_fixed", 1024, int, 1, 1_000_000,
                           domain=domains.SERVING_TOKENS)
PROMPT_LOG_MEAN = share.Field("prompt_log_mean", 6.5, float, 0.0, 12.0,
                              domain=domains.TOKEN_LOG_MEAN)
PROMPT_LOG_SD = share.Field("prompt_log_sd", 1.0, float, 0.05, 3.0, domain=domains.TOKEN_LOG_SD)
# The shared reply law, starting on the measured Azure conversation replies here.
REPLY_FIELDS = [replace(f, default=DEFAULT_REPLY) if f.key == "law" else f
                for f in tli.fields()]
FIELDS = [PROMPT_LAW, PROMPT_FIXED, PROMPT_LOG_MEAN, PROMPT_LOG_SD, *REPLY_FIELDS]


@memo(32)
def prompt_law(key: tuple):
    """The prompt-token input of ``key``: a whole number, or a law."""
    family, *args = key
    if family == "fixed":
        return int(args[0])
    if family == "lognormal":
        return token_laws.lognormal(*args)
    return tli.PROMPT_PRESETS[args[0]].law()


@dataclass(frozen=True)
class PromptChoice:
    """The prompt lengths chosen: ``key`` (hashable) and ``label`` (for captions)."""

    key: tuple
    label: str = dataclass_field(default="", compare=False)

    @property
    def law(self):
        return prompt_law(self.key)


@dataclass(frozen=True)
class Workload:
    """What the requests ask for: independent prompt and reply laws, or a trace's pairs."""

    prompt: PromptChoice | None = None
    reply: tli.TokenLawChoice | None = None
    trace: TraceTokens | None = None

    def tokens(self) -> tuple:
        """(input_tokens, output_tokens) as the engine takes them: laws (or a number), or
        the trace's paired counts (one per request)."""
        if self.trace is not None:
            return self.trace.prompts, self.trace.replies
        return self.prompt.law, self.reply.law

    @property
    def label(self) -> str:
        if self.trace is not None:
            return f"prompts and replies of {self.trace.name} ({self.trace.n_requests:,} requests)"
        return f"prompts {self.prompt.label}, replies {self.reply.label}"


def _trace() -> TraceTokens | None:
    return trace_upload.draw(UPLOAD_KEY, _LAST, use="Simulations draw whole requests from it.",
                             arrivals_note="Its arrival times are not used here: Arrivals, "
                                           "below, replays a trace.")


def _prompt(family: str) -> PromptChoice:
    s = st.session_state
    if family == "fixed":
        share.number_input(PROMPT_FIXED, "Prompt tokens per request", step=128)
        n = int(s[PROMPT_FIXED.key])
        return PromptChoice(("fixed", n), f"{n:,} tokens")
    if family == "lognormal":
        share.slider(PROMPT_LOG_MEAN, "Prompt log-mean μ (log tokens)", step=0.05)
        share.slider(PROMPT_LOG_SD, "Prompt log-sd σ", step=0.05)
        mu, sd = float(s[PROMPT_LOG_MEAN.key]), float(s[PROMPT_LOG_SD.key])
        return PromptChoice(("lognormal", mu, sd), f"lognormal({mu:g}, {sd:g})")
    p = tli.PROMPT_PRESETS[family]
    st.caption(share.inert(f"Prompt tokens of {p.n_requests:,} requests, kept as a histogram "
                           f"(mean {tli.prompt_mean_tokens(family):,.0f} tokens). Source: "
                           f"{p.source}."))
    return PromptChoice(("measured", family), f"measured: {p.name}")


def draw() -> Workload:
    """Draw the workload input (inside the sidebar; fields restored) and return it.
    A trace chosen but not uploaded yet: the default laws meanwhile, saying so."""
    family = st.selectbox("Prompt tokens", PROMPT_LAWS, key=PROMPT_LAW.key,
                          format_func=PROMPT_NAMES.get,
                          help="How long the requests' prompts (input tokens) are. A trace "
                               "gives each request's prompt and reply together, so their "
                               "correlation is kept.")
    if family == TRACE:
        trace = _trace()
        if trace is not None:
            return Workload(trace=trace)
        st.info("No trace uploaded yet: the measured Azure conversation prompts and "
                "replies meanwhile.")
        pid = DEFAULT_PROMPT if DEFAULT_PROMPT in tli.PROMPT_PRESETS else None
        prompt = (PromptChoice(("measured", pid), f"measured: {tli.PROMPT_PRESETS[pid].name}")
                  if pid else PromptChoice(("lognormal", 6.5, 1.0), "lognormal(6.5, 1)"))
        reply = (tli.measured(DEFAULT_REPLY) if DEFAULT_REPLY in tli.MEASURED
                 else tli.parametric("lognormal", 7.0, 0.7))
        return Workload(prompt, reply)
    prompt = _prompt(family)
    reply = tli.draw(upload_key="serving_reply_upload", paste_key="serving_reply_paste")
    return Workload(prompt, reply)
