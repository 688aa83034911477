"""The time of one scheduler step of an LLM server, and the KV cache a GPU holds.

A step computes P prompt tokens (in chunks) and one token of each of D decoding
requests::

    step_ms = base_ms + prefill_ms_per_token·P + prefill_ms_per_token_sq·Q
              + decode_ms_per_seq·D + context_ms_per_token·K

with Q = Σ over the step's prompt chunks of chunk × (prompt tokens up to the chunk's
end) (l² for a whole prompt of l tokens: attention is quadratic in the prompt) and
K = Σ of the decoding requests' contexts (prompt + tokens so far).  A step holding
prompts only starts from ``prefill_base_ms`` instead of ``base_ms`` (published fits,
DistServe's and Splitwise's, fit prompt steps and decode steps separately).
Derivation and sources: docs/models/llm_serving.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
import math

import numpy as np

from ..core.domains import (STEP_MS, STEP_MS_PER_CONTEXT, STEP_MS_PER_SEQ, STEP_MS_PER_TOKEN,
                            STEP_MS_PER_TOKEN_SQ)

__all__ = ["StepCost", "kv_capacity_tokens", "kv_bytes_per_token"]

_DOMAINS = {"base_ms": STEP_MS, "prefill_base_ms": STEP_MS,
            "prefill_ms_per_token": STEP_MS_PER_TOKEN,
            "prefill_ms_per_token_sq": STEP_MS_PER_TOKEN_SQ,
            "decode_ms_per_seq": STEP_MS_PER_SEQ, "context_ms_per_token": STEP_MS_PER_CONTEXT,
            "frontend_ms": STEP_MS}


@dataclass(frozen=True, kw_only=True)
class StepCost:
    """Time of one scheduler step, in ms (keyword fields; all ≥ 0).

    ``prefill_base_ms`` defaults to ``base_ms``; ``frontend_ms`` is the time from the
    client's send to the scheduler (HTTP, tokenizer), added to every request's TTFT.
    ``label`` says where the numbers come from.
    """

    base_ms: float = 0.0
    prefill_ms_per_token: float = 0.0
    prefill_ms_per_token_sq: float = 0.0
    decode_ms_per_seq: float = 0.0
    context_ms_per_token: float = 0.0
    prefill_base_ms: float | None = None
    frontend_ms: float = 0.0
    label: str = field(default="", compare=False)

    def __post_init__(self):
        for f in fields(self):
            if f.name == "label":
                continue
            value = getattr(self, f.name)
            if f.name == "prefill_base_ms" and value is None:
                object.__setattr__(self, f.name, float(self.base_ms))
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise ValueError(f"{f.name} must be {_DOMAINS[f.name].describe()} ms-based "
                                 f"number, got {value!r}")
            object.__setattr__(self, f.name, float(_DOMAINS[f.name].check(value, f.name)))
        if not isinstance(self.label, str):
            raise ValueError(f"label must be text, got {self.label!r}")

    def step_ms(self, prompt_tokens, prompt_tokens_sq, decoding, context_tokens):
        """Time of a step (ms) computing ``prompt_tokens`` P (Σ chunk × end: Q) and one
        token of ``decoding`` D requests whose contexts sum to ``context_tokens`` K;
        broadcasts like a ufunc.  A step with P > 0 and D = 0 starts from
        ``prefill_base_ms``; an empty step (P = D = 0) takes 0."""
        p, q, d, k = (np.asarray(x, dtype=float)
                      for x in (prompt_tokens, prompt_tokens_sq, decoding, context_tokens))
        base = np.where(d > 0, self.base_ms, np.where(p > 0, self.prefill_base_ms, 0.0))
        out = (base + self.prefill_ms_per_token * p + self.prefill_ms_per_token_sq * q
               + self.decode_ms_per_seq * d + self.context_ms_per_token * k)
        return out[()]

    def prompt_ms(self, prompt_tokens):
        """Time of a step holding one whole prompt of ``prompt_tokens`` alone (ms)."""
        l = np.asarray(prompt_tokens, dtype=float)
        return self.step_ms(l, l * l, 0, 0)

    def decode_ms(self, decoding, context_tokens):
        """Time of a decode-only step of ``decoding`` requests, contexts summing to
        ``context_tokens`` (ms)."""
        return self.step_ms(0, 0, decoding, context_tokens)

    def with_overhead(self, *, step_ms=0.0, per_seq_ms=0.0, prompt_factor=1.0,
                      frontend_ms=None, label=None) -> "StepCost":
        """This cost plus a serving stack's overhead: ``step_ms`` on every step,
        ``per_seq_ms`` per decoding request, the prompt terms (and the prompt step's
        base) times ``prompt_factor``, and ``frontend_ms`` (None: unchanged)."""
        return replace(
            self, base_ms=self.base_ms + step_ms,
            prefill_base_ms=(self.prefill_base_ms * prompt_factor + step_ms),
            prefill_ms_per_token=self.prefill_ms_per_token * prompt_factor,
            prefill_ms_per_token_sq=self.prefill_ms_per_token_sq * prompt_factor,
            decode_ms_per_seq=self.decode_ms_per_seq + per_seq_ms,
            frontend_ms=self.frontend_ms if frontend_ms is None else frontend_ms,
            label=self.label if label is None else label)

    def as_array(self) -> np.ndarray:
        """(base, prefill base, per prompt token, per token², per decoding request,
        per context token, front end) in ms: what the compiled simulator reads."""
        return np.array([self.base_ms, self.prefill_base_ms, self.prefill_ms_per_token,
                         self.prefill_ms_per_token_sq, self.decode_ms_per_seq,
                         self.context_ms_per_token, self.frontend_ms])

    def formula(self) -> str:
        """The step time in words with this cost's numbers."""
        return (f"step = {self.base_ms:.4g} ms + {self.prefill_ms_per_token:.4g} ms·P + "
                f"{self.prefill_ms_per_token_sq:.3g} ms·Q + {self.decode_ms_per_seq:.4g} ms·D + "
                f"{self.context_ms_per_token:.3g} ms·K (prompt-only steps start from "
                f"{self.prefill_base_ms:.4g} ms); front end {self.frontend_ms:.4g} ms")


