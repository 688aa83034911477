"""The GPU page's "Model vs measurement" view: one deployment measured twice, offline
(a batch sweep at concurrency 1) and online (a closed loop of N clients); the online run
predicted from the offline table alone (``engine.measured.online``) beside what was
measured, row by row, with the model's assumptions in plain words.  A Model Analyzer
export holds both (its peaks and its sweeps): there the p99 is compared too."""
from __future__ import annotations

import streamlit as st

from app_pages.batching import measured, views
from engine.core import domains
from app_pages.batching.uploads import profile_files, text_digest
from ui import share
from ui.export import show_chart
from ui.memo import with_spinner
from ui.panel import results_table
from ui.uploads import MAX_UPLOAD_BYTES, decode_text

SOURCE = "mvm_source"
EXAMPLE, FILES, MODEL_ANALYZER = "example", "files", "model_analyzer"
SOURCES = {EXAMPLE: "Example: ResNet-50 on Triton (DeepLearningExamples)",
           FILES: "My offline and online tables", MODEL_ANALYZER: "My Model Analyzer export"}
PAIR = "mvm_pair"
OFFLINE_UP, ONLINE_UP, MA_UP = "mvm_offline_upload", "mvm_online_upload", "mvm_ma_upload"
BREAKDOWN_UP = "mvm_breakdown_upload"
OFFLINE_PICK, ONLINE_PICK, MA_PICK = "mvm_offline_table", "mvm_online_table", "mvm_ma_config"
OVERRIDE, INSTANCES, B_MAX = "mvm_override", "mvm_instances", "mvm_b_max"
_INSTANCES = share.Field(INSTANCES, 1, int, 1, 64, domain=domains.INSTANCES)
_B_MAX = share.Field(B_MAX, 128, int, 1, 4096, domain=domains.B_MAX)
_MATCHED = "_mvm_offline_matched_for"      # the online table the offline pick follows
_REPORT = "_mvm_report"                    # what the report shows of this view
INTRO = ("Does the model match a real server? perf_analyzer measures a Triton server two "
         "ways: **offline**, one client sending a batch of b inputs at a time, and "
         "**online**, N clients each sending one input and the next when it returns, "
         "with dynamic batching and often several model instances. The model fits the "
         "batch time to the offline table and predicts the online run from it alone "
         "(the profile in the sidebar plays no part here).")
ERRORS = ("Errors are model / measured − 1, signed: + means the model predicts more than "
          "was measured.")
MISSES = {   # where the model misses on the built-in measurements, and why (docs/models/measured.md)
    EXAMPLE: (
        "- **A40 at every concurrency, low (−9 % to −22 %).** Without a breakdown run the "
        "GPU share is averaged over all it could be, which stretches each instance's batch "
        "by 1.18×; on A40 the two instances hardly wait for each other (4,310/s measured "
        "at N = 256, more than twice the offline peak), so the stretch is too much there. "
        "A breakdown run measures the share.\n"
        "- **T4 at N = 32 to 64, low (−15 % to −26 %).** The measured throughput is at its "
        "peak already at N = 32; the model applies the sharing stretch at every load, also "
        "where one instance often runs alone, and ramps up more slowly.\n"
        "- **Lowest concurrency (N = 16).** The measured network time there is 1.2 to 6.2 ms "
        "per request, several times the transfer time the offline table shows; the model's "
        "front end is the offline one, and its errors at N = 16 (−22 % to +8 %) carry that."),
    MODEL_ANALYZER: (
        "- **Concurrency below the max batch size.** Where the server barely batches a "
        "few concurrent requests (on a text-recognition export we checked, the throughput "
        "at N = 2 was that at N = 1), the model's throughput is too high and its p99 too "
        "low: in a closed loop with no time outside the server every waiting request "
        "joins the next batch.\n"
        "- **From N ≥ 2·b_max** the server runs full batches and the model's throughput is "
        "within about 10 %; its p99 is somewhat low, because the cycle has no jitter."),
}


def report_holder() -> dict:
    """The session's record of the comparison last shown (the report reads it when the
    download is asked for: the view draws after the report button)."""
    return st.session_state.setdefault(_REPORT, {})


def report_sections(holder: dict) -> list:
    """[(title, figure, caption)] of the comparison last shown in this session, or []."""
    shown = holder.get("figures", ())
    return [(views.TITLES[name], fig, holder["sentence"] + " " + ERRORS
             if i == len(shown) - 1 else "") for i, (name, fig) in enumerate(shown)]


def _pick(label: str, labels: list, key: str, default: int = 0, reset: bool = False) -> str:
    """A selectbox over a file's tables (none when it holds one); a stale choice (another
    file's table) or ``reset`` starts at ``labels[default]``."""
    if len(labels) == 1:
        return labels[0]
    if reset or st.session_state.get(key) not in labels:
        st.session_state[key] = labels[default]
    return st.selectbox(label, labels, key=key)


