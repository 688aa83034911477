"""Simulation of the CPU-GPU pipeline: re-exports ``engine.pipeline.sim`` (its home)."""
from .pipeline.sim import BACKEND, TandemSimResult, simulate_tandem  # noqa: F401
