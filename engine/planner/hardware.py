"""The candidates a plan prices: ``Hardware`` (one server of the GPU batching or LLM
batch families: its batch time and price) and ``ServingHardware`` (one server of the LLM
serving families: a step cost, its KV cache and price), and the presets that make them.

Units: prices in $ per hour, power in W; a GPU batch time τ[b] = αb + τ0 (ms, Inoue 2021
eq 25); an LLM batch time H(b, l) = k1·b + k2 + k3·b·l + k4·l (s, Yang et al. eq 18); a
serving step in ms (``engine.llm_serving.StepCost``).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from ..core.domains import (BATCH_ALPHA_MS, BATCH_TAU0_MS, BLOCK_SIZE, KV_BYTES,
                            KV_CACHE_TOKENS, MAX_BATCH, POWER_W, PRICE_USD_PER_HOUR,
                            SERVER_GPUS)
from ..llm_serving import StepCost
from ..presets import hardware_prices
from .checks import k_in, number_in, whole_in


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
        where = _priced(self)
        if isinstance(self.k_s, (str, bytes)) or not hasattr(self.k_s, "__iter__"):
            raise ValueError(f"{where} k_s must be 4 numbers (k1, k2, k3, k4), got {self.k_s!r}")
        if len(tuple(self.k_s)):
            object.__setattr__(self, "k_s", k_in(self.k_s, f"{where} k_s"))
        else:
            object.__setattr__(self, "k_s", ())
            object.__setattr__(self, "alpha_ms", number_in(self.alpha_ms, BATCH_ALPHA_MS,
                                                         f"{where} alpha_ms"))
            object.__setattr__(self, "tau0_ms", number_in(self.tau0_ms, BATCH_TAU0_MS,
                                                        f"{where} tau0_ms"))
            object.__setattr__(self, "max_batch", int(number_in(
                self.max_batch, MAX_BATCH, f"{where} max_batch")))
        for key in ("profile", "source"):
            if not isinstance(getattr(self, key), str):
                raise ValueError(f"{where} {key} must be text")

    @property
    def workload(self) -> str:
        """"llm" when it carries LLM batch-time coefficients, else "gpu"."""
        return "llm" if self.k_s else "gpu"


@dataclass(frozen=True)
class ServingHardware:
    """One candidate server of the LLM serving families and its price.

    ``step_cost``: the time of one scheduler step (``engine.llm_serving.StepCost``, ms);
    ``kv_cache_tokens``: the KV cache's size in tokens (None: not known, never binds);
    ``block_size``: tokens per KV block; ``kv_bytes_per_token``: bytes one token's KV
    takes (what moves from a prefill to a decode instance); ``gpus``: GPUs one server
    uses (its tensor-parallel degree); ``price_usd_per_hour``: what one server costs
    ($/h, all its GPUs); ``busy_power_w`` / ``idle_power_w`` (W, all its GPUs);
    ``model``: the model it serves; ``profile``: the preset it came from ("" if typed
    in); ``source``: where its numbers come from.
    """

    name: str
    price_usd_per_hour: float
    step_cost: StepCost
    kv_cache_tokens: int | None
    kv_bytes_per_token: float
    block_size: int = 16
    gpus: int = 1
    busy_power_w: float = 0.0
    idle_power_w: float = 0.0
    model: str = ""
    profile: str = ""
    source: str = ""

    def __post_init__(self):
        where = _priced(self)
        if not isinstance(self.step_cost, StepCost):
            raise ValueError(f"{where} step_cost must be an engine.llm_serving.StepCost, got "
                             f"{type(self.step_cost).__name__}")
        if self.kv_cache_tokens is not None:
            object.__setattr__(self, "kv_cache_tokens", whole_in(
                self.kv_cache_tokens, KV_CACHE_TOKENS, f"{where} kv_cache_tokens"))
        object.__setattr__(self, "block_size", whole_in(self.block_size, BLOCK_SIZE,
                                                        f"{where} block_size"))
        object.__setattr__(self, "kv_bytes_per_token", number_in(
            self.kv_bytes_per_token, KV_BYTES, f"{where} kv_bytes_per_token"))
        object.__setattr__(self, "gpus", whole_in(self.gpus, SERVER_GPUS, f"{where} gpus"))
        for key in ("model", "profile", "source"):
            if not isinstance(getattr(self, key), str):
                raise ValueError(f"{where} {key} must be text")

    @property
    def workload(self) -> str:
        """"serving": a server of the LLM serving families."""
        return "serving"


def _priced(hw) -> str:
    """Check a candidate's name, price and power (in place); the prefix naming it in
    later messages."""
    if not isinstance(hw.name, str) or not hw.name.strip() or not hw.name.isprintable():
        raise ValueError(f"hardware name must be a non-empty line of printable text, "
                         f"got {hw.name!r}")
    where = f"hardware {hw.name!r}:"
    object.__setattr__(hw, "price_usd_per_hour", number_in(
        hw.price_usd_per_hour, PRICE_USD_PER_HOUR, f"{where} price_usd_per_hour"))
    for key in ("busy_power_w", "idle_power_w"):
        object.__setattr__(hw, key, number_in(getattr(hw, key), POWER_W, f"{where} {key}"))
    return where


# ---------------------------------------------------------------- presets

def price_of(profile_id: str):
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


__all__ = ["Hardware", "ServingHardware", "price_of", "short_name"]
