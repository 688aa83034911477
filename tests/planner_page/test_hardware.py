"""The hardware-table input's parsing (no Streamlit): the link's JSON both ways, and the
editor's table validated row by row with messages naming the row and the column."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app_pages.planner import hardware as hw
from app_pages.planner.inputs import HARDWARE
from engine.planner import Hardware, default_spec


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
    ('[["", "x", -1, 1, 0, 1, 0, 8]]', "row 1: hardware 'x': price_usd_per_hour must be > 0"),
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
    ((0, "k1"), 0.0, r"row 1 \(8× A100.*\), column 'k1 \(s per request\)': must be > 0"),
    ((1, "k3"), -1e-6, r"row 2 \(8× H100.*\), column 'k3 \(s per request·token\)': must be >= 0"),
    ((1, "idle_power_w"), -3.0, r"row 2 .*column 'idle power \(W\)': must be >= 0"),
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