def _upload(key: str, label: str, what: str, read, multiple: bool = False):
    """An uploader whose file(s) ``read(text, gpu_text)`` parses; returns (file name,
    digest, what ``read`` returned) of the last valid upload, or None; a bad file gets an
    error beside the input and the last valid one stays."""
    last_key = f"_{key}_last"
    files = st.file_uploader(label, type=["csv", "txt"], key=key,
                             accept_multiple_files=multiple,
                             help=f"{what}; at most {MAX_UPLOAD_BYTES // 1_000_000} MB.")
    files = (files or []) if multiple else ([] if files is None else [files])
    if not files:                                   # removed: nothing to compare
        st.session_state.pop(last_key, None)
        return None
    ids = tuple(f.file_id for f in files)
    last = st.session_state.get(last_key)
    if last is None or last[0] != ids:
        try:
            if multiple:
                name, text, gpu_text = profile_files([(f.name, f.getvalue()) for f in files])
            else:
                name, text, gpu_text = files[0].name, decode_text(files[0].getvalue()), None
            last = (ids, name, text_digest(text), read(text, gpu_text))
            st.session_state[last_key] = last
        except ValueError as err:
            st.error(f"{label} not used: {err}", icon=":material/error:")
            if last is not None:
                st.info(f"Still using {last[1]}.")
    if last is None:
        return None
    found = last[3]
    if hasattr(found[0], "gpu_share"):              # a breakdown run
        b = found[0]
        st.caption(f"{last[1]}: breakdown at concurrency {b.concurrency:g}: front end "
                   f"{b.front_end_ms:.3g} ms, compute input / infer / output "
                   f"{b.compute_input_ms:.3g} / {b.compute_infer_ms:.3g} / "
                   f"{b.compute_output_ms:.3g} ms")
        return last[1:]
    kind = getattr(found[0], "source_format", None)
    st.caption(f"{last[1]}: {measured.format_name(kind)}, {len(found)} "
               f"table{'s' if len(found) > 1 else ''}" if kind else
               f"{last[1]}: Model Analyzer, {len(found)} configurations with a p99")
    return last[1:]


def _example():
    pairs = measured.pairs()
    pid = st.selectbox("GPU", list(pairs), key=PAIR, format_func=lambda p: pairs[p].name)
    pair = pairs[pid]
    st.caption(f"Source: {pair.source}. Offline table: {pair.profile.label}; online table: "
               f"{pair.sweep.label}.")
    return ("pair", pid), pair.profile, pair.sweep


def _files():
    left, right = st.columns(2)
    with left:
        offline = _upload(OFFLINE_UP, "Offline table (batch sweep)",
                          "A batch sweep at concurrency 1: a DeepLearningExamples Triton "
                          "offline table, perf_analyzer -f, Model Analyzer, or a plain CSV",
                          lambda t, _: measured.batch_profiles(text_digest(t), None, t, None))
    with right:
        online = _upload(ONLINE_UP, "Online table (concurrency sweep)",
                         "A closed-loop run by concurrency: a DeepLearningExamples Triton "
                         "online table, perf_analyzer -f or Model Analyzer",
                         lambda t, _: measured.concurrency_sweeps(text_digest(t), t))
    if offline is None or online is None:
        st.info("Upload both tables of one deployment, or look at the example.")
        return None
    (_, off_digest, profiles), (_, on_digest, sweeps) = offline, online
    on_labels = [s.label for s in sweeps]
    on_label = _pick("Online table", on_labels, ONLINE_PICK)
    off_labels = [p.label for p in profiles]
    follow = st.session_state.get(_MATCHED) != (on_digest, on_label)
    st.session_state[_MATCHED] = (on_digest, on_label)
    off_label = _pick("Offline table (of the same GPU and server)", off_labels, OFFLINE_PICK,
                      measured.matching_index(off_labels, on_label) or 0, reset=follow)
    differ = measured.mismatch(off_label, on_label, off_labels)
    if differ:
        st.warning(share.inert(differ), icon=":material/compare_arrows:")
    key = ("files", off_digest, off_label, on_digest, on_label)
    return (key, profiles[off_labels.index(off_label)], sweeps[on_labels.index(on_label)])


