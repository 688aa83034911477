"""Presets measured by others (docs/models/measured_presets.md): every number in each
preset file recomputed from the real file it cites, read through ``tests/real_data.py``
and parsed here with the csv module, independently of the engine; the fitted values
quoted in each file's comments checked against numpy.polyfit; bad token-law files
refused with the file and the field named."""
from __future__ import annotations

from collections import defaultdict
import csv
import io
import re

import numpy as np
import pytest

from engine import presets
from engine.core import domains, token_laws
from tests.real_data import real_file

PYTORCH = "batch_dle_resnet50_pytorch_by_batch.csv"
TF = "batch_dle_resnet50_tf_by_batch.csv"
THROUGHPUT = {PYTORCH: "throughput_avg_img_per_s", TF: "avg_throughput_img_per_s"}
COMMIT = {PYTORCH: "5843f4e5a1220dd98936e477d8597d8a77320666",
          TF: "9de48bc9ca8ce635960620478a39dd332ed74ff6"}

# preset id -> (real file, gpu, table): the DeepLearningExamples tables, without XLA
GPU = {
    "dle_tf_a100_40gb_resnet50_tf32": (TF, "NVIDIA DGX A100 (1x A100 40GB)",
                                       "TF32 Inference Latency"),
    "dle_tf_a100_40gb_resnet50_amp": (TF, "NVIDIA DGX A100 (1x A100 40GB)",
                                      "Mixed Precision Inference Latency"),
    "dle_tf_v100_16gb_resnet50_fp32": (TF, "NVIDIA DGX-1 (1x V100 16G)", "FP32 Inference Latency"),
    "dle_tf_v100_16gb_resnet50_amp": (TF, "NVIDIA DGX-1 (1x V100 16G)",
                                      "Mixed Precision Inference Latency"),
    "dle_tf_t4_resnet50_fp32": (TF, "NVIDIA T4 (1x T4 16G)", "FP32 Inference Latency"),
    "dle_tf_t4_resnet50_amp": (TF, "NVIDIA T4 (1x T4 16G)", "Mixed Precision Inference Latency"),
    "dle_pytorch_v100_16gb_resnet50_fp32": (PYTORCH, "NVIDIA DGX-1 (1x V100 16GB)",
                                            "FP32 Inference Latency"),
    "dle_pytorch_v100_16gb_resnet50_amp": (PYTORCH, "NVIDIA DGX-1 (1x V100 16GB)",
                                           "Mixed Precision Inference Latency"),
}

SPLITWISE = "batch_splitwise_perf_model.csv"
SPLITWISE_COMMIT = "378088013a54df6f2052c27ff5ae6ea7619c3ecc"
# LLM preset id -> hardware of the Splitwise rows (tensor parallel 8, llama2-70b)
LLM = {"splitwise_a100_llama2_70b_tp8": "a100-80gb", "splitwise_h100_llama2_70b_tp8": "h100-80gb"}
TOKEN_LATENCY = {f"{pid}_batch1": hw for pid, hw in LLM.items()}
PROMPT, TOKENS, TP = 512, 128, "8"          # the batch sweep's prompt and output tokens

AZURE_COMMIT = "790921015d50dd6aae7f7e47f39ba0e235ad6b08"
# token-law preset id -> (trace file, column, kind)
TOKEN_LAWS = {
    "azure_2023_code_output": ("trace_azure_llm_2023_code.csv", "GeneratedTokens", "output"),
    "azure_2023_code_prompt": ("trace_azure_llm_2023_code.csv", "ContextTokens", "prompt"),
    "azure_2023_conv_output": ("trace_azure_llm_2023_conv.csv", "GeneratedTokens", "output"),
    "azure_2023_conv_prompt": ("trace_azure_llm_2023_conv.csv", "ContextTokens", "prompt"),
}
NUM = r"(\d+(?:\.\d+)?)"           # a figure quoted in a comment
MEAN_TOLERANCE = 1e-3        # relative: the law of the bins against the raw mean
QUANTILE_TOLERANCE = 0.015   # relative: p50, p90, p99 (a bin spans at most 2 % of its counts)


def rows_of(name: str) -> list[dict]:
    """The rows of a real CSV file as dicts (header from its first line)."""
    return list(csv.DictReader(io.StringIO(real_file(name))))


def comment(path) -> str:
    """The comment lines of a preset file, joined (the quoted figures live there)."""
    return "\n".join(ln[1:] for ln in path.read_text().splitlines() if ln.startswith("#"))


