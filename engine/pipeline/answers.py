"""Answers the page reads off the tandem: stage capacities and the bottleneck, the
operating point at one load, sustained compute and memory traffic, and the load.
Rates are per ms; a conversion to the page's jobs per second is ``engine.core.units``
(``per_s_from_per_ms``; the old ``per_ms_to_per_s``/``per_s_to_per_ms`` here warn)."""
from __future__ import annotations

from dataclasses import dataclass
import warnings

import numpy as np

from ..core.domains import PIPE_LOAD_FRACTION, PIPE_LOAD_MODE, PIPE_PRECISION, RATE_PER_S
from ..core.renamed import REMOVED_IN, renamed_attribute
from ..core.units import MS_PER_S, per_ms_from_per_s, per_s_from_per_ms  # noqa: F401
from .specs import PipelineRates
from .exact import TandemMeasures

STAGES = ("CPU + host link", "GPU global memory", "Compute units")


def _moved(old: str, new: str) -> None:
    warnings.warn(f"engine.pipeline.{old} is deprecated; use engine.core.units.{new} (the "
                  f"old name is removed in {REMOVED_IN})", DeprecationWarning, stacklevel=3)


def per_ms_to_per_s(rate_per_ms):
    """Deprecated: ``engine.core.units.per_s_from_per_ms`` (a rate per ms in per s)."""
    _moved("per_ms_to_per_s", "per_s_from_per_ms")
    return per_s_from_per_ms(rate_per_ms)


def per_s_to_per_ms(rate_per_s):
    """Deprecated: ``engine.core.units.per_ms_from_per_s`` (a rate per s in per ms)."""
    _moved("per_s_to_per_ms", "per_ms_from_per_s")
    return per_ms_from_per_s(rate_per_s)


def stage_capacities(rates: PipelineRates) -> tuple[float, float, float]:
    """Each stage's own rate alone, jobs per ms: μ_cpu, μ_mem, c·μ_cu."""
    return (float(rates.mu_cpu_per_ms), float(rates.mu_mem_per_ms),
            float(rates.c * rates.mu_cu_per_ms))


def slowest_stage(rates: PipelineRates) -> int:
    """Index (into ``STAGES``) of the stage with the lowest rate alone."""
    return int(np.argmin(stage_capacities(rates)))


def slowest_rate_per_ms(rates: PipelineRates, *, without_units: bool = False) -> float:
    """min(μ_cpu, μ_mem, c·μ_cu) jobs per ms: no pipeline of these stages sustains more
    (λ* is below it); ``without_units``: min(μ_cpu, μ_mem), the bound however many
    compute units are added."""
    caps = stage_capacities(rates)
    return float(min(caps[:2] if without_units else caps))


def peak_flop_per_s(spec, precision: str) -> float:
    """The datasheet's peak of ``precision`` ("fp32" or "fp16"), FLOP per s."""
    peaks = {"fp32": spec.fp32_peak_TFLOP_per_s, "fp16": spec.fp16_peak_TFLOP_per_s}
    return float(peaks[PIPE_PRECISION.check(precision)]) * 1e12


def bandwidths_bytes_per_s(spec) -> tuple[float, float]:
    """The datasheet's GPU-memory and host-link bandwidths, bytes per s (GB = 1e9 B)."""
    return (float(spec.memory_bandwidth_GB_per_s) * 1e9,
            float(spec.host_link_bandwidth_GB_per_s) * 1e9)


@dataclass(frozen=True)
class Traffic:
    """Sustained rates of a pipeline at throughputs X (arrays like X)."""

    flop_per_s: np.ndarray           # X · FLOP per job
    memory_bytes_per_s: np.ndarray   # X · GPU-memory traffic per job
    link_bytes_per_s: np.ndarray     # X · job size (one crossing of the host link)


def traffic(rates: PipelineRates, throughput_per_ms, job_size_bytes: float) -> Traffic:
    """Compute, memory and host-link traffic at ``throughput_per_ms`` completed jobs per ms."""
    x = per_s_from_per_ms(np.asarray(throughput_per_ms, dtype=float))
    return Traffic(x * rates.flops_per_job, x * rates.mem_traffic_bytes_per_job,
                   x * float(job_size_bytes))


def traffic_at_loads(rates: PipelineRates, lam_per_ms, capacity_per_ms: float,
                     job_size_bytes: float) -> Traffic:
    """``traffic`` at the loads ``lam_per_ms``: the throughput X = min(λ, λ*) completed
    jobs per ms (beyond the exact capacity λ* the pipeline passes λ* on)."""
    return traffic(rates, np.minimum(np.asarray(lam_per_ms, dtype=float),
                                     float(capacity_per_ms)), job_size_bytes)


