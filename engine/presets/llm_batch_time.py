"""LLM batch-time presets (``presets/llm_batching/``): H(b, l) = k1·b + k2 + k3·b·l + k4·l
(Yang et al. eq 18), seconds, with the server's KV cache.  The file's keys are the
dataclass's fields; each coefficient is checked against its domain in
``engine.core.domains`` (k1 and the KV capacity positive, the others ≥ 0); ``estimated``
lists the fields that were estimated rather than fitted."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.domains import (LLM_K1, LLM_K2, LLM_K3, LLM_K4, LLM_KV_CAPACITY,
                            LLM_PROMPT_TOKENS)
from .schema import PRESET_DIR, check_keys, load_folder, read_toml, scalars, schema

LLM_BATCH_TIME_DIR = PRESET_DIR / "llm_batching"

_DOMAINS = {"k1_s_per_request": LLM_K1, "k2_s": LLM_K2, "k3_s_per_token_per_request": LLM_K3,
            "k4_s_per_token": LLM_K4, "kv_capacity_tokens": LLM_KV_CAPACITY,
            "prompt_tokens": LLM_PROMPT_TOKENS}


@dataclass(frozen=True)
class LLMBatchTimePreset:
    """H(b, l) = k1·b + k2 + k3·b·l + k4·l (Yang et al. eq 18), seconds, with its KV cache."""

    id: str
    name: str
    source: str
    k1_s_per_request: float
    k2_s: float
    k3_s_per_token_per_request: float
    k4_s_per_token: float
    kv_capacity_tokens: float | None = None
    prompt_tokens: float = 0.0
    estimated: tuple = ()

    @property
    def k(self) -> tuple[float, float, float, float]:
        """(k1, k2, k3, k4) as ``engine.llm_batching`` takes them."""
        return (self.k1_s_per_request, self.k2_s, self.k3_s_per_token_per_request,
                self.k4_s_per_token)


def load_llm_batch_time(path) -> LLMBatchTimePreset:
    """Load and validate one LLM batch-time TOML file (``presets/llm_batching/``)."""
    data, where = read_toml(path)
    fields = schema(LLMBatchTimePreset)
    check_keys(data, tuple(fields), [k for k, (_, required) in fields.items() if required],
               where)
    values = scalars(LLMBatchTimePreset, data, where, _DOMAINS, skip=("estimated",))
    estimated = data.get("estimated", [])
    if not isinstance(estimated, list) or not all(
            isinstance(e, str) and e in fields for e in estimated):
        raise ValueError(f"{where}: field 'estimated' must list field names, got {estimated!r}")
    return LLMBatchTimePreset(**values, estimated=tuple(estimated))


def llm_batch_time_presets(directory=LLM_BATCH_TIME_DIR) -> dict[str, LLMBatchTimePreset]:
    """All LLM batch-time presets in ``directory`` (one TOML file each), keyed by id."""
    return load_folder(directory, load_llm_batch_time)
