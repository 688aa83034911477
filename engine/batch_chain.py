"""Old name of ``engine.batching.exact`` (the exact chain solvers): re-exports its public names."""
from .batching.exact import (LimitedSolution, limited_solution, unlimited_idle_weight,
                             unlimited_moments)

__all__ = ["LimitedSolution", "limited_solution", "unlimited_idle_weight", "unlimited_moments"]
