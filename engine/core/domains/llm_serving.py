"""Domains of LLM serving as vLLM, SGLang and TensorRT-LLM run it (continuous batching,
chunked prefill, paged KV cache; engine/llm_serving/): step costs, scheduler limits,
disaggregated servers and fleets, step times read from a source; times in ms, rates
per s, lengths in tokens."""
from __future__ import annotations

from .base import Choice, Domain

STEP_MS = Domain("base_ms", "ms", low=0.0, typical=(0.0, 50.0),
                 description="fixed time of one scheduler step")
STEP_MS_PER_TOKEN = Domain("prefill_ms_per_token", "ms per token", low=0.0, typical=(0.0, 0.2),
                           description="time per prompt token computed in a step")
STEP_MS_PER_TOKEN_SQ = Domain("prefill_ms_per_token_sq", "ms per token²", low=0.0,
                              typical=(0.0, 1e-5),
                              description="attention time per (chunk × prompt tokens up to "
                                          "its end) in a step")
STEP_MS_PER_SEQ = Domain("decode_ms_per_seq", "ms per request", low=0.0, typical=(0.0, 1.0),
                         description="time per request decoding one token in a step")
STEP_MS_PER_CONTEXT = Domain("context_ms_per_token", "ms per token", low=0.0,
                             typical=(0.0, 0.001),
                             description="time per context token of the decoding requests")
MAX_NUM_SEQS = Domain("max_num_seqs", "requests", low=1.0, high=1e6, integer=True,
                      typical=(1, 1024), description="most requests running at once")
MAX_BATCHED_TOKENS = Domain("max_num_batched_tokens", "tokens", low=1.0, high=1e8,
                            integer=True, typical=(256, 65_536),
                            description="token budget of one scheduler step")
KV_CACHE_TOKENS = Domain("kv_cache_tokens", "tokens", low=1.0, high=1e10, integer=True,
                         typical=(1_000, 2_000_000),
                         description="tokens the paged KV cache holds (None: unbounded)")
BLOCK_SIZE = Domain("block_size", "tokens", low=1.0, high=4096.0, integer=True,
                    typical=(1, 256), description="tokens per KV-cache block")
SERVING_TOKENS = Domain("tokens", "tokens", low=1.0, high=1e7, integer=True,
                        typical=(1, 8192),
                        description="prompt (input) or reply (output) tokens of a request")
RATE_PER_S = Domain("rate_per_s", "requests per s", low=0.0, low_open=True, allow_inf=True,
                    typical=(0.01, 100.0), description="Poisson arrival rate of requests")
CONCURRENCY = Domain("concurrency", "clients", low=1.0, high=1e6, integer=True,
                     typical=(1, 256),
                     description="closed-loop clients, each sending its next request when "
                                 "the last one finishes")
# Disaggregated servers and fleets (engine/llm_serving/disaggregated.py, fleet.py, slo.py)
LINK_RATE = Domain("link_gb_per_s", "GB/s", low=0.0, low_open=True, typical=(1.0, 900.0),
                   description="bandwidth of the link a KV copy takes, one direction")
LINK_LATENCY = Domain("link_latency_ms", "ms", low=0.0, typical=(0.0, 1.0),
                      description="fixed time of one KV copy")
KV_BYTES = Domain("kv_bytes_per_token", "bytes", low=0.0, low_open=True,
                  typical=(1e4, 4e6), description="bytes of KV cache one token takes")
SERVING_INSTANCES = Domain("instances", "instances", low=1.0, high=4096.0, integer=True,
                           typical=(1, 16), description="prefill or decode instances")
REPLICAS = Domain("replicas", "servers", low=1.0, high=100_000.0, integer=True,
                  typical=(1, 64), description="identical servers behind the dispatcher")
TARGET_MS = Domain("target_ms", "ms", low=0.0, low_open=True, allow_inf=True,
                   typical=(1.0, 10_000.0), description="a TTFT or TPOT limit")
# Step times read from a source and fitted (engine/llm_serving/aiconfigurator.py)
STEP_BATCH = Domain("batch", "requests", low=1.0, high=1e6, integer=True, typical=(1, 512),
                    description="requests in one step: prompts computed together, or decoding "
                                "requests")
STEP_CONTEXT_TOKENS = Domain("context_tokens", "tokens", low=1.0, high=1e7, typical=(1, 32_768),
                             description="context of each decoding request in a step (prompt "
                                         "+ tokens so far; a mean allowed)")
STEP_TIME_MS = Domain("step_ms", "ms", low=0.0, low_open=True, typical=(1.0, 1000.0),
                      description="a step's time read from a profile or an estimator")
FLEET_DISPATCH = Choice("dispatch", ("random", "round_robin", "least_outstanding"),
                        description="how a fleet's dispatcher picks a replica")
DECODE_FIT = Choice("decode", ("joint", "small", "large"),
                    description="which of DistServe's decode fits a step cost takes")