def number(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    assert found, f"no {pattern!r} in the preset's comment"
    return float(found.group(1))


def r_squared(x, y, slope, intercept) -> float:
    res = y - (slope * x + intercept)
    return 1.0 - res @ res / ((y - y.mean()) @ (y - y.mean()))


def decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def close_to_printed(printed: str, value: float) -> bool:
    """``value`` rounds to the figure as printed (half a unit of its last digit)."""
    return abs(value - float(printed)) <= 0.5 * 10.0 ** -decimals(printed) + 1e-12


# ------------------------------------------------------------ every preset loads

def test_every_measured_preset_loads_and_cites_its_source():
    profiles, llm = presets.batch_profiles(), presets.llm_batch_time_presets()
    latency, laws = presets.token_latency_profiles(), presets.token_law_presets()
    for pid, (name, _, _) in GPU.items():
        p = profiles[pid]
        assert "DeepLearningExamples" in p.source and COMMIT[name] in p.source
        assert "measured" in p.name and "ResNet-50" in p.name
        fit = p.fit()        # the GPU page takes a profile only with α > 0 and τ0 ≥ 0
        assert fit.alpha_ms > 0 and fit.tau0_ms >= 0
    for pid in LLM:
        assert SPLITWISE_COMMIT in llm[pid].source and "tensor_parallel = 8" in llm[pid].source
        assert llm[pid].kv_capacity_tokens is None and llm[pid].estimated == ()
        for dom, value in zip((domains.LLM_K1, domains.LLM_K2, domains.LLM_K3, domains.LLM_K4),
                              llm[pid].k):
            dom.check(value)
    for pid in TOKEN_LATENCY:
        assert SPLITWISE_COMMIT in latency[pid].source
    assert set(TOKEN_LAWS) <= set(laws)
    for pid, (name, column, kind) in TOKEN_LAWS.items():
        law = laws[pid]
        assert law.kind == kind and AZURE_COMMIT in law.source and column in law.source
        assert name.removeprefix("trace_azure_llm_2023_").removesuffix(".csv") in law.source
        assert isinstance(law.law(), token_laws.EmpiricalTokens)


def test_the_papers_presets_still_come_first_in_the_token_latency_picker():
    """The token-limit page takes the first token-latency preset as its default."""
    assert next(iter(presets.token_latency_profiles())) == "a100_llama2_7b_table1"


# ------------------------------------------------------------ GPU batching (DeepLearningExamples)

@pytest.mark.parametrize("pid", GPU)
def test_gpu_preset_is_the_published_table(pid):
    name, gpu, table = GPU[pid]
    rows = [r for r in rows_of(name) if r["gpu"] == gpu and r["table"] == table]
    assert len(rows) == 9
    profile = presets.batch_profiles()[pid]
    np.testing.assert_array_equal(profile.batch_size, [float(r["batch_size"]) for r in rows])
    np.testing.assert_array_equal(profile.throughput_per_s,
                                  [float(r[THROUGHPUT[name]]) for r in rows])
    assert f"table '{table}' of {gpu}" in profile.source
    assert profile.power_w is None                     # the tables publish no power


@pytest.mark.parametrize("pid", GPU)
def test_gpu_preset_quotes_its_least_squares_line(pid):
    """α, τ0, R² in the file's comment: numpy.polyfit of τ[b] = 1000·b/throughput on b,
    from the real rows; the engine's fit agrees."""
    name, gpu, table = GPU[pid]
    rows = [r for r in rows_of(name) if r["gpu"] == gpu and r["table"] == table]
    b = np.array([float(r["batch_size"]) for r in rows])
    tau = 1000 * b / np.array([float(r[THROUGHPUT[name]]) for r in rows])
    slope, intercept = np.polyfit(b, tau, 1)
    text = comment(presets.BATCH_PROFILE_DIR / f"{pid}.toml")
    alpha, tau0, r2 = re.search(rf"alpha = {NUM} ms, tau0 = {NUM} ms, R\^2 = {NUM}", text).groups()
    assert close_to_printed(alpha, slope)
    assert close_to_printed(tau0, intercept)
    assert close_to_printed(r2, r_squared(b, tau, slope, intercept))
    fit = presets.batch_profiles()[pid].fit()
    assert fit.alpha_ms == pytest.approx(slope, rel=1e-9)
    assert fit.tau0_ms == pytest.approx(intercept, rel=1e-9)


def test_the_a100_mixed_precision_table_is_not_monotone_as_its_preset_says():
    name, gpu, table = GPU["dle_tf_a100_40gb_resnet50_amp"]
    thr = [float(r[THROUGHPUT[name]]) for r in rows_of(name)
           if r["gpu"] == gpu and r["table"] == table]
    assert np.any(np.diff(thr) < 0)
    assert "not monotone" in comment(presets.BATCH_PROFILE_DIR
                                     / "dle_tf_a100_40gb_resnet50_amp.toml")


# ------------------------------------------------------------ LLM batching (Splitwise)

def splitwise_points(hardware: str) -> dict:
    """{(prompt, batch, tokens): [rows]} of llama2-70b on ``hardware`` at tensor parallel 8."""
    points = defaultdict(list)
    for r in rows_of(SPLITWISE):
        if (r["model"], r["hardware"], r["tensor_parallel"]) == ("llama2-70b", hardware, TP):
            points[(int(r["prompt_size"]), int(r["batch_size"]), int(r["token_size"]))].append(r)
    return points


def batch_sweep(hardware: str):
    """Batch sizes and the mean prefill and decode-step times (ms) over the repetitions."""
    points = splitwise_points(hardware)
    sizes = sorted(b for (p, b, t) in points if (p, t) == (PROMPT, TOKENS))
    mean = {c: np.array([np.mean([float(r[c]) for r in points[(PROMPT, b, TOKENS)]])
                         for b in sizes]) for c in ("prompt_time", "token_time", "e2e_time")}
    return np.array(sizes, dtype=float), mean


def nonnegative_line(x, y):
    """Least-squares line with slope and intercept ≥ 0: polyfit, or through the origin
    when polyfit's intercept is negative (the slope is positive for these data)."""
    slope, intercept = np.polyfit(x, y, 1)
    if intercept < 0:
        slope, intercept = (x @ y) / (x @ x), 0.0
    assert slope > 0
    return slope, intercept, r_squared(x, y, slope, intercept)


@pytest.mark.parametrize("pid", LLM)
def test_llm_batch_time_follows_from_prefill_and_decode_lines(pid):
    """k1 = p1, k2 = p0 (prefill per batch P(b) = p1·b + p0), k3 = d1, k4 = d0 (decode
    step D(b) = d1·b + d0), ms -> s, fitted over the batch sweep at 512 prompt and 128
    output tokens; the comment quotes the means, the lines and their R²."""
    b, mean = batch_sweep(LLM[pid])
    np.testing.assert_array_equal(b, [1, 2, 4, 8, 16, 32, 64])
    p1, p0, r2_prefill = nonnegative_line(b, mean["prompt_time"])
    d1, d0, r2_decode = nonnegative_line(b, mean["token_time"])
    preset = presets.llm_batch_time_presets()[pid]
    np.testing.assert_allclose(preset.k, np.array([p1, p0, d1, d0]) / 1000, rtol=1e-5, atol=1e-9)
    assert preset.prompt_tokens == PROMPT
    text = comment(presets.LLM_BATCH_TIME_DIR / f"{pid}.toml")
    assert number(rf"P\(b\) = p1\*b \+ p0: .*?R\^2 = {NUM}", text) == round(r2_prefill, 4)
    assert number(rf"D\(b\) = d1\*b \+ d0: .*?R\^2 = {NUM}", text) == round(r2_decode, 4)
    quoted_p = re.search(r"Prefill per batch P \(prompt_time, ms\): (.*)", text).group(1)
    quoted_d = re.search(r"Decode step D \(token_time, ms\): +(.*)", text).group(1)
    np.testing.assert_allclose([float(v) for v in quoted_p.split(",")], mean["prompt_time"],
                               atol=0.05)
    np.testing.assert_allclose([float(v) for v in quoted_d.split(",")], mean["token_time"],
                               atol=0.005)
    free_intercept = np.polyfit(b, mean["prompt_time"], 1)[1]
    if free_intercept < 0:          # the comment explains the line through the origin
        assert f"p0 = {free_intercept:.1f} ms < 0" in text


@pytest.mark.parametrize("hardware", LLM.values())
def test_measured_end_to_end_time_is_prefill_plus_one_step_per_further_token(hardware):
    """What the presets' comments state: e2e = P + (l − 1)·D within 0.5 % over the batch
    sweep (l = 128), so eq 18's P + l·D is one decode step longer."""
    _, mean = batch_sweep(hardware)
    predicted = mean["prompt_time"] + (TOKENS - 1) * mean["token_time"]
    np.testing.assert_allclose(mean["e2e_time"], predicted, rtol=5e-3)


def test_the_derived_pcap_rows_are_not_those_of_any_preset():
    """h100-80gb-pcap: prefill exactly 1.3 × the h100-80gb rows (README), not measured;
    the H100 preset's prefill means are those of h100-80gb."""
    rows = rows_of(SPLITWISE)
    key = ("model", "prompt_size", "batch_size", "token_size", "tensor_parallel")
    h100 = defaultdict(list)
    for r in rows:
        if r["hardware"] == "h100-80gb":
            h100[tuple(r[k] for k in key)].append(float(r["prompt_time"]))
    pcap = [r for r in rows if r["hardware"] == "h100-80gb-pcap"]
    assert pcap and all(any(np.isclose(float(r["prompt_time"]), 1.3 * x, rtol=1e-9)
                            for x in h100[tuple(r[k] for k in key)]) for r in pcap)
    assert all("hardware = h100-80gb-pcap" not in p.source
               for p in presets.llm_batch_time_presets().values())


# ------------------------------------------------------------ token latency at batch 1 (Splitwise)

def complete_batch1_points(hardware: str) -> list[tuple[int, int, float]]:
    """(prompt, output tokens, mean e2e s) at batch 1 over the repetitions that generated
    every requested token: (e2e − prefill)/step + 1 ≥ token_size − 1."""
    out = []
    for (p, b, t), rows in sorted(splitwise_points(hardware).items()):
        if b != 1:
            continue
        done = [float(r["e2e_time"]) / 1000 for r in rows
                if (float(r["e2e_time"]) - float(r["prompt_time"])) / float(r["token_time"]) + 1
                >= t - 1]
        if done:
            out.append((p, t, float(np.mean(done))))
    return out


@pytest.mark.parametrize("pid", TOKEN_LATENCY)
def test_token_latency_rows_are_the_complete_single_request_runs(pid):
    points = complete_batch1_points(TOKEN_LATENCY[pid])
    profile = presets.token_latency_profiles()[pid]
    np.testing.assert_array_equal(profile.input_tokens, [p for p, _, _ in points])
    np.testing.assert_array_equal(profile.output_tokens, [t for _, t, _ in points])
    np.testing.assert_allclose(profile.latency_s, [s for _, _, s in points], atol=5e-5)
    n = np.array([t for _, t, _ in points], dtype=float)
    s = np.array([x for _, _, x in points])
    a, c = np.polyfit(n, s, 1)
    text = comment(presets.TOKEN_LATENCY_DIR / f"{pid}.toml")
    assert number(rf"a = {NUM} s per output token", text) == round(a, 6)
    assert number(rf"c = {NUM} s", text) == round(c, 4)
    assert number(rf"R\^2 = {NUM}", text) == round(r_squared(n, s, a, c), 5)
    fit = profile.fit()
    assert fit.a_s_per_token == pytest.approx(a, rel=1e-4)
    assert fit.c_s == pytest.approx(c, rel=1e-3)


# ------------------------------------------------------------ token laws (Azure LLM trace 2023)

def trace_column(name: str, column: str) -> np.ndarray:
    return np.array([int(r[column]) for r in rows_of(name)])


@pytest.mark.parametrize("pid", TOKEN_LAWS)
def test_token_law_bins_are_the_trace_counted_again(pid):
    """Every request falls in exactly one bin; each bin's request count and its rounded
    mean count are those of the raw column."""
    name, column, _ = TOKEN_LAWS[pid]
    x = trace_column(name, column)
    preset = presets.token_law_presets()[pid]
    assert preset.n_requests == x.size
    for first, last, tokens, requests in zip(preset.first_tokens, preset.last_tokens,
                                             preset.tokens, preset.requests):
        inside = x[(x >= first) & (x <= last)]
        assert inside.size == requests > 0
        assert tokens == np.round(inside.mean())
        assert inside.min() == first and inside.max() == last
        assert last <= max(first, np.floor(1.02 * first))      # the stated binning rule


@pytest.mark.parametrize("pid", TOKEN_LAWS)
def test_token_law_keeps_the_traces_mean_and_percentiles(pid):
    """The law rebuilt from the bins against the raw trace: mean within 0.1 %, p50, p90
    and p99 within 1.5 % (percentiles of the raw data as the smallest count whose CDF
    reaches q, the law's own definition); the comment quotes both."""
    name, column, _ = TOKEN_LAWS[pid]
    x = trace_column(name, column)
    law = presets.token_law_presets()[pid].law()
    assert law.mean() == pytest.approx(x.mean(), rel=MEAN_TOLERANCE)
    q = np.array([0.5, 0.9, 0.99])
    raw = np.percentile(x, 100 * q, method="inverted_cdf")
    np.testing.assert_allclose(law.ppf(q), raw, rtol=QUANTILE_TOLERANCE)
    np.testing.assert_allclose(token_laws.token_quantile(law, q), law.ppf(q))
    text = comment(presets.TOKEN_LAW_DIR / f"{pid}.toml")
    assert f"mean {law.mean():.2f} vs {x.mean():.2f} tokens" in text
    for p, mine, theirs in zip((50, 90, 99), law.ppf(q), raw):
        assert f"p{p} {mine:.0f} vs {theirs:.0f}" in text


def test_conversation_outputs_are_capped_at_1000():
    x = trace_column("trace_azure_llm_2023_conv.csv", "GeneratedTokens")
    law = presets.token_law_presets()["azure_2023_conv_output"].law()
    assert x.max() == 1000 and law.support()[1] <= 1000
    assert "capped at 1000" in presets.token_law_presets()["azure_2023_conv_output"].name


GOOD_LAW = """id = "law"
name = "Law"
source = "test"
kind = "output"
[bins]
first_tokens = [1, 5, 10]
last_tokens = [4, 9, 12]
tokens = [2, 7, 10]
requests = [3, 5, 2]
"""


def test_a_small_token_law_builds_its_empirical_law(tmp_path):
    path = tmp_path / "ok.toml"
    path.write_text(GOOD_LAW)
    law = presets.load_token_law_preset(path).law()
    np.testing.assert_array_equal(law.values, [2, 7, 10])
    np.testing.assert_allclose(law.probs, [0.3, 0.5, 0.2])
    assert law.n_samples == 10
    assert law.mean() == pytest.approx(0.3 * 2 + 0.5 * 7 + 0.2 * 10)
    assert presets.token_law_presets(tmp_path)["law"].n_requests == 10


@pytest.mark.parametrize("change,field", [
    (('id = "law"', 'id = "law"\ncolour = "red"'), "colour"),
    (('source = "test"\n', ''), "source"),
    (('kind = "output"', 'kind = "input"'), "kind"),
    (('kind = "output"', 'kind = 3'), "kind"),
    (('name = "Law"', 'name = ""'), "name"),
    (("requests = [3, 5, 2]\n", ""), "requests"),
    (("[3, 5, 2]", "[3, -5, 2]"), "requests"),
    (("[3, 5, 2]", "[3, 5.5, 2]"), "requests"),
    (("[3, 5, 2]", "[3, nan, 2]"), "requests"),
    (("[3, 5, 2]", "[3, 5]"), "requests"),
    (("tokens = [2, 7, 10]", "tokens = [2, 7, 13]"), "tokens"),
    (("tokens = [2, 7, 10]", 'tokens = [2, "7", 10]'), "tokens"),
    (("first_tokens = [1, 5, 10]", "first_tokens = [1, 4, 10]"), "first_tokens"),
    (("last_tokens = [4, 9, 12]", "last_tokens = [4, 9, 9]"), "last_tokens"),
    (("last_tokens = [4, 9, 12]", "last_tokens = [4, 9, 1e9]"), "last_tokens"),
    (("[bins]", "[bins]\nmean_tokens = [1, 2, 3]"), "mean_tokens"),
    ((GOOD_LAW[GOOD_LAW.index("[bins]"):], ""), "bins"),
    (('id = "law"', 'id = "law'), "TOML"),
])
def test_bad_token_law_files_name_file_and_field(tmp_path, change, field):
    path = tmp_path / "bad_law.toml"
    path.write_text(GOOD_LAW.replace(*change))
    with pytest.raises(ValueError, match=field) as err:
        presets.load_token_law_preset(path)
    assert "bad_law.toml" in str(err.value)


# ------------------------------------------------------------ offline/online pairs (Triton)

TRITON_OFFLINE = "triton_dle_resnet50_pytorch_offline.csv"
TRITON_ONLINE = "triton_dle_resnet50_pytorch_online.csv"
# pair preset id -> the gpu column of both real files
PAIRS = {"dle_triton_resnet50_a40": "NVIDIA A40",
         "dle_triton_resnet50_a100_80gb": "NVIDIA DGX A100 (1x A100 80GB)",
         "dle_triton_resnet50_v100_32gb": "NVIDIA DGX-1 (1x V100 32GB)",
         "dle_triton_resnet50_t4": "NVIDIA T4"}


def source_commit(name: str) -> str:
    """The commit a real file was taken at (its .source.txt)."""
    return re.search(r"^commit: ([0-9a-f]{40})", real_file(name + ".source.txt"),
                     re.M).group(1)


def test_every_pair_preset_is_listed():
    assert set(presets.online_pairs()) == set(PAIRS)


@pytest.mark.parametrize("pid", PAIRS)
def test_pair_preset_is_the_published_tables_read_by_the_readers(pid):
    """Every number of the pair equals what ``engine.measured``'s readers make of the real
    files (the same table, picked by label), and the raw columns as the csv module reads
    them; the source cites the files' repository, path and commit."""
    from engine.measured import read_batch_profile, read_concurrency_sweep
    gpu, pair = PAIRS[pid], presets.online_pairs()[pid]
    profile = read_batch_profile(real_file(TRITON_OFFLINE), table=pair.profile.label)
    sweep = read_concurrency_sweep(real_file(TRITON_ONLINE), table=pair.sweep.label)
    np.testing.assert_array_equal(pair.profile.batch_size, profile.batch_size)
    np.testing.assert_allclose(pair.profile.batch_time_ms, profile.batch_time_ms, rtol=1e-14)
    for name in ("concurrency", "throughput_per_s", "mean_latency_ms", "p99_latency_ms"):
        np.testing.assert_array_equal(getattr(pair.sweep, name), getattr(sweep, name), name)
    assert (pair.sweep.model_instances, pair.sweep.max_batch_size) == (
        sweep.model_instances, sweep.max_batch_size)
    off = [r for r in rows_of(TRITON_OFFLINE) if r["gpu"] == gpu]
    on = [r for r in rows_of(TRITON_ONLINE) if r["gpu"] == gpu]
    assert gpu in pair.profile.label and gpu in pair.sweep.label
    np.testing.assert_allclose(pair.profile.throughput_per_s * pair.profile.batch_time_ms,
                               1000.0 * pair.profile.batch_size, rtol=1e-14)
    np.testing.assert_allclose(pair.profile.throughput_per_s,
                               [float(r["inferences_per_second"]) for r in off], rtol=1e-14)
    np.testing.assert_array_equal(pair.offline_latency_ms,
                                  [float(r["avg_latency_ms"]) for r in off])
    np.testing.assert_array_equal(pair.sweep.concurrency,
                                  [float(r["concurrent_client_requests"]) for r in on])
    np.testing.assert_array_equal(pair.sweep.p99_latency_ms,
                                  [float(r["p99_latency_ms"]) for r in on])
    assert {r["model_instances"] for r in on} == {str(pair.sweep.model_instances)} == {"2"}
    assert {r["max_batch_size"] for r in on} == {str(pair.sweep.max_batch_size)} == {"128"}
    for name in (TRITON_OFFLINE, TRITON_ONLINE):
        assert source_commit(name) in pair.source
    assert "NVIDIA/DeepLearningExamples" in pair.source
    assert "PyTorch/Classification/ConvNets/triton/resnet50/README.md" in pair.source
    assert pair.profile.source_format == pair.sweep.source_format == "preset"


@pytest.mark.parametrize("change,field", [
    (lambda t: t.replace("model_instances = 2", "model_instances = 0"), "model_instances"),
    (lambda t: t.replace("client_batch_size = [1, 2", "client_batch_size = [2, 1"),
     "client_batch_size"),
    (lambda t: t.replace("max_batch_size = 128\n", ""), "max_batch_size"),
    (lambda t: t.replace('label = "NVIDIA T4', 'lable = "NVIDIA T4', 1), "lable"),
    (lambda t: t.replace("p99_latency_ms = [16.597, ", "p99_latency_ms = ["), "p99_latency_ms"),
])
def test_bad_pair_files_name_file_and_field(tmp_path, change, field):
    good = (presets.ONLINE_PAIR_DIR / "dle_triton_resnet50_t4.toml").read_text()
    bad = change(good)
    assert bad != good
    path = tmp_path / "broken_pair.toml"
    path.write_text(bad)
    with pytest.raises(ValueError, match=rf"broken_pair\.toml.*{field}"):
        presets.load_online_pair(path)
