"""Measured inputs on the token-limit page: the Azure output-token laws as choices (a link
names the preset), a request trace as the token-count upload, a vllm bench result as a
and c, the Splitwise latency presets with their source; bad files keep the previous
scenario."""
import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from tests import pagetest
from tests.pagetest import metric
from tests.real_data import real_file

from engine.presets import token_latency_profiles

PAGE = str(Path(__file__).resolve().parents[2] / pagetest.script("token_limit"))
FAST = {"simulate": "false"}
VLLM_DIR = "vllm_bench_rtx4090_qwen2.5-7b/"
JSONL = "".join(json.dumps({"timestamp": t, "input_length": 300, "output_length": n}) + "\n"
                for t, n in ((0, 120), (1000, 0), (2000, 800), (2500, 1500)))


def shown(elements) -> str:
    """The elements' text as displayed (Markdown backslash escapes removed)."""
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def generated_tokens(name: str) -> np.ndarray:
    """GeneratedTokens of a real Azure trace, read with the csv module."""
    rows = csv.DictReader(io.StringIO(real_file(name), newline=""))
    return np.array([int(r["GeneratedTokens"]) for r in rows])


def test_measured_laws_are_choices_named_by_their_preset_id():
    raw = generated_tokens("trace_azure_llm_2023_conv.csv")
    at = pagetest.open_page(PAGE, {"law": "azure_2023_conv_output"} | FAST)
    assert not at.warning and not at.error
    assert at.query_params["law"] in ("azure_2023_conv_output", ["azure_2023_conv_output"])
    text = shown(at.sidebar.caption)
    assert "Generated tokens of 19,366 requests" in text
    assert "Source: Azure/AzurePublicDataset, data/AzureLLMInferenceTrace_conv.csv" in text
    # the stored histogram moves the mean by < 0.05 tokens (docs/models/measured_presets.md)
    assert f"mean {raw.mean():.0f} tokens without a limit" in shown(at.caption)
    unknown = pagetest.open_page(PAGE, {"law": "azure_2099_output"} | FAST)
    assert any(w.value.startswith("Link parameter `law`") for w in unknown.warning)
    assert unknown.session_state["law"] == "lognormal"


def _upload(at, key, name, data):
    at.file_uploader(key=key).set_value((name, data, "application/octet-stream"))
    at.run()
    assert not at.exception, (name, at.exception)


