"""The token-limit page's panels: the latency-profile input, the answer at the chosen
limit, and §V-B's paper-vs-model table."""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.token_limit import answer, data, inputs
from ui import share
from ui.export import plain_number
from ui.panel import results_markdown

VLLM_UPLOAD = "vllm_upload"
_VLLM_APPLIED = "_vllm_result_applied"      # session state: digest of the file last applied


def profile_input() -> inputs.Profile:
    """Latency profile widgets (a preset's fit, or typed a and c) with a fit caption."""
    table = data.preset_table()
    choice = st.selectbox("Latency profile", inputs.PRESET.choices, key=inputs.PRESET.key,
                          format_func=lambda p: table[p][0] if p in table else "Type a and c…")
    if choice == inputs.TYPED:
        name = vllm_input() or "typed a, c"
        share.number_input(inputs.A_S, "a (s per output token)", step=0.001, format="%.5f")
        share.number_input(inputs.C_S_FIELD, "c (s per request)", step=0.05)
        s = st.session_state
        return inputs.Profile(name, float(s[inputs.A_S.key]), float(s[inputs.C_S_FIELD.key]))
    name, source, inp, out, lat = table[choice]
    st.caption(share.inert(f"Source: {source}."))
    fit = data.latency_fit(out, lat)
    st.toggle("Add an input-token term", key=inputs.INPUT_TERM.key,
              help="S = a·n_out + b·n_in + c, with a fixed prompt length n_in.")
    a, c = fit.a_s_per_token, fit.c_s
    with_input = bool(st.session_state[inputs.INPUT_TERM.key])
    if with_input:
        share.number_input(inputs.PROMPT, "Prompt length n_in (tokens)", step=64)
        fin = data.latency_fit_with_input(out, inp, lat)
        c_in = float(fin.latency_s(0.0, st.session_state[inputs.PROMPT.key]))   # c + b·n_in
        st.caption(f"Fit with input: a = {fin.a_s_per_token:.5g} s/token, b = "
                   f"{fin.b_s_per_input_token:.4g} s/input token, c = {fin.c_s:.4g} s, "
                   f"R² = {fin.r2:.4f}")
        if c_in < 0:
            st.error(f"c + b·n_in = {plain_number(c_in)} s is negative for this prompt length; "
                     "using the "
                     "fit without the input term.", icon=":material/error:")
        else:
            a, c = fin.a_s_per_token, c_in
    st.caption(f"Fit S = a·n + c: a = {fit.a_s_per_token:.5g} s/token, c = {fit.c_s:.4g} s, "
               f"R² = {fit.r2:.4f} (Table I, output tokens only)")
    return inputs.Profile(name, float(a), float(c), (inp, out, lat), with_input)


def vllm_input() -> str | None:
    """An optional ``vllm bench serve --save-result`` JSON whose mean TPOT and TTFT become
    a and c (drawn before their inputs, which it sets once per new file).  Returns the
    profile's name while a and c are the file's; a bad file leaves them as they were."""
    upload = st.file_uploader(
        "…or take a and c from a vllm bench serve result", type=["json"], key=VLLM_UPLOAD,
        help="The JSON of `vllm bench serve --save-result`: a = mean TPOT (time per output "
             "token after the first), c = mean TTFT (time to first token). Sensible for a "
             "run at concurrency 1 (--max-concurrency 1): this model serves one request at "
             "a time.")
    if upload is None:
        return None
    try:
        got = data.vllm_profile(hashlib.sha256(upload.getvalue()).hexdigest(),
                                upload.getvalue())
    except ValueError as err:
        st.error(f"vllm result not used: {err}", icon=":material/error:")
        st.info("a and c keep their values.")
        return None
    s, a, c = st.session_state, got["a_s"], got["c_s"]
    if s.get(_VLLM_APPLIED) != got["digest"]:
        s[inputs.A_S.key], s[inputs.C_S_FIELD.key], s[_VLLM_APPLIED] = a, c, got["digest"]
    r = got["result"]
    cap = r.max_concurrency
    if cap != 1:
        how = f"at concurrency {cap}" if cap else "without a concurrency cap"
        st.warning(f"Measured {how}: TPOT and TTFT include the other requests in flight, "
                   "while this model serves one request at a time; a run at "
                   "--max-concurrency 1 fits it.",
                   icon=":material/warning:")
    if (s[inputs.A_S.key], s[inputs.C_S_FIELD.key]) != (a, c):
        st.caption(share.inert(f"a and c edited since {upload.name} was read."))
        return None
    model = f", {r.model_id}" if r.model_id else ""
    st.caption(share.inert(
        f"From {upload.name}{model}: a = mean TPOT = {r.mean_tpot_ms:.4g} ms per token, "
        f"c = mean TTFT = {r.mean_ttft_ms:.4g} ms ({r.completed} requests). "
        + (f"Notes: {'; '.join(r.notes)}." if r.notes else "")))
    return f"vllm bench serve result {upload.name}"


