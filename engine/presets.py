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

Besides the papers' tables, the folders hold presets measured by others on real
GPUs and servers (DeepLearningExamples, Splitwise, the Azure LLM trace), each file
citing its source and its fitted values; ``docs/models/measured_presets.md`` derives
them.  ``token_law_presets`` reads ``presets/token_laws/``: token-count histograms of
request traces, each rebuilt into an ``EmpiricalTokens`` law.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import tomllib

import numpy as np

from .core.token_laws import MAX_TOKEN_GRID, EmpiricalTokens
from .fit import BatchProfileFit, fit_batch_profile
from .measured import MeasuredBatchProfile, MeasuredConcurrencySweep

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


# ---------------------------------------------------------------- token laws of request traces
# presets/token_laws/*.toml: a histogram of one trace's token counts (a summary, not the
# per-request data), rebuilt into the law of a request's count::
#
#     id = "azure_2023_code_output"
#     name = "..."
#     source = "..."
#     kind = "output"                  # "output" (generated tokens) or "prompt"
#     [bins]
#     first_tokens = [6, 7, ...]       # smallest count of each bin
#     last_tokens = [6, 7, ...]        # largest count of each bin
#     tokens = [6, 7, ...]             # the count that stands for the bin (first..last)
#     requests = [729, 626, ...]       # requests in the bin

TOKEN_LAW_DIR = PRESET_DIR / "token_laws"
TOKEN_LAW_KINDS = ("output", "prompt")
_TOKEN_LAW_TOP = {"id": str, "name": str, "source": str, "kind": str, "bins": dict}
_TOKEN_LAW_BINS = ("first_tokens", "last_tokens", "tokens", "requests")


@dataclass(frozen=True)
class TokenLawPreset:
    """Token counts of a request trace as a histogram: bin ``i`` holds ``requests[i]``
    requests with counts in ``first_tokens[i]..last_tokens[i]``, standing for
    ``tokens[i]`` (whole token counts, increasing bins)."""

    id: str
    name: str
    source: str
    kind: str                      # "output" (generated tokens) or "prompt"
    first_tokens: np.ndarray
    last_tokens: np.ndarray
    tokens: np.ndarray
    requests: np.ndarray

    @property
    def n_requests(self) -> int:
        """Requests the histogram summarises."""
        return int(self.requests.sum())

    def law(self) -> EmpiricalTokens:
        """The law of a request's token count: ``tokens[i]`` with probability
        ``requests[i] / n_requests`` (``engine.core.token_laws.EmpiricalTokens``)."""
        n = self.n_requests
        return EmpiricalTokens(self.tokens.copy(), self.requests / n, n)


def load_token_law_preset(path) -> TokenLawPreset:
    """Load and validate one token-law TOML file (``ValueError`` naming file and field):
    the four ``[bins]`` columns whole, positive and of one length (at least 2 bins), each
    ``tokens`` within its bin, the bins increasing without overlap, counts at most
    ``MAX_TOKEN_GRID``."""
    path = Path(path)
    data = _read_toml(path)
    where = path.name
    _check_keys(data, _TOKEN_LAW_TOP, _TOKEN_LAW_TOP, where)
    for key, kind in _TOKEN_LAW_TOP.items():
        if not isinstance(data[key], kind) or (kind is str and not data[key]):
            raise ValueError(f"{where}: field {key!r} must be a "
                             f"{'non-empty string' if kind is str else 'table'}")
    if data["kind"] not in TOKEN_LAW_KINDS:
        raise ValueError(f"{where}: field 'kind' must be 'output' or 'prompt', "
                         f"got {data['kind']!r}")
    bins = data["bins"]
    _check_keys(bins, _TOKEN_LAW_BINS, _TOKEN_LAW_BINS, f"{where} [bins]")
    cols = {k: _column(bins[k], f"{where} [bins].{k}") for k in _TOKEN_LAW_BINS}
    n = cols["tokens"].size
    for key, arr in cols.items():
        if arr.size != n:
            raise ValueError(f"{where} [bins].{key}: {arr.size} rows, tokens has {n}")
        if np.any(arr != np.round(arr)):
            raise ValueError(f"{where} [bins].{key}: must be whole numbers")
    first, last, tokens = cols["first_tokens"], cols["last_tokens"], cols["tokens"]
    if np.any(last > MAX_TOKEN_GRID):
        raise ValueError(f"{where} [bins].last_tokens: at most {MAX_TOKEN_GRID} tokens")
    if np.any(last < first):
        raise ValueError(f"{where} [bins].last_tokens: must be at least first_tokens")
    if np.any(first[1:] <= last[:-1]):
        raise ValueError(f"{where} [bins].first_tokens: the bins must be increasing, "
                         f"each starting after the previous one's last_tokens")
    outside = (tokens < first) | (tokens > last)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{where} [bins].tokens: row {i + 1} ({tokens[i]:g}) lies outside "
                         f"its bin {first[i]:g}..{last[i]:g}")
    return TokenLawPreset(id=data["id"], name=data["name"], source=data["source"],
                          kind=data["kind"], first_tokens=first, last_tokens=last,
                          tokens=tokens, requests=cols["requests"])


