"""The serving families' own inputs: what the requests ask for (the prompt and reply
token laws, or an uploaded request trace whose prompts and replies are taken together),
how a request picks its replica (dispatch), and the KV link between prefill and decode
instances (disaggregated).

``draw(fam)`` (inside the sidebar) returns a frozen, hashable ``ServingChoice``; its
``spec_fields()`` go into the ``PlanSpec`` and its ``workload`` into the page's one
engine call (None: the engine reads the laws the spec names).
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from engine.llm_serving import LINK_GB_PER_S, TraceTokens
from engine.planner.families.llm_serving import workload_from_pairs
from ui import share, trace_upload
from ui.memo import memo

from .fields import (CUSTOM_LINK, DISPATCH_POLICY, LINK, LINK_GBPS, LINK_MS, OUTPUT_LAWS,
                     PROMPT_LAW, PROMPT_LAWS, TOKEN_LAW, TOKEN_SOURCES, TOKENS, uses)

UPLOAD_KEY = "planner_token_trace_upload"
_LAST = "_plan_last_token_trace"           # session state: the last valid uploaded trace
DISPATCH_WORDS = {"random": "at random",
                  "round_robin": "in turn (round robin)",
                  "least_outstanding": "to the replica with the fewest requests in flight "
                                       "(least outstanding)"}


@memo(8)
def _workload(key: str, name: str, _prompts, _replies):
    """The engine's workload of an uploaded trace (memoised on its digest)."""
    return workload_from_pairs(_prompts, _replies, name)


@dataclass(frozen=True)
class ServingChoice:
    """The serving inputs chosen: the laws' preset ids, the uploaded trace (or None),
    the dispatch policy and the link (GB/s one way, latency ms)."""

    prompt_law: str
    token_law: str
    trace: TraceTokens | None = None
    dispatch: str = "least_outstanding"
    link_gb_per_s: float = 50.0
    link_latency_ms: float = 0.0

    @property
    def workload(self):
        """The trace's pairs for the engine (``capacity_plan(workload=...)``), or None."""
        t = self.trace
        return None if t is None else _workload(t.key, t.name, t.prompts, t.replies)

    @property
    def label(self) -> str:
        if self.trace is not None:
            return (f"prompts and replies of {self.trace.name} "
                    f"({self.trace.n_requests:,} requests)")
        return (f"prompts {PROMPT_LAWS[self.prompt_law].name}; replies "
                f"{OUTPUT_LAWS[self.token_law].name}")

    def spec_fields(self, fam) -> dict:
        """The ``PlanSpec`` fields of these inputs for the family ``fam``: the trace as
        "upload:<digest>" (the spec changes with the file)."""
        use = uses(fam)
        out = dict(prompt_law=self.prompt_law, token_law=self.token_law,
                   token_trace="" if self.trace is None else self.trace.key)
        if "dispatch" in use:
            out["dispatch"] = self.dispatch
        if "link" in use:
            out.update(link_gb_per_s=self.link_gb_per_s, link_latency_ms=self.link_latency_ms)
        return out

    def file_note(self) -> tuple[str, str]:
        """(the trace's name for a plan file, a note saying so), or ("", "")."""
        if self.trace is None:
            return "", ""
        name = self.trace.name.removesuffix(" (uploaded)")
        return name, (f"The plan file names the uploaded trace {name}: keep the file beside "
                      "the plan file to run it outside the browser.")


def _trace() -> TraceTokens | None:
    return trace_upload.draw(
        UPLOAD_KEY, _LAST, missing="No trace uploaded yet: the token laws below meanwhile.",
        use="Confirmation runs draw whole requests from it; the screening takes its prompts "
            "and replies as they are.",
        arrivals_note="Its arrival times are not used here: Arrivals replays a trace.")


def _link() -> tuple[float, float]:
    ss = st.session_state
    st.selectbox("KV link between prefill and decode", LINK.choices, key=LINK.key,
                 format_func=lambda n: "another (type GB/s)" if n == CUSTOM_LINK else n,
                 help="What carries each request's KV cache from its prefill instance to "
                      "its decode instance (GB/s one way).")
    if ss[LINK.key] == CUSTOM_LINK:
        share.number_input(LINK_GBPS, "Link bandwidth (GB/s, one way)", format="%g")
        gb = float(ss[LINK_GBPS.key])
    else:
        gb = LINK_GB_PER_S[ss[LINK.key]]
    share.number_input(LINK_MS, "Link latency per copy (ms)", format="%g", step=0.1,
                       help="Set-up time of one KV copy, added to its transfer time.")
    return gb, float(ss[LINK_MS.key])


def draw(fam) -> ServingChoice:
    """Draw the serving inputs of ``fam`` (inside the sidebar) and return them."""
    ss = st.session_state
    use = uses(fam)
    st.markdown("**Requests**")
    source = st.radio("Prompt and reply tokens", tuple(TOKEN_SOURCES), key=TOKENS.key,
                      format_func=TOKEN_SOURCES.get,
                      help="Token laws: prompts and replies drawn independently from "
                           "measured laws. A trace: each request's prompt and reply taken "
                           "together, so their correlation is kept.")
    trace = _trace() if source == "trace" else None
    if trace is None:
        st.selectbox("Prompt lengths (prompt-token law)", tuple(PROMPT_LAWS), key=PROMPT_LAW.key,
                     format_func=lambda p: PROMPT_LAWS[p].name)
        st.selectbox("Reply lengths (output-token law)", tuple(OUTPUT_LAWS), key=TOKEN_LAW.key,
                     format_func=lambda p: OUTPUT_LAWS[p].name)
    extra = {}
    if "dispatch" in use:
        st.radio("Each request goes", DISPATCH_POLICY.choices, key=DISPATCH_POLICY.key,
                 format_func=DISPATCH_WORDS.get,
                 help="How the load balancer picks a replica. The screening prices every "
                      "replica at its even share of the traffic; the confirmation "
                      "simulates the whole fleet with this policy.")
        extra["dispatch"] = ss[DISPATCH_POLICY.key]
    if "link" in use:
        extra["link_gb_per_s"], extra["link_latency_ms"] = _link()
    return ServingChoice(ss[PROMPT_LAW.key], ss[TOKEN_LAW.key], trace, **extra)
