"""The GPU page with measured files (issue 15), driven headless with AppTest: every format
the readers take uploaded as the custom profile (the fit is the reader's, the format and
the reader's notes shown), bad files refused beside the input with the previous profile
kept, and the "Model vs measurement" view against ``engine.measured.online`` on the same
data.  The real files are read from ../shared/real-data (tests/real_data.py)."""
from __future__ import annotations

import functools
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from app_pages.batching import measured, measured_view
from engine.measured import read_batch_profile, read_batch_profiles, read_concurrency_sweeps
from engine.measured.online import compare_model_analyzer, compare_profile_online
from engine.measured.online_terms import read_server_breakdown
from engine.presets import online_pairs
from tests import pagetest
from tests.measured import samples
from tests.pagetest import charts, results
from tests.real_data import real_file
from ui.export import figure_csv

PAGE = "app_pages/batching/page.py"
UPLOAD = "gpu_profile_upload"
MA = "triton_ma_textrec_onnx_metrics-model-inference.csv"
MA_GPU = "triton_ma_textrec_onnx_metrics-model-gpu.csv"
DLE = "batch_dle_resnet50_pytorch_by_batch.csv"
OFFLINE = "triton_dle_resnet50_pytorch_offline.csv"
ONLINE = "triton_dle_resnet50_pytorch_online.csv"
VIEW = {"view": "Model vs measurement"}


def fit_caption(at) -> str:
    return next(c.value for c in at.sidebar.caption if c.value.startswith("Batch time ="))


def expected_fit(profile) -> str:
    """The sidebar's words for the fit of ``profile`` (page.py's format)."""
    fit = profile.fit()
    return f"{fit.alpha_ms:.4g} ms per request + {fit.tau0_ms:.4g} ms per batch"


def upload(at, *files):
    """Upload ``files`` ((name, text or bytes) pairs) as the custom profile and rerun."""
    data = [(n, d.encode() if isinstance(d, str) else d, "text/csv") for n, d in files]
    at.file_uploader(key=UPLOAD).set_value(data[0] if len(data) == 1 else data).run()
    assert not at.exception, at.exception


def captions(at) -> list[str]:
    return [c.value for c in at.sidebar.caption]


def test_every_format_uploads_as_the_profile_with_its_format_and_notes_shown():
    """Each format the readers take, uploaded: the sidebar's fit is the reader's profile's
    fit (so the caption changes at each upload), the detected format is named and every
    note of the reader is shown; a file with several tables offers them."""
    at = pagetest.open_page(PAGE, {"preset": "custom"})
    shown = [fit_caption(at)]
    cases = [((OFFLINE,), "DeepLearningExamples Triton table"),
             ((DLE,), "DeepLearningExamples by-batch table"),
             ((MA,), "Triton Model Analyzer"),
             ((MA_GPU, MA), "Triton Model Analyzer"),       # power from the second file
             (("perf.csv",), "perf_analyzer -f CSV"),
             (("plain.csv",), "plain CSV")]
    texts = {"perf.csv": samples.PERF_ANALYZER, "plain.csv": samples.PLAIN_PROFILE}
    for names, format_name in cases:
        files = [(n, texts[n] if n in texts else real_file(n)) for n in names]
        upload(at, *files)
        assert not at.error, [e.value for e in at.error]
        main = files[-1][1]
        gpu = files[0][1] if len(files) == 2 else None
        profile = read_batch_profiles(main, gpu_metrics_text=gpu)[0]     # the first table
        caption = fit_caption(at)
        assert expected_fit(profile) in caption and caption != shown[-1], (names, caption)
        shown.append(caption)
        assert any(c.startswith(f"Read as: {format_name}") for c in captions(at)), names
        if profile.source_format != "plain_csv":
            assert set(profile.notes) <= set(captions(at)), names      # every note shown
        assert ("energy" in caption) == (profile.power_w is not None), caption
        if profile.source_format == "model_analyzer":       # sweeps dropped, said so
            assert sum(c.startswith("dropped text_reg_batch_config_") for c in captions(at)) == 3
    assert read_batch_profile(real_file(MA), gpu_metrics_text=real_file(MA_GPU)).power_w \
        is not None and read_batch_profile(real_file(MA)).power_w is None
    # a file of several tables: the picker offers them all and the fit follows the pick
    upload(at, (DLE, real_file(DLE)))
    tables = read_batch_profiles(real_file(DLE))
    pick = at.selectbox(key="gpu_profile_pick")
    assert pick.options == [t.label for t in tables]
    pick.set_value(tables[2].label).run()
    assert expected_fit(tables[2]) in fit_caption(at)
    assert any(tables[2].label in c for c in captions(at))


