"""Memoised reads of measured files and the model-vs-measurement comparison (the GPU page).

Each function is keyed on hashable inputs only: a text's digest (``uploads.text_digest``)
stands for the text, which is passed beside it as an ``_``-named argument the memo
leaves out of its key.  Results are the engine's frozen objects, shared: never modified.
"""
from __future__ import annotations

import pandas as pd

from engine.measured import read_batch_profiles, read_concurrency_sweeps
from engine.measured.online import compare_model_analyzer, compare_profile_online
from engine.measured.online_terms import read_server_breakdown
from engine.presets import online_pairs
from app_pages.batching import figures as figs
from ui.export import format_percent, rounded
from ui.memo import memo

CACHE_SIZE = 32
# source_format -> what the caption calls it
FORMAT_NAMES = {
    "model_analyzer": "Triton Model Analyzer (metrics-model-inference.csv)",
    "perf_analyzer": "perf_analyzer -f CSV",
    "dle_batch_table": "DeepLearningExamples by-batch table",
    "triton_dle_table": "DeepLearningExamples Triton table",
    "plain_csv": "plain CSV",
    "preset": "preset (numbers as published)",
}


def format_name(source_format: str) -> str:
    return FORMAT_NAMES.get(source_format, source_format)


@memo(CACHE_SIZE)
def batch_profiles(digest: str, gpu_digest: str | None, _text: str,
                   _gpu_text: str | None) -> tuple:
    """Every table of an offline file (``engine.measured.read_batch_profiles``)."""
    return read_batch_profiles(_text, gpu_metrics_text=_gpu_text)


@memo(CACHE_SIZE)
def concurrency_sweeps(digest: str, _text: str) -> tuple:
    """Every table of an online file (``engine.measured.read_concurrency_sweeps``)."""
    return read_concurrency_sweeps(_text)


@memo(1)
def pairs() -> dict:
    """The offline/online pair presets (``engine.presets.online_pairs``), by id."""
    return online_pairs()


@memo(CACHE_SIZE)
def server_breakdown(digest: str, _text: str):
    """The breakdown row of a concurrency-2 perf_analyzer run
    (``engine.measured.online_terms.read_server_breakdown``)."""
    return read_server_breakdown(_text)


@memo(CACHE_SIZE)
def comparison(key: tuple, instances: int | None, b_max: int | None, _profile, _sweep,
               breakdown_digest: str | None = None, _breakdown=None):
    """``compare_profile_online`` of the offline profile and online sweep that ``key``
    names (the pair's id, or the files' digests and table labels); ``instances`` and
    ``b_max`` None: the online table's; ``_breakdown`` (named by its file's digest): a
    breakdown run that measures the front end and the GPU share.  With the band of the
    unknown GPU share where no breakdown measures it."""
    return compare_profile_online(_profile, _sweep, instances=instances, b_max=b_max,
                                  breakdown=_breakdown, band=True)


def deployment(label: str) -> str:
    """A table's label with the instance count set aside: the GPU and the server's setup."""
    return " · ".join(p.strip() for p in label.split("·") if "instance" not in p.lower())


def matching_index(labels, online_label: str) -> int | None:
    """The offline table of the same deployment as the online table: the same label once
    the instance count is set aside (None when none matches)."""
    key = deployment(online_label)
    return next((i for i, lab in enumerate(labels) if deployment(lab) == key), None)


def mismatch(offline_label: str, online_label: str, offline_labels) -> str:
    """Where the two tables picked are not of one deployment: a plain warning saying so
    (and which offline table is, where the file has one); "" where they are."""
    if deployment(offline_label) == deployment(online_label):
        return ""
    match = matching_index(offline_labels, online_label)
    hint = (f"the offline table of this server is {offline_labels[match]}: pick it above"
            if match is not None else
            "the offline file has no table of this server: upload one")
    return (f"These tables are not of the same GPU and server: offline {offline_label}, "
            f"online {online_label}. The model predicts a server from that server's own "
            f"offline table, so the comparison below mixes two setups; {hint}.")


