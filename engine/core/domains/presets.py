"""Domains of the preset files (engine/presets/): a field's own bounds where it has
them; any other number in a preset file is a measured or datasheet quantity, positive
and finite (``PRESET_VALUE``)."""
from __future__ import annotations

from .base import Choice, Domain

PRESET_VALUE = Domain("value", "", low=0.0, low_open=True, typical=(0.001, 1000.0),
                      description="a measured or datasheet number of a preset file")
PARALLEL_FRACTION = Domain("parallel_fraction", "", low=0.0, low_open=True, high=1.0,
                           typical=(0.5, 1.0),
                           description="share of a pipeline job's operations that run on the "
                                       "compute units (the rest on the host)")
REUSE_FACTOR = Domain("reuse_factor", "", low=1.0, typical=(1.0, 16.0),
                      description="operations one byte fetched from GPU memory serves from "
                                  "on-chip memory")
TRACE_REQUESTS = Domain("n_requests", "requests", low=2.0, integer=True,
                        typical=(1_000, 1_000_000),
                        description="requests of a trace a summary counts (at least 2: one gap)")
PEAK_TO_MEAN = Domain("peak_to_mean", "", low=1.0, typical=(1.0, 20.0),
                      description="arrivals in the busiest window over the mean window's")
INSTANCE_GPUS = Domain("gpus_per_instance", "GPUs", low=1.0, integer=True, typical=(1, 8),
                       description="GPUs of one rented instance, or of one server on it")
TOKEN_LAW_KIND = Choice("kind", ("output", "prompt"),
                        description="which tokens a token-law preset describes")