def test_a_trace_upload_gives_its_output_tokens_and_bad_files_keep_the_law():
    at = pagetest.open_page(PAGE, {"law": "empirical"} | FAST)
    _upload(at, "tokens_upload", "mooncake.jsonl", JSONL.encode())
    assert not at.error
    text = shown(at.sidebar.caption)
    assert "Read as a JSON-lines trace (Mooncake format): 4 requests" in text
    assert "1 request with 0 generated tokens left out" in text
    assert "empirical, 3 counts (upload mooncake.jsonl): mean 807 tokens" \
        in shown(at.caption)                                    # (120 + 800 + 1500) / 3
    raw = generated_tokens("trace_azure_llm_2023_code.csv")
    code = real_file("trace_azure_llm_2023_code.csv")
    _upload(at, "tokens_upload", "code.csv", code.encode())
    assert not at.error
    assert f"Read as an Azure LLM trace CSV: {raw.size:,} requests" in shown(at.sidebar.caption)
    label = f"empirical, {raw.size} counts (upload code.csv): mean {raw.mean():.0f} tokens"
    assert label in shown(at.caption)
    wait = metric(at, "Mean wait (no one gives up)")
    cut = code.index("\r\n", 5000) + 17                  # inside a row's timestamp
    huge = (code * (10_000_000 // len(code) + 1)).encode()[:10_000_000]
    bad = {
        "truncated Azure CSV": (code[:cut].encode(), r"line \d+: expected 3 columns"),
        "truncated JSON lines": (JSONL[:-15].encode(), r"line 4: not a JSON object"),
        "no output tokens": (b"timestamp_s,input_tokens\n0,5\n1,7\n",
                             r"no token-count column"),
        "wrong columns": (b"size,speed\n1,100\n2,200\n", r"no token-count column"),
        "a vllm result": (real_file(VLLM_DIR + "p1_bf16_4096_c1.json").encode(),
                          r"key 'timestamp'"),
        "a batch profile": (real_file("batch_dle_resnet50_pytorch_by_batch.csv").encode(),
                            r"no token-count column"),
        "empty": (b"", "empty"),
        "binary": (bytes(range(256)) * 4, "UTF-8"),
        "10 MB": (huge, r"file is 10\.0 MB; the limit is 2\.0 MB"),
    }
    for case, (data, says) in bad.items():
        _upload(at, "tokens_upload", f"{case}.csv", data)
        errors = [e.value for e in at.error if e.value.startswith("Token counts not used")]
        assert errors and re.search(says, errors[0]), (case, errors)
        assert label in shown(at.caption), case                      # the last valid law
        assert metric(at, "Mean wait (no one gives up)") == wait, case


def test_a_vllm_result_gives_a_and_c_and_bad_files_keep_them():
    at = pagetest.open_page(PAGE, {"preset": "typed"} | FAST)
    name = "p1_bf16_4096_c1.json"
    text = real_file(VLLM_DIR + name)
    run = json.loads(text)
    _upload(at, "vllm_upload", name, text.encode())
    assert not at.error and not at.warning and run["max_concurrency"] == 1
    a, c = run["mean_tpot_ms"] / 1000, run["mean_ttft_ms"] / 1000
    assert at.session_state["a_s"] == pytest.approx(a, rel=1e-12)
    assert at.session_state["c_s"] == pytest.approx(c, rel=1e-12)
    assert f"a = mean TPOT = {run['mean_tpot_ms']:.4g} ms per token, c = mean TTFT = " \
           f"{run['mean_ttft_ms']:.4g} ms" in shown(at.sidebar.caption)
    assert f"S = {a:.5g}·n + {c:.4g} s (vllm bench serve result {name})" in shown(at.caption)
    wait = metric(at, "Mean wait (no one gives up)")
    huge = (text * (10_000_000 // len(text) + 1)).encode()[:10_000_000]
    bad = {
        "truncated JSON": (text[: len(text) // 2].encode(), r"line 1, column \d+: not JSON"),
        "a trace": (real_file("trace_azure_llm_2023_code.csv").encode(), "not JSON"),
        "missing keys": (b'{"completed": 3}', r"key 'request_throughput'"),
        "empty": (b"", "empty"),
        "binary": (bytes(range(256)) * 4, "UTF-8"),
        "10 MB": (huge, r"file is 10\.0 MB"),
    }
    for case, (data, says) in bad.items():
        _upload(at, "vllm_upload", f"{case}.json", data)
        errors = [e.value for e in at.error if e.value.startswith("vllm result not used")]
        assert errors and re.search(says, errors[0]), (case, errors)
        assert (at.session_state["a_s"], at.session_state["c_s"]) == (a, c), case
        assert metric(at, "Mean wait (no one gives up)") == wait, case
    four = VLLM_DIR + "p1_bf16_4096_c4.json"
    _upload(at, "vllm_upload", "c4.json", real_file(four).encode())
    assert any("Measured at concurrency 4" in w.value for w in at.warning)
    assert at.session_state["a_s"] == json.loads(real_file(four))["mean_tpot_ms"] / 1000
    at.number_input(key="a_s").set_value(0.02).run()            # an edit is kept
    assert at.session_state["a_s"] == 0.02 and "a and c edited since c4.json was read" \
        in shown(at.sidebar.caption)


def test_splitwise_latency_presets_are_listed_with_their_source():
    at = pagetest.open_page(PAGE, FAST)
    ids = [p for p in token_latency_profiles() if p.startswith("splitwise_")]
    names = [token_latency_profiles()[p].name for p in ids]
    assert len(ids) == 2 and set(names) <= set(at.selectbox(key="preset").options)
    for pid in ids:
        at.selectbox(key="preset").set_value(pid).run()        # 70B at λ = 1/40: unstable
        assert not at.exception and not [e for e in at.error if "Unstable" not in e.value]
        fit = token_latency_profiles()[pid].fit()
        text = shown(at.sidebar.caption)
        assert "Source: Splitwise profiling data (Patel et al., ISCA 2024)" in text
        assert f"a = {fit.a_s_per_token:.5g} s/token" in text
