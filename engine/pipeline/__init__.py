"""CPU-GPU pipeline (May & Voigt 2010): CPU → GPU global memory → compute units, a
three-stage tandem with blocking, solved exactly as a quasi-birth-death process.

Submodules: ``stations`` (M/M/1, M/M/1/K, M/M/c/c, M/M/c/K), ``chain`` (phase spaces
and QBD blocks), ``qbd`` (the exact matrix-geometric solvers), ``exact`` (the exact
tandem, its capacity and the naive decomposition), ``specs`` (rates from a GPU
datasheet and a workload), ``answers`` (operating point, traffic, the load), ``curves`` (the charts' grids,
sweeps and capacity families),
``model`` (``Tandem``, the frozen model object), ``sim``
(job-level simulation), ``blas`` (the BLAS thread count, set once).  The
model, derivations and the paper's errata: docs/models/pipeline.md.

``Tandem`` is the model object; the exact solution's measures are ``TandemMeasures``.
The model's old name ``BlockingTandem`` reads as ``Tandem`` with a ``DeprecationWarning``
(removed in ``engine.core.renamed.REMOVED_IN``).
"""
import warnings

from ..core.renamed import REMOVED_IN
from .answers import (LOAD_MODES, MS_PER_S, STAGES, OperatingPoint, Traffic,
                      bandwidths_bytes_per_s, load_per_ms, operating_point, peak_flop_per_s,
                      per_ms_to_per_s, per_s_to_per_ms, relative_change, slowest_rate_per_ms, slowest_stage,
                      stage_capacities, stage_table, StageRow, traffic, traffic_at_loads)
from .curves import (C_FAMILY, K_FAMILY, CapacityFamily, TandemCurves, TandemSimSweep,
                     capacity_family, exact_load_chunks_per_ms, family_cases, joined_tandem,
                     loads_at_fractions_per_ms, naive_loads_per_ms, tandem_curves,
                     tandem_sim_sweep, what_if_capacities)
from .blas import limit_blas_threads
from .model import Tandem
from .checks import BLOCKING
from .sim import (TandemRecords, TandemSimResult, simulate_tandem, simulate_tandem_records,
                  tandem_summary)
from .specs import PipelineRates, group_compute_units, rates_from_specs, with_cpu_speedup
from .stations import Station, mm1, mm1k, mmcc, mmck
from .exact import METHODS, TandemMeasures, capacity, solve_phases, tandem, tandem_independent


_RENAMED = {"BlockingTandem": "Tandem"}


def __getattr__(name):
    """An old name of this package (``_RENAMED``): its new object, with a warning."""
    if name in _RENAMED:
        warnings.warn(f"engine.pipeline.{name} is deprecated; use engine.pipeline."
                      f"{_RENAMED[name]} (the old name is removed in {REMOVED_IN})",
                      DeprecationWarning, stacklevel=2)
        return globals()[_RENAMED[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