def summary_sentence(comp) -> str:
    """One plain sentence: how close the model comes, median and worst row."""
    thr, n_thr = comp.worst_throughput
    lat, n_lat = comp.worst_latency
    return (f"From the offline table alone the model predicts this server's online throughput "
            f"within {format_percent(comp.median_abs_throughput_error, 0)} (median; worst "
            f"{format_percent(thr, 0)} at N = {n_thr:g}) and its mean latency within "
            f"{format_percent(comp.median_abs_latency_error, 0)} (median; worst "
            f"{format_percent(lat, 0)} at N = {n_lat:g}).")


def summary_rows(comp) -> list[tuple[str, str]]:
    """(label, value with units) of the comparison: errors, the model's terms, server."""
    p = comp.prediction
    if p.knee_batch is not None:
        share = (f"1 past the knee, α·b / g0 below it (offline latency's knee at "
                 f"b ≈ {p.knee_batch:.3g})")
    elif p.gpu_share is None:
        share = "not measured (the capacity averaged over 0 to 1)"
    else:
        share = f"{p.gpu_share:.3g} (breakdown run)"
    if p.knee_batch is not None:
        batch_rows = [("GPU time per request past the knee (α_g)", f"{p.alpha_ms:.4g} ms"),
                      ("GPU time of a batch below the knee (g0)", f"{p.gpu_floor_ms:.4g} ms"),
                      ("Instance's own work off the GPU", "not measured (0 assumed)"
                       if p.instance_ms_per_input == 0 else
                       f"{p.instance_ms_per_input:.3g} ms per request (breakdown run)"),
                      ("R² of the offline latency's two lines", f"{p.r2:.4f}")]
    elif p.gpu_floor_ms is not None:                    # split by the breakdown run
        batch_rows = [("GPU time per request (γ × the instance's time)", f"{p.alpha_ms:.4g} ms"),
                      ("Instance's own work off the GPU",
                       f"{p.instance_ms_per_input:.3g} ms per request (breakdown run)"),
                      ("R² of the offline line", f"{p.r2:.4f}")]
    else:
        batch_rows = [("Time per request in a batch (α)", f"{p.alpha_ms:.4g} ms"),
                      ("Fixed time per batch (τ0)", f"{p.tau0_ms:.4g} ms"),
                      ("R² of the offline line", f"{p.r2:.4f}")]
    return [
        ("Throughput error, median |error|", format_percent(comp.median_abs_throughput_error, 1)),
        ("Throughput error, max |error|", format_percent(comp.max_abs_throughput_error, 1)),
        ("Mean latency error, median |error|", format_percent(comp.median_abs_latency_error, 1)),
        ("Mean latency error, max |error|", format_percent(comp.max_abs_latency_error, 1)),
        ("Model instances", f"{p.instances}"),
        ("Batch-size limit b_max", "none" if p.b_max is None else f"{p.b_max:g} requests"),
        ("Offline throughput peaks at", "—" if p.saturation_batch is None
         else f"b = {p.saturation_batch}"),
        *batch_rows,
        ("Front-end time per request", f"{p.transfer_ms:.3g} ms"),
        ("GPU share of a batch (γ)", share),
        ("Batch time stretched by GPU sharing", f"{p.sharing_factor:.3g}×"
         if p.gpu_floor_ms is None else "none: the GPU's time is shared batch by batch"),
        ("Closed loop solved by", p.method),
    ]


def terms_text(comp) -> str:
    """Markdown: which terms were read off the data and which were assumed."""
    p = comp.prediction
    out = "**Terms read off the measurements**\n\n" + "\n".join(f"- {t}" for t in p.identified)
    if p.assumed:
        out += "\n\n**Terms assumed**\n\n" + "\n".join(f"- {t}" for t in p.assumed)
    return out