def kv_bytes_per_token(*, layers, kv_heads, head_dim, kv_dtype_bytes=2.0) -> float:
    """Bytes of KV cache one token takes: 2 (key and value) × layers × KV heads ×
    head dim × bytes per element."""
    vals = {"layers": layers, "kv_heads": kv_heads, "head_dim": head_dim,
            "kv_dtype_bytes": kv_dtype_bytes}
    for name, v in vals.items():
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) \
                or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a positive number, got {v!r}")
    return 2.0 * layers * kv_heads * head_dim * kv_dtype_bytes


def kv_capacity_tokens(*, gpu_memory_gib, weights_gib, layers, kv_heads, head_dim,
                       kv_dtype_bytes=2.0, gpu_memory_utilization=0.9,
                       activation_gib=0.0, tensor_parallel=1) -> int:
    """Tokens the paged KV cache holds, as vLLM sizes it::

        tokens = ⌊(TP·memory·utilization − weights − activations) /
                  (2 · layers · KV heads · head dim · bytes per element)⌋

    (memory per GPU, weights and activation peak over all TP GPUs, in GiB).  ``ValueError``
    when the weights leave no room.  Example: Qwen2.5-7B BF16 on a 24 GiB RTX 4090 at
    0.92: 57,344 bytes per token; vLLM 0.10.2 logged 110,896 tokens.
    """
    per_token = kv_bytes_per_token(layers=layers, kv_heads=kv_heads, head_dim=head_dim,
                                   kv_dtype_bytes=kv_dtype_bytes)
    for name, v in (("gpu_memory_gib", gpu_memory_gib), ("weights_gib", weights_gib),
                    ("activation_gib", activation_gib), ("tensor_parallel", tensor_parallel),
                    ("gpu_memory_utilization", gpu_memory_utilization)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) \
                or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a non-negative number, got {v!r}")
    if not 0 < gpu_memory_utilization <= 1:
        raise ValueError(f"gpu_memory_utilization must be in (0, 1], got "
                         f"{gpu_memory_utilization!r}")
    free = (tensor_parallel * gpu_memory_gib * gpu_memory_utilization - weights_gib
            - activation_gib) * 2 ** 30
    if free <= per_token:
        raise ValueError(f"no room for a KV cache: {tensor_parallel} × {gpu_memory_gib:g} GiB × "
                         f"{gpu_memory_utilization:g} leaves {free / 2 ** 30:.3g} GiB after "
                         f"{weights_gib:g} GiB of weights and {activation_gib:g} GiB of "
                         f"activations")
    return int(free // per_token)
