"""The hardware-table input's parsing (no Streamlit): the link's JSON both ways, and the
editor's table validated row by row with messages naming the row and the column."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app_pages.planner import hardware as hw
from app_pages.planner.inputs import HARDWARE
from engine.planner import Hardware, default_spec, hardware_presets


@pytest.mark.parametrize("workload", ["gpu", "llm"])
def test_the_default_tables_round_trip(workload):
    table = default_spec(workload).hardware
    assert hw.decode(hw.encode(table), workload) == table
    assert hw.from_frame(hw.frame(table, workload), workload) == table


positive = st.floats(1e-3, 1e4, allow_nan=False, allow_infinity=False)


@given(st.lists(st.tuples(positive, positive, positive, st.integers(1, 4096)), min_size=1,
                max_size=5))
def test_any_valid_gpu_table_round_trips_through_the_link(rows):
    table = tuple(Hardware(name=f"gpu {i}", price_usd_per_hour=p, busy_power_w=w,
                           alpha_ms=a, tau0_ms=0.0, max_batch=b, source=hw.TYPED_SOURCE)
                  for i, (p, w, a, b) in enumerate(rows))
    text = hw.encode(table)
    assert hw.decode(text, "gpu") == table
    assert HARDWARE.parse(HARDWARE.format(text)) == text


@pytest.mark.parametrize("text, says", [
    ("[]", "1 to 40 hardware rows"), ("{}", "1 to 40"), ("NaN", "1 to 40"),
    ("inf", "not a hardware table"),
    ('[["", "x", 1, 1, 0, 1, 0]]', "row 1 is not a hardware row"),
    ('[["", "x", "1", 1, 0, 1, 0, 8]]', "row 1 is not a hardware row"),
    ('[["", "x", -1, 1, 0, 1, 0, 8]]', r"row 1: hardware 'x': price_usd_per_hour must be a number in \(0, inf\)"),
    ('[["", "x", 1, 1, 0, 1, 0, 8], ["", "x", 1, 1, 0, 1, 0, 8]]', "same name"),
    ('[["", "=1+1", 1, 1, 0, 1, 0, 8]]', "formula"),
    ("[" * 5000, "not a hardware table"), ("9" * 30_000, "at most 20,000 characters")])
def test_bad_link_tables_are_refused_with_a_reason(text, says):
    with pytest.raises(ValueError, match=says):
        hw.decode(text)


def test_a_table_of_the_other_workload_is_refused():
    with pytest.raises(ValueError, match="describes GPU hardware, not LLM"):
        hw.decode(hw.encode(default_spec("gpu").hardware), "llm")


def llm_frame(row: int, column: str, value) -> pd.DataFrame:
    frame = hw.frame(default_spec("llm").hardware, "llm")
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    return frame


@pytest.mark.parametrize("cell, value, says", [
    ((0, "k1"), 0.0, r"row 1 \(8× A100.*\), column 'k1 \(s per request\)': must be a number in \(0, inf\)"),
    ((1, "k3"), -1e-6, r"row 2 \(8× H100.*\), column 'k3 \(s per request·token\)': must be a number in \[0, inf\)"),
    ((1, "idle_power_w"), -3.0, r"row 2 .*column 'idle power \(W\)': must be a number in \[0, inf\)"),
    ((0, "name"), "", r"row 1, column 'name': empty cell"),
    ((0, "k4"), math.nan, r"row 1 .*column 'k4 \(s per token\)': empty cell")])
def test_llm_rows_name_the_bad_cell(cell, value, says):
    frame = llm_frame(*cell, value)
    with pytest.raises(ValueError, match=says):
        hw.from_frame(frame, "llm")


def test_empty_rows_are_skipped_and_an_empty_table_is_refused():
    table = default_spec("gpu").hardware
    frame = hw.frame(table, "gpu")
    blank = pd.DataFrame([{c: None for c in frame.columns}])
    assert hw.from_frame(pd.concat([frame, blank], ignore_index=True), "gpu") == table
    with pytest.raises(ValueError, match="no rows"):
        hw.from_frame(blank, "gpu")


def test_an_edited_preset_says_so_in_its_source():
    t4 = default_spec("gpu").hardware[0]
    frame = hw.frame([t4], "gpu")
    frame.loc[0, "price_usd_per_hour"] = 0.35
    (edited,) = hw.from_frame(frame, "gpu")
    assert edited.profile == t4.profile and edited.price_usd_per_hour == 0.35
    assert edited.source == t4.source + " Edited on the capacity-planner page."
    frame.loc[0, "price_usd_per_hour"] = t4.price_usd_per_hour
    assert hw.from_frame(frame, "gpu") == (t4,)


@pytest.mark.parametrize("workload", ["llm_serving", "llm_disaggregated"])
def test_the_serving_tables_round_trip(workload):
    """A serving candidate's step cost, KV bytes, block size and model travel with it:
    in the link (null for a preset's own step cost) and in the editor's hidden column."""
    table = default_spec(workload).hardware
    text = hw.encode(table)
    assert all(row[-1] is None for row in json.loads(text))        # the presets' step costs
    assert hw.decode(text, workload) == table
    frame = hw.frame(table, workload)
    assert list(frame.columns) == ["name", "price_usd_per_hour", "kv_cache_tokens", "gpus",
                                   "busy_power_w", "idle_power_w", "step", "model", "preset",
                                   "fixed"]
    assert hw.from_frame(frame, workload) == table


def test_a_serving_step_cost_of_its_own_goes_into_the_link():
    from dataclasses import replace
    h = hardware_presets("llm_serving")["vllm_rtx4090_qwen2_5_7b"]
    own = replace(h, name="Mine", step_cost=replace(h.step_cost, base_ms=20.0), profile="",
                  source=hw.TYPED_SOURCE)
    (back,) = hw.decode(hw.encode([own]), "llm_serving")
    assert back.step_cost.base_ms == 20.0 and back.step_cost == own.step_cost
    assert (back.kv_cache_tokens, back.model, back.profile) == (h.kv_cache_tokens, h.model, "")


def test_serving_rows_name_the_bad_cell_and_need_a_step_cost():
    table = default_spec("llm_serving").hardware[:2]
    frame = hw.frame(table, "llm_serving")
    frame["gpus"] = frame["gpus"].astype(object)
    frame.loc[1, "gpus"] = 0
    with pytest.raises(ValueError, match=r"row 2 \(4× A100.*\), column 'GPUs': must be"):
        hw.from_frame(frame, "llm_serving")
    frame = hw.frame(table, "llm_serving")
    frame.loc[0, "kv_cache_tokens"] = pd.NA                       # not known: never binds
    assert hw.from_frame(frame, "llm_serving")[0].kv_cache_tokens is None
    typed = pd.DataFrame([{"name": "Typed", "price_usd_per_hour": 1.0, "kv_cache_tokens": 1000,
                           "gpus": 1, "busy_power_w": 300.0, "idle_power_w": 0.0}])
    with pytest.raises(ValueError, match=r"row 1 \(Typed\): a serving candidate needs a "
                                         r"preset's step cost"):
        hw.from_frame(typed, "llm_serving")


def test_a_table_of_another_family_is_refused_in_words():
    with pytest.raises(ValueError, match="describes GPU hardware, not LLM serving"):
        hw.decode(hw.encode(default_spec("gpu").hardware), "llm_disaggregated")
    with pytest.raises(ValueError, match="describes LLM serving hardware, not LLM"):
        hw.decode(hw.encode(default_spec("llm_serving").hardware), "llm")