def relative_change(new, old):
    """(new − old)/old as a fraction (``new``/``old`` − 1): how far one latency or
    capacity is from another; broadcasts."""
    with np.errstate(divide="ignore", invalid="ignore"):     # old = 0: ±inf or NaN
        return (np.asarray(new, dtype=float) / np.asarray(old, dtype=float) - 1.0)[()]


LOAD_MODES = PIPE_LOAD_MODE.values


def load_per_ms(capacity_per_ms: float, mode: str, fraction: float,
                rate_per_s: float) -> float:
    """The arrival rate λ (jobs per ms) of a load given as a ``fraction`` of the exact
    capacity λ* (``mode="frac"``: λ = f·λ*) or as ``rate_per_s`` jobs per s
    (``mode="rate"``: λ = rate/1000)."""
    PIPE_LOAD_MODE.check(mode)
    if mode == "frac":
        return float(capacity_per_ms) * float(PIPE_LOAD_FRACTION.check(fraction))
    return float(per_ms_from_per_s(RATE_PER_S.check(rate_per_s)))


@dataclass(frozen=True)
class OperatingPoint:
    """The pipeline at one load: each stage's utilization (time fraction it works),
    blocking and contents, from the exact tandem ``exact`` at ``lam_per_ms``."""

    lam_per_ms: float
    capacity_per_ms: float
    stable: bool
    busy: tuple[float, float, float]          # CPU, memory, units (units: mean busy / c)
    blocked: tuple[float, float]              # CPU, memory
    jobs: tuple[float, float, float]          # mean contents (CPU inf when unstable)
    slowest: int                              # index into STAGES
    gain_over_slowest: float                  # capacity / slowest stage alone − 1

    @property
    def load_fraction(self) -> float:
        """λ as a fraction of the exact capacity."""
        return self.lam_per_ms / self.capacity_per_ms

    @property
    def lost_to_blocking(self) -> float:
        """1 − λ*/(slowest stage alone): the share of the slowest stage's rate blocking
        costs."""
        return -self.gain_over_slowest


def operating_point(rates: PipelineRates, lam_per_ms: float, exact: TandemMeasures,
                    capacity_per_ms: float) -> OperatingPoint:
    """Utilization, blocking and contents of each stage at ``lam_per_ms`` (jobs per ms),
    read from the exact tandem at that load and the exact capacity.  A stage's
    utilization is its throughput over its rate (the units: mean busy units over c)."""
    thr = float(exact.throughput_per_ms)
    caps = stage_capacities(rates)
    return OperatingPoint(
        lam_per_ms=float(lam_per_ms), capacity_per_ms=float(capacity_per_ms),
        stable=bool(lam_per_ms < capacity_per_ms),
        busy=(thr / rates.mu_cpu_per_ms, thr / rates.mu_mem_per_ms,
              float(exact.l_cu) / rates.c),
        blocked=(float(exact.p_cpu_blocked), float(exact.p_mem_blocked)),
        jobs=(float(exact.l_cpu), float(exact.l_mem), float(exact.l_cu)),
        slowest=slowest_stage(rates), gain_over_slowest=float(capacity_per_ms) / min(caps) - 1.0)


@dataclass(frozen=True)
class StageRow:
    """One stage of the pipeline at one load, in a capacity planner's units."""

    stage: str                       # a name from ``STAGES``
    servers: int                     # jobs served at once
    room: float                      # jobs the stage can hold (inf: unlimited queue)
    rate_alone_per_s: float          # the stage's own rate, jobs per s
    utilization: float               # time fraction it works, in [0, 1]
    blocked: float                   # time fraction a full next stage holds it up (nan: last)
    mean_jobs: float                 # mean jobs at the stage (inf when unstable)

    utilisation = renamed_attribute("utilization")


def stage_table(rates: PipelineRates, op: OperatingPoint) -> tuple[StageRow, ...]:
    """The three stages at the operating point ``op`` (``operating_point``): servers,
    room, own rate (jobs per s), utilization and blocked time fractions (clipped to
    [0, 1]: solver round-off never reads as a negative fraction) and mean contents."""
    caps = per_s_from_per_ms(np.array(stage_capacities(rates)))
    frac = np.clip(np.array([*op.busy, *op.blocked], dtype=float), 0.0, 1.0) + 0.0  # no −0.0
    blocked = (*frac[3:], float("nan"))
    return tuple(StageRow(stage=name, servers=servers, room=room, rate_alone_per_s=float(cap),
                          utilization=float(u), blocked=float(b), mean_jobs=float(n))
                 for name, servers, room, cap, u, b, n in zip(
                     STAGES, (1, 1, rates.c), (float("inf"), float(rates.K), float(rates.c)),
                     caps, frac[:3], blocked, op.jobs))
