"""What a capacity plan searches: the traffic, the SLA, the candidate hardware with its
price, and the ranges of the settings (``PlanSpec``, ``Hardware``), validated on
construction, and the presets that fill them (``hardware_presets``, ``default_spec``).

Units: the total request rate in requests/s, latencies in ms, energy in J per request,
prices in $ per hour, power in W.  A GPU workload's batch time is τ[b] = αb + τ0 (ms,
Inoue 2021 eq 25); an LLM workload's is H(b, l) = k1·b + k2 + k3·b·l + k4·l (s, Yang et
al. eq 18) with l the longest output of the batch in tokens.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
import math

import numpy as np

from ..presets import (batch_profiles, hardware_prices, llm_batch_time_presets,
                       token_law_presets)

WORKLOADS = ("gpu", "llm")
ARRIVAL_KINDS = ("poisson", "bursty", "mmpp2", "replay")
MAX_CONFIGURATIONS = 200_000      # the largest grid one plan prices
MAX_REPLICAS = 10_000
MAX_CONFIRM = 50


def _number(value, name: str, *, low=None, high=None, low_open=False, whole=False,
            allow_inf=False) -> float:
    """``value`` as a float in its range, else ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:                    # a Python int beyond any float
        raise ValueError(f"{name} must be a number within float range, got {value!r}") from None
    if math.isnan(v) or (math.isinf(v) and not (allow_inf and v > 0)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low:g}, got {v:g}")
    if high is not None and v > high:
        raise ValueError(f"{name} must be <= {high:g}, got {v:g}")
    if whole and math.isfinite(v) and v != round(v):
        raise ValueError(f"{name} must be a whole number, got {v:g}")
    return v


def _whole(value, name: str, low: int, high: int) -> int:
    """``value`` as an exact int in [low, high] (an int, or a float with a whole value
    below 2**53, where floats hold every whole number), else ``ValueError`` naming it."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) \
            and value == round(value) and abs(value) < 2 ** 53:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name} must be a whole number in [{low}, {high}], got {value!r}")
    return int(value)


def _values(values, name: str, **rule) -> tuple:
    """A non-empty tuple of numbers each within ``rule``, sorted, without repeats."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be a list of numbers, got {values!r}")
    items = [_number(v, name, **rule) for v in values]
    if not items:
        raise ValueError(f"{name} must hold at least one value")
    out = sorted(set(items))
    return tuple(int(v) for v in out) if rule.get("whole") else tuple(out)


@dataclass(frozen=True)
class Hardware:
    """One candidate server and its price.

    ``price_usd_per_hour``: what one replica costs ($/h; several GPUs where the model
    spans them).  ``busy_power_w`` / ``idle_power_w``: what it draws computing / idle (W).
    GPU workload: ``alpha_ms``, ``tau0_ms`` (τ[b] = αb + τ0, ms) and ``max_batch`` (the
    largest batch measured: larger b_max are not searched).  LLM workload: ``k_s`` =
    (k1 s/request, k2 s, k3 s/(token·request), k4 s/token).  ``profile``: the preset it
    came from ("" if typed in); ``source``: where its numbers come from.
    """

    name: str
    price_usd_per_hour: float
    busy_power_w: float = 0.0
    idle_power_w: float = 0.0
    alpha_ms: float = math.nan
    tau0_ms: float = math.nan
    max_batch: int = 0
    k_s: tuple = ()
    profile: str = ""
    source: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip() \
                or not self.name.isprintable():
            raise ValueError(f"hardware name must be a non-empty line of printable text, "
                             f"got {self.name!r}")
        where = f"hardware {self.name!r}:"
        object.__setattr__(self, "price_usd_per_hour", _number(
            self.price_usd_per_hour, f"{where} price_usd_per_hour", low=0.0, low_open=True))
        for key in ("busy_power_w", "idle_power_w"):
            object.__setattr__(self, key, _number(getattr(self, key), f"{where} {key}", low=0.0))
        if isinstance(self.k_s, (str, bytes)) or not hasattr(self.k_s, "__iter__"):
            raise ValueError(f"{where} k_s must be 4 numbers (k1, k2, k3, k4), got {self.k_s!r}")
        if len(tuple(self.k_s)):
            k = tuple(_number(v, f"{where} k_s", low=0.0) for v in self.k_s)
            if len(k) != 4 or k[0] <= 0:
                raise ValueError(f"{where} k_s must be 4 numbers (k1 > 0, k2, k3, k4 >= 0), "
                                 f"got {self.k_s!r}")
            object.__setattr__(self, "k_s", k)
        else:
            object.__setattr__(self, "k_s", ())
            object.__setattr__(self, "alpha_ms", _number(self.alpha_ms, f"{where} alpha_ms",
                                                         low=0.0, low_open=True))
            object.__setattr__(self, "tau0_ms", _number(self.tau0_ms, f"{where} tau0_ms",
                                                        low=0.0))
            object.__setattr__(self, "max_batch", int(_number(
                self.max_batch, f"{where} max_batch", low=1, whole=True)))
        for key in ("profile", "source"):
            if not isinstance(getattr(self, key), str):
                raise ValueError(f"{where} {key} must be text")

    @property
    def workload(self) -> str:
        """"llm" when it carries LLM batch-time coefficients, else "gpu"."""
        return "llm" if self.k_s else "gpu"


