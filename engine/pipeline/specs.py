"""Stage rates of the pipeline from a GPU datasheet and a workload (jobs per ms).

May & Voigt name the inputs, not the mapping; the mapping used here is stated in
``rates_from_specs`` and in docs/models/pipeline.md.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.domains import (PARALLEL_FRACTION, PIPE_C, PIPE_FLOPS_PER_BYTE, PIPE_JOB_SIZE_BYTES,
                            PIPE_K, PIPE_PRECISION, PIPE_SPEEDUP, REUSE_FACTOR)
from ..core.renamed import renamed_attribute, renamed_keywords
from .checks import single_integer
from .exact import TandemMeasures, tandem


@dataclass(frozen=True)
class PipelineRates:
    """Service rates of the three stages, in jobs per ms, and the two capacities (jobs,
    units).  The rates' old names (``mu_cpu``, ``mu_mem``, ``mu_cu``) still read, and
    construct, with a ``DeprecationWarning``."""

    mu_cpu_per_ms: float     # jobs per ms
    mu_mem_per_ms: float     # jobs per ms
    mu_cu_per_ms: float      # jobs per ms, one compute unit
    K: int                   # jobs the GPU global memory holds
    c: int                   # compute units (SMs)
    flops_per_job: float
    mem_traffic_bytes_per_job: float

    mu_cpu = renamed_attribute("mu_cpu_per_ms")
    mu_mem = renamed_attribute("mu_mem_per_ms")
    mu_cu = renamed_attribute("mu_cu_per_ms")

    def tandem(self, lam_per_ms, blocking="before") -> TandemMeasures:
        """The exact tandem of these rates at arrival rates ``lam_per_ms`` (jobs per ms)."""
        return tandem(lam_per_ms, self.mu_cpu_per_ms, self.mu_mem_per_ms, self.mu_cu_per_ms,
                      self.K, self.c, blocking)


PipelineRates.__init__ = renamed_keywords(mu_cpu="mu_cpu_per_ms", mu_mem="mu_mem_per_ms",
                                          mu_cu="mu_cu_per_ms")(PipelineRates.__init__)


def rates_from_specs(spec, workload) -> PipelineRates:
    """μ_cpu, μ_mem, μ_cu (jobs per ms), K and c from a GPU spec and a workload.

    ``spec`` has ``host_link_bandwidth_GB_per_s``, ``memory_bandwidth_GB_per_s``,
    ``memory_GB``, ``sm_count``, ``boost_clock_MHz``, ``fp32_peak_TFLOP_per_s``,
    ``fp16_peak_TFLOP_per_s`` (``engine.presets.gpu_specs()``); ``workload`` has
    ``job_size_bytes`` S, ``flops_per_byte`` I, ``parallel_fraction`` f,
    ``reuse_factor`` r, ``precision`` ("fp32"/"fp16"), ``host_GFLOP_per_s`` and
    ``memory_slots`` K (``engine.presets.pipeline_workloads()``).

    Assumptions (May & Voigt name the inputs, not the mapping; these are ours):

    * A job carries S bytes and F = I·S floating-point operations.
    * CPU stage: the serial part (1 − f)F runs on the host at
      ``host_GFLOP_per_s``, then the S bytes cross the host link once:
      t_cpu = (1 − f)F/host + S/link (one direction of the link, GB = 1e9 B).
    * Memory stage: each of the f·F parallel operations needs one byte operand,
      a byte fetched from global memory serves r operations from on-chip
      memory, and the S bytes are read at least once: traffic =
      S·max(1, f·I/r), t_mem = traffic/memory bandwidth.  The paper's
      "parallelisability" and "reuse" factors enter here as service times, not
      as thinned arrival rates: in a tandem every job passes every stage.
    * Compute units: one job occupies one SM (the paper: a job is the size of a
      unit's shared memory) and runs at the SM's share of the peak of the chosen
      precision, peak/(SMs · clock) operations per cycle at the boost clock:
      t_cu = f·F/(peak/SMs); c = SM count.
    * K = ``memory_slots`` jobs fit in global memory (checked: K·S ≤ memory).
    * All times exponential with these means (the model's assumption).
    """
    s = float(PIPE_JOB_SIZE_BYTES.check(workload.job_size_bytes))
    intensity = float(PIPE_FLOPS_PER_BYTE.check(workload.flops_per_byte))
    f = float(PARALLEL_FRACTION.check(workload.parallel_fraction))
    reuse = float(REUSE_FACTOR.check(workload.reuse_factor))
    peaks = {"fp32": spec.fp32_peak_TFLOP_per_s, "fp16": spec.fp16_peak_TFLOP_per_s}
    PIPE_PRECISION.check(workload.precision, "precision")
    K, c = single_integer(workload.memory_slots, PIPE_K), single_integer(spec.sm_count, PIPE_C)
    if K * s > spec.memory_GB * 1e9:
        raise ValueError(f"memory_slots: {K} jobs of {s:g} bytes exceed {spec.memory_GB:g} GB")
    flops = intensity * s
    per_cycle = peaks[workload.precision] * 1e12 / (c * spec.boost_clock_MHz * 1e6)
    t_cpu = (1.0 - f) * flops / (workload.host_GFLOP_per_s * 1e9) + s / (
        spec.host_link_bandwidth_GB_per_s * 1e9)
    traffic = s * max(1.0, f * intensity / reuse)
    t_mem = traffic / (spec.memory_bandwidth_GB_per_s * 1e9)
    t_cu = f * flops / (per_cycle * spec.boost_clock_MHz * 1e6)
    return PipelineRates(mu_cpu_per_ms=1e-3 / t_cpu, mu_mem_per_ms=1e-3 / t_mem,
                         mu_cu_per_ms=1e-3 / t_cu, K=K, c=c, flops_per_job=flops,
                         mem_traffic_bytes_per_job=traffic)


def group_compute_units(rates: PipelineRates, units: int) -> PipelineRates:
    """The same pipeline with its c compute units modelled as ``units`` servers.

    Each modelled unit stands for c/units SMs and serves a job c/units times
    faster, so the compute stage's total rate c·μ_cu is kept; with fewer
    servers fewer jobs run at once, so blocking is somewhat overstated.  Where
    the units can all be busy the exact tandem costs O(((K+1)(units+1))³), and
    grouping is what keeps an SM count of 108 at slider speed; where they
    provably cannot (``tandem``'s first route, most GPU presets) it is not needed.
    """
    units = single_integer(units, PIPE_C)
    return PipelineRates(mu_cpu_per_ms=rates.mu_cpu_per_ms, mu_mem_per_ms=rates.mu_mem_per_ms,
                         mu_cu_per_ms=rates.mu_cu_per_ms * rates.c / units, K=rates.K, c=units,
                         flops_per_job=rates.flops_per_job,
                         mem_traffic_bytes_per_job=rates.mem_traffic_bytes_per_job)


def with_cpu_speedup(rates: PipelineRates, factor: float) -> PipelineRates:
    """The same pipeline with the CPU stage (host work and link) ``factor`` times faster:
    μ_cpu multiplied by ``factor`` (> 0), every other rate kept."""
    factor = float(PIPE_SPEEDUP.check(factor))
    return replace(rates, mu_cpu_per_ms=rates.mu_cpu_per_ms * factor)
