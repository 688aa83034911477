"""A workload read off a request trace: each request's prompt and reply tokens taken
together (``TraceTokens``), and the load axis a page sweeps up to its capacity.

``trace_tokens`` keeps the requests with at least one prompt and one reply token
(``engine.measured.RequestTrace`` in); ``TraceTokens.draw`` draws whole requests (a
prompt with its own reply), so their correlation is kept.  ``load_axis_top_per_s`` and
``rate_step_per_s`` give the round end and step of a load axis (requests/s).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np

from ..core.domains import RATE_PER_S
from ..measured import RequestTrace

__all__ = ["TraceTokens", "trace_tokens", "load_axis_top_per_s", "rate_step_per_s"]

NO_TOKENS = ("the trace has no prompt and reply token counts (the Azure CSV's ContextTokens "
             "and GeneratedTokens, Mooncake's input_length and output_length, or columns "
             "input_tokens and output_tokens)")


@dataclass(frozen=True)
class TraceTokens:
    """The prompt and reply tokens of a trace, request by request (compared by ``key``,
    e.g. the file's digest, and ``name``); ``dropped``: requests left out (no prompt or
    no reply token)."""

    key: str
    name: str
    n_requests: int
    prompts: np.ndarray = field(compare=False, repr=False)
    replies: np.ndarray = field(compare=False, repr=False)
    dropped: int = field(default=0, compare=False)

    @property
    def mean_prompt_tokens(self) -> float:
        """Mean prompt, tokens."""
        return float(np.mean(self.prompts))

    @property
    def mean_reply_tokens(self) -> float:
        """Mean reply, tokens."""
        return float(np.mean(self.replies))

    def draw(self, n: int, seed) -> tuple[np.ndarray, np.ndarray]:
        """(prompts, replies) of ``n`` whole requests drawn with replacement (each prompt
        with its own reply), from ``np.random.default_rng(seed)``."""
        n = int(n)
        if n < 1:
            raise ValueError(f"n must be a whole number ≥ 1, got {n!r}")
        idx = np.random.default_rng(seed).integers(0, self.n_requests, n)
        return self.prompts[idx], self.replies[idx]


def trace_tokens(trace: RequestTrace, key: str, name: str) -> TraceTokens:
    """The paired token counts of ``trace``: the requests with at least one prompt and
    one reply token, read-only; ``ValueError`` when the trace has no token counts or
    fewer than 2 such requests."""
    if not isinstance(trace, RequestTrace):
        raise ValueError(f"trace must be a RequestTrace, got {type(trace).__name__}")
    if trace.input_tokens is None or trace.output_tokens is None:
        raise ValueError(NO_TOKENS)
    keep = (np.asarray(trace.input_tokens) >= 1) & (np.asarray(trace.output_tokens) >= 1)
    kept = int(np.count_nonzero(keep))
    if kept < 2:
        raise ValueError("fewer than 2 requests with at least one prompt and one reply token")
    prompts = np.array(trace.input_tokens[keep], dtype=np.int64)
    replies = np.array(trace.output_tokens[keep], dtype=np.int64)
    for a in (prompts, replies):
        a.setflags(write=False)
    return TraceTokens(str(key), str(name), kept, prompts, replies, int(keep.size - kept))


def load_axis_top_per_s(capacity_per_s, share: float = 1.2) -> float:
    """The end of a load axis: ``share`` × capacity (requests/s), rounded up to 2
    significant digits."""
    x = float(RATE_PER_S.check(capacity_per_s, "capacity_per_s")) * float(share)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"share × capacity_per_s must be finite and > 0, got {x!r}")
    scale = 10.0 ** (math.floor(math.log10(x)) - 1)
    return math.ceil(x / scale) * scale


def rate_step_per_s(top_per_s) -> float:
    """A round step (a power of ten, requests/s) giving about 100-1000 positions up to
    ``top_per_s``."""
    top = float(RATE_PER_S.check(top_per_s, "top_per_s"))
    if not math.isfinite(top):
        raise ValueError(f"top_per_s must be finite, got {top!r}")
    return 10.0 ** math.floor(math.log10(top / 100.0))
