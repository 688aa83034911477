"""Arrival-process presets (``presets/arrivals/``): a request trace's arrival times as a
summary (never the timestamps): ``engine.arrivals.describe``'s statistics at a few
windows, the MMPP-2 of ``engine.arrivals.fit_mmpp2``, and the requests per bin for
drawing the rate over time::

    id = "azure_2023_code"
    name = "..."
    trace_name = "the Azure code trace"     # words for labels: "MMPP-2 fitted to <...>"
    source = "..."
    n_requests = 8819
    duration_s = 3435.9                      # first to last arrival
    mean_rate_per_s = 2.566                  # (n − 1)/duration
    scv = 172.96                             # of the gaps
    [windows]
    window_s = [1.0, 10.0, 60.0, 300.0]      # increasing
    idc = [...]                              # index of dispersion of counts per window
    peak_to_mean = [...]                     # busiest window / mean window, per window
    [mmpp2]
    rate_1_per_s = 14.4                      # and rate_2_per_s, switch_12_per_s, switch_21_per_s
    [rate_over_time]
    bin_s = 30.0
    requests = [17, 46, ...]                 # requests per bin from the first arrival
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import PEAK_TO_MEAN, PHASE_RATE, SWITCH_RATE, TRACE_REQUESTS
from .schema import (PRESET_DIR, check_keys, load_folder, number, number_list, read_toml,
                     scalars, schema)

ARRIVAL_DIR = PRESET_DIR / "arrivals"

_TABLES = ("windows", "mmpp2", "rate_over_time")
_WINDOWS = ("window_s", "idc", "peak_to_mean")
_MMPP2 = ("rate_1_per_s", "rate_2_per_s", "switch_12_per_s", "switch_21_per_s")
_BINS = ("bin_s", "requests")
_DOMAINS = {"n_requests": TRACE_REQUESTS, "rate_1_per_s": PHASE_RATE,
            "rate_2_per_s": PHASE_RATE, "switch_12_per_s": SWITCH_RATE,
            "switch_21_per_s": SWITCH_RATE}


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
        from ..arrivals import MMPP2
        return MMPP2(self.rate_1_per_s, self.rate_2_per_s, self.switch_12_per_s,
                     self.switch_21_per_s, f"fitted to {self.trace_name}")


# the file's top level, from the dataclass: its fields outside the sub-tables, then those
_TOP = tuple(k for k in schema(ArrivalPreset)
             if k not in _WINDOWS + _MMPP2 + _BINS + ("requests_per_bin",)) + _TABLES


def _table(data: dict, name: str, keys, where: str) -> tuple[dict, str]:
    """The sub-table ``[name]`` holding exactly ``keys``, and its ``where``."""
    table = data[name]
    if not isinstance(table, dict):
        raise ValueError(f"{where}: field {name!r} must be a table")
    check_keys(table, keys, keys, f"{where} [{name}]")
    return table, f"{where} [{name}]"


def load_arrival_preset(path) -> ArrivalPreset:
    """Load and validate one arrival-preset TOML file (``ValueError`` naming the file and
    the field): every field present and no other; the numbers finite and positive
    (``rate_2_per_s`` and the bin counts may be 0, bin counts whole, ``n_requests`` a
    whole number ≥ 2, ``peak_to_mean`` ≥ 1); the window columns of one length with
    ``window_s`` increasing; a valid MMPP-2 (rates not both 0)."""
    data, where = read_toml(path)
    check_keys(data, _TOP, _TOP, where)
    values = scalars(ArrivalPreset, data, where, _DOMAINS)
    win, at = _table(data, "windows", _WINDOWS, where)
    cols = {k: number_list(win[k], f"{at}.{k}") for k in _WINDOWS}
    for key, arr in cols.items():
        if arr.size != cols["window_s"].size:
            raise ValueError(f"{at}.{key}: {arr.size} values, window_s has "
                             f"{cols['window_s'].size}")
    if np.any(cols["window_s"] <= 0) or np.any(np.diff(cols["window_s"]) <= 0):
        raise ValueError(f"{at}.window_s: must be positive and increasing")
    if np.any(cols["peak_to_mean"] < PEAK_TO_MEAN.low):
        raise ValueError(f"{at}.peak_to_mean: must be at least 1 (the busiest window holds "
                         f"at least the mean)")
    mm, at = _table(data, "mmpp2", _MMPP2, where)
    rates = {k: number(mm, k, at, _DOMAINS[k]) for k in _MMPP2}
    if rates["rate_1_per_s"] == 0 and rates["rate_2_per_s"] == 0:
        raise ValueError(f"{at}.rate_1_per_s: rate_1_per_s and rate_2_per_s must not both "
                         f"be 0")
    bins, at = _table(data, "rate_over_time", _BINS, where)
    bin_s = number(bins, "bin_s", at)
    counts = number_list(bins["requests"], f"{at}.requests")
    if np.any(counts != np.round(counts)):
        raise ValueError(f"{at}.requests: must be whole numbers")
    return ArrivalPreset(**values, **cols, **rates, bin_s=bin_s, requests_per_bin=counts)


def arrival_presets(directory=ARRIVAL_DIR) -> dict[str, ArrivalPreset]:
    """All arrival presets in ``directory`` (one TOML file each), keyed by id."""
    return load_folder(directory, load_arrival_preset)
