"""The candidate-hardware table: its columns for each workload family, the share link's
compact JSON (``encode``/``decode``: one list per row, the preset id first) and the
editor's table validated row by row (``from_frame``: a message naming the row and the
column of a bad cell).  Pure functions (no widgets); ``hardware_input`` draws the editor.

Columns come from the family's ``hardware_fields``: each plain number is an editable
column (``LABELS``), ``k_s`` four of them; a serving candidate's step cost (the fit of
its step times), KV bytes per token, block size and model are kept from its preset in a
hidden column (``FIXED``) and shown read-only (``STEP``, ``MODEL``).
"""
from __future__ import annotations

import json
import math

import pandas as pd

from engine.planner import FAMILIES, Hardware, ServingHardware, hardware_presets
from ui.memo import memo

from .serving_rows import fixed_fields, kept_fields, serving_fields, step_text

MAX_ROWS = 40
MAX_TEXT = 20_000                 # characters of the table in a share link, at most
PRESET, STEP, MODEL, FIXED = "preset", "step", "model", "fixed"
K_LABELS = ("k1 (s per request)", "k2 (s per batch)", "k3 (s per request·token)",
            "k4 (s per token)")
LABELS = {"name": "name", "price_usd_per_hour": "price ($/h)", "gpus": "GPUs",
          "kv_cache_tokens": "KV cache (tokens)", "busy_power_w": "busy power (W)",
          "idle_power_w": "idle power (W)", "alpha_ms": "α (ms per image)",
          "tau0_ms": "τ0 (ms per batch)", "max_batch": "largest batch measured",
          **{f"k{i + 1}": label for i, label in enumerate(K_LABELS)}}
WHOLE = ("max_batch", "gpus", "kv_cache_tokens")
OPTIONAL = ("kv_cache_tokens",)          # empty: not known (never binds)
KIND_WORDS = {"gpu": "GPU", "llm": "LLM", "serving": "LLM serving"}
FORMULA_START = ("=", "+", "-", "@")
TYPED_SOURCE = "typed in on the capacity-planner page"


def kind_of(workload: str) -> str:
    """The table's kind for a family: "serving" (``ServingHardware``), "llm" (batch
    times k1..k4) or "gpu" (α, τ0)."""
    fam = FAMILIES[workload]
    if fam.hardware_type is ServingHardware:
        return "serving"
    return "llm" if "k_s" in fam.hardware_fields else "gpu"


def columns(workload: str) -> dict:
    """{column: label} of the editable columns, in the family's field order."""
    out = {}
    for f in FAMILIES[workload].hardware_fields:
        if f == "k_s":
            out.update({f"k{i + 1}": K_LABELS[i] for i in range(4)})
        elif f in LABELS:
            out[f] = LABELS[f]
    return out


@memo(8)
def presets(workload: str) -> dict:
    """The workload's hardware presets (``engine.planner.hardware_presets``), by id
    (memoised: the profiles are fitted once; read only)."""
    return hardware_presets(workload)


def default_hardware(workload: str) -> tuple:
    """The default candidates of ``workload`` (those of its family's default spec)."""
    from engine.planner import default_spec
    return default_spec(workload).hardware


def _values(h) -> list:
    """A row of the link: [preset id, name, price, busy W, idle W, then α, τ0, largest
    batch (GPU), k1..k4 (LLM), or GPUs, KV tokens (or null), KV bytes per token, block
    size, model and the step cost (null: the preset's) for a serving candidate]."""
    head = [h.profile, h.name, h.price_usd_per_hour, h.busy_power_w, h.idle_power_w]
    if isinstance(h, ServingHardware):
        found = hardware_presets("llm_serving").get(h.profile)
        step = (None if found is not None and found.step_cost == h.step_cost
                else fixed_fields(h)["step_cost"])
        return head + [h.gpus, h.kv_cache_tokens, h.kv_bytes_per_token, h.block_size,
                       h.model, step]
    return head + (list(h.k_s) if h.workload == "llm" else [h.alpha_ms, h.tau0_ms,
                                                             h.max_batch])


def encode(hardware) -> str:
    """The table as compact JSON for the share link (``decode`` reads it back)."""
    return json.dumps([_values(h) for h in hardware], ensure_ascii=False,
                      separators=(",", ":"))


