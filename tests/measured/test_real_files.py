"""Every real file of ../shared/real-data read through the readers, each parsed value
checked against numbers computed here from the raw text with the csv and json modules
(row counts, token totals, durations, fits by numpy.polyfit, Model Analyzer's peaks)."""
import collections
import csv
import datetime
import io
import json
from pathlib import Path

import numpy as np
import pytest

from tests.counting import counted

from engine import measured
from tests.real_data import REAL_DATA, real_file

DLE_BATCH_FILES = ("batch_dle_resnet50_pytorch_by_batch.csv",
                   "batch_dle_resnet50_tf_by_batch.csv")
TRITON_OFFLINE_FILES = ("triton_dle_resnet50_pytorch_offline.csv",
                        "triton_dle_bert_large_offline.csv")
ONLINE = "triton_dle_resnet50_pytorch_online.csv"
MA_INFERENCE = "triton_ma_textrec_onnx_metrics-model-inference.csv"
MA_GPU = "triton_ma_textrec_onnx_metrics-model-gpu.csv"
AZURE = {"trace_azure_llm_2023_code.csv": 8819, "trace_azure_llm_2023_conv.csv": 19366}
SPLITWISE = "batch_splitwise_perf_model.csv"
VLLM_DIR = "vllm_bench_rtx4090_qwen2.5-7b/"
VLLM_FILES = tuple(VLLM_DIR + f"p1_bf16_{n}_c{c}.json" for n, c in (
    (4096, 1), (4096, 4), (4096, 8), (16384, 1), (16384, 4), (16384, 8),
    (32768, 1), (32768, 4), (32768, 8), (63488, 1), (63488, 4)))
DISTSERVE_RUNS = tuple(f"distserve_opt13b_a100/{n}" for n in (
    "vllm-100-1.exp", "vllm-150-1.5.exp", "vllm-300-3.exp", "distserve-c21d11-300-3.exp"))
DISTSERVE_PROFILES = tuple(f"distserve_opt13b_a100/profiler-a100-80g.{n}.json"
                           for n in ("vllm", "distserve"))
NAMED = {*DLE_BATCH_FILES, *TRITON_OFFLINE_FILES, ONLINE, MA_INFERENCE, MA_GPU, *AZURE,
         SPLITWISE, *VLLM_FILES, *DISTSERVE_RUNS, *DISTSERVE_PROFILES}


def rows(name: str) -> list:
    """The file's data rows as dicts (csv module), blank lines dropped."""
    return [r for r in csv.DictReader(io.StringIO(real_file(name), newline="")) if any(r.values())]


def polyfit_check(profile, b, tau):
    """The profile's fit against numpy.polyfit on the independently extracted τ[b]."""
    slope, intercept = np.polyfit(np.asarray(b, float), np.asarray(tau, float), 1)
    fit = profile.fit()
    assert fit.alpha_ms == pytest.approx(slope, rel=1e-9, abs=1e-12)
    assert fit.tau0_ms == pytest.approx(intercept, rel=1e-9, abs=1e-12)


def test_every_real_file_is_read_by_a_test():
    """A new file in the folder must get a test here (README and .source.txt aside)."""
    if not REAL_DATA.is_dir():
        real_file("README.md")                       # skips, or fails under CI
    present = {p.relative_to(REAL_DATA).as_posix() for p in REAL_DATA.rglob("*")
               if p.is_file() and p.name != "README.md" and not p.name.endswith(".source.txt")}
    assert present - NAMED == set(), "real files no test reads"
    assert NAMED - present == set(), "files named here but missing from the folder"


@pytest.mark.parametrize("name", DLE_BATCH_FILES)
def test_dle_by_batch_tables(name):
    raw = rows(name)
    groups = collections.defaultdict(list)
    for r in raw:
        groups[f"{r['gpu']} · {r['table']}"].append(r)
    profiles = measured.read_batch_profiles(real_file(name))
    assert [p.label for p in profiles] == list(groups)
    assert sum(p.batch_size.size for p in profiles) == len(raw)
    for p in profiles:
        g = sorted(groups[p.label], key=lambda r: int(r["batch_size"]))
        thr_col = next(k for k in g[0] if "throughput" in k)
        b = [int(r["batch_size"]) for r in g]
        tau = [1000 * int(r["batch_size"]) / float(r[thr_col]) for r in g]
        assert p.batch_size.tolist() == b and p.source_format == "dle_batch_table"
        assert np.allclose(p.batch_time_ms, tau, rtol=1e-12)
        assert p.p99_latency_ms.tolist() == [float(r["latency_p99_ms"]) for r in g]
        polyfit_check(p, b, tau)


