"""The batch-profile input: a preset, or the user's own measured profile.

The custom profile can be edited in a table, uploaded or pasted: a plain CSV (read as
before: batch size, throughput, optional power), or a tool's file that
``engine.measured.read_batch_profile`` recognises (Triton Model Analyzer with its
optional GPU metrics file, perf_analyzer -f, DeepLearningExamples tables), whose
detected format, table and every note of the reader are shown.  Every change is
fitted at once; a bad file shows its error next to the input while the last valid
profile stays in use (nothing the user typed is thrown away).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.batching import data
from app_pages.batching.measured import batch_profiles, format_name
from app_pages.batching.uploads import (NotAPlainProfile, parse_profile_csv, profile_files,
                                        text_digest)
from ui import share
from ui.uploads import MAX_UPLOAD_BYTES, decode_text

CUSTOM = "custom"
_LAST = "_gpu_last_valid_profile"
UPLOAD, PASTE, PICK = "gpu_profile_upload", "gpu_profile_paste", "gpu_profile_pick"


@dataclass(frozen=True)
class Profile:
    """A measured batch profile (part of the page's Scenario: its name, source and
    values are the cache key, so two uploads under different names differ)."""

    name: str
    source: str
    batch_size: tuple
    throughput_per_s: tuple
    power_w: tuple | None
    datasheet: tuple | None = None   # (W at most, hardware, source) where none was measured


def _preset(pid: str) -> Profile:
    name, source, b, thr, power = data.preset_table()[pid]
    return Profile(name, source, b, thr, power,
                   None if power is not None else data.datasheet_power().get(pid))


def validated_profile(cols: dict, source: str, name: str = "Custom profile") -> Profile:
    """Fit once to validate (raises ValueError with the reason): the fitted laws
    must lie in the model's domain (α > 0, τ0 ≥ 0; β > 0, c0 ≥ 0 with power)."""
    power = None if cols.get("power_w") is None else tuple(float(v) for v in cols["power_w"])
    profile = Profile(name, source, tuple(float(v) for v in cols["batch_size"]),
                      tuple(float(v) for v in cols["throughput_per_s"]), power)
    with np.errstate(all="ignore"):                 # extreme values: judged below
        fit = data.profile_fit(profile.batch_size, profile.throughput_per_s, profile.power_w)
    laws = [("throughput_per_s", "batch time b/throughput", "α", fit.alpha_ms, "τ0",
             fit.tau0_ms, "ms")]
    if power is not None:
        laws.append(("power_w", "energy per batch", "β", fit.beta_j, "c0", fit.c0_j, "J"))
    for column, what, slope_name, slope, icpt_name, icpt, unit in laws:
        if not (np.isfinite(slope) and np.isfinite(icpt)):
            raise ValueError(f"column '{column}': the values are too extreme to fit a line")
        if slope <= 0:
            raise ValueError(f"column '{column}': the {what} must grow with the batch size "
                             f"(fitted slope {slope_name} = {slope:.4g} {unit} per job)")
        if icpt < 0:
            raise ValueError(f"column '{column}': the fitted {what} at batch size 0 is "
                             f"negative ({icpt_name} = {icpt:.4g} {unit}); the model needs "
                             f"{icpt_name} ≥ 0")
    return profile


def table_columns(frame: pd.DataFrame) -> dict:
    frame = frame.dropna(how="all")
    power = frame["power_w"] if "power_w" in frame and frame["power_w"].notna().any() else None
    for col in ("batch_size", "throughput_per_s"):
        if frame[col].isna().any():
            raise ValueError(f"column '{col}' has empty cells")
    if power is not None and power.isna().any():
        raise ValueError("column 'power_w' has empty cells (leave all empty to skip energy)")
    cols = {"batch_size": frame["batch_size"].to_numpy(float),
            "throughput_per_s": frame["throughput_per_s"].to_numpy(float),
            "power_w": None if power is None else power.to_numpy(float)}
    return cols


def _measured(tables: tuple, origin: str) -> Profile:
    """The table the user picks of a tool's file (a selectbox when it holds several), its
    format and the reader's notes shown, as a validated profile."""
    labels = [t.label for t in tables]
    if len(labels) > 1:
        if st.session_state.get(PICK) not in labels:      # a new file: its first table
            st.session_state[PICK] = labels[0]
        label = st.selectbox(f"Table ({len(labels)} in the file)", labels, key=PICK,
                             help="The file holds one table per GPU, precision or "
                                  "configuration; the profile is the one picked here.")
    else:
        label = labels[0]
    chosen = tables[labels.index(label)]
    what = format_name(chosen.source_format)
    st.caption(f"Read as: {what} · table {label}")
    if chosen.notes:
        with st.expander(f"What the reader assumed or dropped ({len(chosen.notes)} notes)",
                         expanded=any("dropped" in n for n in chosen.notes)):
            for note in chosen.notes:
                st.caption(note)
    cols = {"batch_size": chosen.batch_size, "throughput_per_s": chosen.throughput_per_s,
            "power_w": chosen.power_w}
    return validated_profile(cols, f"{origin}, {what}, table {label}", name=label)


