"""Request traces as the SLA page's load: the Azure LLM trace CSV and Mooncake JSON lines
(``engine.measured.read_trace``) binned into the page's interval beside the rates and
timestamp CSVs; bad files of each kind give a message and keep the previous trace."""
import csv
import datetime as dt
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from tests import pagetest
from tests.pagetest import charts, metric
from tests.real_data import real_file

from app_pages.sla.uploads import MAX_INTERVALS, parse_trace_csv, trace_description

PAGE = str(Path(__file__).resolve().parents[2] / pagetest.script("sla"))
VLLM = "vllm_bench_rtx4090_qwen2.5-7b/p1_bf16_4096_c1.json"
JSONL = "".join(json.dumps({"timestamp": t, "input_length": 100, "output_length": 20}) + "\n"
                for t in (0, 1500, 1500, 61_000, 400_000))


def arrival_s(text: str) -> np.ndarray:
    """Arrival times (s from the first) of an Azure trace, parsed here without numpy's
    datetimes: whole seconds by ``datetime``, the 7-digit fraction as integer ns."""
    ns = []
    for row in csv.DictReader(io.StringIO(text, newline="")):
        whole, frac = row["TIMESTAMP"].split(".")
        second = dt.datetime.strptime(whole, "%Y-%m-%d %H:%M:%S")
        ns.append(int(second.replace(tzinfo=dt.timezone.utc).timestamp()) * 10**9
                  + int(frac.ljust(9, "0")))
    ns = np.array(ns, dtype=np.int64)
    return (ns - ns.min()) / 1e9


def binned_per_s(t: np.ndarray, interval_s: float) -> list:
    """Requests/s per interval from 0, counted one by one."""
    counts = [0] * (int(max(t) // interval_s) + 1)
    for x in t:
        counts[int(x // interval_s)] += 1
    return [c / interval_s for c in counts]


@pytest.mark.parametrize("name", ["trace_azure_llm_2023_code.csv",
                                  "trace_azure_llm_2023_conv.csv"])
def test_azure_traces_bin_into_the_counts_of_their_arrivals(name):
    text = real_file(name)
    t = arrival_s(text)
    for interval in (10.0, 300.0):
        got = parse_trace_csv(text.encode(), interval)
        assert got["kind"] == "timestamps" and got["format"] == "azure_llm_csv"
        assert got["interval_s"] == interval and got["n_requests"] == t.size
        assert got["rate_per_s"].tolist() == pytest.approx(binned_per_s(t, interval), abs=1e-12)
    assert trace_description(got).startswith(
        f"Read as an Azure LLM trace CSV: {t.size:,} requests over {t.max() / 60:.3g} min, "
        f"binned into {int(t.max() // 300) + 1} intervals of 300 s.")


def test_json_lines_bin_from_the_first_request_and_the_interval_cap_holds():
    got = parse_trace_csv(JSONL, 60.0)          # ms → s: 0, 1.5, 1.5, 61, 400
    assert got["format"] == "mooncake_jsonl" and got["n_requests"] == 5
    assert got["rate_per_s"].tolist() == pytest.approx([3 / 60, 1 / 60, 0, 0, 0, 0, 1 / 60])
    assert "1 of 5 requests arrive at the same time" in trace_description(got)
    far = JSONL.replace('"timestamp": 400000', '"timestamp": 1000000000')    # 10⁶ s
    span = int(1e6 // 60) + 1
    with pytest.raises(ValueError, match=f"span {span:,} intervals of 60 s; at most "
                                         f"{MAX_INTERVALS:,} \\(raise the interval\\)"):
        parse_trace_csv(far, 60.0)


def _shown(elements) -> str:
    """The elements' text as displayed (Markdown backslash escapes removed)."""
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def _upload(at, name, data):
    at.file_uploader(key="sla_trace_upload").set_value((name, data, "text/csv"))
    at.run()
    assert not at.exception, (name, at.exception)


def _load_chart(at) -> dict:
    return next(f for f in charts(at) if "Load trace" in f["layout"]["title"]["text"])


def test_real_traces_on_the_page_and_bad_files_keep_the_previous_one():
    conv, code = real_file("trace_azure_llm_2023_conv.csv"), \
        real_file("trace_azure_llm_2023_code.csv")
    at = pagetest.open_page(PAGE, {"trace": "custom", "simulate": "false",
                                   "view": "Trace & cost"})
    _upload(at, "conv.csv", conv.encode())
    t = arrival_s(conv)
    bins = int(t.max() // 300) + 1
    assert not at.error
    assert f"Read as an Azure LLM trace CSV: {t.size:,} requests over {t.max() / 60:.3g} min" \
        in _shown(at.caption)
    assert f"Trace: conv.csv ({bins} intervals, {t.size:,} requests)" in _shown(at.markdown)
    load = next(d for d in _load_chart(at)["data"] if d.get("name") == "load (requests/s)")
    assert load["y"] == pytest.approx(binned_per_s(t, 300.0), abs=1e-12)
    cost, before = metric(at, "Cost, autoscaled"), _load_chart(at)
    cut = conv.index("\r\n", 5000) + 17                 # inside a row's timestamp
    huge = (conv * (10_000_000 // len(conv) + 1)).encode()[:10_000_000]
    bad = {
        "truncated Azure CSV": (conv[:cut].encode(), r"line \d+: expected 3 columns"),
        "truncated JSON lines": (JSONL[:-20].encode(), r"line 5: not a JSON object"),
        "wrong columns": (b"size,speed\n1,100\n2,200\n", r"expected columns .*found: size"),
        "a vllm result": (real_file(VLLM).encode(), r"line 1, key 'timestamp'"),
        "token counts": (b"output_tokens\n12\n40\n", r"found: output_tokens"),
        "empty": (b"", "empty"),
        "binary": (bytes(range(256)) * 4, "UTF-8"),
        "10 MB": (huge, r"file is 10\.0 MB; the limit is 2\.0 MB"),
        "too long a span": (JSONL.replace("400000", "100000000000").encode(),  # 10⁸ s
                            f"span {int(1e8 // 300) + 1:,} intervals of 300 s; at most "
                            f"{MAX_INTERVALS:,}"),
    }
    for case, (data, says) in bad.items():
        _upload(at, f"{case}.csv", data)
        errors = [e.value for e in at.error if e.value.startswith("Trace not used")]
        assert errors and re.search(says, errors[0]), (case, errors)
        assert any("Still using the last valid trace: conv.csv" in i.value.replace("\\", "")
                   for i in at.info)
        assert metric(at, "Cost, autoscaled") == cost, case
        assert _load_chart(at) == before, case
    _upload(at, "code.jsonl", JSONL.encode())
    assert not at.error and "Read as a JSON-lines trace (Mooncake format): 5 requests" \
        in _shown(at.caption)
    _upload(at, "code.csv", code.encode())
    t = arrival_s(code)
    assert not at.error and f"Trace: code.csv ({int(t.max() // 300) + 1} intervals, " \
        f"{t.size:,} requests)" in _shown(at.markdown)
