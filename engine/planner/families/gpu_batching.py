"""Family "gpu": image-model servers doing dynamic batching, τ[b] = αb + τ0 (ms, Inoue
2021 eq 25); searched: hardware, b_max, the Triton batcher's max queue delay, replicas;
held to a latency percentile.  Mean latency exact from the batching chain (Poisson,
greedy batcher), else simulated; the percentile simulated."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...batching import capacity, simulate_batching, stationary
from ...core.domains import PLAN_QUEUE_DELAY_MS
from ...core.stats import PERCENTILES, percentiles
from ...core.units import ms_from_s, per_ms_from_per_s, per_s_from_per_ms
from ...presets import batch_profiles
from ..hardware import Hardware
from .batch import _thinned
from .base import Knob
from .batch import BatchFamily, batch_knobs

DEFAULT_PROFILES = ("dle_tf_t4_resnet50_amp", "dle_tf_v100_16gb_resnet50_amp",
                    "dle_tf_a100_40gb_resnet50_amp")


@dataclass(frozen=True)
class _ArrivalsInMs:
    """An arrival process in s (rate per s, times in s) seen in ms, the unit of
    ``engine.batching`` (rate per ms, times in ms)."""

    process: object

    @property
    def rate(self) -> float:
        return float(per_ms_from_per_s(float(self.process.rate)))

    @property
    def scv(self) -> float:
        return float(self.process.scv)

    @property
    def label(self) -> str:
        return self.process.label

    def sample(self, n, rng) -> np.ndarray:
        return ms_from_s(np.asarray(self.process.sample(n, rng), dtype=float))


class GpuBatching(BatchFamily):
    name = "gpu"
    title = "Image model (GPU batch profiles)"
    load_unit = "images/s"
    time_unit = "ms"
    hardware_type = Hardware
    hardware_fields = ("name", "price_usd_per_hour", "busy_power_w", "idle_power_w",
                       "alpha_ms", "tau0_ms", "max_batch", "profile", "source")
    knobs = batch_knobs(Knob("queue_delay_ms", "Batcher's max queue delay", "ms",
                             PLAN_QUEUE_DELAY_MS, (0.0,),
                             "How long the batcher may hold a request to fill a batch "
                             "(0: start a batch at once)."))
    metrics = ("latency",)
    default_metric = "latency"
    default_profiles = DEFAULT_PROFILES
    pricing = ("mean exact (the batching chain, Poisson arrivals, no queue delay) or "
               "simulated; the percentile simulated")

    def presets(self) -> dict:
        return dict(_presets())

    def default_fields(self) -> dict:
        """2,000 images/s of ResNet-50 (measured T4, V100 and A100 profiles), 99 % within
        10 ms, b_max 1-128, 1-32 replicas."""
        presets = _presets()
        hw = tuple(presets[p] for p in DEFAULT_PROFILES)
        return dict(workload="gpu", rate_per_s=2000.0, target_ms=10.0, hardware=hw,
                        replicas=tuple(range(1, 33)))

    def accepts(self, hw) -> bool:
        return isinstance(hw, Hardware) and not hw.k_s

    def check(self, spec) -> None:
        if spec.token_limit != (0,):
            raise ValueError("token_limit applies to the LLM workload only; a GPU plan "
                             "takes (0,)")

    def largest_batch(self, hw) -> float:
        return hw.max_batch

    def capacity_per_s(self, spec, hw, b_max, token_limit) -> float:
        return float(per_s_from_per_ms(float(capacity(hw.alpha_ms, hw.tau0_ms, b_max))))

    def exact_mean(self, spec, hw, rate_per_s, b_max, token_limit):
        st = stationary(per_ms_from_per_s(rate_per_s), hw.alpha_ms, hw.tau0_ms, b_max)
        return float(st.mean_latency_ms), float(st.mean_batch_size), float(st.utilization)

    def simulate(self, spec, hw, b_max, queue_delay_ms, token_limit, replicas, *, arrivals,
                 n_jobs, seed) -> dict:
        rate = spec.rate_per_s / replicas
        per_replica = _thinned(arrivals, replicas)
        summary = spec.percentile in PERCENTILES       # the simulator's own p50/p95/p99
        # engine.batching works in ms: rates per ms, and arrival times in ms
        proc = None if per_replica is None else _ArrivalsInMs(per_replica)
        r = simulate_batching(per_ms_from_per_s(rate), hw.alpha_ms, hw.tau0_ms, b_max=int(b_max),
                              n_jobs=n_jobs, seed=seed, max_queue_delay_ms=float(queue_delay_ms),
                              preferred_batch_size=int(b_max) if queue_delay_ms > 0 else None,
                              return_latencies=not summary, arrivals=proc)
        pct = (getattr(r, f"p{spec.percentile:g}_ms") if summary
               else percentiles(r.latencies_ms, [spec.percentile])[0])
        return dict(latency_percentile_ms=float(pct), mean_latency_ms=float(r.mean_latency_ms),
                    ci95_ms=float(r.ci95_ms), mean_batch_size=float(r.mean_batch_size),
                    utilization=float(r.utilization))

    def settings_text(self, spec, row) -> str:
        b, delay, _ = self.settings_row(row)
        return f"b_max {b}" + (f", max queue delay {delay:g} ms" if delay > 0 else "")


@lru_cache(maxsize=None)
def _presets() -> dict:
    """Each batch profile (``presets/gpu_batching``, fitted τ[b] = αb + τ0) that a price
    preset lists, priced at its GPUs' share of the instance; busy power the profile's
    largest measured board power if it has one, else the GPUs' datasheet maximum."""
    from ..hardware import price_of, short_name
    out = {}
    for pid, prof in batch_profiles().items():
        price, gpus = price_of(pid)
        if price is None:
            continue
        fit = prof.fit()
        power = (float(np.max(prof.power_w)) if prof.power_w is not None
                 else price.board_power_w * gpus)
        out[pid] = Hardware(name=short_name(prof.name),
                            price_usd_per_hour=price.usd_per_gpu_hour * gpus,
                            busy_power_w=power, alpha_ms=fit.alpha_ms, tau0_ms=fit.tau0_ms,
                            max_batch=int(prof.batch_size[-1]), profile=pid,
                            source=f"{prof.source}. Price: {price.source}")
    return out


FAMILY = GpuBatching()
__all__ = ["GpuBatching", "FAMILY", "DEFAULT_PROFILES"]
