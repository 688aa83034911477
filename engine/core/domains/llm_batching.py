"""Domains of LLM batching strategies (Yang et al. §IV, engine/llm_batching/): batch
sizes, the batch-time law of eq 18, the KV-cache capacity; times in s."""
from __future__ import annotations

from .base import Choice, Domain

LLM_BATCH = Domain("b", "requests", low=1.0, integer=True, typical=(1, 64),
                   description="LLM batch size (fixed batching) or batch-size grid")
LLM_MAX_TOKENS = Domain("l", "tokens", low=0.0, typical=(0.0, 2048.0),
                        description="largest output-token count in a batch (eq 18)")
LLM_K1 = Domain("k1", "s per request", low=0.0, low_open=True, typical=(0.001, 0.2),
                description="first-token time per request in the batch (eq 18)")
LLM_K2 = Domain("k2", "s", low=0.0, typical=(0.0, 1.0),
                description="first-token time per batch (eq 18)")
LLM_K3 = Domain("k3", "s per token per request", low=0.0, typical=(0.0, 0.002),
                description="per-token decode time per request in the batch (eq 18)")
LLM_K4 = Domain("k4", "s per token", low=0.0, typical=(0.0, 0.05),
                description="per-token decode time per batch (eq 18)")
LLM_KV_CAPACITY = Domain("kv_capacity_tokens", "tokens", low=0.0, low_open=True, allow_inf=True,
                         typical=(1_000.0, 1_000_000.0),
                         description="KV-cache capacity of continuous batching, in tokens")
LLM_PROMPT_TOKENS = Domain("prompt_tokens", "tokens", low=0.0, typical=(0.0, 2048.0),
                           description="input tokens each request holds in the KV cache")
LLM_STRATEGY = Choice("strategy", ("dynamic", "fixed", "elastic", "continuous"),
                      description="batching strategy of Yang et al. §IV")
LLM_BATCH_TIME = Choice("batch_time", ("realised", "mean"),
                        description="a batch's time from its drawn tokens, or its mean")
