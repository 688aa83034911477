"""What a serving candidate's row keeps besides its editable cells: its step cost (the
fit of its step times), KV bytes per token, block size and model, from its preset or
from the hidden column of the hardware editor (``hardware.FIXED``: JSON), and in the
share link (the step cost null when it is the preset's)."""
from __future__ import annotations

from dataclasses import fields as dataclass_fields
import json

from engine.llm_serving import StepCost
from engine.planner import ServingHardware, hardware_presets

STEP_FIELDS = tuple(f.name for f in dataclass_fields(StepCost) if f.name != "label")


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fixed_fields(h: ServingHardware) -> dict:
    """What a serving row keeps from its preset: step cost, KV bytes, block, model."""
    return {"step_cost": {k: getattr(h.step_cost, k) for k in STEP_FIELDS},
            "kv_bytes_per_token": h.kv_bytes_per_token, "block_size": h.block_size,
            "model": h.model}


def serving_fields(profile: str, rest: list) -> dict:
    gpus, kv, kv_bytes, block, model, step = rest
    if step is None:
        found = hardware_presets("llm_serving").get(profile)
        if found is None:
            raise ValueError("a step cost is needed when the row names no preset")
        cost = found.step_cost
    else:
        unknown = sorted(set(step) - set(STEP_FIELDS))
        if unknown or not all(_number(step.get(k, 0.0)) for k in STEP_FIELDS):
            raise ValueError(f"the step cost takes numbers for {', '.join(STEP_FIELDS)}")
        cost = StepCost(**step, label="from the share link")
    return dict(gpus=gpus, kv_cache_tokens=kv, kv_bytes_per_token=kv_bytes, block_size=block,
                model=model, step_cost=cost)


def step_text(cost: StepCost) -> str:
    """A step cost in a few words: "43.5 ms + 0.324 ms per prompt token + 0.205 ms per
    running request"."""
    return (f"{cost.base_ms:.3g} ms + {cost.prefill_ms_per_token:.3g} ms per prompt token + "
            f"{cost.decode_ms_per_seq:.3g} ms per running request")


def kept_fields(text, preset: str, where: str) -> dict:
    """What a serving row of the editor keeps: its hidden JSON ``text``, else its
    preset's (``ValueError`` when it has neither: a row typed in)."""
    if isinstance(text, str) and text.strip():
        kept = json.loads(text)
        kept["step_cost"] = StepCost(**kept["step_cost"])
        return kept
    found = hardware_presets("llm_serving").get(preset)
    if found is None:
        raise ValueError(f"{where}: a serving candidate needs a preset's step cost: add one "
                         "from the presets below and edit its row (or give the step cost "
                         "in a plan file)")
    return {**fixed_fields(found), "step_cost": found.step_cost}
