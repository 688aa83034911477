"""The readers on small synthetic files of each format (tests/measured/samples.py):
values and unit conversions recomputed here from the samples' numbers, and every kind
of bad file answered by a ValueError that says where and what was expected."""
import json
import re

import numpy as np
import pytest

from tests.counting import counted

from engine import measured
from engine.fit import fit_batch_profile
from tests.measured import samples as S

READERS = {"read_batch_profile": (measured.read_batch_profile, S.PROFILE_SAMPLES),
           "read_concurrency_sweep": (measured.read_concurrency_sweep, S.SWEEP_SAMPLES),
           "read_trace": (measured.read_trace, S.TRACE_SAMPLES),
           "read_vllm_bench": (measured.read_vllm_bench, {"vllm": S.VLLM})}
CASES = [(reader, fmt) for reader, (_, found) in READERS.items() for fmt in found]


def message(fn, text, **kwargs) -> str:
    with pytest.raises(ValueError) as err:
        fn(text, **kwargs)
    return str(err.value)


# ------------------------------------------------------------ values

def test_model_analyzer_peaks_per_server_batch():
    """B = Max Batch Size; τ[B] = 1000·B / peak; config_b (+20 % on its last step) dropped;
    power joined at the peak rows (config_a at concurrency 8, config_c at 16)."""
    p = measured.read_batch_profile(S.MODEL_ANALYZER, gpu_metrics_text=S.MODEL_ANALYZER_GPU)
    assert p.source_format == "model_analyzer" and p.label == "m"
    assert p.batch_size.tolist() == [2.0, 8.0]
    assert np.allclose(p.batch_time_ms, [1000 * 2 / 200.0, 1000 * 8 / 500.0])
    assert p.p99_latency_ms.tolist() == [50.0, 40.0] and p.power_w.tolist() == [40.0, 60.0]
    dropped = [n for n in p.notes if n.startswith("dropped")]
    assert len(dropped) == 1 and "m_config_b" in dropped[0] and "4" in dropped[0]
    assert "300 -> 360" in dropped[0]
    fit = p.fit()
    ref = fit_batch_profile(p.batch_size, p.throughput_per_s, p.power_w)
    assert (fit.alpha_ms, fit.tau0_ms, fit.beta_j) == (ref.alpha_ms, ref.tau0_ms, ref.beta_j)


def test_model_analyzer_highest_peak_per_batch_and_missing_power():
    """Two configs with one B: the higher peak is kept and the other named; a peak row
    without a GPU row leaves power out with a note."""
    extra = "m,1,16,m_config_d,2:GPU,8,Yes,450.0,35.0\nm,1,32,m_config_d,2:GPU,8,Yes,440.0,70.0\n"
    p = measured.read_batch_profile(S.MODEL_ANALYZER.rstrip() + "\n" + extra,
                                    gpu_metrics_text=S.MODEL_ANALYZER_GPU.splitlines()[0]
                                    + "\n" + S.MODEL_ANALYZER_GPU.splitlines()[1])
    assert p.batch_time_ms[-1] == 1000 * 8 / 500.0
    assert any("m_config_c" in n and "m_config_d" in n for n in p.notes)
    assert p.power_w is None and any("power_w left out" in n for n in p.notes)


def test_model_analyzer_sweeps_by_littles_law():
    sweeps = measured.read_concurrency_sweeps(S.MODEL_ANALYZER)
    assert [s.label for s in sweeps] == ["m_config_a", "m_config_b", "m_config_c"]
    a = sweeps[0]
    assert a.concurrency.tolist() == [1, 2, 4, 8] and a.max_batch_size == 2
    assert np.allclose(a.mean_latency_ms, 1000 * np.array([1, 2, 4, 8]) / [100, 150, 199, 200])
    assert a.model_instances is None and any("Little" in n for n in a.notes)
    assert any("not saturated" in n for n in sweeps[1].notes)


