"""Serving presets: a step cost fitted to published measurements, with the scheduler
settings of the server measured, one TOML file each in ``presets/llm_serving/``.

Each file cites its source (repository, path, commit) and says how its numbers were
derived; its ``[fit]`` table names the ``engine.llm_serving.sources`` function, the
real-data files and the arguments that regenerate the ``[cost]`` numbers
(``ServingPreset.refit``), with the fit's R².  A computed KV capacity carries its
inputs (``[kv_capacity]``) and is checked against ``kv_capacity_tokens`` on load.
A bad file raises ``ValueError`` naming the file and the field.  Format:
docs/models/llm_serving.md ("Sources of the step cost").
"""
from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
import tomllib

from ..core.domains import Choice
from .cost import StepCost, kv_capacity_tokens
from .scheduler import Scheduler
from . import sources

__all__ = ["ServingPreset", "serving_presets", "load_serving_preset", "SERVING_PRESET_DIR"]

SERVING_PRESET_DIR = Path(__file__).resolve().parent.parent.parent / "presets" / "llm_serving"

_TOP = {"id": str, "name": str, "model": str, "hardware": str, "tensor_parallel": int,
        "source": str, "cost": dict, "scheduler": dict, "fit": dict, "kv_capacity": dict}
_TOP_REQUIRED = ("id", "name", "model", "hardware", "tensor_parallel", "source", "cost",
                 "scheduler", "fit")
_COST = ("base_ms", "prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq",
         "decode_ms_per_seq", "context_ms_per_token", "frontend_ms")
_SCHEDULER = {"kv_cache_tokens": int, "block_size": int, "max_num_seqs": int,
              "max_num_batched_tokens": int, "chunked_prefill": bool, "prefix_caching": bool}
_SCHEDULER_REQUIRED = ("block_size", "max_num_seqs", "max_num_batched_tokens",
                       "chunked_prefill", "prefix_caching")
_FIT = {"function": str, "files": list, "arguments": dict, "n_points": int, "r2": dict,
        "held_at_zero": list}
_FUNCTIONS = Choice("function", ("step_cost_from_distserve", "step_cost_from_splitwise",
                                "fit_step_cost_vllm_bench", "step_cost_from_csv"))
_KV = ("gpu_memory_gib", "weights_gib", "layers", "kv_heads", "head_dim", "kv_dtype_bytes",
       "gpu_memory_utilization", "activation_gib")
_KV_REQUIRED = ("gpu_memory_gib", "weights_gib", "layers", "kv_heads", "head_dim",
                "kv_dtype_bytes", "gpu_memory_utilization")


@dataclass(frozen=True, eq=False)
class ServingPreset:
    """A step cost and the scheduler settings of one measured server.

    ``kv_cache_tokens`` None: not known (the KV cache never binds in a simulation);
    ``kv_capacity``: the inputs of ``kv_capacity_tokens`` where the capacity is computed,
    not logged (None otherwise).  ``r2``: the fit's R² by term group; ``fit_function``,
    ``fit_files`` (relative to the real-data folder) and ``fit_arguments`` regenerate
    the cost (``refit``).
    """

    id: str
    name: str
    cost: StepCost
    kv_cache_tokens: int | None
    block_size: int
    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: bool
    prefix_caching: bool
    model: str
    hardware: str
    tensor_parallel: int
    source: str
    r2: dict
    held_at_zero: tuple
    n_points: int
    fit_function: str
    fit_files: tuple
    fit_arguments: dict
    kv_capacity: dict | None = None

    def scheduler(self) -> Scheduler:
        """The preset's scheduler settings as a ``Scheduler``."""
        return Scheduler(max_num_seqs=self.max_num_seqs,
                         max_num_batched_tokens=self.max_num_batched_tokens,
                         kv_cache_tokens=self.kv_cache_tokens, block_size=self.block_size,
                         chunked_prefill=self.chunked_prefill,
                         prefix_caching=self.prefix_caching)

    def refit(self, read) -> "sources.StepCostFit":
        """The fit that produced ``cost``, rerun: ``read(name)`` returns the text of each
        file of ``fit_files`` (e.g. from the shared real-data folder)."""
        fn = getattr(sources, self.fit_function)
        texts = [read(f) for f in self.fit_files]
        if self.fit_function == "fit_step_cost_vllm_bench":
            return fn(texts, **self.fit_arguments)
        if len(texts) != 1:
            raise ValueError(f"{self.id}: {self.fit_function} reads one file, the preset "
                             f"names {len(texts)}")
        return fn(texts[0], **self.fit_arguments)


def _read(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path.name}: not valid TOML ({exc})") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror})") from None


def _keys(data: dict, allowed, required, where: str) -> None:
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r} (allowed: "
                         f"{', '.join(allowed)})")
    for key in required:
        if key not in data:
            raise ValueError(f"{where}: missing field {key!r}")


def _typed(value, kind, where: str, key: str):
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{where}: field {key!r} must be a whole number ≥ 1, got "
                             f"{value!r}")
    elif kind is str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}: field {key!r} must be a non-empty string, got "
                             f"{value!r}")
    elif not isinstance(value, kind):
        raise ValueError(f"{where}: field {key!r} must be a {kind.__name__}, got {value!r}")
    return value