def token_law_presets(directory=TOKEN_LAW_DIR) -> dict[str, TokenLawPreset]:
    """All token-law presets in ``directory`` (one TOML file each), keyed by id."""
    return _load_all(directory, load_token_law_preset)


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


# ---------------------------------------------------------------- offline/online pairs
# presets/online_pairs/*.toml: one server deployment measured twice (model vs measurement,
# ``engine.measured.online``), only the columns the comparison uses, as published::
#
#     id = "dle_triton_resnet50_t4"
#     name = "..."
#     source = "..."                          # repository, path, commit, tables
#     [offline]                               # static batches, concurrency 1, one instance
#     label = "NVIDIA T4 · ... · 1 instance"
#     client_batch_size = [1, 2, 4, ...]      # b, inputs per request
#     inferences_per_second = [332.4, ...]
#     avg_latency_ms = [3.003, ...]
#     [online]                                # closed loop, one input per request
#     label = "NVIDIA T4 · ... · 2 instances"
#     model_instances = 2
#     max_batch_size = 128                    # the dynamic batcher's limit
#     concurrent_client_requests = [16, ...]  # N
#     inferences_per_second = [1078.4, ...]
#     avg_latency_ms = [14.821, ...]
#     p99_latency_ms = [16.597, ...]          # optional

ONLINE_PAIR_DIR = PRESET_DIR / "online_pairs"
PAIR_SOURCE_FORMAT = "preset"      # source_format of the pair's measured results
_PAIR_TOP = {"id": str, "name": str, "source": str, "offline": dict, "online": dict}
_PAIR_OFFLINE = ("label", "client_batch_size", "inferences_per_second", "avg_latency_ms")
_PAIR_ONLINE = ("label", "model_instances", "max_batch_size", "concurrent_client_requests",
                "inferences_per_second", "avg_latency_ms", "p99_latency_ms")
_PAIR_ONLINE_REQUIRED = _PAIR_ONLINE[:-1]


@dataclass(frozen=True)
class OnlinePair:
    """One deployment's offline batch sweep and online concurrency sweep, as the readers of
    ``engine.measured`` would return them (``source_format`` "preset").

    ``profile``: τ[b] = 1000·b / inferences_per_second (ms) by client batch b;
    ``sweep``: throughput (requests/s), mean and p99 latency (ms) by concurrency N, with
    the server's model instances and max batch size; ``offline_latency_ms``: the offline
    table's average latency (ms) at each b, for reference (≈ τ[b] at concurrency 1).
    """

    id: str
    name: str
    source: str
    profile: MeasuredBatchProfile
    sweep: MeasuredConcurrencySweep
    offline_latency_ms: np.ndarray


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=float)
    arr.flags.writeable = False
    return arr


