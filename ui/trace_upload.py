"""The request-trace upload shared by the LLM serving page and the planner: each
request's prompt and reply tokens taken together (``engine.llm_serving.TraceTokens``).

``draw(upload_key, state_key, ...)`` (inside the sidebar) draws the uploader and a
caption of what was read, keeps the last valid trace in ``st.session_state[state_key]``
(a bad file shows why and keeps it), and returns it or None.  ``trace_from_file`` reads
an uploaded file (memoised on its digest); the arithmetic is the engine's
(``engine.llm_serving.trace_tokens``).
"""
from __future__ import annotations

import hashlib

import streamlit as st

from engine.llm_serving import TraceTokens, trace_tokens
from engine.measured import read_trace
from ui import share
from ui.memo import memo
from ui.uploads import MAX_UPLOAD_BYTES, decode_text, keep_last_valid

FORMATS = ("Each request's prompt and reply tokens are taken together: the Azure LLM "
           "trace CSV (TIMESTAMP, ContextTokens, GeneratedTokens), JSON lines with "
           "input_length and output_length (Mooncake), or a CSV with timestamp_s, "
           f"input_tokens and output_tokens. At most {MAX_UPLOAD_BYTES // 1_000_000} MB.")


@memo(8)
def _read(digest: str, name: str, _text) -> TraceTokens:
    return trace_tokens(read_trace(_text), f"upload:{digest}", name)


def trace_from_file(data: bytes | str, file_name: str) -> TraceTokens:
    """The paired token counts of an uploaded trace; ``ValueError`` saying why not."""
    text = decode_text(data)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
    return _read(digest, f"{file_name} (uploaded)", text)


def summary(trace: TraceTokens, use: str) -> str:
    """What was read: requests, mean prompt and reply, the requests left out; then
    ``use`` (how the page uses it)."""
    dropped = (f" ({trace.dropped:,} requests without prompt or reply tokens left out)"
               if trace.dropped else "")
    return (f"{trace.n_requests:,} requests: mean prompt {trace.mean_prompt_tokens:,.0f} "
            f"tokens, mean reply {trace.mean_reply_tokens:,.0f} tokens{dropped}. {use}")


def draw(upload_key: str, state_key: str, *, use: str, arrivals_note: str,
         missing: str | None = None) -> TraceTokens | None:
    """The uploader (widget ``upload_key``) and its caption; the last valid trace (kept in
    session state ``state_key``) or None.  ``use``: how the page uses the trace (after
    the caption); ``arrivals_note``: where its arrival times go (after the help);
    ``missing``: shown while no trace is uploaded, if given."""
    upload = st.file_uploader("Upload a request trace", type=["csv", "txt", "jsonl", "json"],
                              key=upload_key, help=f"{FORMATS} {arrivals_note}")
    last = keep_last_valid(upload, trace_from_file, state_key)
    if last is None:
        if missing:
            st.info(missing)
    else:
        st.caption(share.inert(summary(last, use)))
    return last
