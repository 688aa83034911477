"""The batch-profile input: a preset, or the user's own measured profile.

The custom profile can be edited in a table, uploaded as CSV or pasted.  Every
change is fitted at once; a bad table shows its error next to the input while
the last valid profile stays in use (nothing the user typed is thrown away).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.batching import data
from ui import share
from app_pages.batching.uploads import parse_profile_csv
from ui.uploads import MAX_UPLOAD_BYTES

CUSTOM = "custom"
_LAST = "_gpu_last_valid_profile"


@dataclass(frozen=True)
class Profile:
    """A measured batch profile (part of the page's Scenario: its name, source and
    values are the cache key, so two uploads under different names differ)."""

    name: str
    source: str
    batch_size: tuple
    throughput_per_s: tuple
    power_w: tuple | None


def _preset(pid: str) -> Profile:
    name, source, b, thr, power = data.preset_table()[pid]
    return Profile(name, source, b, thr, power)


def validated_profile(cols: dict, source: str) -> Profile:
    """Fit once to validate (raises ValueError with the reason): the fitted laws
    must lie in the model's domain (α > 0, τ0 ≥ 0; β > 0, c0 ≥ 0 with power)."""
    power = None if cols.get("power_w") is None else tuple(float(v) for v in cols["power_w"])
    profile = Profile("Custom profile", source, tuple(float(v) for v in cols["batch_size"]),
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


def profile_input(preset_key: str) -> Profile:
    """Sidebar widgets for the profile; returns the profile in use."""
    presets = data.preset_table()
    options = list(presets) + [CUSTOM]
    default_id = share.default(preset_key, options[0])
    default_id = default_id if default_id in options else options[0]
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
        st.session_state[_LAST] = profile
        return profile

    fallback = st.session_state.get(_LAST) or _preset(options[0])
    st.caption("Your own measurements: batch size, throughput (jobs/s), optional board power (W).")
    seed = pd.DataFrame({"batch_size": fallback.batch_size,
                         "throughput_per_s": fallback.throughput_per_s,
                         "power_w": fallback.power_w or [np.nan] * len(fallback.batch_size)})
    upload = st.file_uploader("Upload CSV", type=["csv", "txt"], key="gpu_profile_upload",
                              help=f"Columns batch_size, throughput_per_s[, power_w]; "
                                   f"at most {MAX_UPLOAD_BYTES // 1_000_000} MB.")
    pasted = st.text_area("…or paste CSV", key="gpu_profile_paste", height=100,
                          max_chars=MAX_UPLOAD_BYTES,
                          placeholder="batch_size,throughput_per_s,power_w\n1,476,120\n2,880,109")
    try:
        if upload is not None:
            profile = validated_profile(parse_profile_csv(upload.getvalue()), f"upload {upload.name}")
        elif pasted.strip():
            profile = validated_profile(parse_profile_csv(pasted), "pasted table")
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
