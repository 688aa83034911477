"""The LLM serving page's "Model vs measurement" view: a measured run uploaded beside the
model's prediction of it (``engine.llm_serving.compare``).

* A run request by request (DistServe's ``.exp``, ``vllm bench serve --save-detailed``
  JSON, a CSV; ``engine.measured.read_request_records``): its send times, prompts and
  replies replayed through the simulator with the page's step cost and scheduler
  (``compare_replay``).
* ``vllm bench serve --save-result`` summaries at several concurrencies: the step cost
  fitted on the concurrency-1 runs, every run simulated with the page's KV cache, token
  budget, max_num_seqs and block size (``compare_vllm_bench``).

A bad file shows why; nothing else on the page changes.  The files are not in the share
link (the page's settings are).
"""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from engine import llm_serving as ls
from engine.measured import read_request_records
from ui import share
from ui.budget import long_running
from ui.export import show_chart
from ui.memo import memo, with_spinner
from ui.uploads import MAX_UPLOAD_BYTES, decode_text

from . import figures as figs
from .cost_input import COST_KEYS, apply_cost

KINDS = {"records": "a run request by request (replayed with the settings on this page)",
         "vllm_bench": "vllm bench serve --save-result summaries (several concurrencies)"}
KIND_KEY = "measured_kind"
RECORDS_KEY = "measured_records_upload"
BENCH_KEY = "measured_bench_upload"
STATS = ("mean", "p50", "p90", "p99")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@memo(8)
@long_running
def replay_table(digest: str, cost, scheduler, _text) -> pd.DataFrame:
    """Measured against predicted TTFT, TPOT, e2e of the run in ``_text``."""
    return ls.compare_replay(read_request_records(_text), cost, scheduler)


@memo(8)
@long_running
def calibration(digest: str, cost, scheduler, _text) -> ls.Calibration:
    """The serving overhead fitted to the run in ``_text`` (a low-load run)."""
    return ls.calibrate_step_cost(cost, read_request_records(_text), scheduler)


def kv_note(table: pd.DataFrame) -> str:
    """What a replay whose KV cache filled says about its TTFT tail ("" otherwise)."""
    peak = table.attrs.get("kv_peak_fraction")
    if peak is None or peak < 0.95:
        return ""
    return (f" The KV cache filled in the replay (peak {peak:.0%}; "
            f"{table.attrs.get('preempted_fraction', 0):.1%} of requests preempted): near "
            "there the TTFT tail hangs on the KV block count (kv_cache_tokens in the "
            "sidebar; a few % fewer blocks can multiply the p90), so compare with the "
            "block count the server logged.")


@memo(8)
@long_running
def bench_table(digests: tuple, kv, budget, seqs, block, _texts) -> pd.DataFrame:
    """Measured against predicted ``vllm bench serve`` runs."""
    return ls.compare_vllm_bench(list(_texts), kv_cache_tokens=kv,
                                 max_num_batched_tokens=budget, max_num_seqs=seqs,
                                 block_size=block)


def replay_groups(table: pd.DataFrame) -> dict:
    """{metric: (measured, predicted, labels)} of a ``compare_replay`` table."""
    out = {}
    for metric, rows in table.groupby("metric", sort=False):
        out[metric] = (rows["measured_ms"].to_numpy(float), rows["predicted_ms"].to_numpy(float),
                       [f"{metric} {s}" for s in rows["statistic"]])
    return out


def bench_groups(table: pd.DataFrame) -> dict:
    """{quantity: (measured, predicted, labels)} of a ``compare_vllm_bench`` table."""
    labels = [f"concurrency {c}, {i:,} prompt tokens" + (" (fitted on)" if cal else "")
              for c, i, cal in zip(table["max_concurrency"], table["input_tokens"],
                                   table["calibration"])]
    return {name: (table[f"measured_{key}"].to_numpy(float),
                   table[f"predicted_{key}"].to_numpy(float), labels)
            for name, key in (("mean TTFT", "mean_ttft_ms"), ("p99 TTFT", "p99_ttft_ms"),
                              ("mean TPOT", "mean_tpot_ms"))}


def _show(table: pd.DataFrame, groups: dict, name: str, caption: str) -> None:
    shown = table.round(3)
    shown.attrs = {}                   # the engine's notes: not a table's cells
    show_chart(figs.measured_figure(groups), name, table=shown)
    st.dataframe(shown, hide_index=True)
    st.caption(share.inert(caption))