def truncated(text: str) -> str:
    """The first two lines and half of the third, cut after a comma (a download that
    stopped mid-row)."""
    lines = text.splitlines(keepends=True)
    cut = lines[2].index(",", len(lines[2]) // 2)
    return "".join(lines[:2]) + lines[2][:cut + 1]


BAD = {
    "Model Analyzer truncated": lambda: truncated(real_file(MA)),
    "DeepLearningExamples table truncated": lambda: truncated(real_file(DLE)),
    "Triton table truncated": lambda: truncated(real_file(OFFLINE)),
    "perf_analyzer truncated": lambda: truncated(samples.PERF_ANALYZER),
    "plain CSV truncated": lambda: truncated(samples.PLAIN_PROFILE),
    "wrong columns": lambda: "size,speed\n1,100\n2,200\n",
    "empty": lambda: b"",
    "binary": lambda: bytes(range(256)) * 8,
    "10 MB": lambda: b"batch_size,throughput_per_s\n" + b"1,476\n" * 1_700_000,
    "online table as a profile": lambda: real_file(ONLINE),
    "request trace as a profile": lambda: samples.AZURE,
    "vllm result as a profile": lambda: samples.VLLM,
    "GPU metrics alone": lambda: real_file(MA_GPU),
}
SAYS = {"empty": "empty", "binary": "UTF-8", "10 MB": r"10\.\d MB; the limit is 2\.0 MB",
        "online table as a profile": "read_concurrency_sweep", "GPU metrics alone":
        "metrics-model-inference", "request trace as a profile": "trace",
        "vllm result as a profile": "JSON", "wrong columns": "columns"}


def test_bad_files_are_refused_beside_the_input_and_the_previous_profile_stays():
    at = pagetest.open_page(PAGE, {"preset": "custom"})
    upload(at, (OFFLINE, real_file(OFFLINE)))
    good = fit_caption(at)
    assert expected_fit(read_batch_profile(real_file(OFFLINE))) in good
    for case, make in BAD.items():
        upload(at, (f"{case}.csv", make()))
        errors = [e.value for e in at.sidebar.error]
        assert errors and errors[0].startswith("Profile not used"), (case, errors)
        assert case not in SAYS or re.search(SAYS[case], errors[0]), errors[0]
        assert fit_caption(at) == good, case                 # α, τ0 unchanged
        assert any(i.value.startswith("Still showing the last valid profile")
                   for i in at.sidebar.info), case


@functools.cache                 # the same GPU's comparison is asked for up to four times
def compared(gpu: str):
    """``compare_profile_online`` of one GPU's real tables, read through the readers
    (computed once per GPU: read only)."""
    profile = next(p for p in read_batch_profiles(real_file(OFFLINE)) if p.label.startswith(gpu))
    sweep = next(s for s in read_concurrency_sweeps(real_file(ONLINE))
                 if s.label.startswith(gpu))
    return compare_profile_online(profile, sweep)


def assert_view_shows(at, comp):
    """The view's numbers are ``comp``'s: the sentence, the medians and maxima, each
    row's signed error; two charts whose CSV columns carry units."""
    assert not at.exception and not at.error, [e.value for e in at.error]
    found = results(at)
    for label, value in (("Throughput error, median |error|", comp.median_abs_throughput_error),
                         ("Throughput error, max |error|", comp.max_abs_throughput_error),
                         ("Mean latency error, median |error|", comp.median_abs_latency_error),
                         ("Mean latency error, max |error|", comp.max_abs_latency_error)):
        assert found[label] == f"{100 * value:.1f} %", label
    assert found["Model instances"] == str(comp.prediction.instances)
    assert any(m.value == f"**{measured.summary_sentence(comp)}**" for m in at.markdown)
    table = at.dataframe[-1].value
    np.testing.assert_array_equal(table["concurrency N (clients)"], comp.concurrency)
    np.testing.assert_allclose(table["throughput error (%)"], 100 * comp.throughput_error,
                               atol=0.05 + 1e-9)
    np.testing.assert_allclose(table["mean latency error (%)"], 100 * comp.latency_error,
                               atol=0.05 + 1e-9)
    figs = [f for f in charts(at) if "model vs measurement" in f["layout"]["title"]["text"]]
    assert len(figs) == 2
    header = figure_csv(go.Figure(figs[0])).decode().splitlines()[0]
    assert header == ("concurrency N (clients),predicted from the offline table "
                      "(requests/s),measured (requests/s)")
    measured_line = pagetest.trace(figs[1], "measured")
    assert measured_line["y"] == pytest.approx(list(comp.measured_latency_ms))


def test_model_vs_measurement_example_is_the_engines_comparison_of_the_real_tables():
    at = pagetest.open_page(PAGE, VIEW)
    pairs = online_pairs()
    first = next(iter(pairs.values()))
    assert at.selectbox(key="mvm_pair").value == first.id
    comp = compared(first.profile.label.split(" · ")[0])
    assert_view_shows(at, comp)
    assert any(first.source in c.value for c in at.caption)
    for assumption in comp.prediction.assumptions:               # listed in plain words
        assert any(f"- {assumption}" in m.value for m in at.markdown)
    at.selectbox(key="mvm_pair").set_value("dle_triton_resnet50_t4").run()
    assert_view_shows(at, compared("NVIDIA T4"))
    # the server's settings overridden: one instance instead of the table's two
    at.toggle(key="mvm_override").set_value(True).run()
    assert at.number_input(key="mvm_instances").value == 2
    at.number_input(key="mvm_instances").set_value(1).run()
    pair = pairs["dle_triton_resnet50_t4"]
    assert_view_shows(at, compare_profile_online(pair.profile, pair.sweep, instances=1,
                                                 b_max=128))


def test_model_vs_measurement_from_uploaded_tables_follows_the_gpu_picked():
    at = pagetest.open_page(PAGE, VIEW)
    at.radio(key="mvm_source").set_value("files").run()
    assert any("Upload both tables" in i.value for i in at.info)
    at.file_uploader(key="mvm_offline_upload").set_value(
        (OFFLINE, real_file(OFFLINE).encode(), "text/csv")).run()
    at.file_uploader(key="mvm_online_upload").set_value(
        (ONLINE, real_file(ONLINE).encode(), "text/csv")).run()
    sweeps = read_concurrency_sweeps(real_file(ONLINE))
    assert at.selectbox(key="mvm_online_table").options == [s.label for s in sweeps]
    assert_view_shows(at, compared(sweeps[0].label.split(" · ")[0]))
    t4 = next(s.label for s in sweeps if s.label.startswith("NVIDIA T4"))
    at.selectbox(key="mvm_online_table").set_value(t4).run()
    assert at.selectbox(key="mvm_offline_table").value.startswith("NVIDIA T4 ")
    assert_view_shows(at, compared("NVIDIA T4"))
    for name, bad in (("offline.csv", real_file(OFFLINE)), ("bin.csv", bytes(range(256)))):
        at.file_uploader(key="mvm_online_upload").set_value((name, bad if isinstance(
            bad, bytes) else bad.encode(), "text/csv")).run()
        assert [e.value for e in at.error if e.value.startswith("Online table")], name
        assert any(i.value == f"Still using {ONLINE}." for i in at.info)
        found = results(at)               # the previous comparison is still the one shown
        assert found["Throughput error, median |error|"] == (
            f"{100 * compared('NVIDIA T4').median_abs_throughput_error:.1f} %")


def test_tables_of_two_gpus_are_said_to_differ():
    """Issue 24: an A100 offline table was compared with an A40 online table under
    "Offline table (the same GPU)", unsaid."""
    at = pagetest.open_page(PAGE, VIEW)
    at.radio(key="mvm_source").set_value("files").run()
    gpu_b_only = "\n".join(line for line in samples.TRITON_OFFLINE.splitlines()
                           if "GPU A" not in line)
    for offline, warned in ((samples.TRITON_OFFLINE, False), (gpu_b_only, True)):
        at.file_uploader(key="mvm_offline_upload").set_value(
            ("offline.csv", offline.encode(), "text/csv")).run()
        at.file_uploader(key="mvm_online_upload").set_value(
            ("online.csv", samples.TRITON_ONLINE.encode(), "text/csv")).run()
        said = [w.value.replace("\\", "") for w in at.warning if "not of the same GPU" in w.value]
        assert not at.exception and bool(said) == warned
    assert said[0].startswith("These tables are not of the same GPU and server: offline GPU B")
    assert "no table of this server: upload one" in said[0]
    at.file_uploader(key="mvm_offline_upload").set_value(          # both GPUs: A is matched
        ("both.csv", samples.TRITON_OFFLINE.encode(), "text/csv")).run()
    assert at.selectbox(key="mvm_offline_table").value.startswith("GPU A ")
    assert not [w for w in at.warning if "not of the same GPU" in w.value]
    other = next(o for o in at.selectbox(key="mvm_offline_table").options if "GPU B" in o)
    at.selectbox(key="mvm_offline_table").set_value(other).run()      # picked by hand
    said = next(w.value.replace("\\", "") for w in at.warning if "not of the same GPU" in w.value)
    assert "the offline table of this server is GPU A · ONNX Runtime + TensorRT" in said


def test_model_analyzer_export_compares_throughput_and_p99_per_configuration():
    """A Model Analyzer export holds its own offline profile (the peaks) and the sweeps:
    each configuration's throughput and p99 beside ``compare_model_analyzer``'s."""
    at = pagetest.open_page(PAGE, VIEW)
    at.radio(key="mvm_source").set_value("model_analyzer").run()
    at.file_uploader(key="mvm_ma_upload").set_value(
        [(MA_GPU, real_file(MA_GPU).encode(), "text/csv"),
         (MA, real_file(MA).encode(), "text/csv")]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    comps = compare_model_analyzer(real_file(MA), gpu_metrics_text=real_file(MA_GPU))
    assert at.selectbox(key="mvm_ma_config").options == [c.label for c in comps]
    for comp in (comps[0], comps[-1]):
        at.selectbox(key="mvm_ma_config").set_value(comp.label).run()
        found = results(at)
        assert found["p99 latency error, median |error|"] == \
            f"{100 * np.median(np.abs(comp.p99_error)):.1f} %"
        assert found["Throughput error, max |error|"] == \
            f"{100 * np.max(np.abs(comp.throughput_error)):.1f} %"
        table = at.dataframe[-1].value
        np.testing.assert_allclose(table["p99 latency error (%)"], 100 * comp.p99_error,
                                   atol=0.05 + 1e-9)
        p99 = next(f for f in charts(at) if f["layout"]["title"]["text"].startswith("p99"))
        assert pagetest.trace(p99, "measured")["y"] == pytest.approx(list(comp.measured_p99_ms))
        assert any(m.value == f"**{measured.ma_sentence(comp)}**" for m in at.markdown)
    at.file_uploader(key="mvm_ma_upload").set_value(("online.csv", real_file(ONLINE).encode(),
                                                     "text/csv")).run()
    assert any(e.value.startswith("Model Analyzer export not used") for e in at.error)
    assert results(at)["p99 latency error, median |error|"] == \
        f"{100 * np.median(np.abs(comps[-1].p99_error)):.1f} %"       # the last valid file


def test_the_report_holds_the_comparison_last_shown():
    at = pagetest.open_page(PAGE, VIEW)
    holder = at.session_state["_mvm_report"]
    sections = measured_view.report_sections(holder)
    assert [title for title, _, _ in sections] == [
        "Model vs measurement: throughput against concurrency",
        "Model vs measurement: mean latency against concurrency"]
    first = next(iter(online_pairs().values()))
    comp = compare_profile_online(first.profile, first.sweep)
    assert sections[-1][2].startswith(measured.summary_sentence(comp))
    assert measured_view.report_sections({}) == []


BREAKDOWN = ("Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
             "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
             "p99 latency\n2,700,60,1100,150,300,1500,30,0,3500\n")


def test_terms_are_said_and_a_breakdown_run_narrows_the_prediction():
    """Issue 25: the view says which terms were read off the tables and which assumed (the
    GPU share, without a breakdown run), shows the band the unknown share leaves, and a
    concurrency-2 breakdown run uploaded measures the share and the front end: the view
    then shows the engine's comparison with that breakdown, and the band narrows to one
    value."""
    at = pagetest.open_page(PAGE, VIEW)
    pair = online_pairs()["dle_triton_resnet50_t4"]
    at.selectbox(key="mvm_pair").set_value(pair.id).run()
    comp = compare_profile_online(pair.profile, pair.sweep, band=True)
    text = "\n".join(m.value for m in at.markdown)
    for sentence in comp.prediction.identified:
        assert f"- {sentence}" in text
    assert "**Terms assumed**" in text and "GPU share γ" in text
    band = next(i.value for i in at.info if "Without a breakdown run" in i.value)
    assert f"{comp.prediction.throughput_low_per_s[-1]:,.0f}/s" in band
    assert f"{comp.prediction.throughput_high_per_s[-1]:,.0f}/s" in band
    assert results(at)["GPU share of a batch (γ)"].startswith("not measured")
    at.file_uploader(key="mvm_breakdown_upload").set_value(
        ("c2.csv", BREAKDOWN.encode(), "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    b = read_server_breakdown(BREAKDOWN)
    assert b.gpu_share == pytest.approx(1500 / 1830) and b.front_end_ms == pytest.approx(1.16)
    narrowed = compare_profile_online(pair.profile, pair.sweep, breakdown=b)
    assert_view_shows(at, narrowed)
    assert results(at)["GPU share of a batch (γ)"] == f"{b.gpu_share:.3g} (breakdown run)"
    said = next(i.value for i in at.info if "Without a breakdown run" in i.value)
    assert f"narrows to one value, {narrowed.predicted_throughput_per_s[-1]:,.0f}/s" in said
    # the share is measured now; what stays assumed is how the instance's time grows
    shown = "\n".join(m.value for m in at.markdown)
    assert "not in the offline table" not in shown
    assert "grows in proportion to the batch" in shown


def test_a_table_with_a_knee_says_the_gpu_time_was_identified():
    """Where the offline latency's knee identifies the GPU's batch time, the summary shows
    α_g, g0 and the knee instead of the line's α and τ0, the GPU share as read off the
    knee, and the terms say so (the one remaining assumption: where t_x is spent)."""
    sizes = (1, 2, 4, 8, 16, 32, 64, 128)
    offline = ("gpu,backend,precision,model_instances,client_batch_size,"
               "inferences_per_second\n" + "".join(
                   f"G,B,FP16,1,{b},{1000 * b / (1 + 0.8 * b + max(4.8, 0.3 * b))!r}\n"
                   for b in sizes))
    profile = read_batch_profile(offline)
    sweep = read_concurrency_sweeps(
        "gpu,backend,precision,model_instances,max_batch_size,concurrent_client_requests,"
        "inferences_per_second,avg_latency_ms\nG,B,FP16,2,128,64,3000.0,21.33\n"
        "G,B,FP16,2,128,256,3300.0,77.58\n")[0]
    comp = compare_profile_online(profile, sweep)
    rows = dict(measured.summary_rows(comp))
    assert rows["GPU time per request past the knee (α_g)"] == "0.3 ms"
    assert rows["GPU time of a batch below the knee (g0)"] == "4.8 ms"
    assert rows["GPU share of a batch (γ)"].startswith("1 past the knee")
    assert "Time per request in a batch (α)" not in rows
    assert rows["Instance's own work off the GPU"] == "not measured (0 assumed)"
    text = measured.terms_text(comp)
    assert "GPU batch time g(b) = max(4.8, 0.3·b) ms" in text
    assert "**Terms assumed**" in text and "serial transfer t_x" in text
    assert "framework tables" in text                   # the knee's own assumption, said
    # the line's reading beside the knee's, in the sentence and the table, until a
    # breakdown run tells them apart
    p = comp.prediction
    said = measured.narrowing_sentence(comp)
    assert f"gives {p.throughput_per_s[-1]:,.0f}/s at N = 256" in said
    assert f"the line's reading gives {p.throughput_without_knee_per_s[-1]:,.0f}/s" in said
    assert "upload it below" in said
    column = measured.error_table(comp)["predicted throughput, the line's reading (requests/s)"]
    assert column.tolist() == pytest.approx(p.throughput_without_knee_per_s.tolist(), abs=0.05)
    told = compare_profile_online(profile, sweep, breakdown=read_server_breakdown(
        "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
        "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv\n"
        "2,300,0,1800,0,0,4800,0,0\n"))
    assert "the knee is kept" in measured.narrowing_sentence(comp, told)
