"""The scheduler of an LLM server, under vLLM's names.

``chunked_prefill=True`` is vLLM's V1 scheduler (and SGLang's): every step runs the
running requests first (a decode costs one token of the budget, an unfinished prompt
continues with what is left), then admits waiting requests first come first served
while budget, seats and free KV blocks allow (the last may get a partial chunk).
``chunked_prefill=False`` is vLLM's earlier scheduler: a step holds either whole
prompts or one decode of every running request.  The rules, step by step:
docs/models/llm_serving.md.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from ..core.domains import BLOCK_SIZE, KV_CACHE_TOKENS, MAX_BATCHED_TOKENS, MAX_NUM_SEQS

__all__ = ["Scheduler"]


def _whole(domain, value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"{name} must be {domain.describe()}, got {value!r}")
    return int(domain.check(value, name))


@dataclass(frozen=True, kw_only=True)
class Scheduler:
    """Scheduler settings (vLLM's names; defaults: vLLM V1 on a large GPU).

    ``kv_cache_tokens`` None: the KV cache never binds.  ``block_size``: tokens per
    KV block.  ``prefix_caching``: full blocks of finished and preempted requests stay
    cached (least recently used evicted first) and a prompt starting with cached tokens
    skips them.  ``kv_watermark``: the share of blocks an admission must leave free
    (vLLM's earlier scheduler: 0.01; V1: 0).
    """

    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    kv_cache_tokens: int | None = None
    block_size: int = 16
    chunked_prefill: bool = True
    prefix_caching: bool = True
    kv_watermark: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "max_num_seqs",
                           _whole(MAX_NUM_SEQS, self.max_num_seqs, "max_num_seqs"))
        object.__setattr__(self, "max_num_batched_tokens",
                           _whole(MAX_BATCHED_TOKENS, self.max_num_batched_tokens,
                                  "max_num_batched_tokens"))
        object.__setattr__(self, "block_size", _whole(BLOCK_SIZE, self.block_size, "block_size"))
        if self.kv_cache_tokens is not None:
            if isinstance(self.kv_cache_tokens, float) and self.kv_cache_tokens == math.inf:
                object.__setattr__(self, "kv_cache_tokens", None)
            else:
                object.__setattr__(self, "kv_cache_tokens",
                                   _whole(KV_CACHE_TOKENS, self.kv_cache_tokens,
                                          "kv_cache_tokens"))
        for name in ("chunked_prefill", "prefix_caching"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {value!r}")
            object.__setattr__(self, name, bool(value))
        w = self.kv_watermark
        if isinstance(w, bool) or not isinstance(w, (int, float, np.number)) \
                or not 0 <= w < 1:
            raise ValueError(f"kv_watermark must be a share in [0, 1), got {w!r}")
        object.__setattr__(self, "kv_watermark", float(w))
        if self.kv_cache_tokens is not None and self.kv_cache_tokens < self.block_size:
            raise ValueError(f"kv_cache_tokens must hold at least one block of "
                             f"{self.block_size} tokens, got {self.kv_cache_tokens}")

    @property
    def kv_blocks(self) -> int | None:
        """KV blocks of ``block_size`` tokens (None: unbounded)."""
        if self.kv_cache_tokens is None:
            return None
        return self.kv_cache_tokens // self.block_size

    @property
    def watermark_blocks(self) -> int:
        """Blocks an admission leaves free: ⌊kv_watermark · blocks⌋ (0 when unbounded)."""
        return 0 if self.kv_blocks is None else int(self.kv_watermark * self.kv_blocks)

    def blocks_for(self, tokens):
        """KV blocks ``tokens`` tokens take: ⌈tokens / block_size⌉."""
        return -(-np.asarray(tokens, dtype=np.int64) // self.block_size)

    def describe(self) -> str:
        """The settings in words, under vLLM's names."""
        kv = ("unbounded KV cache" if self.kv_cache_tokens is None
              else f"KV cache {self.kv_cache_tokens:,} tokens in blocks of {self.block_size}")
        kind = "chunked prefill" if self.chunked_prefill else "whole prompts (no chunked prefill)"
        prefix = "prefix caching on" if self.prefix_caching else "prefix caching off"
        return (f"max_num_seqs {self.max_num_seqs}, max_num_batched_tokens "
                f"{self.max_num_batched_tokens:,}, {kind}, {kv}, {prefix}")