def narrowing_sentence(without, with_file=None) -> str:
    """How much a breakdown run narrows the prediction at the highest concurrency: the
    band of the unknown GPU share (``without``'s), and the point ``with_file`` gives."""
    p = without.prediction
    n = without.concurrency[-1]
    if p.throughput_without_knee_per_s is not None:
        text = (f"The knee's reading (the GPU's time flat below b ≈ {p.knee_batch:.3g}, the "
                f"slope there transfer) gives {p.throughput_per_s[-1]:,.0f}/s at N = {n:g}; "
                f"if that slope is GPU work instead, the line's reading gives "
                f"{p.throughput_without_knee_per_s[-1]:,.0f}/s.")
        if with_file is not None:
            q = with_file.prediction
            kept = "kept" if q.knee_batch is not None else "set aside"
            return text + (f" The breakdown run's compute infer tells them apart: the knee "
                           f"is {kept}, {q.throughput_per_s[-1]:,.0f}/s (measured "
                           f"{with_file.measured_throughput_per_s[-1]:,.0f}/s).")
        return text + (" One perf_analyzer run at concurrency 2 with its server-side "
                       "breakdown tells them apart (its compute infer is the GPU time of a "
                       "small batch): upload it below.")
    if p.throughput_low_per_s is None:
        return ""
    low, high = p.throughput_low_per_s[-1], p.throughput_high_per_s[-1]
    point = p.throughput_per_s[-1]
    text = (f"Without a breakdown run the GPU share is unknown: at N = {n:g} the throughput "
            f"lies between {low:,.0f}/s (γ = 1: the GPU runs one batch at a time) and "
            f"{high:,.0f}/s (γ ≤ 1/{p.instances}: the instances never wait for the GPU), "
            f"a band {format_percent(p.band_fraction[-1], 0)} of the point "
            f"prediction {point:,.0f}/s.")
    if with_file is not None:
        q = with_file.prediction
        own = q.alpha_ms + q.instance_ms_per_input
        text += (f" The breakdown run measures the instance's own time ({own:.3g} ms per "
                 f"request; the rest of the offline time is transfer, paid per request), "
                 f"γ = {q.gpu_share:.3g} and the front end ({q.transfer_ms:.3g} ms): the "
                 f"band narrows to one value, "
                 f"{q.throughput_per_s[-1]:,.0f}/s (measured "
                 f"{with_file.measured_throughput_per_s[-1]:,.0f}/s).")
    else:
        text += (" One perf_analyzer run at concurrency 2 with its server-side breakdown "
                 "(queue, compute input, compute infer, compute output) measures γ and the "
                 "front end: upload it below.")
    return text


def error_table(comp, p99_ms=None) -> pd.DataFrame:
    """Each row of the online table: measured, predicted and the signed error (%,
    predicted / measured − 1) of throughput and mean latency; the band of the unknown
    GPU share where there is one; the measured p99 where the online table has it."""
    p = comp.prediction
    table = {
        "concurrency N (clients)": comp.concurrency.astype(int),
        "measured throughput (requests/s)": comp.measured_throughput_per_s,
        "predicted throughput (requests/s)": rounded(comp.predicted_throughput_per_s, 1),
        "throughput error (%)": rounded(100 * comp.throughput_error, 1),
        "measured mean latency (ms)": comp.measured_latency_ms,
        "predicted mean latency (ms)": rounded(comp.predicted_latency_ms, 3),
        "mean latency error (%)": rounded(100 * comp.latency_error, 1)}
    if p.throughput_low_per_s is not None:
        table["predicted throughput, γ = 1 (requests/s)"] = rounded(p.throughput_low_per_s, 1)
        table[f"predicted throughput, γ ≤ 1/{p.instances} (requests/s)"] = rounded(
            p.throughput_high_per_s, 1)
    if p.throughput_without_knee_per_s is not None:
        table["predicted throughput, the line's reading (requests/s)"] = rounded(
            p.throughput_without_knee_per_s, 1)
    if p99_ms is not None:
        table["measured p99 latency (ms)"] = p99_ms
    return pd.DataFrame(table)


