"""Old name of ``engine.batching.curves`` (curves over a load grid): re-exports its public names."""
from .batching.curves import MAX_FRACTION, N_POINTS, LoadCurves, b_max_family, load_curves

__all__ = ["MAX_FRACTION", "N_POINTS", "LoadCurves", "b_max_family", "load_curves"]
