"""Choices of the shared code in engine/core: the compiled or plain loops, the
service-time laws, the percentiles a latency summary stores."""
from __future__ import annotations

from .base import Choice

JIT_BACKEND = Choice("backend", (None, "numba", "numpy"),
                     description="the loop a simulator runs: None the fastest available, "
                                 "numba the compiled one, numpy the plain one")
SERVICE_LAW = Choice("kind", ("exponential", "lognormal", "deterministic"),
                     description="law of a server's service time")
SUMMARY_PERCENTILE = Choice("percentile", (50.0, 90.0, 95.0, 99.0),
                            description="the percentiles a latency summary stores")