def test_perf_analyzer_batch_is_concurrency_and_us_to_ms():
    p = measured.read_batch_profile(S.PERF_ANALYZER)
    assert p.batch_size.tolist() == [1, 2, 4]
    assert np.allclose(p.batch_time_ms, 1000 * np.array([1, 2, 4]) / [250, 450, 800])
    assert p.p99_latency_ms.tolist() == [4.5, 5.0, 6.0]            # µs / 1000
    assert any("taken as a batch of N" in n for n in p.notes)
    s = measured.read_concurrency_sweep(S.PERF_ANALYZER)
    # concurrency 1: 50 + 900 + 100 + 100 + 2800 + 50 + 0 µs
    assert s.mean_latency_ms[0] == pytest.approx(4.0)
    assert s.breakdown_ms["server_compute_infer"].tolist() == [2.8, 3.1, 2.3]
    assert s.client_batch_size == 1 and s.model_instances is None


def test_dle_tables_one_label_each():
    ps = measured.read_batch_profiles(S.DLE_BATCH)
    assert [p.label for p in ps] == ["GPU A · FP32 Inference Latency",
                                     "GPU B · AMP Inference Latency"]
    assert np.allclose(ps[1].batch_time_ms, [1000 / 150, 8000 / 900])
    t = measured.read_batch_profiles(S.TRITON_OFFLINE)
    assert t[0].label == "GPU A · ONNX Runtime + TensorRT · FP16 · ONNX · 1 instance"
    assert t[1].label == "GPU B · ONNX Runtime · FP16 · ONNX · 1 instance"
    assert np.allclose(t[0].batch_time_ms, [1000 / 400, 4000 / 1000, 16000 / 2000])
    assert any("network" in n for n in t[0].notes)
    online = measured.read_concurrency_sweep(S.TRITON_ONLINE)
    assert online.concurrency.tolist() == [16, 32] and online.mean_latency_ms.tolist() == [5, 8]
    assert (online.model_instances, online.max_batch_size, online.client_batch_size) == (2, 64, 1)
    assert online.breakdown_ms["server_queue"].tolist() == [1.0, 2.0]


def test_table_choice_and_the_others_noted():
    first = measured.read_batch_profile(S.DLE_BATCH)
    assert first.tables == ("GPU A · FP32 Inference Latency", "GPU B · AMP Inference Latency")
    assert any("GPU B · AMP Inference Latency" in n for n in first.notes)
    second = measured.read_batch_profile(S.DLE_BATCH, table="GPU B · AMP Inference Latency")
    assert second.batch_size.tolist() == [1, 8]
    msg = message(measured.read_batch_profile, S.DLE_BATCH, table="GPU C")
    assert "table" in msg and "GPU A · FP32 Inference Latency" in msg


def test_plain_csv_profile_throughput_or_time():
    p = measured.read_batch_profile(S.PLAIN_PROFILE)
    assert p.batch_size.tolist() == [1, 4, 16] and p.power_w.tolist() == [150, 200, 250]
    assert np.allclose(p.batch_time_ms, [1000 / 400, 4000 / 1000, 16000 / 2000])
    q = measured.read_batch_profile("Batch Size, Batch Time ms\n1, 2.5\n4, 4\n")
    assert q.batch_time_ms.tolist() == [2.5, 4.0] and np.allclose(q.throughput_per_s, [400, 1000])


def test_traces():
    azure = measured.read_trace(S.AZURE.encode())
    assert azure.arrival_s.tolist() == pytest.approx([0.0, 1e-7, 1.8765433], abs=1e-12)
    assert azure.arrival_s[1] == pytest.approx(1e-7, rel=1e-6)      # the 7th digit is kept
    assert azure.input_tokens.tolist() == [100, 200, 300] and azure.n_requests == 3
    moon = measured.read_trace(S.MOONCAKE)
    assert moon.arrival_s.tolist() == [0.0, 0.0, 3.0]              # ties kept, not jittered
    assert any("1 of 3" in n for n in moon.notes) and moon.output_tokens.tolist() == [20, 30, 40]
    plain = measured.read_trace(S.PLAIN_TRACE)
    assert plain.arrival_s.tolist() == [0.0, 0.5, 1.0]
    assert plain.input_tokens.tolist() == [10, 20, 30]             # kept with their request
    assert any("not in time order" in n for n in plain.notes)
    assert plain.duration_s == 1.0 and plain.mean_rate_per_s == 2.0
    bare = measured.read_trace("arrival_s\n0\n0\n")
    assert bare.input_tokens is None and bare.mean_rate_per_s == np.inf