def read_profile(text: str, gpu_text: str | None, origin: str) -> Profile:
    """The profile in ``text`` (decoded): a tool's file through ``engine.measured``'s
    reader, a plain CSV through ``parse_profile_csv`` as before (its messages name the
    column and row); ``ValueError`` with the reader's message otherwise."""
    try:
        tables = batch_profiles(text_digest(text), text_digest(gpu_text), text, gpu_text)
        problem = None
    except ValueError as err:
        tables, problem = (), err
    if problem is not None and gpu_text is not None:
        raise problem
    if tables and tables[0].source_format != "plain_csv":
        return _measured(tables, origin)
    try:
        cols = parse_profile_csv(text)
    except NotAPlainProfile:
        if tables:                     # a plain table only the reader takes (batch_time_ms)
            return _measured(tables, origin)
        raise problem from None
    st.caption(f"Read as: {format_name('plain_csv')} (batch size, throughput"
               f"{'' if cols['power_w'] is None else ', power'})")
    return validated_profile(cols, origin)


def _custom(fallback: Profile) -> Profile:
    """The user's own profile: upload, paste or table; the last valid one on a bad input."""
    st.caption("Your own measurements: batch size, throughput (jobs/s), optional board "
               "power (W), or a file of Triton's Model Analyzer or perf_analyzer -f, or a "
               "DeepLearningExamples table.")
    seed = pd.DataFrame({"batch_size": fallback.batch_size,
                         "throughput_per_s": fallback.throughput_per_s,
                         "power_w": fallback.power_w or [np.nan] * len(fallback.batch_size)})
    files = st.file_uploader(
        "Upload CSV", type=["csv", "txt"], key=UPLOAD, accept_multiple_files=True,
        help=f"A plain CSV with columns batch_size, throughput_per_s[, power_w]; or "
             f"metrics-model-inference.csv of Model Analyzer (with its metrics-model-gpu.csv "
             f"for power: upload both), perf_analyzer -f output, a DeepLearningExamples "
             f"table. The format is detected; at most {MAX_UPLOAD_BYTES // 1_000_000} MB.")
    pasted = st.text_area("…or paste CSV", key=PASTE, height=100, max_chars=MAX_UPLOAD_BYTES,
                          placeholder="batch_size,throughput_per_s,power_w\n1,476,120\n2,880,109")
    try:
        if files:
            name, text, gpu_text = profile_files([(f.name, f.getvalue()) for f in files])
            profile = read_profile(text, gpu_text, f"upload {name}")
        elif pasted.strip():
            profile = read_profile(decode_text(pasted), None, "pasted table")
        else:
            edited = st.data_editor(seed, num_rows="dynamic", key="gpu_profile_table",
                                    width="stretch")
            profile = validated_profile(table_columns(edited), "edited table")
    except ValueError as err:
        st.error(f"Profile not used: {err}", icon=":material/error:")
        st.info(f"Still showing the last valid profile: {fallback.name}.")
        return fallback
    st.session_state[_LAST] = profile
    return profile


def profile_input(preset_key: str) -> Profile:
    """Sidebar widgets for the profile; returns the profile in use."""
    presets = data.preset_table()
    first = share.default(preset_key, next(iter(presets)))
    first = first if first in presets else next(iter(presets))
    options = [first] + [p for p in presets if p != first] + [CUSTOM]   # the default on top
    default_id = first
    asked = st.session_state.get(preset_key, default_id)
    if asked not in options:                        # e.g. an unknown id in a share link
        st.warning(f"Link parameter `{preset_key}` = {share.inert(repr(str(asked)[:40]))} "
                   f"ignored (not a known profile); using the default {default_id}.",
                   icon=":material/link_off:")
        st.session_state[preset_key] = default_id
    choice = st.selectbox("GPU profile", options, key=preset_key,
                          format_func=lambda p: presets[p][0] if p in presets else "Custom profile…")
    if choice != CUSTOM:
        profile = _preset(choice)
        st.caption(f"Source: {profile.source}")
        st.session_state[_LAST] = profile
        return profile
    return _custom(st.session_state.get(_LAST) or _preset(default_id))