@dataclass(frozen=True)
class PlanSpec:
    """Everything a capacity plan needs: exactly what the planner page's inputs hold.

    Traffic: ``rate_per_s`` requests/s in total, arriving as ``arrivals_kind`` ("poisson";
    "bursty": a renewal process with gap SCV ``arrivals_scv``; "mmpp2": the MMPP-2 fitted
    to ``arrivals_trace``, an arrival preset's id or a trace file; "replay": the trace
    file ``arrivals_trace``).
    SLA: ``percentile`` % of requests within ``target_ms``; at most ``energy_cap_j`` J per
    request (inf: no cap); LLM: the token limit may cut at most ``truncation_cap`` of the
    replies (a fraction, 1: no cap).  Candidates: ``hardware``.  Ranges searched (every
    combination): ``b_max``, ``queue_delay_ms`` (the Triton batcher's max queue delay, 0:
    start a batch at once, the paper's policy; GPU workload), ``token_limit`` (largest
    output tokens, 0: none; LLM workload, drawn from the token-law preset ``token_law``),
    ``replicas``.  ``confirm``: how many of the cheapest are confirmed by simulation;
    ``seed``: the simulations' seed.
    """

    workload: str = "gpu"
    rate_per_s: float = 1000.0
    arrivals_kind: str = "poisson"
    arrivals_scv: float = 1.0
    arrivals_trace: str = ""
    percentile: float = 99.0
    target_ms: float = 100.0
    energy_cap_j: float = math.inf
    truncation_cap: float = 1.0
    hardware: tuple = ()
    b_max: tuple = (1, 2, 4, 8, 16, 32, 64, 128)
    queue_delay_ms: tuple = (0.0,)
    token_limit: tuple = (0,)
    token_law: str = ""
    replicas: tuple = tuple(range(1, 17))
    confirm: int = 5
    seed: int = 0

    def __post_init__(self):
        if self.workload not in WORKLOADS:
            raise ValueError(f"workload must be one of {WORKLOADS}, got {self.workload!r}")
        setv = lambda k, v: object.__setattr__(self, k, v)   # noqa: E731 (frozen fields)
        setv("rate_per_s", _number(self.rate_per_s, "rate_per_s", low=0.0, low_open=True))
        if self.arrivals_kind not in ARRIVAL_KINDS:
            raise ValueError(f"arrivals_kind must be one of {ARRIVAL_KINDS}, "
                             f"got {self.arrivals_kind!r}")
        setv("arrivals_scv", _number(self.arrivals_scv, "arrivals_scv", low=0.0, high=1e4,
                                     low_open=True))
        if not isinstance(self.arrivals_trace, str):
            raise ValueError("arrivals_trace must be text")
        if self.arrivals_kind in ("mmpp2", "replay") and not self.arrivals_trace:
            raise ValueError(f"arrivals_trace must name a trace for arrivals_kind "
                             f"{self.arrivals_kind!r}")
        setv("percentile", _number(self.percentile, "percentile", low=50.0, high=99.99))
        setv("target_ms", _number(self.target_ms, "target_ms", low=0.0, low_open=True))
        setv("energy_cap_j", _number(self.energy_cap_j, "energy_cap_j", low=0.0, low_open=True,
                                     allow_inf=True))
        setv("truncation_cap", _number(self.truncation_cap, "truncation_cap", low=0.0,
                                       high=1.0))
        hw = tuple(self.hardware) if isinstance(self.hardware, (list, tuple)) else None
        if not hw or not all(isinstance(h, Hardware) for h in hw):
            raise ValueError("hardware must list at least one Hardware")
        names = [h.name for h in hw]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"hardware names must be unique, {dup!r} appears twice")
        wrong = [h.name for h in hw if h.workload != self.workload]
        if wrong:
            raise ValueError(f"hardware {wrong[0]!r} does not describe a {self.workload} "
                             f"workload")
        setv("hardware", hw)
        setv("b_max", _values(self.b_max, "b_max", low=1, high=4096, whole=True))
        setv("queue_delay_ms", _values(self.queue_delay_ms, "queue_delay_ms", low=0.0,
                                       high=1e5))
        setv("token_limit", _values(self.token_limit, "token_limit", low=0, high=1 << 20,
                                    whole=True))
        setv("replicas", _values(self.replicas, "replicas", low=1, high=MAX_REPLICAS,
                                 whole=True))
        if not isinstance(self.token_law, str):
            raise ValueError(f"token_law must be a token-law preset id, got {self.token_law!r}")
        if self.workload == "llm":
            if self.token_law not in token_law_presets():
                raise ValueError(f"token_law must be one of {sorted(token_law_presets())}, "
                                 f"got {self.token_law!r}")
            if self.queue_delay_ms != (0.0,):
                raise ValueError("queue_delay_ms applies to the GPU workload only; an LLM "
                                 "plan takes (0,)")
        elif self.token_limit != (0,):
            raise ValueError("token_limit applies to the LLM workload only; a GPU plan "
                             "takes (0,)")
        setv("confirm", _whole(self.confirm, "confirm", 0, MAX_CONFIRM))
        setv("seed", _whole(self.seed, "seed", 0, 2 ** 63 - 1))
        n = self.n_configurations
        if n > MAX_CONFIGURATIONS:
            raise ValueError(f"the ranges make {n:,} configurations, at most "
                             f"{MAX_CONFIGURATIONS:,} per plan: narrow b_max, queue_delay_ms, "
                             f"token_limit or replicas")

    @property
    def n_configurations(self) -> int:
        """How many combinations the ranges make (before dropping b_max above a
        profile's largest measured batch)."""
        return (len(self.hardware) * len(self.b_max) * len(self.queue_delay_ms)
                * len(self.token_limit) * len(self.replicas))

    def hardware_named(self, name: str) -> Hardware:
        """The candidate called ``name`` (``ValueError`` naming it if there is none)."""
        for h in self.hardware:
            if h.name == name:
                return h
        raise ValueError(f"hardware: no candidate named {name!r}")

    def with_(self, **changes) -> "PlanSpec":
        """A copy with ``changes`` (validated again)."""
        return replace(self, **changes)