def _number(value, where: str, key: str, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise ValueError(f"{where}: field {key!r} must be a finite number "
                         f"{'> 0' if positive else '≥ 0'}, got {value!r}")
    return float(value)


def load_serving_preset(path) -> ServingPreset:
    """Load and validate one serving preset TOML file: a path, or the id of a preset
    in ``presets/llm_serving/``."""
    path = Path(path)
    if path.suffix != ".toml" and not path.exists():
        candidate = SERVING_PRESET_DIR / f"{path.name}.toml"
        if not candidate.is_file():
            known = ", ".join(p.stem for p in sorted(SERVING_PRESET_DIR.glob("*.toml")))
            raise ValueError(f"unknown serving preset {str(path)!r}; the presets are: "
                             f"{known or 'none'}")
        path = candidate
    data = _read(path)
    where = path.name
    _keys(data, _TOP, _TOP_REQUIRED, where)
    top = {k: _typed(data[k], _TOP[k], where, k) for k in _TOP_REQUIRED}
    if top["id"] != path.stem:
        raise ValueError(f"{where}: field 'id' must be the file's name {path.stem!r}, got "
                         f"{top['id']!r}")

    cw = f"{where} [cost]"
    _keys(top["cost"], _COST, _COST, cw)
    values = {k: _number(top["cost"][k], cw, k) for k in _COST}
    cost = StepCost(**values, label=top["name"])

    sw = f"{where} [scheduler]"
    sched = top["scheduler"]
    _keys(sched, _SCHEDULER, _SCHEDULER_REQUIRED, sw)
    settings = {k: _typed(sched[k], _SCHEDULER[k], sw, k) for k in _SCHEDULER if k in sched}
    try:
        Scheduler(**settings)
    except ValueError as err:
        raise ValueError(f"{sw}: {err}") from None

    kv = None
    if "kv_capacity" in data:
        kw = f"{where} [kv_capacity]"
        _keys(data["kv_capacity"], _KV, _KV_REQUIRED, kw)
        kv = {k: _number(data["kv_capacity"][k], kw, k,
                         positive=k not in ("activation_gib",))
              for k in _KV if k in data["kv_capacity"]}
        if "kv_cache_tokens" not in settings:
            raise ValueError(f"{sw}: missing field 'kv_cache_tokens' ([kv_capacity] computes "
                             f"it)")
        try:
            want = kv_capacity_tokens(**kv, tensor_parallel=top["tensor_parallel"])
        except ValueError as err:
            raise ValueError(f"{kw}: {err}") from None
        if settings["kv_cache_tokens"] != want:
            raise ValueError(f"{sw}: field 'kv_cache_tokens' is {settings['kv_cache_tokens']}, "
                             f"but [kv_capacity] computes {want}")

    fw = f"{where} [fit]"
    fit = top["fit"]
    _keys(fit, _FIT, _FIT, fw)
    for k, kind in _FIT.items():
        _typed(fit[k], kind, fw, k)
    _FUNCTIONS.check(fit["function"], f"{fw}: field 'function'")
    if not fit["files"] or not all(isinstance(f, str) and f.strip() for f in fit["files"]):
        raise ValueError(f"{fw}: field 'files' must list the real-data files (non-empty "
                         f"strings), got {fit['files']!r}")
    r2 = {}
    for group, v in fit["r2"].items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or v > 1:
            raise ValueError(f"{fw}: field 'r2.{group}' must be a finite number ≤ 1, got {v!r}")
        r2[group] = float(v)
    held = fit["held_at_zero"]
    bad = [h for h in held if h not in _COST]
    if bad:
        raise ValueError(f"{fw}: field 'held_at_zero' must list fields of [cost] "
                         f"({', '.join(_COST)}), got {bad[0]!r}")
    nonzero = [h for h in held if values[h] != 0]
    if nonzero:
        raise ValueError(f"{cw}: field {nonzero[0]!r} is listed in [fit] held_at_zero but is "
                         f"{values[nonzero[0]]!r}")
    return ServingPreset(
        id=top["id"], name=top["name"], cost=cost,
        kv_cache_tokens=settings.get("kv_cache_tokens"), block_size=settings["block_size"],
        max_num_seqs=settings["max_num_seqs"],
        max_num_batched_tokens=settings["max_num_batched_tokens"],
        chunked_prefill=settings["chunked_prefill"], prefix_caching=settings["prefix_caching"],
        model=top["model"], hardware=top["hardware"], tensor_parallel=top["tensor_parallel"],
        source=top["source"], r2=r2, held_at_zero=tuple(held), n_points=fit["n_points"],
        fit_function=fit["function"], fit_files=tuple(fit["files"]),
        fit_arguments=dict(fit["arguments"]), kv_capacity=kv)


def serving_presets(directory=SERVING_PRESET_DIR) -> dict[str, ServingPreset]:
    """Every serving preset in ``directory`` (one TOML file each), keyed by id, in
    file-name order."""
    return {p.id: p for p in (load_serving_preset(f)
                              for f in sorted(Path(directory).glob("*.toml")))}
