"""The LLM batching simulator, now ``engine.llm_batching.sim`` (re-exported here)."""
from .llm_batching.sim import BACKEND, STRATEGIES, LLMSimRecords, LLMSimResult, simulate

__all__ = ["BACKEND", "STRATEGIES", "LLMSimRecords", "LLMSimResult", "simulate"]
