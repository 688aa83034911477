"""Hardware and workload presets: data files in ``presets/``, validated on load.

A batch-profile preset is one TOML file per device in ``presets/gpu_batching/``
(Inoue 2021, Table 1)::

    id = "v100_resnet50_mixed"
    name = "Tesla V100 · ResNet-50 · mixed precision"
    source = "..."
    [columns]
    batch_size = [1, 2, 4, ...]
    throughput_images_per_s = [476, 880, ...]
    board_power_w = [120, 109, ...]          # optional

A bad file raises ``ValueError`` naming the file and the field: unknown keys,
missing fields, non-numeric, non-positive or non-finite values, fewer than two
rows, columns of different lengths, batch sizes not strictly increasing.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import tomllib

import numpy as np

from .fit import BatchProfileFit, fit_batch_profile

PRESET_DIR = Path(__file__).resolve().parent.parent / "presets"
BATCH_PROFILE_DIR = PRESET_DIR / "gpu_batching"

_PROFILE_TOP = {"id": str, "name": str, "source": str, "columns": dict}
_PROFILE_COLUMNS = ("batch_size", "throughput_images_per_s", "board_power_w")
_PROFILE_REQUIRED = ("batch_size", "throughput_images_per_s")


@dataclass(frozen=True)
class BatchProfile:
    """Measured throughput (and power) by batch size for one device and model."""

    id: str
    name: str
    source: str
    batch_size: np.ndarray
    throughput_per_s: np.ndarray
    power_w: np.ndarray | None = None

    def fit(self) -> BatchProfileFit:
        """τ[b] = αb + τ0 and c[b] = βb + c0 fitted by least squares (eqs 17, 25)."""
        return fit_batch_profile(self.batch_size, self.throughput_per_s, self.power_w)


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path.name}: not valid TOML ({exc})") from None


def _check_keys(data: dict, allowed, required, where: str) -> None:
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r} (allowed: {', '.join(allowed)})")
    for key in required:
        if key not in data:
            raise ValueError(f"{where}: missing field {key!r}")


def _column(values, where: str) -> np.ndarray:
    if not isinstance(values, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{where}: must be a list of numbers")
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        raise ValueError(f"{where}: needs at least 2 rows, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{where}: values must be finite")
    if np.any(arr <= 0):
        raise ValueError(f"{where}: values must be positive, got {arr[arr <= 0][0]:g}")
    return arr


def _load_all(directory, loader) -> dict:
    """Every ``*.toml`` preset in ``directory`` loaded by ``loader``, keyed by its id."""
    presets = (loader(path) for path in sorted(Path(directory).glob("*.toml")))
    return {preset.id: preset for preset in presets}


def _load_table(path, columns, required, length_key):
    """A preset of the form id/name/source + [columns] of equal-length positive numbers.

    Returns (data, {column: array}, file name); ``ValueError`` names the file and
    the field for unknown or missing keys, bad values or unequal lengths.
    """
    path = Path(path)
    data = _read_toml(path)
    where = path.name
    _check_keys(data, _PROFILE_TOP, _PROFILE_TOP, where)
    for key, kind in _PROFILE_TOP.items():
        if not isinstance(data[key], kind):
            raise ValueError(f"{where}: field {key!r} must be a {kind.__name__}")
    cols = data["columns"]
    _check_keys(cols, columns, required, f"{where} [columns]")
    arrays = {k: _column(cols[k], f"{where} [columns].{k}") for k in columns if k in cols}
    n = arrays[length_key].size
    for key, arr in arrays.items():
        if arr.size != n:
            raise ValueError(f"{where} [columns].{key}: {arr.size} rows, {length_key} has {n}")
    return data, arrays, where


def load_batch_profile(path) -> BatchProfile:
    """Load and validate one batch-profile TOML file."""
    data, arrays, where = _load_table(path, _PROFILE_COLUMNS, _PROFILE_REQUIRED, "batch_size")
    b = arrays["batch_size"]
    if np.any(b != np.round(b)):
        raise ValueError(f"{where} [columns].batch_size: must be whole numbers")
    if np.any(np.diff(b) <= 0):
        raise ValueError(f"{where} [columns].batch_size: must be strictly increasing")
    return BatchProfile(id=data["id"], name=data["name"], source=data["source"], batch_size=b,
                        throughput_per_s=arrays["throughput_images_per_s"],
                        power_w=arrays.get("board_power_w"))


def batch_profiles(directory=BATCH_PROFILE_DIR) -> dict[str, BatchProfile]:
    """All batch-profile presets in ``directory`` (one TOML file each), keyed by id."""
    return _load_all(directory, load_batch_profile)


# ---- LLM request latency by token counts (Yang et al. Table I), presets/llm/*.toml
#
#     id = "a100_llama2_7b_table1"
#     name = "..."
#     source = "..."
#     [columns]
#     input_tokens = [128, ...]
#     output_tokens = [128, ...]
#     latency_s = [2.91, ...]

TOKEN_LATENCY_DIR = PRESET_DIR / "llm"
_TOKEN_COLUMNS = ("input_tokens", "output_tokens", "latency_s")


@dataclass(frozen=True)
class TokenLatencyProfile:
    """Measured request latency (s) by input and output token counts for one device and model."""

    id: str
    name: str
    source: str
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    latency_s: np.ndarray

    def fit(self):
        """S = a·n_out + c by least squares (the paper's model, §II-B)."""
        from .fit import fit_token_latency
        return fit_token_latency(self.output_tokens, self.latency_s)

    def fit_with_input(self):
        """S = a·n_out + b·n_in + c by least squares."""
        from .fit import fit_token_latency_with_input
        return fit_token_latency_with_input(self.output_tokens, self.input_tokens, self.latency_s)


def load_token_latency_profile(path) -> TokenLatencyProfile:
    """Load and validate one token-latency TOML file (``ValueError`` naming file and field)."""
    data, arrays, where = _load_table(path, _TOKEN_COLUMNS, _TOKEN_COLUMNS, "output_tokens")
    for key in ("input_tokens", "output_tokens"):
        if np.any(arrays[key] != np.round(arrays[key])):
            raise ValueError(f"{where} [columns].{key}: must be whole numbers")
    if np.unique(arrays["output_tokens"]).size < 2:
        raise ValueError(f"{where} [columns].output_tokens: needs at least 2 distinct values")
    return TokenLatencyProfile(id=data["id"], name=data["name"], source=data["source"],
                               input_tokens=arrays["input_tokens"],
                               output_tokens=arrays["output_tokens"],
                               latency_s=arrays["latency_s"])


def token_latency_profiles(directory=TOKEN_LATENCY_DIR) -> dict[str, TokenLatencyProfile]:
    """All token-latency presets in ``directory`` (one TOML file each), keyed by id."""
    return _load_all(directory, load_token_latency_profile)


# ---------------------------------------------------------------- LLM batch times (eq 18)

LLM_BATCH_TIME_DIR = PRESET_DIR / "llm_batching"
_LLM_TOP = {"id": str, "name": str, "source": str, "k1_s_per_request": float, "k2_s": float,
            "k3_s_per_token_per_request": float, "k4_s_per_token": float,
            "kv_capacity_tokens": float, "prompt_tokens": float, "estimated": list}
_LLM_REQUIRED = ("id", "name", "source", "k1_s_per_request", "k2_s",
                 "k3_s_per_token_per_request", "k4_s_per_token")


@dataclass(frozen=True)
class LLMBatchTimePreset:
    """H(b, l) = k1·b + k2 + k3·b·l + k4·l (Yang et al. eq 18), seconds, with its KV cache."""

    id: str
    name: str
    source: str
    k1_s_per_request: float
    k2_s: float
    k3_s_per_token_per_request: float
    k4_s_per_token: float
    kv_capacity_tokens: float | None = None
    prompt_tokens: float = 0.0
    estimated: tuple = ()

    @property
    def k(self) -> tuple[float, float, float, float]:
        """(k1, k2, k3, k4) as ``engine.llm_batching`` takes them."""
        return (self.k1_s_per_request, self.k2_s, self.k3_s_per_token_per_request,
                self.k4_s_per_token)


def load_llm_batch_time(path) -> LLMBatchTimePreset:
    """Load and validate one LLM batch-time TOML file (``presets/llm_batching/``)."""
    path = Path(path)
    data = _read_toml(path)
    where = path.name
    _check_keys(data, _LLM_TOP, _LLM_REQUIRED, where)
    values = {}
    for key, kind in _LLM_TOP.items():
        if key not in data:
            continue
        v = data[key]
        if kind is float:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                raise ValueError(f"{where}: field {key!r} must be a finite number")
            low_open = key in ("k1_s_per_request", "kv_capacity_tokens")
            if v < 0 or (low_open and v == 0):
                raise ValueError(f"{where}: field {key!r} must be "
                                 f"{'positive' if low_open else '>= 0'}, got {v:g}")
            v = float(v)
        elif not isinstance(v, kind):
            raise ValueError(f"{where}: field {key!r} must be a {kind.__name__}")
        values[key] = v
    estimated = values.pop("estimated", [])
    unknown = [e for e in estimated if e not in _LLM_TOP]
    if unknown or not all(isinstance(e, str) for e in estimated):
        raise ValueError(f"{where}: field 'estimated' must list field names, got {unknown!r}")
    return LLMBatchTimePreset(**values, estimated=tuple(estimated))


def llm_batch_time_presets(directory=LLM_BATCH_TIME_DIR) -> dict[str, LLMBatchTimePreset]:
    """All LLM batch-time presets in ``directory`` (one TOML file each), keyed by id."""
    return _load_all(directory, load_llm_batch_time)


# ---------------------------------------------------------------- CPU-GPU pipeline presets
# presets/gpu_specs/*.toml (one GPU each, vendor datasheet values) and
# presets/pipeline_workloads/*.toml; turned into rates by engine.pipeline.rates_from_specs.

GPU_SPEC_DIR = PRESET_DIR / "gpu_specs"
PIPELINE_WORKLOAD_DIR = PRESET_DIR / "pipeline_workloads"

_GPU_SPEC_NUMBERS = ("host_link_bandwidth_GB_per_s", "memory_bandwidth_GB_per_s", "memory_GB",
                     "sm_count", "boost_clock_MHz", "fp32_peak_TFLOP_per_s",
                     "fp16_peak_TFLOP_per_s")
_WORKLOAD_NUMBERS = ("job_size_bytes", "flops_per_byte", "parallel_fraction", "reuse_factor",
                     "host_GFLOP_per_s", "memory_slots")
_WHOLE = ("sm_count", "memory_slots", "job_size_bytes")


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


def _scalar_fields(data: dict, numbers, where: str) -> dict:
    out = {}
    for key in ("id", "name", "source"):
        if not isinstance(data[key], str) or not data[key]:
            raise ValueError(f"{where}: field {key!r} must be a non-empty string")
        out[key] = data[key]
    for key in numbers:
        val = data[key]
        if isinstance(val, bool) or not isinstance(val, (int, float)):
            raise ValueError(f"{where}: field {key!r} must be a number, got {val!r}")
        if not np.isfinite(val) or val <= 0:
            raise ValueError(f"{where}: field {key!r} must be positive and finite, got {val!r}")
        if key in _WHOLE:
            if val != int(val):
                raise ValueError(f"{where}: field {key!r} must be a whole number, got {val!r}")
            val = int(val)
        out[key] = val
    return out


def load_gpu_spec(path) -> GpuSpec:
    """Load and validate one GPU spec TOML file."""
    path = Path(path)
    data = _read_toml(path)
    fields = ("id", "name", "source") + _GPU_SPEC_NUMBERS
    _check_keys(data, fields, fields, path.name)
    return GpuSpec(**_scalar_fields(data, _GPU_SPEC_NUMBERS, path.name))


def load_pipeline_workload(path) -> PipelineWorkload:
    """Load and validate one pipeline workload TOML file."""
    path = Path(path)
    data = _read_toml(path)
    where = path.name
    fields = ("id", "name", "source", "precision") + _WORKLOAD_NUMBERS
    _check_keys(data, fields, fields, where)
    out = _scalar_fields(data, _WORKLOAD_NUMBERS, where)
    if out["parallel_fraction"] > 1:
        raise ValueError(f"{where}: field 'parallel_fraction' must be at most 1, "
                         f"got {out['parallel_fraction']!r}")
    if out["reuse_factor"] < 1:
        raise ValueError(f"{where}: field 'reuse_factor' must be at least 1, "
                         f"got {out['reuse_factor']!r}")
    if data["precision"] not in ("fp32", "fp16"):
        raise ValueError(f"{where}: field 'precision' must be 'fp32' or 'fp16', "
                         f"got {data['precision']!r}")
    return PipelineWorkload(precision=data["precision"], **out)


def gpu_specs(directory=GPU_SPEC_DIR) -> dict[str, GpuSpec]:
    """All GPU spec presets in ``directory`` (one TOML file each), keyed by id."""
    return _load_all(directory, load_gpu_spec)


def pipeline_workloads(directory=PIPELINE_WORKLOAD_DIR) -> dict[str, PipelineWorkload]:
    """All pipeline workload presets in ``directory`` (one TOML file each), keyed by id."""
    return _load_all(directory, load_pipeline_workload)