@pytest.mark.parametrize("name", TRITON_OFFLINE_FILES)
def test_triton_offline_tables(name):
    raw = rows(name)
    batch = "client_batch_size" if "client_batch_size" in raw[0] else "batch"
    groups = collections.defaultdict(list)
    for r in raw:
        groups[(r["gpu"], r["backend"], r["backend_accelerator"], r["precision"],
                r["model_format"], r["model_instances"])].append(r)
    profiles = measured.read_batch_profiles(real_file(name))
    assert len(profiles) == len(groups) and len(set(profiles[0].tables)) == len(groups)
    for p, (key, g) in zip(profiles, groups.items()):
        assert p.label.startswith(key[0] + " · " + key[1])
        g = sorted((r for r in g if r.get("concurrency", "1") == "1"), key=lambda r: int(r[batch]))
        b = [int(r[batch]) for r in g]
        tau = [1000 * int(r[batch]) / float(r["inferences_per_second"]) for r in g]
        assert p.batch_size.tolist() == b and np.allclose(p.batch_time_ms, tau, rtol=1e-12)
        assert p.p99_latency_ms.tolist() == [float(r["p99_latency_ms"]) for r in g]
        assert any("network" in n for n in p.notes)
        polyfit_check(p, b, tau)


def test_triton_online_table_littles_law():
    raw = rows(ONLINE)
    sweeps = measured.read_concurrency_sweeps(real_file(ONLINE))
    gpus = list(dict.fromkeys(r["gpu"] for r in raw))
    assert [s.label.split(" · ")[0] for s in sweeps] == gpus
    assert sum(s.concurrency.size for s in sweeps) == len(raw)
    for s in sweeps:
        g = sorted((r for r in raw if s.label.startswith(r["gpu"] + " · ")),
                   key=lambda r: int(r["concurrent_client_requests"]))
        n = np.array([int(r["concurrent_client_requests"]) for r in g], float)
        x = np.array([float(r["inferences_per_second"]) for r in g])
        assert s.concurrency.tolist() == n.tolist() and s.throughput_per_s.tolist() == x.tolist()
        assert s.mean_latency_ms.tolist() == [float(r["avg_latency_ms"]) for r in g]
        assert np.allclose(1000 * n / x, s.mean_latency_ms, rtol=0.01)       # Little's law
        assert s.breakdown_ms["server_queue"].tolist() == [float(r["server_queue_ms"]) for r in g]
        assert (s.model_instances, s.max_batch_size) == (int(g[0]["model_instances"]),
                                                         int(g[0]["max_batch_size"]))


def model_analyzer_reference():
    """Model Analyzer's peaks recomputed: per config, sweep sorted by concurrency; dropped
    when the peak is its last point and that step rose > 5 %; per Max Batch Size the
    highest peak."""
    sweeps = collections.defaultdict(list)
    for r in rows(MA_INFERENCE):
        sweeps[r["Model Config Path"]].append(r)
    kept, dropped = {}, []
    for config, g in sweeps.items():
        g.sort(key=lambda r: int(r["Concurrency"]))
        x = [float(r["Throughput (infer/sec)"]) for r in g]
        peak = max(range(len(x)), key=lambda i: x[i])
        if peak == len(x) - 1 and (len(x) == 1 or x[-1] > 1.05 * x[-2]):
            dropped.append(config)
            continue
        b = int(g[peak]["Max Batch Size"])
        if b not in kept or x[peak] > float(kept[b]["Throughput (infer/sec)"]):
            kept[b] = g[peak]
    return kept, dropped


def test_model_analyzer_peaks_power_and_drops():
    kept, dropped = model_analyzer_reference()
    power = {(r["Model Config Path"], r["Concurrency"], r["Batch"]): float(r["GPU Power Usage (W)"])
             for r in rows(MA_GPU)}
    p = measured.read_batch_profile(real_file(MA_INFERENCE), gpu_metrics_text=real_file(MA_GPU))
    b = sorted(kept)
    tau = [1000 * k / float(kept[k]["Throughput (infer/sec)"]) for k in b]
    assert p.batch_size.tolist() == b and np.allclose(p.batch_time_ms, tau, rtol=1e-12)
    assert p.p99_latency_ms.tolist() == [float(kept[k]["p99 Latency (ms)"]) for k in b]
    assert p.power_w.tolist() == [power[(kept[k]["Model Config Path"], kept[k]["Concurrency"],
                                         kept[k]["Batch"])] for k in b]
    assert sorted(dropped) == ["text_reg_batch_config_5", "text_reg_batch_config_6",
                               "text_reg_batch_config_7"]       # the README's quirks
    for config in dropped:
        assert any(n.startswith(f"dropped {config} ") for n in p.notes), config
    assert any("text_reg_batch_config_default" in n for n in p.notes)   # B = 8 twice
    assert p.label == "text_reg_batch" and p.source_format == "model_analyzer"
    polyfit_check(p, b, tau)
    assert p.fit().beta_j is not None


def test_model_analyzer_sweeps_and_the_gpu_file_alone():
    raw = rows(MA_INFERENCE)
    sweeps = measured.read_concurrency_sweeps(real_file(MA_INFERENCE))
    configs = list(dict.fromkeys(r["Model Config Path"] for r in raw))
    assert [s.label for s in sweeps] == configs
    for s in sweeps:
        g = sorted((r for r in raw if r["Model Config Path"] == s.label),
                   key=lambda r: int(r["Concurrency"]))
        n = [int(r["Concurrency"]) for r in g]
        x = [float(r["Throughput (infer/sec)"]) for r in g]
        assert s.concurrency.tolist() == n and s.max_batch_size == int(g[0]["Max Batch Size"])
        assert np.allclose(s.mean_latency_ms, 1000 * np.array(n) / x, rtol=1e-12)
        assert s.p99_latency_ms.tolist() == [float(r["p99 Latency (ms)"]) for r in g]
    with pytest.raises(ValueError, match="gpu_metrics_text"):
        measured.read_batch_profile(real_file(MA_GPU))