def test_vllm():
    r = measured.read_vllm_bench(S.VLLM)
    assert r.request_rate_per_s == np.inf and r.max_concurrency == 2 and r.completed == 4
    assert r.percentiles_ms["std_itl_ms"] == 2.0 and r.model_id == "m"
    nulls = json.loads(S.VLLM)
    nulls.update(max_concurrency=None, request_rate=2.5)
    r = measured.read_vllm_bench(json.dumps(nulls, indent=1))
    assert r.max_concurrency is None and r.request_rate_per_s == 2.5


def test_results_are_frozen():
    p = measured.read_batch_profile(S.PLAIN_PROFILE)
    with pytest.raises(AttributeError):
        p.label = "x"
    with pytest.raises(ValueError):
        p.batch_size[0] = 3.0


# ------------------------------------------------------------ bad files, every format

@pytest.mark.parametrize("reader,fmt", CASES)
def test_empty_blank_and_binary(reader, fmt):
    fn = READERS[reader][0]
    assert "empty" in message(fn, "")
    assert "empty" in message(fn, " \r\n\t\n")
    text = READERS[reader][1][fmt]
    assert "NUL" in message(fn, text[:40] + "\x00" + text[40:])
    assert "UTF-8" in message(fn, text.encode()[:30] + b"\xff\xfe" + text.encode()[30:])
    assert "line 1" in message(fn, bytes(range(256)) * 10)


