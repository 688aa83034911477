"""Old name of ``engine.batching.sim`` (the batching server's simulator): re-exports its
public names."""
from .batching.sim import (BACKEND, BatchingSimResult, SimRecords, simulate_batching,
                           simulate_records, summarize)

__all__ = ["BACKEND", "BatchingSimResult", "SimRecords", "simulate_batching",
           "simulate_records", "summarize"]