def source_of(profile: str, kind: str, fields: dict) -> str:
    """Where a row's numbers come from: the preset's source (said to be edited when any
    number differs from the preset), or typed in."""
    found = presets(_WORKLOAD[kind]).get(profile)
    if found is None:
        return TYPED_SOURCE
    same = all(getattr(found, k) == v for k, v in fields.items() if k not in ("name",))
    return found.source if same else f"{found.source} Edited on the capacity-planner page."


_WORKLOAD = {"gpu": "gpu", "llm": "llm", "serving": "llm_serving"}


def hardware(profile: str, kind: str, **fields):
    """A candidate of ``kind`` from a row's fields (``ValueError`` from the engine if
    invalid, or for a name a spreadsheet would read as a formula or with control
    characters: the name goes into the CSV exports)."""
    name = fields.get("name")
    if isinstance(name, str) and (name[:1] in FORMULA_START or not name.isprintable()):
        raise ValueError(f"hardware {name!r}: name must not start with = + - @ (a "
                         "spreadsheet would read it as a formula) nor hold control "
                         "characters")
    profile = profile if profile in presets(_WORKLOAD[kind]) else ""
    cls = ServingHardware if kind == "serving" else Hardware
    return cls(profile=profile, source=source_of(profile, kind, fields), **fields)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _row_kind(row) -> str | None:
    """"gpu", "llm" or "serving" for a well-formed link row, else None."""
    if not (isinstance(row, list) and len(row) >= 2
            and all(isinstance(v, str) for v in row[:2])):
        return None
    if len(row) in (8, 9) and all(_number(v) for v in row[2:]):
        return "gpu" if len(row) == 8 else "llm"
    if (len(row) == 11 and all(_number(v) for v in row[2:6]) and all(_number(v) for v in row[7:9])
            and (row[6] is None or _number(row[6])) and isinstance(row[9], str)
            and (row[10] is None or isinstance(row[10], dict))):
        return "serving"
    return None