@pytest.mark.parametrize("reader,fmt", CASES)
def test_truncated(reader, fmt):
    """Cut after the header (or the first line) and in the middle of the second line."""
    fn, text = READERS[reader][0], READERS[reader][1][fmt]
    lines = text.splitlines(keepends=True)
    if reader == "read_vllm_bench":
        assert "line 1" in message(fn, text[: len(text) // 2])
        return
    if fmt == "mooncake_jsonl":
        assert "line 2" in message(fn, lines[0] + lines[1][:20])
        return
    msg = message(fn, lines[0])
    assert "line 1" in msg and ("only a header" in msg or "at least 2" in msg)
    cut = lines[0] + lines[1][: len(lines[1]) // 3]
    assert "line 2" in message(fn, cut)


@pytest.mark.parametrize("reader,fmt", CASES)
def test_wrong_columns_or_keys(reader, fmt):
    """A renamed column (the message lists the formats or the column expected) or a
    missing JSON key (the message names it and its line)."""
    fn, text = READERS[reader][0], READERS[reader][1][fmt]
    if reader == "read_vllm_bench":
        data = json.loads(text)
        del data["mean_ttft_ms"]
        assert "'mean_ttft_ms'" in message(fn, json.dumps(data))
        data = json.loads(text)
        data["p99_tpot_ms"] = "abc"
        pretty = json.dumps(data, indent=1)
        line = next(i + 1 for i, t in enumerate(pretty.splitlines()) if '"p99_tpot_ms"' in t)
        msg = message(fn, pretty)
        assert f"line {line}," in msg and "'p99_tpot_ms'" in msg and "'abc'" in msg
        return
    if fmt == "mooncake_jsonl":
        assert "line 2, key 'timestamp'" in message(fn, text.replace('"timestamp": 0, "input_length": 600',
                                                                      '"input_length": 600'))
        return
    header, rest = text.split("\n", 1)
    msg = message(fn, "Foo,Bar,Baz\n" + rest)
    assert "line 1" in msg and "unknown columns" in msg and "expected" in msg
    if reader != "read_trace":
        assert "Throughput (infer/sec)" in msg        # the formats are listed
    assert "line 1" in message(fn, "{\"not\": \"a table\"}\n" if reader != "read_trace"
                               else "[{\"timestamp\": 1}]")


BAD_CELL_COLUMN = {   # a column each reader uses, per format
    ("read_batch_profile", "model_analyzer"): "Throughput (infer/sec)",
    ("read_batch_profile", "perf_analyzer"): "p99 latency",
    ("read_batch_profile", "dle_batch_table"): "latency_p99_ms",
    ("read_batch_profile", "triton_dle_table"): "inferences_per_second",
    ("read_batch_profile", "plain_csv"): "power_w",
    ("read_concurrency_sweep", "model_analyzer"): "p99 Latency (ms)",
    ("read_concurrency_sweep", "perf_analyzer"): "Server Queue",
    ("read_concurrency_sweep", "triton_dle_table"): "avg_latency_ms",
    ("read_trace", "azure_llm_csv"): "TIMESTAMP",
    ("read_trace", "plain_csv"): "output_tokens"}


@pytest.mark.parametrize("reader,fmt", CASES)
def test_a_bad_number_names_line_and_column(reader, fmt):
    fn, text = READERS[reader][0], READERS[reader][1][fmt]
    if reader == "read_vllm_bench" or fmt == "mooncake_jsonl":
        bad = text.replace("700", "-7") if fmt == "mooncake_jsonl" else text.replace(
            '"completed": 4', '"completed": 4.5')
        assert "line" in message(fn, bad)
        return
    lines = text.splitlines(keepends=True)
    cells = lines[2].rstrip("\r\n").split(",")
    name = BAD_CELL_COLUMN[reader, fmt]
    j = lines[0].rstrip("\r\n").split(",").index(name)
    cells[j] = "abc"
    lines[2] = ",".join(cells) + "\n"
    msg = message(fn, "".join(lines))
    assert f"line 3, column {j + 1} ({name}): expected" in msg and "'abc'" in msg


@pytest.mark.parametrize("reader", READERS)
def test_ten_megabytes_of_junk_fail_fast(reader):
    """Each refusal names the first bad line (line 1, or 2 after a good header) and its
    work is counted, not timed: at most 16 calls a line of the text (linear: no work per
    character, 10 million here, nor per pair of lines) and at most 64 calls of a method
    of the text (whole-text passes a bounded number of times, not once a line).
    The time of the slowest refusal: ``python -m benchmarks readers``."""
    fn, found = READERS[reader]
    rng = np.random.default_rng(7)
    alphabet = np.frombuffer(b"abcxyz0123456789,.;:\"'{}[] \n", dtype=np.uint8)
    junk = rng.choice(alphabet, 10_000_000).tobytes()
    header = next(iter(found.values())).splitlines()[0] + "\n"
    for text in (junk, junk.decode(), header + junk.decode(), "[" * 10_000_000,
                 "1" * 10_000_000):
        err, calls, on_big = counted(fn, text)
        passes = len(on_big)
        assert isinstance(err, ValueError), type(err)
        lines = text.count(b"\n" if isinstance(text, bytes) else "\n") + 1
        first = re.match(r"line (\d+)\b", str(err))
        assert first and int(first[1]) <= 2, str(err)[:200]
        assert calls <= 16 * lines + 1000, (calls, lines)
        assert passes <= 64, passes


def test_misdirected_files_say_which_reader():
    assert "read_trace" in message(measured.read_batch_profile, S.AZURE)
    assert "gpu_metrics_text" in message(measured.read_batch_profile, S.MODEL_ANALYZER_GPU)
    assert "read_concurrency_sweep" in message(measured.read_batch_profile, S.TRITON_ONLINE)
    assert "read_batch_profile" in message(measured.read_concurrency_sweep, S.DLE_BATCH)
    assert "read_batch_profile" in message(measured.read_concurrency_sweep, S.TRITON_OFFLINE)
    assert "gpu_metrics_text" in message(measured.read_batch_profile, S.PLAIN_PROFILE,
                                         gpu_metrics_text=S.MODEL_ANALYZER_GPU)
    msg = message(measured.read_batch_profile, S.MODEL_ANALYZER, gpu_metrics_text="a,b\n1,2\n")
    assert msg.startswith("gpu_metrics_text: line 1")


def test_duplicates_and_too_few_batch_sizes():
    msg = message(measured.read_batch_profile, "batch_size,throughput\n1,10\n2,15\n1,11\n")
    assert "line 4, column 1 (batch_size)" in msg and "twice" in msg
    assert "at least 2" in message(measured.read_batch_profile, "batch,throughput\n4,10\n")
    assert "whole number" in message(measured.read_batch_profile, "b,throughput\n1.5,1\n2,3\n")
    assert "at least 2 requests" in message(measured.read_trace, "timestamp_s\n1\n")