# ---------------------------------------------------------------- presets

def _price_of(profile_id: str):
    """(HardwarePrice, GPUs) of the price preset that lists ``profile_id``, or (None, 0)."""
    for price in hardware_prices().values():
        for pid, gpus in price.gpus_per_profile:
            if pid == profile_id:
                return price, gpus
    return None, 0


def short_name(name: str) -> str:
    """A preset's name without its provenance: the parts before the last " · " and no
    parenthesised remark ("T4 16GB · ResNet-50 · mixed precision · TensorFlow")."""
    parts = [p.split(" (")[0].strip() for p in name.split(" · ")]
    return " · ".join(parts[:4] if len(parts) > 4 else parts)


def hardware_presets(workload: str = "gpu") -> dict[str, Hardware]:
    """The candidates the presets make, keyed by profile id: each batch profile
    (``presets/gpu_batching``, fitted τ[b] = αb + τ0) or LLM batch-time preset
    (``presets/llm_batching``) that a price preset (``presets/hardware_prices``) lists,
    priced at its GPUs' share of the instance.  Busy power: the profile's largest measured
    board power if it has one, else the GPUs' datasheet maximum (an upper bound); idle
    power 0 W (unknown: type it in).  Read once per process (the files do not change)."""
    if workload not in WORKLOADS:
        raise ValueError(f"workload must be one of {WORKLOADS}, got {workload!r}")
    return dict(_hardware_presets(workload))


