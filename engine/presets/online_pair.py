"""Offline/online pair presets (``presets/online_pairs/``): one server deployment measured
twice (model vs measurement, ``engine.measured.online``), only the columns the comparison
uses, as published::

    id = "dle_triton_resnet50_t4"
    name = "..."
    source = "..."                          # repository, path, commit, tables
    [offline]                               # static batches, concurrency 1, one instance
    label = "NVIDIA T4 · ... · 1 instance"
    client_batch_size = [1, 2, 4, ...]      # b, inputs per request
    inferences_per_second = [332.4, ...]
    avg_latency_ms = [3.003, ...]
    [online]                                # closed loop, one input per request
    label = "NVIDIA T4 · ... · 2 instances"
    model_instances = 2
    max_batch_size = 128                    # the dynamic batcher's limit
    concurrent_client_requests = [16, ...]  # N
    inferences_per_second = [1078.4, ...]
    avg_latency_ms = [14.821, ...]
    p99_latency_ms = [16.597, ...]          # optional
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import B_MAX, INSTANCES
from ..measured import MeasuredBatchProfile, MeasuredConcurrencySweep
from .schema import (IDENTITY, PRESET_DIR, check_keys, column, load_folder, number, read_toml,
                     text, whole_increasing)

ONLINE_PAIR_DIR = PRESET_DIR / "online_pairs"
PAIR_SOURCE_FORMAT = "preset"      # source_format of the pair's measured results

_TOP = IDENTITY + ("offline", "online")
_OFFLINE = ("label", "client_batch_size", "inferences_per_second", "avg_latency_ms")
_ONLINE = ("label", "model_instances", "max_batch_size", "concurrent_client_requests",
           "inferences_per_second", "avg_latency_ms", "p99_latency_ms")
_ONLINE_REQUIRED = _ONLINE[:-1]
_WHOLE = {"model_instances": INSTANCES, "max_batch_size": B_MAX}


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


def _section(data: dict, name: str, fields, required, where: str) -> dict:
    """The ``[name]`` table: ``label`` a non-empty string, the counts whole numbers ≥ 1,
    the columns lists of positive finite numbers of one length (at least 2 rows)."""
    section = data[name]
    if not isinstance(section, dict):
        raise ValueError(f"{where}: field {name!r} must be a table")
    where = f"{where} [{name}]"
    check_keys(section, fields, required, where)
    out, length = {"label": text(section, "label", where)}, None
    for key in fields[1:]:
        if key not in section:
            continue
        if key in _WHOLE:
            out[key] = number(section, key, where, _WHOLE[key])
            continue
        arr = column(section[key], f"{where}.{key}")
        if length is None:
            length = (key, arr.size)
        elif arr.size != length[1]:
            raise ValueError(f"{where}.{key}: {arr.size} rows, {length[0]} has {length[1]}")
        out[key] = arr
    return out


def load_online_pair(path) -> OnlinePair:
    """Load and validate one offline/online pair TOML file (``presets/online_pairs/``):
    ``ValueError`` naming the file and the field for unknown or missing fields, a
    non-positive or non-finite number, columns of unequal length, batch sizes or
    concurrencies not whole and strictly increasing."""
    data, where = read_toml(path)
    check_keys(data, _TOP, _TOP, where)
    for key in IDENTITY:
        text(data, key, where)
    off = _section(data, "offline", _OFFLINE, _OFFLINE, where)
    on = _section(data, "online", _ONLINE, _ONLINE_REQUIRED, where)
    whole_increasing(off["client_batch_size"], f"{where} [offline].client_batch_size")
    whole_increasing(on["concurrent_client_requests"],
                     f"{where} [online].concurrent_client_requests")
    b = off["client_batch_size"]
    note = f"preset {data['id']}: {data['source']}"
    profile = MeasuredBatchProfile(
        batch_size=b, batch_time_ms=_frozen(1000.0 * b / off["inferences_per_second"]),
        power_w=None, p99_latency_ms=None, source_format=PAIR_SOURCE_FORMAT,
        notes=("batch size = the client batch at concurrency 1 (static batching: one "
               "request of b inputs at a time); τ[b] = 1000·b / inferences_per_second", note),
        label=off["label"], tables=(off["label"],))
    sweep = MeasuredConcurrencySweep(
        concurrency=on["concurrent_client_requests"],
        throughput_per_s=on["inferences_per_second"], mean_latency_ms=on["avg_latency_ms"],
        p99_latency_ms=on.get("p99_latency_ms"), breakdown_ms=None,
        model_instances=on["model_instances"], max_batch_size=on["max_batch_size"],
        client_batch_size=1, source_format=PAIR_SOURCE_FORMAT,
        notes=("one input per request (client batch 1)", note), label=on["label"],
        tables=(on["label"],))
    return OnlinePair(id=data["id"], name=data["name"], source=data["source"],
                      profile=profile, sweep=sweep, offline_latency_ms=off["avg_latency_ms"])


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


def online_pairs(directory=ONLINE_PAIR_DIR) -> dict[str, OnlinePair]:
    """All offline/online pair presets in ``directory`` (one TOML file each), keyed by id."""
    return load_folder(directory, load_online_pair)
