"""Family "llm": LLM servers running batches to the end of their longest reply (Yang
et al.), H(b, l) = k1·b + k2 + k3·b·l + k4·l (s, eq 18) with l the longest output of
the batch; searched: hardware, b_max, the token limit, replicas; held to an end-to-end
latency percentile.  Mean latency exact from the dynamic-batching chain (Poisson, the
reply law cut at the token limit), else simulated; the percentile simulated."""
from __future__ import annotations

from functools import lru_cache
import math

import numpy as np

from ...core.domains import PLAN_TOKEN_LIMIT, Choice
from ...core.records import warmup_count
from ...core.stats import PERCENTILES, percentiles
from ...core.units import ms_from_s
from ...llm_batching import dynamic_solution, simulate, stability_limit
from ...presets import llm_batch_time_presets, token_law_presets
from ..hardware import Hardware
from .batch import _thinned, token_law
from .base import Knob
from .batch import BatchFamily, batch_knobs

DEFAULT_PROFILES = ("splitwise_a100_llama2_70b_tp8", "splitwise_h100_llama2_70b_tp8")


class LlmBatch(BatchFamily):
    name = "llm"
    title = "LLM, batch model (batch-time and token-law presets)"
    load_unit = "requests/s"
    time_unit = "s"
    cost_weight = 10          # a chain solved per configuration (2-170 ms)
    hardware_type = Hardware
    hardware_fields = ("name", "price_usd_per_hour", "busy_power_w", "idle_power_w", "k_s",
                       "profile", "source")
    knobs = batch_knobs(Knob("token_limit", "Token limit", "tokens",
                             PLAN_TOKEN_LIMIT,
                             (0,), "The largest reply in tokens (0: none); a longer reply "
                             "is cut."))
    metrics = ("e2e",)
    default_metric = "e2e"
    default_profiles = DEFAULT_PROFILES
    pricing = ("mean exact (the dynamic-batching chain, Poisson arrivals) or simulated; the "
               "percentile simulated")

    def presets(self) -> dict:
        return dict(_presets())

    def default_fields(self) -> dict:
        """1 request/s of Llama-2-70B on 8×A100 or 8×H100 with the Azure conversation
        trace's output tokens, 99 % within 60 s, b_max 4-64, token limits none/512/256,
        1-8 replicas, at most 5 % of replies cut."""
        presets = _presets()
        hw = tuple(presets[p] for p in DEFAULT_PROFILES)
        return dict(workload="llm", rate_per_s=1.0, target_ms=60_000.0, hardware=hw,
                        b_max=(4, 8, 16, 32, 64), token_limit=(0, 256, 512),
                        truncation_cap=0.05, token_law="azure_2023_conv_output",
                        replicas=tuple(range(1, 9)))

    def accepts(self, hw) -> bool:
        return isinstance(hw, Hardware) and bool(hw.k_s)

    def check(self, spec) -> None:
        Choice("token_law", tuple(sorted(token_law_presets()))).check(spec.token_law)
        if spec.queue_delay_ms != (0.0,):
            raise ValueError("queue_delay_ms applies to the GPU workload only; an LLM "
                             "plan takes (0,)")

    def truncated_fraction(self, spec, token_limit) -> float:
        return token_law(spec.token_law, token_limit)[1]

    def capacity_per_s(self, spec, hw, b_max, token_limit) -> float:
        law, _ = token_law(spec.token_law, token_limit)
        return float(stability_limit("dynamic", law, hw.k_s, b_max=b_max))

    def exact_mean(self, spec, hw, rate_per_s, b_max, token_limit):
        law, _ = token_law(spec.token_law, token_limit)
        sol = dynamic_solution(rate_per_s, law, hw.k_s, b_max)
        if sol.converged and math.isfinite(sol.mean_sojourn_s):
            return float(ms_from_s(sol.mean_sojourn_s)), sol.mean_batch_size, sol.utilization
        return None

    def simulate(self, spec, hw, b_max, queue_delay_ms, token_limit, replicas, *, arrivals,
                 n_jobs, seed) -> dict:
        rate = spec.rate_per_s / replicas
        per_replica = _thinned(arrivals, replicas)
        summary = spec.percentile in PERCENTILES
        law, _ = token_law(spec.token_law, int(token_limit))
        r = simulate("dynamic", rate, law, hw.k_s, b_max=int(b_max), n_jobs=n_jobs, seed=seed,
                     return_records=not summary, arrivals=per_replica)
        if summary:
            pct = getattr(r, f"p{spec.percentile:g}_s")
        else:
            rec = r.records
            sojourn = (rec.finish_s - rec.arrival_s)[warmup_count(rec.arrival_s.size, None):]
            pct = percentiles(sojourn[np.isfinite(sojourn)], [spec.percentile])[0]
        return dict(latency_percentile_ms=float(ms_from_s(float(pct))),
                    mean_latency_ms=float(ms_from_s(float(r.mean_latency_s))),
                    ci95_ms=float(ms_from_s(float(r.ci95_s))),
                    mean_batch_size=float(r.mean_batch_size),
                    utilization=float(r.utilization))

    def settings_text(self, spec, row) -> str:
        b, _, limit = self.settings_row(row)
        return f"b_max {b}" + (f", token limit {limit:,}" if limit > 0 else ", no token limit")


@lru_cache(maxsize=None)
def _presets() -> dict:
    """Each LLM batch-time preset (``presets/llm_batching``) that a price preset lists,
    priced at its GPUs' share of the instance; busy power the GPUs' datasheet maximum."""
    from ..hardware import price_of, short_name
    out = {}
    for pid, pre in llm_batch_time_presets().items():
        price, gpus = price_of(pid)
        if price is None:
            continue
        out[pid] = Hardware(name=short_name(pre.name),
                            price_usd_per_hour=price.usd_per_gpu_hour * gpus,
                            busy_power_w=price.board_power_w * gpus, k_s=pre.k, profile=pid,
                            source=f"{pre.source}. Price: {price.source}")
    return out


FAMILY = LlmBatch()
__all__ = ["LlmBatch", "FAMILY", "DEFAULT_PROFILES"]
