"""Measured inputs on the LLM batching page: the Azure output-token laws, the Splitwise
batch-time presets (source shown, the KV value kept where a preset has none), the Azure
prompt lengths as one-click values, a request trace as the token-count upload."""
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

from engine.presets import llm_batch_time_presets

PAGE = str(Path(__file__).resolve().parents[2] / pagetest.script("llm_batching"))
JSONL = "".join(json.dumps({"timestamp": t, "input_length": 300, "output_length": n}) + "\n"
                for t, n in ((0, 100), (1000, 200), (2000, 300), (2500, 400)))


def shown(elements) -> str:
    """The elements' text as displayed (Markdown backslash escapes removed)."""
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def trace_column(name: str, column: str) -> np.ndarray:
    rows = csv.DictReader(io.StringIO(real_file(name), newline=""))
    return np.array([int(r[column]) for r in rows])


def test_measured_law_splitwise_preset_and_prompt_lengths():
    code = "trace_azure_llm_2023_code.csv"
    raw = trace_column(code, "GeneratedTokens")
    at = pagetest.open_page(PAGE, {"law": "azure_2023_code_output"})
    assert not at.error and not at.warning
    mean = float(metric(at, "Mean output length").split()[0])
    assert mean == pytest.approx(raw.mean(), rel=1e-3)     # histogram bins: within 0.1 %
    assert "Source: Azure/AzurePublicDataset, data/AzureLLMInferenceTrace_code.csv" \
        in shown(at.sidebar.caption)
    at.number_input(key="kv").set_value(50_000.0).run()
    for pid in ("splitwise_a100_llama2_70b_tp8", "splitwise_h100_llama2_70b_tp8"):
        preset = llm_batch_time_presets()[pid]
        assert preset.kv_capacity_tokens is None
        at.selectbox(key="preset").set_value(pid).run()
        assert not at.exception
        assert tuple(at.session_state[k] for k in ("k1", "k2", "k3", "k4")) == preset.k
        assert at.session_state["kv"] == 50_000.0 and at.session_state["prompt"] == 512.0
        text = shown(at.sidebar.caption)
        assert "Source: Splitwise profiling data (Patel et al., ISCA 2024)" in text
        assert "It gives no KV-cache size: the KV cache below keeps its value " \
               "(50,000 tokens)." in text
    for trace, pid in ((code, "azure_2023_code_prompt"),
                       ("trace_azure_llm_2023_conv.csv", "azure_2023_conv_prompt")):
        at.button(key=f"prompt_{pid}").click().run()
        # the preset's histogram mean is within 0.05 tokens of the raw mean
        # (docs/models/measured_presets.md), so both round alike
        assert at.session_state["prompt"] == round(trace_column(trace, "ContextTokens").mean())


def test_a_trace_upload_is_the_token_law_and_a_truncated_one_keeps_it():
    at = pagetest.open_page(PAGE, {"law": "empirical"})
    at.file_uploader(key="tokens_file").set_value(("t.jsonl", JSONL.encode(), "text/plain"))
    at.run()
    assert not at.exception and not at.error
    assert "Read as a JSON-lines trace (Mooncake format): 4 requests" \
        in shown(at.sidebar.caption)
    assert metric(at, "Mean output length") == "250 tokens"          # (100 + … + 400) / 4
    at.file_uploader(key="tokens_file").set_value(("t.jsonl", JSONL[:-10].encode(),
                                                   "text/plain"))
    at.run()
    assert not at.exception
    assert any(e.value.startswith("Token counts not used: line 4: not a JSON object")
               for e in at.error)
    assert metric(at, "Mean output length") == "250 tokens"          # last valid law kept
