"""The field values (by key) that describe a ``PlanSpec``: the inverse of
``inputs.plan_spec``, for a family's defaults (``workload_defaults``: a family shown for
the first time, a link asking for it) and a plan file opened (``plan_file.fill``)."""
from __future__ import annotations

import math

from engine.planner import default_spec

from . import hardware as hw_table
from .fields import (DISPATCH_POLICY, ENERGY, ENERGY_ON, HARDWARE, KNOB_INPUTS, LINK,
                     LINK_GBPS, LINK_MS, OUTPUT_LAWS, PCT, PROMPT_LAW, PROMPT_LAWS, RANGE_KNOBS,
                     RATE, SLA, TARGET, TARGET_UNIT, TOKEN_LAW, TOKENS, TRUNCATION, WORKLOAD,
                     link_name, uses)


def values_of(spec) -> tuple[dict, list[str]]:
    """The field values (by key) that describe ``spec`` (its workload's fields; the
    common ones besides the workload are left as they are), and notes on what the page
    cannot take as it is (non-consecutive replica counts, a trace file to upload...)."""
    fam, use = spec.family, uses(spec.family)
    cap = spec.energy_cap_j
    v = {WORKLOAD.key: spec.workload, RATE.key: spec.rate_per_s,
         ENERGY_ON.key: math.isfinite(cap), HARDWARE.key: hw_table.encode(spec.hardware)}
    notes = []
    if math.isfinite(cap):
        v[ENERGY.key] = cap
    if "sla_rows" in use:
        v[SLA.key] = tuple(spec.sla)
    else:
        unit = fam.time_unit
        v.update({PCT.key: spec.percentile, TARGET_UNIT.key: unit,
                  TARGET.key: spec.target_ms / (1000.0 if unit == "s" else 1.0)})
    for knob in fam.knobs:
        values = tuple(getattr(spec, knob.name))
        if knob.name in RANGE_KNOBS:
            lo, hi = RANGE_KNOBS[knob.name]
            v[lo.key], v[hi.key] = min(values), max(values)
            if len(values) != max(values) - min(values) + 1:
                shown = ", ".join(map(str, values[:8])) + ("…" if len(values) > 8 else "")
                notes.append(f"The file's {knob.label.lower()} ({shown}) are searched here "
                             f"as every count from {min(values)} to {max(values)}.")
        elif knob.name in KNOB_INPUTS:
            v[KNOB_INPUTS[knob.name].field.key] = list(values)
    if "truncation" in use:
        v[TRUNCATION.key] = 100.0 * spec.truncation_cap
    if "tokens" in use:
        v[TOKENS.key] = "trace" if spec.token_trace else "laws"
        if spec.token_trace:
            notes.append(f"The plan reads prompts and replies from the trace file "
                         f"{spec.token_trace}: upload it in the workload input (until then "
                         "the page uses the token laws).")
        if spec.prompt_law in PROMPT_LAWS:
            v[PROMPT_LAW.key] = spec.prompt_law
        elif spec.prompt_law:
            notes.append(f"Prompt law {spec.prompt_law} is not a prompt-token law: kept the "
                         "page's.")
    if ("reply_law" in use or "tokens" in use) and spec.token_law:
        if spec.token_law in OUTPUT_LAWS:
            v[TOKEN_LAW.key] = spec.token_law
        else:
            notes.append(f"Token law {spec.token_law} is not an output-token law: kept the "
                         "page's.")
    if "dispatch" in use:
        v[DISPATCH_POLICY.key] = spec.dispatch
    if "link" in use:
        v.update({LINK.key: link_name(spec.link_gb_per_s), LINK_GBPS.key: spec.link_gb_per_s,
                  LINK_MS.key: spec.link_latency_ms})
    return v, notes


def workload_defaults(workload: str) -> dict:
    """The inputs of ``engine.planner.default_spec(workload)``, by field key."""
    return values_of(default_spec(workload))[0]