def _records(s) -> None:
    up = st.file_uploader("Upload a measured run", type=["exp", "json", "csv", "txt"],
                          key=RECORDS_KEY,
                          help="DistServe's .exp file, a `vllm bench serve --save-result "
                               "--save-detailed` JSON, or a CSV with the send time (s), "
                               "prompt and reply tokens, TTFT (ms) and end-to-end time (ms) "
                               f"of every request, units in the names. At most "
                               f"{MAX_UPLOAD_BYTES // 1_000_000} MB.")
    if up is None:
        st.info("Upload a run to see the model's prediction of it, request by request: "
                "its send times, prompts and replies are replayed through the simulator "
                "with the step cost and scheduler in the sidebar.")
        return
    try:
        text = decode_text(up.getvalue())
        table = with_spinner("Replaying the run…", replay_table, _digest(text), s.cost,
                             s.scheduler, text)
    except ValueError as err:
        st.error(f"Run not used: {err}", icon=":material/error:")
        return
    err = table["error_pct"].abs()
    _show(table, replay_groups(table), "measured_vs_predicted",
          f"{table.attrs.get('n_requests', 0):,} requests of {up.name} replayed (their "
          f"send times, prompts and replies) with the step cost and scheduler in the "
          f"sidebar; prediction − measurement: median {np.nanmedian(err):.3g} %, at most "
          f"{np.nanmax(err):.3g} % (error_pct = predicted / measured − 1)." + kv_note(table))
    _calibrate(s, text, up.name)


def _calibrate(s, text: str, name: str) -> None:
    """Fit the serving stack's overhead to this run (a low-load one) and offer it."""
    st.markdown("**Calibrate on this run**")
    st.caption("An offline step profile misses what the serving stack adds (HTTP server, "
               "tokenizer, the scheduler's and sampler's work): fit that overhead (per "
               "step, per decoding request, a factor on prompt steps, the front end) to "
               "this run, request by request. Use a low-load run: at high load queueing, "
               "not overhead, explains the gap.")
    if not st.toggle("Fit the overhead to this run", key="calibrate_on"):
        return
    try:
        cal = with_spinner("Fitting the serving overhead…", calibration, _digest(text),
                           s.cost, s.scheduler, text)
    except ValueError as err:
        st.error(f"Not calibrated: {err}", icon=":material/error:")
        return
    o = cal.overhead
    st.caption(share.inert(
        f"Fitted on {name} ({cal.n_requests:,} requests): {o['step_ms']:.3g} ms a step, "
        f"{o['per_seq_ms']:.3g} ms per decoding request, prompt steps × "
        f"{o['prompt_factor']:.3g}, front end {o['frontend_ms']:.3g} ms; per-request "
        f"TTFT and TPOT error {cal.rms_log_error:.1%} (root mean square of the log "
        f"ratio). Calibrated cost: {cal.cost.formula()}."))
    values = {k: float(getattr(cal.cost, k)) for k in COST_KEYS}
    st.button("Use the calibrated step cost", key="calibrate_apply", on_click=apply_cost,
              args=(values,), icon=":material/input:",
              help="Copies the calibrated numbers into the step-cost inputs (and the "
                   "share link); then predict other loads of the same server.")


def _bench(s) -> None:
    ups = st.file_uploader("Upload vllm bench serve results (JSON, several)", type=["json"],
                           key=BENCH_KEY, accept_multiple_files=True,
                           help="`vllm bench serve --save-result` files of one server, "
                                "at least one at --max-concurrency 1 (the step cost is "
                                "fitted on those), the others at higher concurrency.")
    if not ups:
        st.info("Upload the runs of one server: the step cost is fitted on the "
                "concurrency-1 runs and every run is predicted with the KV cache, token "
                "budget, max_num_seqs and block size in the sidebar (vLLM V1: chunked "
                "prefill and prefix caching).")
        return
    sch = s.scheduler
    try:
        texts = tuple(decode_text(u.getvalue()) for u in ups)
        table = with_spinner("Simulating every run…", bench_table,
                             tuple(_digest(t) for t in texts), sch.kv_cache_tokens,
                             sch.max_num_batched_tokens, sch.max_num_seqs, sch.block_size,
                             texts)
    except ValueError as err:
        st.error(f"Runs not used: {err}", icon=":material/error:")
        return
    cost = table.attrs.get("step_cost")
    _show(table.drop(columns=["date"], errors="ignore"), bench_groups(table),
          "bench_measured_vs_predicted",
          f"{len(table)} runs; step cost fitted on the concurrency-1 runs: "
          f"{cost.formula() if cost is not None else 'n/a'}.")


def draw(s) -> None:
    """The view (in the page's main area)."""
    kind = st.radio("What was measured", tuple(KINDS), key=KIND_KEY, format_func=KINDS.get,
                    horizontal=True)
    (_records if kind == "records" else _bench)(s)
