"""The candidate-hardware input: an editable table of servers and their prices.

The table in use travels in the share link as compact JSON (``encode``/``decode``: one
list per row, the preset id first) and is validated row by row (``from_frame``): a bad
cell gives a message naming the row and the column, and the last valid table stays in
use while the user's edits stay in the editor.  A multiselect of presets adds or removes
preset rows; each row's source (the preset's measurement and price) is listed under it.
"""
from __future__ import annotations

import json
import math

import pandas as pd
import streamlit as st

from engine.planner import Hardware, hardware_presets
from engine.planner.spec import DEFAULT_GPU_PROFILES, DEFAULT_LLM_PROFILES
from ui.memo import memo
from ui.share import inert

MAX_ROWS = 40
MAX_TEXT = 20_000                 # characters of the table in a share link, at most
PRESET = "preset"
COMMON = {"name": "name", "price_usd_per_hour": "price ($/h)",
          "busy_power_w": "busy power (W)", "idle_power_w": "idle power (W)"}
GPU_COLUMNS = {**COMMON, "alpha_ms": "α (ms per image)", "tau0_ms": "τ0 (ms per batch)",
               "max_batch": "largest batch measured"}
K_COLUMNS = ("k1 (s per request)", "k2 (s per batch)", "k3 (s per request·token)",
             "k4 (s per token)")
LLM_COLUMNS = {**COMMON, **{f"k{i + 1}": label for i, label in enumerate(K_COLUMNS)}}
COLUMNS = {"gpu": GPU_COLUMNS, "llm": LLM_COLUMNS}
DEFAULT_PROFILES = {"gpu": DEFAULT_GPU_PROFILES, "llm": DEFAULT_LLM_PROFILES}
HELP = {"name": "What the results call this candidate (unique).",
        "price_usd_per_hour": "What one replica costs per hour, $ (all its GPUs).",
        "busy_power_w": "Board power while a batch runs, W (all its GPUs).",
        "idle_power_w": "Board power while idle, W (0 if unknown: energy is then a lower "
                        "bound).",
        "alpha_ms": "Batch time τ[b] = αb + τ0: α, ms per image in the batch.",
        "tau0_ms": "Batch time τ[b] = αb + τ0: τ0, ms per batch.",
        "max_batch": "The largest batch the profile measured: larger b_max are not searched.",
        "k1": "Batch time H(b, l) = k1·b + k2 + k3·b·l + k4·l (s; b requests, l the "
              "longest reply in tokens): k1, s per request.",
        "k2": "H(b, l): k2, s per batch.", "k3": "H(b, l): k3, s per request per token.",
        "k4": "H(b, l): k4, s per token of the longest reply.",
        PRESET: "The preset a row came from (empty: typed in)."}
FORMULA_START = ("=", "+", "-", "@")
TYPED_SOURCE = "typed in on the capacity-planner page"
_BASE, _OUT, _SEEN = "_plan_hw_base", "_plan_hw_out", "_plan_hw_seen"
EDITOR, PICK = "plan_hw_table", "plan_hw_presets"


@memo(4)
def presets(workload: str) -> dict[str, Hardware]:
    """The workload's hardware presets (``engine.planner.hardware_presets``), by id
    (memoised: the profiles are fitted once; read only)."""
    return hardware_presets(workload)


def default_hardware(workload: str) -> tuple[Hardware, ...]:
    """The default candidates of ``workload`` (those of ``engine.planner.default_spec``)."""
    found = presets(workload)
    return tuple(found[p] for p in DEFAULT_PROFILES[workload])


def _values(h: Hardware) -> list:
    """A row of the link: [preset id, name, price, busy W, idle W, then α, τ0, largest
    batch (GPU) or k1..k4 (LLM)]."""
    head = [h.profile, h.name, h.price_usd_per_hour, h.busy_power_w, h.idle_power_w]
    return head + (list(h.k_s) if h.workload == "llm" else [h.alpha_ms, h.tau0_ms, h.max_batch])


def encode(hardware) -> str:
    """The table as compact JSON for the share link (``decode`` reads it back)."""
    return json.dumps([_values(h) for h in hardware], ensure_ascii=False,
                      separators=(",", ":"))


def source_of(profile: str, workload: str, fields: dict) -> str:
    """Where a row's numbers come from: the preset's source (said to be edited when any
    number differs from the preset), or typed in."""
    found = presets(workload).get(profile)
    if found is None:
        return TYPED_SOURCE
    same = all(getattr(found, k) == v for k, v in fields.items() if k not in ("name",))
    return found.source if same else f"{found.source} Edited on the capacity-planner page."