def _pair_section(data: dict, name: str, fields, required, where: str) -> dict:
    """The ``[name]`` table: ``label`` a non-empty string, the rest positive finite numbers
    (columns: lists of equal length, at least 2 rows)."""
    section = data[name]
    _check_keys(section, fields, required, f"{where} [{name}]")
    label = section["label"]
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"{where} [{name}].label: must be a non-empty string")
    out, length = {"label": label}, None
    for key in fields[1:]:
        if key not in section:
            continue
        field = f"{where} [{name}].{key}"
        value = section[key]
        if key in ("model_instances", "max_batch_size"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{field}: must be a whole number ≥ 1, got {value!r}")
            out[key] = value
            continue
        arr = _column(value, field)
        if length is None:
            length = (key, arr.size)
        elif arr.size != length[1]:
            raise ValueError(f"{field}: {arr.size} rows, {length[0]} has {length[1]}")
        out[key] = arr
    return out


def _increasing_whole(arr: np.ndarray, field: str) -> None:
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{field}: must be whole numbers")
    if np.any(np.diff(arr) <= 0):
        raise ValueError(f"{field}: must be strictly increasing")


def load_online_pair(path) -> OnlinePair:
    """Load and validate one offline/online pair TOML file (``presets/online_pairs/``):
    ``ValueError`` naming the file and the field for unknown or missing fields, a
    non-positive or non-finite number, columns of unequal length, batch sizes or
    concurrencies not whole and strictly increasing."""
    path = Path(path)
    data = _read_toml(path)
    where = path.name
    _check_keys(data, _PAIR_TOP, _PAIR_TOP, where)
    for key, kind in _PAIR_TOP.items():
        if not isinstance(data[key], kind) or (kind is str and not data[key].strip()):
            raise ValueError(f"{where}: field {key!r} must be a "
                             f"{'non-empty string' if kind is str else 'table'}")
    off = _pair_section(data, "offline", _PAIR_OFFLINE, _PAIR_OFFLINE, where)
    on = _pair_section(data, "online", _PAIR_ONLINE, _PAIR_ONLINE_REQUIRED, where)
    _increasing_whole(off["client_batch_size"], f"{where} [offline].client_batch_size")
    _increasing_whole(on["concurrent_client_requests"],
                      f"{where} [online].concurrent_client_requests")
    b = off["client_batch_size"]
    note = f"preset {data['id']}: {data['source']}"
    profile = MeasuredBatchProfile(
        batch_size=_frozen(b), batch_time_ms=_frozen(1000.0 * b / off["inferences_per_second"]),
        power_w=None, p99_latency_ms=None, source_format=PAIR_SOURCE_FORMAT,
        notes=("batch size = the client batch at concurrency 1 (static batching: one "
               "request of b inputs at a time); τ[b] = 1000·b / inferences_per_second", note),
        label=off["label"], tables=(off["label"],))
    p99 = on.get("p99_latency_ms")
    sweep = MeasuredConcurrencySweep(
        concurrency=_frozen(on["concurrent_client_requests"]),
        throughput_per_s=_frozen(on["inferences_per_second"]),
        mean_latency_ms=_frozen(on["avg_latency_ms"]),
        p99_latency_ms=None if p99 is None else _frozen(p99), breakdown_ms=None,
        model_instances=on["model_instances"], max_batch_size=on["max_batch_size"],
        client_batch_size=1, source_format=PAIR_SOURCE_FORMAT,
        notes=("one input per request (client batch 1)", note), label=on["label"],
        tables=(on["label"],))
    return OnlinePair(id=data["id"], name=data["name"], source=data["source"],
                      profile=profile, sweep=sweep,
                      offline_latency_ms=_frozen(off["avg_latency_ms"]))


def online_pairs(directory=ONLINE_PAIR_DIR) -> dict[str, OnlinePair]:
    """All offline/online pair presets in ``directory`` (one TOML file each), keyed by id."""
    return _load_all(directory, load_online_pair)


# ---------------------------------------------------------------- arrival-process presets
# presets/arrivals/*.toml: a request trace's arrival times as a summary (never the
# timestamps): engine.arrivals.describe's statistics at a few windows, the MMPP-2 of
# engine.arrivals.fit_mmpp2, and the requests per bin for drawing the rate over time.
#
#     id = "azure_2023_code"
#     name = "..."
#     trace_name = "the Azure code trace"     # words for labels: "MMPP-2 fitted to <...>"
#     source = "..."
#     n_requests = 8819
#     duration_s = 3435.9                      # first to last arrival
#     mean_rate_per_s = 2.566                  # (n − 1)/duration
#     scv = 172.96                             # of the gaps
#     [windows]
#     window_s = [1.0, 10.0, 60.0, 300.0]      # increasing
#     idc = [...]                              # index of dispersion of counts per window
#     peak_to_mean = [...]                     # busiest window / mean window, per window
#     [mmpp2]
#     rate_1_per_s = 14.4                      # and rate_2_per_s, switch_12_per_s, switch_21_per_s
#     [rate_over_time]
#     bin_s = 30.0
#     requests = [17, 46, ...]                 # requests per bin from the first arrival

ARRIVAL_DIR = PRESET_DIR / "arrivals"
_ARRIVAL_TOP = {"id": str, "name": str, "trace_name": str, "source": str, "n_requests": int,
                "duration_s": float, "mean_rate_per_s": float, "scv": float,
                "windows": dict, "mmpp2": dict, "rate_over_time": dict}
_ARRIVAL_WINDOWS = ("window_s", "idc", "peak_to_mean")
_ARRIVAL_MMPP2 = ("rate_1_per_s", "rate_2_per_s", "switch_12_per_s", "switch_21_per_s")
_ARRIVAL_BINS = ("bin_s", "requests")


@dataclass(frozen=True)
class ArrivalPreset:
    """The arrival times of a request trace as a summary: ``n_requests`` over
    ``duration_s`` (s, first to last arrival) at ``mean_rate_per_s``; the gaps' squared
    coefficient of variation ``scv``; per window of ``window_s`` (s) the index of
    dispersion of counts ``idc`` and the busiest window's count over the mean
    ``peak_to_mean`` (``engine.arrivals.describe``); the fitted MMPP-2's rates per s
    (``engine.arrivals.fit_mmpp2``); ``requests_per_bin`` in bins of ``bin_s`` s from the
    first arrival.  ``trace_name`` names the trace in labels; ``source`` cites it."""

    id: str
    name: str
    trace_name: str
    source: str
    n_requests: int
    duration_s: float
    mean_rate_per_s: float
    scv: float
    window_s: np.ndarray
    idc: np.ndarray
    peak_to_mean: np.ndarray
    rate_1_per_s: float
    rate_2_per_s: float
    switch_12_per_s: float
    switch_21_per_s: float
    bin_s: float
    requests_per_bin: np.ndarray

    @property
    def rate_per_s(self) -> np.ndarray:
        """Arrivals per s in each bin (``requests_per_bin`` / ``bin_s``)."""
        return self.requests_per_bin / self.bin_s

    @property
    def bin_start_s(self) -> np.ndarray:
        """Start of each bin, s from the first arrival."""
        return self.bin_s * np.arange(self.requests_per_bin.size)

    def mmpp2(self):
        """The fitted two-phase MMPP (``engine.arrivals.MMPP2``, rates per s), named
        "fitted to <trace_name>"."""
        from .arrivals import MMPP2
        return MMPP2(self.rate_1_per_s, self.rate_2_per_s, self.switch_12_per_s,
                     self.switch_21_per_s, f"fitted to {self.trace_name}")


def _text_fields(table: dict, keys, where: str) -> None:
    """Each of ``keys`` in ``table`` a non-empty string, else ``ValueError`` naming it."""
    for key in keys:
        if not isinstance(table[key], str) or not table[key]:
            raise ValueError(f"{where}: field {key!r} must be a non-empty string")


def _number_field(table: dict, key: str, where: str, *, positive: bool = True,
                  whole: bool = False):
    """``table[key]`` as a finite number (> 0, or ≥ 0 with ``positive=False``; whole
    with ``whole=True``), else ``ValueError`` naming ``where`` and the field."""
    val = table[key]
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise ValueError(f"{where}: field {key!r} must be a number, got {val!r}")
    low = val <= 0 if positive else val < 0
    if not np.isfinite(val) or low:
        rule = "positive" if positive else "at least 0"
        raise ValueError(f"{where}: field {key!r} must be {rule} and finite, got {val!r}")
    if whole:
        if val != int(val):
            raise ValueError(f"{where}: field {key!r} must be a whole number, got {val!r}")
        return int(val)
    return float(val)


def _number_list(values, where: str, *, low: float = 0.0) -> np.ndarray:
    """A non-empty list of finite numbers ≥ ``low``, as a read-only float array."""
    if not isinstance(values, list) or not values or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{where}: must be a non-empty list of numbers")
    arr = np.array(values, dtype=float)
    bad = ~np.isfinite(arr) | (arr < low)
    if bad.any():
        raise ValueError(f"{where}: values must be finite and at least {low:g}, "
                         f"got {arr[bad][0]:g}")
    return _frozen(arr)


def load_arrival_preset(path) -> ArrivalPreset:
    """Load and validate one arrival-preset TOML file (``ValueError`` naming the file and
    the field): every field present and no other; the numbers finite and positive
    (``rate_2_per_s`` and the bin counts may be 0, bin counts whole, ``n_requests`` a
    whole number ≥ 2, ``peak_to_mean`` ≥ 1); the window columns of one length with
    ``window_s`` increasing; a valid MMPP-2 (rates not both 0)."""
    path = Path(path)
    data = _read_toml(path)
    where = path.name
    _check_keys(data, _ARRIVAL_TOP, _ARRIVAL_TOP, where)
    _text_fields(data, ("id", "name", "trace_name", "source"), where)
    for key in ("windows", "mmpp2", "rate_over_time"):
        if not isinstance(data[key], dict):
            raise ValueError(f"{where}: field {key!r} must be a table")
    n = _number_field(data, "n_requests", where, whole=True)
    if n < 2:
        raise ValueError(f"{where}: field 'n_requests' must be at least 2, got {n}")
    top = {k: _number_field(data, k, where) for k in ("duration_s", "mean_rate_per_s", "scv")}
    win = data["windows"]
    _check_keys(win, _ARRIVAL_WINDOWS, _ARRIVAL_WINDOWS, f"{where} [windows]")
    cols = {k: _number_list(win[k], f"{where} [windows].{k}") for k in _ARRIVAL_WINDOWS}
    for key, arr in cols.items():
        if arr.size != cols["window_s"].size:
            raise ValueError(f"{where} [windows].{key}: {arr.size} values, window_s has "
                             f"{cols['window_s'].size}")
    if np.any(cols["window_s"] <= 0) or np.any(np.diff(cols["window_s"]) <= 0):
        raise ValueError(f"{where} [windows].window_s: must be positive and increasing")
    if np.any(cols["peak_to_mean"] < 1):
        raise ValueError(f"{where} [windows].peak_to_mean: must be at least 1 (the busiest "
                         f"window holds at least the mean)")
    mm = data["mmpp2"]
    _check_keys(mm, _ARRIVAL_MMPP2, _ARRIVAL_MMPP2, f"{where} [mmpp2]")
    rates = {k: _number_field(mm, k, f"{where} [mmpp2]", positive=k.startswith("switch"))
             for k in _ARRIVAL_MMPP2}
    if rates["rate_1_per_s"] == 0 and rates["rate_2_per_s"] == 0:
        raise ValueError(f"{where} [mmpp2].rate_1_per_s: rate_1_per_s and rate_2_per_s must "
                         f"not both be 0")
    bins = data["rate_over_time"]
    _check_keys(bins, _ARRIVAL_BINS, _ARRIVAL_BINS, f"{where} [rate_over_time]")
    bin_s = _number_field(bins, "bin_s", f"{where} [rate_over_time]")
    counts = _number_list(bins["requests"], f"{where} [rate_over_time].requests")
    if np.any(counts != np.round(counts)):
        raise ValueError(f"{where} [rate_over_time].requests: must be whole numbers")
    return ArrivalPreset(id=data["id"], name=data["name"], trace_name=data["trace_name"],
                         source=data["source"], n_requests=n, **top, **cols, **rates,
                         bin_s=bin_s, requests_per_bin=counts)


def arrival_presets(directory=ARRIVAL_DIR) -> dict[str, ArrivalPreset]:
    """All arrival presets in ``directory`` (one TOML file each), keyed by id."""
    return _load_all(directory, load_arrival_preset)


# ---------------------------------------------------------------- hardware prices
# presets/hardware_prices/*.toml: what a GPU costs by the hour and draws at most, and which
# batch profiles (presets/gpu_batching, presets/llm_batching) ran on how many of them.

HARDWARE_PRICE_DIR = PRESET_DIR / "hardware_prices"
_PRICE_TOP = {"id": str, "name": str, "source": str, "instance": str, "gpus_per_instance": int,
              "instance_usd_per_hour": float, "board_power_w": float, "gpus_per_profile": dict}


@dataclass(frozen=True)
class HardwarePrice:
    """A rented GPU: ``instance`` (``gpus_per_instance`` GPUs) costs
    ``instance_usd_per_hour``; one GPU draws at most ``board_power_w`` W (its datasheet's
    maximum board power, an upper bound on what it draws busy).  ``gpus_per_profile``:
    batch-profile preset id → how many of these GPUs one server of that profile uses."""

    id: str
    name: str
    source: str
    instance: str
    gpus_per_instance: int
    instance_usd_per_hour: float
    board_power_w: float
    gpus_per_profile: tuple           # ((profile id, GPUs), ...)

    @property
    def usd_per_gpu_hour(self) -> float:
        """The instance's hourly price shared evenly over its GPUs, $ per GPU-hour."""
        return self.instance_usd_per_hour / self.gpus_per_instance


def load_hardware_price(path) -> HardwarePrice:
    """Load and validate one hardware-price TOML file (``ValueError`` naming the field)."""
    path = Path(path)
    data = _read_toml(path)
    where = path.name
    _check_keys(data, _PRICE_TOP, _PRICE_TOP, where)
    _text_fields(data, ("id", "name", "source", "instance"), where)
    gpus = _number_field(data, "gpus_per_instance", where, whole=True)
    usd = _number_field(data, "instance_usd_per_hour", where)
    power = _number_field(data, "board_power_w", where)
    uses = data["gpus_per_profile"]
    if not isinstance(uses, dict) or not uses:
        raise ValueError(f"{where}: field 'gpus_per_profile' must map profile ids to GPU counts")
    pairs = tuple((pid, _number_field(uses, pid, f"{where} [gpus_per_profile]", whole=True))
                  for pid in uses)
    for pid, n in pairs:
        if n > gpus:
            raise ValueError(f"{where} [gpus_per_profile]: field {pid!r} uses {n} GPUs, the "
                             f"instance has {gpus}")
    return HardwarePrice(id=data["id"], name=data["name"], source=data["source"],
                         instance=data["instance"], gpus_per_instance=gpus,
                         instance_usd_per_hour=usd, board_power_w=power, gpus_per_profile=pairs)


def hardware_prices(directory=HARDWARE_PRICE_DIR) -> dict[str, HardwarePrice]:
    """All hardware-price presets in ``directory`` (one TOML file each), keyed by id."""
    return _load_all(directory, load_hardware_price)
