"""Where the LLM serving page's step cost comes from, besides typing it: a file of one of
the sources ``engine.llm_serving.sources`` reads (DistServe's profiler JSON, the
Splitwise perf-model CSV, ``vllm bench serve --save-result`` runs, a CSV of measured
step times), fitted and shown with its R², then copied into the step-cost inputs (and
so into the share link) by a button.  A bad file shows why and changes nothing.
"""
from __future__ import annotations

import hashlib

import streamlit as st

from engine import llm_serving as ls
from ui import share
from ui.memo import memo
from ui.uploads import MAX_UPLOAD_BYTES, decode_text

COST_KEYS = ("base_ms", "prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq",
             "decode_ms_per_seq", "context_ms_per_token", "frontend_ms")
SOURCES = {"none": "no file (type the numbers, or pick a preset)",
           "distserve": "DistServe profiler JSON",
           "splitwise": "Splitwise perf-model CSV",
           "vllm_bench": "vllm bench serve --save-result JSON (concurrency 1)",
           "csv": "CSV of measured step times"}
HELP = {"distserve": "profiler-*.json of LLMServe/DistServe: the step-time coefficients of "
                     "each model and tensor-parallel degree.",
        "splitwise": "data/perf_model.csv of splitwise-sim: prompt and token times by batch "
                     "and prompt size; fitted by non-negative least squares.",
        "vllm_bench": "One or more `vllm bench serve --save-result` JSON files run at "
                      "--max-concurrency 1 (one request at a time), with different prompt "
                      "lengths; the token budget is the max_num_batched_tokens below.",
        "csv": "Columns prompt_tokens (P), prompt_tokens_sq (Q, optional), decoding (D), "
               "context_tokens (K) and step_ms, one measured step a row."}
SOURCE_KEY = "cost_source"
# Tensor-parallel GPUs of the profiled run, by file kind (DistServe 1, Splitwise 4 by default).
_TP = {key: share.Field(key, default, int, 1, 64) for key, default in
       (("cost_tp_ds", 1), ("cost_tp_sw", 4))}


@memo(16)
def _fit(kind: str, digests: tuple, args: tuple, _texts) -> ls.StepCostFit:
    a = dict(args)
    if kind == "distserve":
        return ls.step_cost_from_distserve(_texts[0], a["model"], a["tensor_parallel"])
    if kind == "splitwise":
        return ls.step_cost_from_splitwise(_texts[0], a["model"], a["hardware"],
                                           a["tensor_parallel"])
    if kind == "vllm_bench":
        return ls.fit_step_cost_vllm_bench(list(_texts),
                                           max_num_batched_tokens=a["max_num_batched_tokens"])
    return ls.step_cost_from_csv(_texts[0])


def fit_from_texts(kind: str, texts: list, **args) -> ls.StepCostFit:
    """The step cost fitted to the files' ``texts`` (str or bytes) of source ``kind``;
    ``ValueError`` saying why not."""
    texts = tuple(decode_text(t) for t in texts)
    digests = tuple(hashlib.sha256(t.encode("utf-8")).hexdigest()[:32] for t in texts)
    return _fit(kind, digests, tuple(sorted(args.items())), texts)


def apply_cost(values: dict) -> None:
    """Copy step-cost numbers into their inputs (a button's callback)."""
    for key, value in values.items():
        st.session_state[key] = value


def _describe(fit: ls.StepCostFit) -> str:
    r2 = ", ".join(f"{k} {v:.4f}" for k, v in fit.r2.items()) or "n/a"
    held = ", ".join(fit.held_at_zero) or "none"
    notes = " ".join(fit.notes[:3])
    return (f"Fitted to {fit.n_points:,} points; R² {r2}. Held at 0 (not identified by "
            f"the data): {held}. {notes}")


def draw(budget_tokens: int) -> None:
    """The file input of the step cost (inside its expander, after the numbers)."""
    kind = st.selectbox("Fit the numbers to a file", tuple(SOURCES), key=SOURCE_KEY,
                        format_func=SOURCES.get,
                        help="The fitted numbers replace the ones above (and go into the "
                             "share link; the file does not).")
    if kind == "none":
        return
    many = kind == "vllm_bench"
    got = st.file_uploader(f"Upload ({SOURCES[kind]})", key=f"cost_upload_{kind}",
                           type=["json", "csv", "txt"], accept_multiple_files=many,
                           help=HELP[kind] + f" At most {MAX_UPLOAD_BYTES // 1_000_000} MB "
                                             "a file.")
    args: dict = {}
    if kind == "distserve":
        args = {"model": st.text_input("Model (as in the file)", "facebook/opt-13b",
                                       key="cost_model_ds"),
                "tensor_parallel": share.number_input(_TP["cost_tp_ds"], "Tensor-parallel GPUs")}
    elif kind == "splitwise":
        args = {"model": st.text_input("Model (as in the file)", "llama2-70b",
                                       key="cost_model_sw"),
                "hardware": st.text_input("Hardware (as in the file)", "h100-80gb",
                                          key="cost_hw_sw"),
                "tensor_parallel": share.number_input(_TP["cost_tp_sw"], "Tensor-parallel GPUs")}
    elif many:
        args = {"max_num_batched_tokens": int(budget_tokens)}
    files = [f for f in (got if many else [got]) if f is not None] if got else []
    if not files:
        return
    try:
        fit = fit_from_texts(kind, [f.getvalue() for f in files], **args)
    except ValueError as err:
        st.error(f"Step cost not fitted: {err}", icon=":material/error:")
        return
    st.caption(share.inert(_describe(fit)))
    values = {k: float(getattr(fit.cost, k)) for k in COST_KEYS}
    st.button("Use these numbers", key="cost_apply", on_click=apply_cost, args=(values,),
              icon=":material/input:", help=share.inert(fit.cost.formula()))