def _server(sweep) -> tuple:
    """The model instances and b_max: the online table's (None, None), or the user's."""
    instances, b_max = sweep.model_instances, sweep.max_batch_size
    st.caption(f"Server of the online run: {instances or 1} model instance"
               f"{'s' if (instances or 1) > 1 else ''}"
               f"{'' if instances else ' (not in the file: 1 assumed)'}, b_max "
               f"{'none' if b_max is None else b_max}.")
    if not st.toggle("Set the instances and b_max myself", key=OVERRIDE):
        return None, None
    st.session_state.setdefault(INSTANCES, instances or 1)
    st.session_state.setdefault(B_MAX, b_max or 128)
    left, right = st.columns(2)
    with left:
        n = share.number_input(_INSTANCES, "Model instances", step=1)
    with right:
        b = share.number_input(_B_MAX, "b_max (requests)", step=1)
    return int(n), int(b)


def _numbers(top, sentence: str, rows, shown, table, assumptions, notes=(),
             misses: str = "", terms: str = "", narrowing: str = "") -> None:
    """The answer: the sentence on top, the numbers, the charts, the rows, the why."""
    top.markdown(f"**{sentence}**")
    results_table(rows)
    if terms:
        st.markdown(terms)
    if narrowing:
        st.info(narrowing, icon=":material/straighten:")
    for name, fig in shown:
        show_chart(fig, name)
    st.dataframe(table, hide_index=True, column_config={
        name: st.column_config.NumberColumn(format="%+.1f") for name in table
        if name.endswith("error (%)")})
    st.caption(ERRORS)
    st.markdown("**What the model assumes**\n\n" + "\n".join(f"- {a}" for a in assumptions))
    if misses:
        st.markdown("**Where the model misses, and why**\n\n" + misses)
    if notes:
        with st.expander(f"What the readers assumed or dropped ({len(notes)} notes)"):
            for note in notes:
                st.caption(note)
    report_holder().update(figures=shown, sentence=sentence)


def _online(top) -> None:
    picked = _example() if st.session_state[SOURCE] == EXAMPLE else _files()
    if picked is None:
        return
    key, profile, sweep = picked
    instances, b_max = _server(sweep)
    found = _upload(BREAKDOWN_UP, "Optional: a concurrency-2 run with its server-side breakdown",
                    "perf_analyzer -f at concurrency 2 (or 1) against the same server, or a "
                    "DeepLearningExamples online table: its queue, compute input, compute "
                    "infer and compute output measure the front-end time and the GPU share",
                    lambda t, _: (measured.server_breakdown(text_digest(t), t),))
    digest, breakdown = (None, None) if found is None else (found[1], found[2][0])
    try:
        comp = with_spinner("Predicting the online run…", measured.comparison, key,
                            instances, b_max, profile, sweep)
        narrowed = None if breakdown is None else with_spinner(
            "Predicting with the breakdown run…", measured.comparison, key, instances, b_max,
            profile, sweep, digest, breakdown)
    except ValueError as err:
        st.error(f"No prediction for these tables: {err}", icon=":material/error:")
        return
    shown = comp if narrowed is None else narrowed
    _numbers(top, measured.summary_sentence(shown), measured.summary_rows(shown),
             measured.comparison_figures(key + (digest,), instances, b_max, shown),
             measured.error_table(shown, sweep.p99_latency_ms), shown.prediction.assumptions,
             profile.notes + sweep.notes,
             MISSES[EXAMPLE] if st.session_state[SOURCE] == EXAMPLE and narrowed is None
             else "", terms=measured.terms_text(shown),
             narrowing=measured.narrowing_sentence(comp, narrowed))


def _model_analyzer(top) -> None:
    found = _upload(MA_UP, "Model Analyzer export",
                    "metrics-model-inference.csv (its metrics-model-gpu.csv may come along); "
                    "the model is built from the file's peak throughputs and compared with "
                    "every configuration's sweep, p99 included",
                    lambda t, g: measured.model_analyzer(text_digest(t), text_digest(g), t, g),
                    multiple=True)
    if found is None:
        st.info("Upload a Model Analyzer metrics-model-inference.csv.")
        return
    _, digest, comps = found
    labels = [c.label for c in comps]
    comp = comps[labels.index(_pick("Model configuration", labels, MA_PICK))]
    _numbers(top, measured.ma_sentence(comp), measured.ma_rows(comp),
             measured.ma_figures((digest, comp.label), comp), measured.ma_table(comp),
             comp.assumptions, misses=MISSES[MODEL_ANALYZER])


def show() -> None:
    """The view: the measurements, the sentence, the numbers, the charts, the table."""
    st.subheader("Model vs measurement")
    top = st.container()                    # the answer's sentence, once it is known
    st.markdown(INTRO)
    source = st.radio("Measurements", list(SOURCES), key=SOURCE, horizontal=True,
                      format_func=SOURCES.get)
    report_holder().clear()                 # until this run shows a comparison
    if source == MODEL_ANALYZER:
        _model_analyzer(top)
    else:
        _online(top)