def seconds(stamp: str) -> float:
    """'2023-11-16 18:17:03.9799600' in seconds, every fractional digit kept."""
    whole, frac = stamp.split(".")
    t = datetime.datetime.strptime(whole, "%Y-%m-%d %H:%M:%S")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp() + int(frac) / 10 ** len(frac)


@pytest.mark.parametrize("name", AZURE)
def test_azure_traces(name):
    """Values against the csv module's reading; the parse is vectorised (module
    docstring of engine.measured.traces): at most 16 calls a row, counted, where a
    datetime parsed row by row in Python takes dozens.  Its time beside a bare
    csv.reader pass: ``python -m benchmarks readers``."""
    text = real_file(name)
    assert "\r\n" in text and not text.endswith("\n")          # the README's quirks
    raw = list(csv.reader(io.StringIO(text, newline="")))[1:]
    trace, calls, _ = counted(measured.read_trace, text)
    assert calls <= 16 * len(raw) + 1000, (calls, len(raw))
    assert trace.n_requests == len(raw) == AZURE[name]
    assert trace.duration_s == pytest.approx(seconds(raw[-1][0]) - seconds(raw[0][0]), abs=1e-6)
    assert int(trace.input_tokens.sum()) == sum(int(r[1]) for r in raw)
    assert int(trace.output_tokens.sum()) == sum(int(r[2]) for r in raw)
    assert trace.arrival_s[0] == 0 and np.all(np.diff(trace.arrival_s) >= 0)
    k = len(raw) // 2
    assert trace.arrival_s[k] == pytest.approx(seconds(raw[k][0]) - seconds(raw[0][0]), abs=1e-6)
    assert trace.source_format == "azure_llm_csv"
    assert trace.mean_rate_per_s == pytest.approx((len(raw) - 1) / trace.duration_s)


@pytest.mark.parametrize("name", VLLM_FILES)
def test_vllm_bench_files(name):
    raw = json.loads(real_file(name))
    r = measured.read_vllm_bench(real_file(name))
    assert raw["request_rate"] == "inf" and r.request_rate_per_s == float("inf")
    assert r.max_concurrency == raw["max_concurrency"] and r.completed == raw["completed"]
    assert r.request_throughput_per_s == raw["request_throughput"]
    for key in ("mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms",
                "median_ttft_ms", "median_tpot_ms", "mean_itl_ms", "p99_itl_ms",
                "total_input_tokens", "total_output_tokens"):
        assert getattr(r, key) == raw[key], key
    assert r.duration_s == raw["duration"] and r.model_id == raw["model_id"]
    assert r.percentiles_ms["std_ttft_ms"] == raw["std_ttft_ms"]
    assert r.completed / r.duration_s == pytest.approx(r.request_throughput_per_s, rel=1e-9)


def test_splitwise_is_not_a_reader_format():
    """The Splitwise LLM iteration times feed presets (their own loader), not these
    readers: the batch-profile reader says what it expected instead of guessing."""
    with pytest.raises(ValueError, match="unknown columns .*expected one of these formats"):
        measured.read_batch_profile(real_file(SPLITWISE))
    assert rows(SPLITWISE)[0]["model"] == "llama2-70b"


def test_real_file_skips_or_fails_when_absent(tmp_path, monkeypatch):
    from tests import real_data
    monkeypatch.setattr(real_data, "REAL_DATA", tmp_path)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not found"):
        real_data.real_file("nothing.csv")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="not copied"):
        real_data.real_file("nothing.csv")
    assert Path(real_data.ROOT / "tests" / "real_data.py").is_file()


@pytest.mark.parametrize("name", DISTSERVE_RUNS)
def test_distserve_request_by_request_runs(name):
    """Each run reads whole (its summary's request count, every request's TTFT against
    its timestamps); the checks in depth: tests/measured/test_request_records.py."""
    records = measured.read_request_records(real_file(name))
    assert records.n_requests == int(records.summary["num_requests"])
    assert np.allclose(records.first_token_s - records.arrival_s, records.ttft_ms / 1e3)


@pytest.mark.parametrize("name", DISTSERVE_PROFILES)
def test_distserve_step_profiles(name):
    """DistServe's fitted step times read as a step cost, the prefill triple exactly (the
    sources in depth: tests/llm_serving/test_sources.py)."""
    from engine.llm_serving import step_cost_from_distserve

    raw = json.loads(real_file(name))["facebook/opt-13b"]["1"]["prefill"]
    fit = step_cost_from_distserve(real_file(name), "facebook/opt-13b", 1)
    assert (fit.cost.prefill_base_ms, fit.cost.prefill_ms_per_token,
            fit.cost.prefill_ms_per_token_sq) == pytest.approx(raw, rel=1e-12)