@lru_cache(maxsize=None)
def _hardware_presets(workload: str) -> dict[str, Hardware]:
    """The candidates of ``hardware_presets``, built once per process."""
    out = {}
    if workload == "gpu":
        for pid, prof in batch_profiles().items():
            price, gpus = _price_of(pid)
            if price is None:
                continue
            fit = prof.fit()
            power = (float(np.max(prof.power_w)) if prof.power_w is not None
                     else price.board_power_w * gpus)
            out[pid] = Hardware(name=short_name(prof.name), price_usd_per_hour=price.usd_per_gpu_hour * gpus,
                                busy_power_w=power, alpha_ms=fit.alpha_ms, tau0_ms=fit.tau0_ms,
                                max_batch=int(prof.batch_size[-1]), profile=pid,
                                source=f"{prof.source}. Price: {price.source}")
    else:
        for pid, pre in llm_batch_time_presets().items():
            price, gpus = _price_of(pid)
            if price is None:
                continue
            out[pid] = Hardware(name=short_name(pre.name), price_usd_per_hour=price.usd_per_gpu_hour * gpus,
                                busy_power_w=price.board_power_w * gpus, k_s=pre.k, profile=pid,
                                source=f"{pre.source}. Price: {price.source}")
    return out


DEFAULT_GPU_PROFILES = ("dle_tf_t4_resnet50_amp", "dle_tf_v100_16gb_resnet50_amp",
                        "dle_tf_a100_40gb_resnet50_amp")
DEFAULT_LLM_PROFILES = ("splitwise_a100_llama2_70b_tp8", "splitwise_h100_llama2_70b_tp8")


def default_spec(workload: str = "gpu") -> PlanSpec:
    """A plan to start from.  GPU: 2,000 images/s of ResNet-50 (measured T4, V100 and
    A100 profiles), 99 % within 10 ms, b_max 1-128, 1-32 replicas.  LLM: 1 request/s of
    Llama-2-70B on 8×A100 or 8×H100 with the Azure conversation trace's output tokens,
    99 % within 60 s, b_max 4-64, token limits none/512/256, 1-8 replicas, at most 5 %
    of replies cut."""
    presets = hardware_presets(workload)
    if workload == "gpu":
        hw = tuple(presets[p] for p in DEFAULT_GPU_PROFILES)
        return PlanSpec(workload="gpu", rate_per_s=2000.0, target_ms=10.0, hardware=hw,
                        replicas=tuple(range(1, 33)))
    hw = tuple(presets[p] for p in DEFAULT_LLM_PROFILES)
    return PlanSpec(workload="llm", rate_per_s=1.0, target_ms=60_000.0, hardware=hw,
                    b_max=(4, 8, 16, 32, 64), token_limit=(0, 256, 512), truncation_cap=0.05,
                    token_law="azure_2023_conv_output", replicas=tuple(range(1, 9)))


__all__ = ["ARRIVAL_KINDS", "MAX_CONFIGURATIONS", "WORKLOADS", "Hardware", "PlanSpec",
           "default_spec", "hardware_presets"]
