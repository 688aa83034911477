"""Functions swept by the tests of ``engine.sweep``: module-level so that worker
processes (a process pool, Dask workers) import them to unpickle them."""
from __future__ import annotations

import os
import time
import zlib
from dataclasses import dataclass

import numpy as np

from engine import batching


@dataclass(frozen=True)
class Priced:
    """One GPU batching configuration: exact means and a seeded noisy sample."""
    mean_latency_ms: float
    mean_batch_size: float
    capacity_per_ms: float
    stable: bool
    noisy_latency_ms: float      # mean latency × a lognormal draw (seed from the point)
    draws: int                   # how many draws the point asked for


class SweepFailure(Exception):
    """Raised by ``priced`` at the failing load: its type must reach the caller."""


def point_seed(*values) -> int:
    """A seed from the point's own parameters (CRC-32 of their repr: the same in every
    process, unlike ``hash`` of a string), so evaluation order cannot matter."""
    return zlib.crc32(repr(values).encode())


def priced(lam, alpha_ms, tau0_ms, b_max, *, fail_at=None) -> Priced:
    """Exact mean latency, mean batch size and capacity of dynamic batching (eqs of
    engine.batching) at load ``lam`` (per ms), with a seeded noisy copy of the latency."""
    if fail_at is not None and lam == fail_at:
        raise SweepFailure(f"no configuration at lam={lam}")
    capacity = batching.capacity(alpha_ms, tau0_ms, b_max)
    stable = bool(lam < capacity)
    mean = batching.mean_latency(lam, alpha_ms, tau0_ms, b_max=b_max) if stable else np.inf
    size = batching.mean_batch_size(lam, alpha_ms, tau0_ms, b_max=b_max) if stable else np.inf
    rng = np.random.default_rng(point_seed(lam, alpha_ms, tau0_ms, b_max))
    draws = int(rng.integers(1, 5))
    noise = float(np.prod(rng.lognormal(0.0, 0.1, size=draws)))
    return Priced(mean_latency_ms=mean, mean_batch_size=size, capacity_per_ms=capacity,
                  stable=stable, noisy_latency_ms=mean * noise, draws=draws)


def as_dict(x, y):
    """A dict result: its keys become columns."""
    return {"total": x + y, "label": f"{x}/{y}"}


def product(x, y):
    """A scalar result: column ``value``."""
    return x * y


def clashing(x, y):
    """A result field named like a parameter."""
    return {"x": x, "z": y}


def pid(x):
    """The process that evaluated the point."""
    return os.getpid()


def busy(x, cost_ms=0.2):
    """``x`` squared after ``cost_ms`` of busy waiting (a point of known cost)."""
    end = time.perf_counter() + cost_ms * 1e-3
    while time.perf_counter() < end:
        pass
    return x * x


@dataclass(frozen=True)
class Summary:
    """What ``summary`` saw of a point."""
    count: int
    key: str


def summary(**point) -> Summary:
    """Any parameters: how many, and their repr in call order."""
    return Summary(count=len(point), key=repr(sorted(point.items(), key=lambda kv: kv[0])))