def hardware(profile: str, workload: str, **fields) -> Hardware:
    """A ``Hardware`` from a row's fields (``ValueError`` from the engine if invalid, or
    for a name a spreadsheet would read as a formula or with control characters: the
    name goes into the CSV exports)."""
    name = fields.get("name")
    if isinstance(name, str) and (name[:1] in FORMULA_START or not name.isprintable()):
        raise ValueError(f"hardware {name!r}: name must not start with = + - @ (a "
                         "spreadsheet would read it as a formula) nor hold control "
                         "characters")
    profile = profile if profile in presets(workload) else ""
    return Hardware(profile=profile, source=source_of(profile, workload, fields), **fields)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def decode(text: str, workload: str | None = None) -> tuple[Hardware, ...]:
    """The candidates of an ``encode``d table; ``ValueError`` saying what is wrong (also
    when ``workload`` is given and the rows describe the other one)."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise ValueError(f"expected a table of at most {MAX_TEXT:,} characters")
    try:
        rows = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("not a hardware table") from None
    if not isinstance(rows, list) or not 1 <= len(rows) <= MAX_ROWS:
        raise ValueError(f"expected a list of 1 to {MAX_ROWS} hardware rows")
    out = []
    for i, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) in (8, 9)
                and all(isinstance(v, str) for v in row[:2])
                and all(_number(v) for v in row[2:])):
            raise ValueError(f"row {i + 1} is not a hardware row")
        kind = "gpu" if len(row) == 8 else "llm"
        if workload is not None and kind != workload:
            raise ValueError(f"row {i + 1} describes {kind.upper()} hardware, not "
                             f"{workload.upper()}")
        profile, name, price, busy, idle, *rest = row
        fields = dict(name=name, price_usd_per_hour=price, busy_power_w=busy,
                      idle_power_w=idle)
        if kind == "gpu":
            fields.update(alpha_ms=rest[0], tau0_ms=rest[1], max_batch=rest[2])
        else:
            fields["k_s"] = tuple(float(v) for v in rest)
        try:
            out.append(hardware(profile, kind, **fields))
        except ValueError as err:
            raise ValueError(f"row {i + 1}: {err}") from None
    names = [h.name for h in out]
    if len(set(names)) != len(names):
        raise ValueError("two rows have the same name")
    if len({h.workload for h in out}) > 1:
        raise ValueError("the rows mix GPU and LLM hardware")
    return tuple(out)


def frame(hardware, workload: str) -> pd.DataFrame:
    """The editor's table of ``hardware`` (columns: ``COLUMNS[workload]`` and the preset)."""
    rows = []
    for h in hardware:
        row = {"name": h.name, "price_usd_per_hour": h.price_usd_per_hour,
               "busy_power_w": h.busy_power_w, "idle_power_w": h.idle_power_w}
        if workload == "gpu":
            row.update(alpha_ms=h.alpha_ms, tau0_ms=h.tau0_ms, max_batch=h.max_batch)
        else:
            row.update({f"k{i + 1}": k for i, k in enumerate(h.k_s)})
        row[PRESET] = h.profile
        rows.append(row)
    columns = [*COLUMNS[workload], PRESET]
    out = pd.DataFrame(rows, columns=columns)
    if workload == "gpu":
        out["max_batch"] = out["max_batch"].astype("Int64")
    return out


