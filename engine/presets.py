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


def load_batch_profile(path) -> BatchProfile:
    """Load and validate one batch-profile TOML file."""
    path = Path(path)
    data = _read_toml(path)
    where = path.name
    _check_keys(data, _PROFILE_TOP, _PROFILE_TOP, where)
    for key, kind in _PROFILE_TOP.items():
        if not isinstance(data[key], kind):
            raise ValueError(f"{where}: field {key!r} must be a {kind.__name__}")
    cols = data["columns"]
    _check_keys(cols, _PROFILE_COLUMNS, _PROFILE_REQUIRED, f"{where} [columns]")
    arrays = {k: _column(cols[k], f"{where} [columns].{k}") for k in _PROFILE_COLUMNS if k in cols}
    n = arrays["batch_size"].size
    for key, arr in arrays.items():
        if arr.size != n:
            raise ValueError(f"{where} [columns].{key}: {arr.size} rows, batch_size has {n}")
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
    out = {}
    for path in sorted(Path(directory).glob("*.toml")):
        profile = load_batch_profile(path)
        out[profile.id] = profile
    return out