def answer_panel(p, free, scenario: inputs.Scenario) -> list:
    """The chosen limit ``p`` against no limit ``free`` (``LimitPoint``s): one results
    table and one sentence, drawn as a single element; returns the table's rows."""
    lam, patience = scenario.lam_per_s, scenario.patience_s
    stable = np.isfinite(p.mean_wait_s)
    if not stable:
        where = ("no limit is stable: a one-token answer already takes a + c"
                 if p.stable_limit == 0 else f"the largest stable limit is {p.stable_limit:,.0f} tokens")
        st.error(f"Unstable: {plain_number(lam, 4)} requests/s is at or beyond the capacity "
                 f"of {plain_number(p.capacity_per_s, 4)} requests/s at a limit of "
                 f"{p.n_max:,.0f} tokens (load {answer.load_text(p.load, ' of capacity')}); "
                 f"{where}. If no one gave up, the "
                 "wait would grow without bound; with patience τ users give up instead "
                 "(their share is shown).", icon=":material/warning:")
    label = scenario.arrivals.label
    items = answer.rows(p, free, patience, "" if scenario.poisson else ", Poisson")
    change = items[2][1]
    if not stable:
        wait = "a queue that grows without bound if no one gives up"
    elif change == "n/a":
        wait = f"mean wait {plain_number(p.mean_wait_s)} s" + (" (no limit: unstable)"
                                                   if items[1][1] == "unstable" else "")
    else:
        wait = f"mean wait {plain_number(p.mean_wait_s)} s ({change} vs no limit)"
    after = ""
    if scenario.poisson:
        items = items + [("Arrivals", label)]
    else:
        t = data.traffic_at(*scenario.model, p.n_max, patience, scenario.arrivals)
        items = answer.traffic_rows(label, t, patience) + items
        after = " " + answer.traffic_sentence(label, t)
    st.markdown(results_markdown(items) + "\n\n"
                f"**Limit {p.n_max:,.0f} → {wait}, {answer.pct(p.clipped_share)} of "
                f"answers clipped, {answer.pct(p.loss_fraction)} of users give up** "
                f"(after {patience:g} s; {answer.METHODS[scenario.method]}; Poisson "
                f"arrivals).{share.inert(after)}",
                help="Paper notation: mean wait E[W] (M/G/1, eq 1), wait of users who stay "
                     "E[W_qs] and the share who give up π(τ) (M/G/1+D, eq 9), load ρ = λE[S]. "
                     "Under other arrivals: simulation (the chosen process at λ) and "
                     "Kingman's GI/G/1 approximation E[W] ≈ (c_a² + c_s²)/2 · ρ/(1 − ρ) · "
                     "E[S].")
    return items


def paper_table(a: float, c: float) -> None:
    """§V-B's numbers beside this model's (``engine.token_limit.paper_comparison``)."""
    st.caption(f"§V-B's numbers beside this model's, with S = {a:.5g}·n + {c:.4g} s and the "
               "paper's setting otherwise (lognormal(7, 0.7); λ = 1/40 for V1, λ = 1/25, "
               "τ = 60 s, θ = 0.95, ℓ = 4 for V2).")
    st.dataframe(pd.DataFrame([{"quantity": r.quantity, "unit": r.unit, "paper": r.paper,
                                "model": round(r.model, 4), "why they differ": r.note}
                               for r in data.paper(a, c)]), hide_index=True)
    st.markdown("The token shares depend on the law alone and agree. The delays differ "
                "because the paper's fit of S = a·n + c is not published: Table I's own fit "
                "is about 5 % steeper. The V1 optimum of eq 10 cannot be 1600 with the "
                "paper's delays, and eq 11's printed sign rewards delay, so the V2 optimum "
                "with the corrected sign is a short limit.")