def _empty(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or (
        isinstance(v, str) and not v.strip())


def _cell_error(err: ValueError, name: str, labels: dict) -> tuple[str, str]:
    """(column label, what is wrong) of an engine ``Hardware`` error."""
    text = str(err)
    prefix = f"hardware {name!r}: "
    text = text[len(prefix):] if text.startswith(prefix) else text
    key, _, rest = text.partition(" ")
    if key in labels:
        return labels[key], rest
    return "", text


def from_frame(table: pd.DataFrame, workload: str) -> tuple[Hardware, ...]:
    """The candidates of the editor's table; ``ValueError`` naming the row and column of
    the first bad cell ("row 2 (T4), column 'price ($/h)': must be > 0, got -1").  Rows
    left entirely empty (a row just added) are skipped."""
    labels = COLUMNS[workload]
    out, seen = [], {}
    for i, rec in enumerate(table.to_dict("records")):
        cells = {k: rec.get(k) for k in labels}
        if all(_empty(v) for v in cells.values()):
            continue
        name = "" if _empty(cells["name"]) else str(cells["name"]).strip()
        where = f"row {i + 1}" + (f" ({name})" if name else "")
        for key, label in labels.items():
            if _empty(cells[key]):
                raise ValueError(f"{where}, column '{label}': empty cell")
        numbers = {}
        for key, v in cells.items():
            if key == "name":
                continue
            try:
                numbers[key] = float(v)
            except (TypeError, ValueError):
                raise ValueError(f"{where}, column '{labels[key]}': not a number") from None
        if workload == "llm":
            for j in range(4):
                key = f"k{j + 1}"
                low_ok = numbers[key] > 0 if j == 0 else numbers[key] >= 0
                if not (math.isfinite(numbers[key]) and low_ok):
                    bound = "> 0" if j == 0 else ">= 0"
                    raise ValueError(f"{where}, column '{labels[key]}': must be {bound}, got "
                                     f"{numbers[key]:g}")
            fields = dict(k_s=tuple(numbers.pop(f"k{j + 1}") for j in range(4)), **numbers)
        else:
            fields = dict(numbers)
            if math.isfinite(fields["max_batch"]) and fields["max_batch"] == round(
                    fields["max_batch"]):
                fields["max_batch"] = int(fields["max_batch"])
        if name in seen:
            raise ValueError(f"{where}, column 'name': the same name as row {seen[name]}; "
                             "names must be unique")
        seen[name] = i + 1
        preset = rec.get(PRESET)
        try:
            out.append(hardware("" if _empty(preset) else str(preset), workload, name=name,
                                **fields))
        except ValueError as err:
            label, what = _cell_error(err, name, {**labels, "k_s": "k1..k4"})
            column = f", column '{label}'" if label else ""
            raise ValueError(f"{where}{column}: {what}") from None
    if not out:
        raise ValueError("the table has no rows: add at least one candidate")
    if len(out) > MAX_ROWS:
        raise ValueError(f"at most {MAX_ROWS} candidates, got {len(out)}")
    return tuple(out)


def _column_config(workload: str) -> dict:
    cfg = {"name": st.column_config.TextColumn(COLUMNS[workload]["name"], help=HELP["name"],
                                               required=True),
           PRESET: st.column_config.TextColumn("preset", help=HELP[PRESET], disabled=True)}
    for key, label in COLUMNS[workload].items():
        if key == "name":
            continue
        whole = key == "max_batch"
        cfg[key] = st.column_config.NumberColumn(
            label, help=HELP[key], min_value=1 if whole else 0.0, step=1 if whole else None,
            format="%d" if whole else "%.6g")
    return cfg


def _reconcile(workload: str) -> None:
    """After the presets multiselect changed: drop the rows of presets taken out, append
    rows for presets put in; every other row (and edit) stays as it is."""
    ss = st.session_state
    chosen = list(ss.get(PICK) or [])
    table = ss.get(_OUT)
    if table is None:
        table = ss.get(_BASE, frame((), workload))
    keep = table[[_empty(p) or p in chosen for p in table[PRESET]]]
    have = {p for p in keep[PRESET] if not _empty(p)}
    found = presets(workload)
    added = frame([found[p] for p in chosen if p not in have and p in found], workload)
    parts = [t for t in (keep, added) if len(t)]
    ss[_BASE] = (pd.concat(parts, ignore_index=True) if parts
                 else frame((), workload)).reset_index(drop=True)


def table_input(key: str, workload: str) -> tuple[tuple[Hardware, ...], str | None]:
    """Draw the hardware table (its value in the share field ``key``: the encoded
    table) and the presets multiselect; returns (the candidates in use, the problem with
    the table as edited or None).  On a problem the last valid table stays in use."""
    ss = st.session_state
    if ss.get(_SEEN) != ss[key]:                  # first run, a link, a plan file, a switch
        ss[_BASE] = frame(decode(ss[key], workload), workload)
        ss[_SEEN] = ss[key]
        ss.pop(_OUT, None)
    edited = st.data_editor(ss[_BASE], num_rows="dynamic", key=EDITOR, hide_index=True,
                            column_config=_column_config(workload), width="stretch")
    ss[_OUT] = edited
    problem, in_use = None, None
    try:
        in_use = from_frame(edited, workload)
    except ValueError as err:
        problem = str(err)
        in_use = decode(ss[key], workload)
    else:
        ss[key] = ss[_SEEN] = encode(in_use)
    found = presets(workload)
    ss[PICK] = [p for p in edited[PRESET] if not _empty(p) and p in found]
    st.multiselect("Presets in the table", list(found), key=PICK,
                   format_func=lambda p: found[p].name, on_change=_reconcile, args=(workload,),
                   help="Measured batch profiles (GPU) or batch-time fits (LLM) with list "
                        "prices: pick one to add its row, remove it to drop the row. Edit "
                        "any cell above; add rows of your own at the bottom of the table.")
    with st.expander("Where the numbers come from"):
        for h in in_use:
            st.markdown(f"**{inert(h.name)}**: {inert(h.source)}")
    return in_use, problem


def summary(hardware) -> str:
    """The candidates in a few words: "3 candidates: T4 16GB ($0.526/h), ..."."""
    names = [f"{h.name.split(' · ')[0]} (${h.price_usd_per_hour:,.4g}/h)" for h in hardware]
    return f"{len(names)} candidate{'s' if len(names) != 1 else ''}: " + ", ".join(names)