def decode(text: str, workload: str | None = None) -> tuple:
    """The candidates of an ``encode``d table; ``ValueError`` saying what is wrong (also
    when ``workload`` is given and the rows describe another kind of hardware)."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise ValueError(f"expected a table of at most {MAX_TEXT:,} characters")
    try:
        rows = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("not a hardware table") from None
    if not isinstance(rows, list) or not 1 <= len(rows) <= MAX_ROWS:
        raise ValueError(f"expected a list of 1 to {MAX_ROWS} hardware rows")
    out, kinds = [], set()
    want = None if workload is None else kind_of(workload)
    for i, row in enumerate(rows):
        kind = _row_kind(row)
        if kind is None:
            raise ValueError(f"row {i + 1} is not a hardware row")
        if want is not None and kind != want:
            raise ValueError(f"row {i + 1} describes {KIND_WORDS[kind]} hardware, not "
                             f"{KIND_WORDS[want]}")
        kinds.add(kind)
        profile, name, price, busy, idle, *rest = row
        fields = dict(name=name, price_usd_per_hour=price, busy_power_w=busy,
                      idle_power_w=idle)
        try:
            if kind == "gpu":
                fields.update(alpha_ms=rest[0], tau0_ms=rest[1], max_batch=rest[2])
            elif kind == "llm":
                fields["k_s"] = tuple(float(v) for v in rest)
            else:
                fields.update(serving_fields(profile, rest))
            out.append(hardware(profile, kind, **fields))
        except (TypeError, ValueError) as err:
            raise ValueError(f"row {i + 1}: {err}") from None
    names = [h.name for h in out]
    if len(set(names)) != len(names):
        raise ValueError("two rows have the same name")
    if len(kinds) > 1:
        raise ValueError("the rows mix " + " and ".join(KIND_WORDS[k] for k in sorted(kinds))
                         + " hardware")
    return tuple(out)


def frame(hardware, workload: str) -> pd.DataFrame:
    """The editor's table of ``hardware``: the editable ``columns(workload)``, then (a
    serving family) the step cost and model shown read only, the preset and the hidden
    ``FIXED`` column (JSON of what a serving row keeps from its preset)."""
    labels = columns(workload)
    serving = kind_of(workload) == "serving"
    rows = []
    for h in hardware:
        row = {k: (h.k_s[int(k[1]) - 1] if k[:1] == "k" and k[1:].isdigit()
                   else getattr(h, k)) for k in labels}
        if serving:
            row.update({STEP: step_text(h.step_cost), MODEL: h.model,
                        FIXED: json.dumps(fixed_fields(h))})
        row[PRESET] = h.profile
        rows.append(row)
    extra = [STEP, MODEL, PRESET, FIXED] if serving else [PRESET]
    out = pd.DataFrame(rows, columns=[*labels, *extra])
    for k in WHOLE:
        if k in labels:
            out[k] = out[k].astype("Int64")
    return out


def _empty(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or (
        isinstance(v, str) and not v.strip())


def _cell_error(err: ValueError, name: str, labels: dict) -> tuple[str, str]:
    """(column label, what is wrong) of an engine error about a candidate."""
    text = str(err)
    prefix = f"hardware {name!r}: "
    text = text[len(prefix):] if text.startswith(prefix) else text
    key, _, rest = text.partition(" ")
    if key == "k_s":                          # "k_s k3 must be ...": the coefficient's column
        coefficient, _, what = rest.partition(" ")
        if coefficient in labels:
            return labels[coefficient], what
    if key in labels:
        return labels[key], rest
    return "", text


def _numbers(cells: dict, labels: dict, where: str) -> dict:
    numbers = {}
    for key, v in cells.items():
        if key == "name":
            continue
        if key in OPTIONAL and _empty(v):
            numbers[key] = None
            continue
        if _empty(v):
            raise ValueError(f"{where}, column '{labels[key]}': empty cell")
        try:
            numbers[key] = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{where}, column '{labels[key]}': not a number") from None
        x = numbers[key]
        if key in WHOLE and math.isfinite(x) and x == round(x):
            numbers[key] = int(x)
    return numbers


def _k_fields(numbers: dict) -> dict:
    """The four coefficient columns as the candidate's ``k_s`` (the engine checks them:
    ``engine.planner.checks.k_in``)."""
    return dict(k_s=tuple(numbers.pop(f"k{j + 1}") for j in range(4)), **numbers)


def from_frame(table: pd.DataFrame, workload: str) -> tuple:
    """The candidates of the editor's table; ``ValueError`` naming the row and column of
    the first bad cell ("row 2 (T4), column 'price ($/h)': must be > 0, got -1").  Rows
    left entirely empty (a row just added) are skipped."""
    labels, kind = columns(workload), kind_of(workload)
    out, seen = [], {}
    for i, rec in enumerate(table.to_dict("records")):
        cells = {k: rec.get(k) for k in labels}
        if all(_empty(v) for v in cells.values()):
            continue
        name = "" if _empty(cells["name"]) else str(cells["name"]).strip()
        where = f"row {i + 1}" + (f" ({name})" if name else "")
        if not name:
            raise ValueError(f"{where}, column 'name': empty cell")
        numbers = _numbers(cells, labels, where)
        fields = _k_fields(numbers) if kind == "llm" else dict(numbers)
        if name in seen:
            raise ValueError(f"{where}, column 'name': the same name as row {seen[name]}; "
                             "names must be unique")
        seen[name] = i + 1
        preset = "" if _empty(rec.get(PRESET)) else str(rec.get(PRESET))
        if kind == "serving":
            fields.update(kept_fields(rec.get(FIXED), preset, where))
        try:
            out.append(hardware(preset, kind, name=name, **fields))
        except ValueError as err:
            label, what = _cell_error(err, name, {**labels, "k_s": "k1..k4"})
            column = f", column '{label}'" if label else ""
            raise ValueError(f"{where}{column}: {what}") from None
    if not out:
        raise ValueError("the table has no rows: add at least one candidate")
    if len(out) > MAX_ROWS:
        raise ValueError(f"at most {MAX_ROWS} candidates, got {len(out)}")
    return tuple(out)


def summary(hardware) -> str:
    """The candidates in a few words: "3 candidates: T4 16GB ($0.526/h), ..."."""
    names = [f"{h.name.split(' · ')[0]} (${h.price_usd_per_hour:,.4g}/h)" for h in hardware]
    return f"{len(names)} candidate{'s' if len(names) != 1 else ''}: " + ", ".join(names)


__all__ = ["columns", "decode", "encode", "frame", "from_frame", "kind_of", "summary"]