@memo(CACHE_SIZE)
def comparison_figures(key: tuple, instances: int | None, b_max: int | None, _comp) -> tuple:
    """(name, figure) of a comparison (the one ``comparison`` memoises under the same
    arguments): throughput and mean latency against concurrency."""
    n = _comp.concurrency
    return (
        ("online_throughput", figs.online_comparison_figure(
            n, _comp.measured_throughput_per_s, _comp.predicted_throughput_per_s,
            title="Throughput: model vs measurement", y_title="throughput (requests/s)")),
        ("online_latency", figs.online_comparison_figure(
            n, _comp.measured_latency_ms, _comp.predicted_latency_ms,
            title="Mean latency: model vs measurement", y_title="mean latency (ms)")))


# ---------------------------------------------------------------- Model Analyzer: p99 too

MA_MODEL = "model from the file's peaks"


@memo(CACHE_SIZE)
def model_analyzer(digest: str, gpu_digest: str | None, _text: str,
                   _gpu_text: str | None) -> tuple:
    """Every configuration of a Model Analyzer file against the closed-loop model built
    from the file's own peaks (``compare_model_analyzer``); ``ValueError`` when none has
    a p99 column."""
    found = compare_model_analyzer(_text, gpu_metrics_text=_gpu_text)
    if not found:
        raise ValueError("no configuration of the file has a p99 latency column")
    return found


def ma_sentence(comp) -> str:
    """One plain sentence for a Model Analyzer configuration: throughput and p99."""
    thr, n_thr = comp.worst_throughput
    p99, n_p99 = comp.worst_p99
    return (f"For {comp.label} (max batch size {comp.max_batch_size}) the model built from "
            f"the file's peak throughputs predicts the throughput within "
            f"{format_percent(comp.median_abs_throughput_error, 0)} (median; worst "
            f"{format_percent(thr, 0)} at N = {n_thr:g}) and Model Analyzer's p99 within "
            f"{format_percent(comp.median_abs_p99_error, 0)} (median; worst "
            f"{format_percent(p99, 0)} at N = {n_p99:g}).")


def ma_rows(comp) -> list[tuple[str, str]]:
    return [
        ("Throughput error, median |error|", format_percent(comp.median_abs_throughput_error, 1)),
        ("Throughput error, max |error|", format_percent(comp.max_abs_throughput_error, 1)),
        ("p99 latency error, median |error|", format_percent(comp.median_abs_p99_error, 1)),
        ("p99 latency error, max |error|", format_percent(comp.max_abs_p99_error, 1)),
        ("Batch-size limit b_max", "none" if comp.max_batch_size is None
         else f"{comp.max_batch_size} requests"),
        ("Time per request in a batch (α)", f"{comp.alpha_ms:.4g} ms"),
        ("Fixed time per batch (τ0)", f"{comp.tau0_ms:.4g} ms")]


def ma_table(comp) -> pd.DataFrame:
    """Each concurrency of one configuration: measured, model and signed error (%)."""
    return pd.DataFrame({
        "concurrency N (clients)": comp.concurrency.astype(int),
        "measured throughput (requests/s)": comp.measured_throughput_per_s,
        "model throughput (requests/s)": rounded(comp.predicted_throughput_per_s, 1),
        "throughput error (%)": rounded(100 * comp.throughput_error, 1),
        "measured p99 latency (ms)": comp.measured_p99_ms,
        "model p99 latency (ms)": rounded(comp.predicted_p99_ms, 3),
        "p99 latency error (%)": rounded(100 * comp.p99_error, 1)})


@memo(CACHE_SIZE)
def ma_figures(key: tuple, _comp) -> tuple:
    """(name, figure): one configuration's throughput and p99 against concurrency."""
    n = _comp.concurrency
    return (
        ("ma_throughput", figs.online_comparison_figure(
            n, _comp.measured_throughput_per_s, _comp.predicted_throughput_per_s,
            title="Throughput: model vs Model Analyzer", y_title="throughput (requests/s)",
            model=MA_MODEL)),
        ("ma_p99", figs.online_comparison_figure(
            n, _comp.measured_p99_ms, _comp.predicted_p99_ms,
            title="p99 latency: model vs Model Analyzer", y_title="p99 latency (ms)",
            model=MA_MODEL)))
