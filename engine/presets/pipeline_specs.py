"""CPU-GPU pipeline presets: ``presets/gpu_specs/`` (one GPU each, vendor datasheet values)
and ``presets/pipeline_workloads/``, turned into rates by
``engine.pipeline.rates_from_specs``.  Each file's keys are its dataclass's fields; each
number is checked against its domain in ``engine.core.domains`` (positive and finite
where the field has none of its own), ``int`` fields whole."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.domains import PARALLEL_FRACTION, PIPE_C, PIPE_K, PIPE_PRECISION, REUSE_FACTOR
from .schema import PRESET_DIR, check_keys, load_folder, read_toml, scalars, schema

GPU_SPEC_DIR = PRESET_DIR / "gpu_specs"
PIPELINE_WORKLOAD_DIR = PRESET_DIR / "pipeline_workloads"
PRECISIONS = PIPE_PRECISION.values

_GPU_DOMAINS = {"sm_count": PIPE_C}
_WORKLOAD_DOMAINS = {"parallel_fraction": PARALLEL_FRACTION, "reuse_factor": REUSE_FACTOR,
                     "memory_slots": PIPE_K}


@dataclass(frozen=True)
class GpuSpec:
    """Datasheet numbers of one GPU (units in the field names; GB = 1e9 bytes)."""

    id: str
    name: str
    source: str
    host_link_bandwidth_GB_per_s: float     # one direction
    memory_bandwidth_GB_per_s: float
    memory_GB: float
    sm_count: int
    boost_clock_MHz: float
    fp32_peak_TFLOP_per_s: float
    fp16_peak_TFLOP_per_s: float


@dataclass(frozen=True)
class PipelineWorkload:
    """One job type for the CPU-GPU pipeline (see ``rates_from_specs`` for the mapping)."""

    id: str
    name: str
    source: str
    job_size_bytes: int
    flops_per_byte: float
    parallel_fraction: float
    reuse_factor: float
    precision: str                           # "fp32" or "fp16"
    host_GFLOP_per_s: float
    memory_slots: int


def _load_flat(cls, path, domains):
    """A preset whose file holds exactly the fields of ``cls``, checked by type and domain."""
    data, where = read_toml(path)
    fields = tuple(schema(cls))
    check_keys(data, fields, fields, where)
    return scalars(cls, data, where, domains), where


def load_gpu_spec(path) -> GpuSpec:
    """Load and validate one GPU spec TOML file."""
    values, _ = _load_flat(GpuSpec, path, _GPU_DOMAINS)
    return GpuSpec(**values)


def load_pipeline_workload(path) -> PipelineWorkload:
    """Load and validate one pipeline workload TOML file."""
    values, where = _load_flat(PipelineWorkload, path, _WORKLOAD_DOMAINS)
    PIPE_PRECISION.check(values["precision"], f"{where}: field 'precision'")
    return PipelineWorkload(**values)


def gpu_specs(directory=GPU_SPEC_DIR) -> dict[str, GpuSpec]:
    """All GPU spec presets in ``directory`` (one TOML file each), keyed by id."""
    return load_folder(directory, load_gpu_spec)


def pipeline_workloads(directory=PIPELINE_WORKLOAD_DIR) -> dict[str, PipelineWorkload]:
    """All pipeline workload presets in ``directory`` (one TOML file each), keyed by id."""
    return load_folder(directory, load_pipeline_workload)
