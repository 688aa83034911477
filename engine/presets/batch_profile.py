"""Batch-profile presets (``presets/gpu_batching/``): measured throughput, and power
where known, by batch size for one device and model (Inoue 2021, Table 1, and measured
ones; docs/models/measured_presets.md)::

    id = "v100_resnet50_mixed"
    name = "Tesla V100 · ResNet-50 · mixed precision"
    source = "..."
    [columns]
    batch_size = [1, 2, 4, ...]
    throughput_images_per_s = [476, 880, ...]
    board_power_w = [120, 109, ...]          # optional

A bad file raises ``ValueError`` naming the file and the field: unknown keys, missing
fields, non-numeric, non-positive or non-finite values, fewer than two rows, columns of
different lengths, batch sizes not whole and strictly increasing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..fit import BatchProfileFit, fit_batch_profile
from .schema import IDENTITY, PRESET_DIR, load_folder, read_columns, schema, whole_increasing

BATCH_PROFILE_DIR = PRESET_DIR / "gpu_batching"

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


# the file's [columns], from the dataclass: its array fields, two named in the file for
# what they measured; those without a default required
_IN_FILE = {"throughput_per_s": "throughput_images_per_s", "power_w": "board_power_w"}
_FIELDS = {_IN_FILE.get(k, k): (k, required) for k, (_, required) in schema(BatchProfile).items()
           if k not in IDENTITY}
_COLUMNS = tuple(_FIELDS)
_REQUIRED = tuple(c for c, (_, required) in _FIELDS.items() if required)


def load_batch_profile(path) -> BatchProfile:
    """Load and validate one batch-profile TOML file."""
    data, arrays, where = read_columns(path, _COLUMNS, _REQUIRED, "batch_size")
    whole_increasing(arrays["batch_size"], f"{where} [columns].batch_size")
    return BatchProfile(**{k: data[k] for k in IDENTITY},
                        **{_FIELDS[c][0]: arr for c, arr in arrays.items()})


def batch_profiles(directory=BATCH_PROFILE_DIR) -> dict[str, BatchProfile]:
    """All batch-profile presets in ``directory`` (one TOML file each), keyed by id."""
    return load_folder(directory, load_batch_profile)
