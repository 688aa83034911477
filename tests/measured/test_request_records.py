"""read_request_records: a serving run request by request, in DistServe's .exp format,
vllm bench serve --save-detailed JSON and a plain CSV.  Small samples written here, the
real DistServe runs of ../shared/real-data (values recomputed here with ast.literal_eval
on those trusted files), every kind of bad input answered by a ValueError that says
where, and a CSV written from drawn records read back equal."""
import ast
import json
import math
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine import measured
from engine.measured import requests as requests_module
from tests.counting import counted
from tests.fuzzing import FUZZ, tally
from tests.real_data import real_file

DISTSERVE_FILES = ("vllm-100-1.exp", "vllm-150-1.5.exp", "vllm-300-3.exp",
                   "distserve-c21d11-300-3.exp")
FIELDS = ("arrival_s", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms", "tpot_ms",
          "first_token_s", "finish_s")


def message(text) -> str:
    with pytest.raises(ValueError) as err:
        measured.read_request_records(text)
    assert str(err.value)
    return str(err.value)


# ------------------------------------------------------------ samples

def exp_request(prompt, output, issue, first, done) -> dict:
    return {"prompt_len": prompt, "output_len": output, "issue_time": issue,
            "first_token_time": first, "complete_time": done,
            "ttft_ms": (first - issue) * 1000, "tpot_ms": (done - first) * 1000 / (output - 1)
            if output > 1 else 0.0, "latency_ms": (done - issue) * 1000}


# three requests in completion order (the second sent first), as DistServe writes them
EXP_REQUESTS = [exp_request(55, 4, 1000.25, 1000.3, 1000.45),
                exp_request(1316, 9, 1000.0, 1000.5, 1001.3),
                exp_request(829, 1, 1001.0, 1001.25, 1001.25)]
EXP = (str(EXP_REQUESTS) + "\n{\n\tnum_requests: 3\n\ttest_duration_ms: 1300.0\n"
       "\tavg_ttft_ms: 266.67\n}")


def vllm_detailed(*, start_times=True, latencies=False) -> str:
    """A vllm bench serve --save-result --save-detailed file: the summary keys of the
    RTX 4090 runs plus per-request arrays; request 2 failed (vLLM writes ttft 0, no
    itls, output 0 and the error)."""
    data = {"date": "20250708-103711", "endpoint_type": "openai", "label": None,
            "model_id": "m", "tokenizer_id": "m", "num_prompts": 4, "request_rate": "inf",
            "burstiness": 1.0, "max_concurrency": 2, "duration": 2.5, "completed": 3,
            "failed": 1, "total_input_tokens": 600, "total_output_tokens": 7,
            "request_throughput": 1.2, "request_goodput": None, "output_throughput": 2.8,
            "mean_ttft_ms": 200.0, "p99_ttft_ms": 300.0, "mean_tpot_ms": 25.0,
            "p99_tpot_ms": 30.0,
            "input_lens": [100, 200, 999, 300], "output_lens": [3, 1, 0, 3],
            "ttfts": [0.1, 0.2, 0.0, 0.3], "itls": [[0.02, 0.03], [], [], [0.01, 0.04]],
            "generated_texts": ["a b c", "d", "", "e f g"],
            "errors": ["", "", "Traceback: ClientConnectorError", ""]}
    if start_times:
        data["start_times"] = [7.5, 7.0, 7.1, 7.25]
    if latencies:
        data["latencies"] = [0.16, 0.2, 0.0, 0.36]
    return json.dumps(data)


CSV = ("send time (s),prompt tokens,reply tokens,TTFT (ms),end-to-end (ms)\n"
       "12.0,100,5,40.0,120.0\n"
       "11.5,200,1,50.0,50.0\n"
       "13.0,300,3,60.0,100.0\n")


# ------------------------------------------------------------ values, each format

def test_distserve_sample():
    r = measured.read_request_records(EXP)
    assert r.source == "distserve" and r.n_requests == 3
    order = [1, 0, 2]                                     # by issue_time
    issue = np.array([EXP_REQUESTS[i]["issue_time"] for i in order])
    assert r.arrival_s.tolist() == (issue - issue[0]).tolist() and r.arrival_s[0] == 0.0
    assert r.input_tokens.tolist() == [1316, 55, 829]
    assert r.output_tokens.tolist() == [9, 4, 1] and r.output_tokens.dtype == np.int64
    assert r.ttft_ms.tolist() == [EXP_REQUESTS[i]["ttft_ms"] for i in order]
    assert r.e2e_ms.tolist() == [EXP_REQUESTS[i]["latency_ms"] for i in order]
    assert np.allclose(r.tpot_ms[:2], [EXP_REQUESTS[i]["tpot_ms"] for i in order[:2]],
                       rtol=1e-12)
    assert math.isnan(r.tpot_ms[2])                       # one token: no TPOT
    assert np.array_equal(r.first_token_s, r.arrival_s + r.ttft_ms / 1000)
    assert np.array_equal(r.finish_s, r.arrival_s + r.e2e_ms / 1000)
    assert r.summary == {"num_requests": 3.0, "test_duration_ms": 1300.0, "avg_ttft_ms": 266.67}
    assert any("not in send order" in n for n in r.notes)
    assert any("one token" in n for n in r.notes)


def test_distserve_without_derived_keys_or_summary():
    """Only the timestamps: ttft and e2e from their differences; no summary block (noted)."""
    keep = ("prompt_len", "output_len", "issue_time", "first_token_time", "complete_time")
    bare = [{k: r[k] for k in keep} for r in EXP_REQUESTS]
    r = measured.read_request_records(repr(bare).replace("'", '"').encode())   # bytes, JSON-ish
    assert np.allclose(r.ttft_ms, [500.0, 50.0, 250.0], rtol=1e-9)
    assert r.summary == {} and any("no summary" in n for n in r.notes)


def test_vllm_detailed_sample():
    r = measured.read_request_records(vllm_detailed())
    assert r.source == "vllm-bench-detailed" and r.n_requests == 3
    # file order 0, 1, 3 (2 failed), sent at 7.5, 7.0, 7.25 -> sorted 1, 3, 0
    assert r.arrival_s.tolist() == [0.0, 0.25, 0.5]
    assert r.input_tokens.tolist() == [200, 300, 100]
    assert r.output_tokens.tolist() == [1, 3, 3]
    assert np.allclose(r.ttft_ms, [200.0, 300.0, 100.0])
    assert np.allclose(r.e2e_ms, [200.0, 350.0, 150.0])             # ttft + sum(itls)
    assert math.isnan(r.tpot_ms[0]) and np.allclose(r.tpot_ms[1:], [25.0, 25.0])
    assert np.allclose(r.finish_s, [0.2, 0.6, 0.65])
    assert any("1 of 4 requests failed" in n and "ClientConnectorError" in n for n in r.notes)
    assert r.summary["request_rate"] == math.inf and r.summary["completed"] == 3
    assert "input_lens" not in r.summary and "label" not in r.summary


def test_vllm_detailed_latencies_and_no_send_times():
    r = measured.read_request_records(vllm_detailed(start_times=False, latencies=True))
    assert np.isnan(r.arrival_s).all() and np.isnan(r.first_token_s).all()
    assert np.isnan(r.finish_s).all()
    assert r.input_tokens.tolist() == [100, 200, 300]               # the file's order
    assert np.allclose(r.e2e_ms, [160.0, 200.0, 360.0])             # the latencies
    assert np.allclose(r.tpot_ms, [30.0, np.nan, 30.0], equal_nan=True)
    assert any("send times not saved" in n and "replay" in n for n in r.notes)


def test_csv_sample_and_frame():
    r = measured.read_request_records(CSV)
    assert r.source == "csv" and r.summary == {}
    assert r.arrival_s.tolist() == [0.0, 0.5, 1.5]
    assert r.input_tokens.tolist() == [200, 100, 300]
    assert r.ttft_ms.tolist() == [50.0, 40.0, 60.0] and r.e2e_ms.tolist() == [50.0, 120.0, 100.0]
    assert np.allclose(r.tpot_ms, [np.nan, 20.0, 20.0], equal_nan=True)
    frame = r.to_frame()
    assert list(frame.columns) == list(FIELDS) and len(frame) == 3
    assert frame["input_tokens"].tolist() == [200, 100, 300]
    frame.loc[0, "ttft_ms"] = -1.0                                   # a copy: r unchanged
    assert r.ttft_ms[0] == 50.0


def test_csv_units_and_aliases():
    """ms send times and s latencies are converted; aliases of each column."""
    r = measured.read_request_records("timestamp_ms,prompt_len,output_len,ttft_s,latency_s\n"
                                      "1500,10,2,0.25,0.5\n1000,20,2,0.125,0.25\n")
    assert r.arrival_s.tolist() == [0.0, 0.5] and r.ttft_ms.tolist() == [125.0, 250.0]
    assert r.e2e_ms.tolist() == [250.0, 500.0] and r.tpot_ms.tolist() == [125.0, 250.0]


def test_results_are_frozen():
    r = measured.read_request_records(CSV)
    with pytest.raises(AttributeError):
        r.source = "x"
    for name in FIELDS:
        with pytest.raises(ValueError):
            getattr(r, name)[0] = 1


def test_vllm_bench_keeps_the_date():
    assert measured.read_vllm_bench(vllm_detailed()).date == "20250708-103711"
    data = json.loads(vllm_detailed())
    del data["date"]
    assert measured.read_vllm_bench(json.dumps(data)).date is None


# ------------------------------------------------------------ the real DistServe runs

@pytest.mark.parametrize("name", DISTSERVE_FILES)
def test_real_distserve_runs(name):
    text = real_file("distserve_opt13b_a100/" + name)
    first, rest = text.split("\n", 1)
    raw = ast.literal_eval(first)                      # the published file, trusted here
    summary = {k.strip(): float(v) for k, v in re.findall(r"^\s*(\w+):\s*(\S+)\s*$", rest, re.M)}
    r = measured.read_request_records(text)
    n = len(raw)
    assert r.n_requests == n == summary["num_requests"] == int(name.split("-")[-2])
    raw = sorted(raw, key=lambda d: d["issue_time"])
    col = {k: np.array([d[k] for d in raw]) for k in raw[0]}
    assert r.arrival_s.tolist() == (col["issue_time"] - col["issue_time"][0]).tolist()
    assert r.input_tokens.tolist() == col["prompt_len"].tolist()
    assert r.output_tokens.tolist() == col["output_len"].tolist()
    assert r.ttft_ms.tolist() == col["ttft_ms"].tolist()
    assert r.e2e_ms.tolist() == col["latency_ms"].tolist()
    several = col["output_len"] >= 2
    assert several.all()                                # every reply has 2 tokens or more
    assert np.allclose(r.tpot_ms[several], col["tpot_ms"][several], rtol=1e-6, atol=0)
    assert np.allclose(r.finish_s, col["complete_time"] - col["issue_time"][0], rtol=0,
                       atol=1e-6)
    assert r.summary == summary
    # the summary block, recomputed from the requests
    assert r.ttft_ms.mean() == pytest.approx(summary["avg_ttft_ms"], rel=1e-12)
    assert r.tpot_ms.mean() == pytest.approx(summary["avg_tpot_ms"], rel=1e-12)
    assert 1000 * r.finish_s.max() == pytest.approx(summary["test_duration_ms"], rel=1e-12)
    assert any("tpot_ms equals" in n for n in r.notes)
    assert any(f"{n} requests: prompts" in note for note in r.notes)
    assert r.arrival_s[-1] == pytest.approx(100.0, abs=0.01)     # rescaled to span N/rate


def test_real_vllm_summary_is_not_detailed():
    text = real_file("vllm_bench_rtx4090_qwen2.5-7b/p1_bf16_4096_c1.json")
    msg = message(text)
    assert msg.startswith("line 1") and "--save-detailed" in msg and "read_vllm_bench" in msg
    assert measured.read_vllm_bench(text).date == "20260708-103711"


# ------------------------------------------------------------ bad input

@pytest.mark.parametrize("text", [EXP, vllm_detailed(), CSV], ids=["exp", "vllm", "csv"])
def test_empty_binary_and_junk(text):
    assert "empty" in message("") and "empty" in message(" \n\t\n")
    assert "NUL" in message(text[:30] + "\x00" + text[30:])
    assert "UTF-8" in message(text.encode()[:20] + b"\xff\xfe" + text.encode()[20:])
    assert "line 1" in message(bytes(range(256)) * 10)


def test_a_call_in_the_literal_is_refused_not_evaluated():
    module = "tests_request_records_must_never_be_imported"
    for call in (f"__import__('{module}')", "open('/etc/passwd').read()", "print(1)",
                 "(lambda: 1)()", "1 + 1", "x"):
        text = str(EXP_REQUESTS).replace("55", call, 1)
        msg = message(text)                            # a ValueError, not ModuleNotFoundError
        where = r"line 1, column 1[79]: request index 0, (after )?key 'prompt_len'"
        assert re.match(where, msg), msg
    assert module not in sys.modules
    assert "refused, not evaluated" in message(str(EXP_REQUESTS).replace(
        "55", f"__import__('{module}')", 1))
    assert "function call" in message("[{'a': eval ('1')}]")


def test_truncated_literal_and_summary():
    first = str(EXP_REQUESTS)
    msg = message(first[: len(first) // 2])
    assert msg.startswith("line 1, column") and "truncated" in msg
    msg = message(first + "\n{\n\tnum_requests: 3\n")
    assert "line 4" in msg and "not closed" in msg
    assert "line 3, key 'num_requests'" in message(first + "\n{\n\tnum_requests: many\n}")
    assert "line 2" in message(first + "\nnot a summary\n")
    assert "line 3" in message(first + "\n{a: 1}\nmore\n")
    assert "empty" in message("[]\n{\n}")
    assert "[" in message("[" * 1000) and "line 1, column 2" in message("[" * 1000)
    assert "nested" in message("[{'prompt_len': [1, 2]}]")


def test_distserve_bad_requests_name_index_and_key():
    def bad(index, **change):
        reqs = [dict(r) for r in EXP_REQUESTS]
        reqs[index].update(change)
        return message(str(reqs))
    msg = bad(1, output_len=8.5)
    assert "request index 1, key 'output_len'" in msg and "whole number" in msg and "8.5" in msg
    assert "request index 2, key 'prompt_len'" in bad(2, prompt_len=0)
    assert "request index 2, key 'prompt_len'" in bad(2, prompt_len="829")
    assert "request index 0, key 'issue_time'" in bad(0, issue_time=-1.0)
    assert "request index 1, key 'complete_time'" in bad(1, complete_time=float("nan"))
    msg = bad(1, first_token_time=999.0)
    assert "request index 1, key 'first_token_time'" in msg and "before" in msg
    assert "request index 0, key 'complete_time'" in bad(0, complete_time=1000.29)
    msg = bad(2, ttft_ms=1.0)
    assert "request index 2, key 'ttft_ms'" in msg and "250.0" in msg
    assert "request index 0, key 'latency_ms'" in bad(0, latency_ms=0.0)
    reqs = [dict(r) for r in EXP_REQUESTS]
    del reqs[1]["issue_time"]
    msg = message(str(reqs))
    assert msg.startswith("line 1, column") and "request index 1: no key 'issue_time'" in msg
    assert "appears twice" in message("[{'a': 1, 'a': 2}]")
    # float noise within 1e-6 s is tolerated: a first token 1e-7 s before the send
    ok = [exp_request(10, 2, 5.0, 5.0 - 1e-7, 6.0)]
    assert measured.read_request_records(str(ok)).ttft_ms.tolist() == [0.0]


def test_vllm_bad_requests_name_key_and_index():
    def bad(change):
        data = json.loads(vllm_detailed())
        change(data)
        return message(json.dumps(data, indent=1))
    msg = bad(lambda d: d["output_lens"].__setitem__(3, 2.5))
    assert "key 'output_lens', request index 3" in msg and "2.5" in msg
    lines = json.dumps(json.loads(vllm_detailed()), indent=1).splitlines()
    at = next(i + 1 for i, t in enumerate(lines) if '"ttfts"' in t)
    msg = bad(lambda d: d["ttfts"].__setitem__(1, -0.5))
    assert msg.startswith(f"line {at}, key 'ttfts', request index 1")
    assert "key 'itls', request index 0" in bad(lambda d: d["itls"].__setitem__(0, [0.1, None]))
    assert "key 'start_times', request index 3" in bad(
        lambda d: d["start_times"].__setitem__(3, "soon"))
    msg = bad(lambda d: d["output_lens"].pop())
    assert "key 'output_lens'" in msg and "3 entries" in msg
    assert "no key 'ttfts'" in bad(lambda d: d.pop("ttfts"))
    assert "itls" in bad(lambda d: d.pop("itls"))
    assert "every one of the 4 requests failed" in bad(
        lambda d: d.__setitem__("errors", ["x"] * 4))
    # a failed request's zeros are not checked: it is dropped
    assert measured.read_request_records(vllm_detailed()).n_requests == 3
    assert "line 2, column 1" in message('{"a": 1}\n{"b": 2}\n')
    assert "line 1" in message(vllm_detailed()[:100])


def test_csv_bad_rows_and_headers():
    header, *rows = CSV.splitlines()
    def with_row(i, j, cell):
        cells = rows[i].split(",")
        cells[j] = cell
        return "\n".join([header, *rows[:i], ",".join(cells), *rows[i + 1:]]) + "\n"
    msg = message(with_row(1, 1, "2.5"))
    assert "line 3, column 2 (prompt tokens)" in msg and "whole number" in msg
    assert "line 4, column 1 (send time (s))" in message(with_row(2, 0, "-1"))
    assert "line 2, column 3 (reply tokens)" in message(with_row(0, 2, "0"))
    msg = message(with_row(0, 4, "39"))
    assert "line 2, column 5 (end-to-end (ms))" in msg and "first" in msg
    assert "line 2, column 4 (TTFT (ms))" in message(with_row(0, 3, "abc"))
    msg = message(CSV.replace("TTFT (ms)", "TTFT"))
    assert "line 1, column 4 (TTFT)" in msg and "unit" in msg
    assert "line 1, column 1 (timestamp)" in message(CSV.replace("send time (s)", "timestamp"))
    assert "no column for the time to first token" in message(
        CSV.replace("TTFT (ms)", "queue (ms)"))
    assert "second column" in message(CSV.replace("reply tokens", "output_len").replace(
        "prompt tokens", "reply_tokens"))
    msg = message("foo,bar\n1,2\n")
    assert "unknown columns" in msg and "DistServe" in msg and "save-detailed" in msg
    assert "only a header" in message(header + "\n")
    assert "line 3" in message(CSV[: CSV.index("\n", CSV.index("\n") + 1) + 8])


def test_ten_megabytes_of_junk_fail_fast():
    """Refusals name line 1 (or 2 after a good header) and their work is counted, not
    timed: linear in the lines, a bounded number of passes over the text."""
    rng = np.random.default_rng(7)
    alphabet = np.frombuffer(b"abcxyz0123456789,.;:\"'{}[] \n", dtype=np.uint8)
    junk = rng.choice(alphabet, 10_000_000).tobytes()
    for text in (junk, junk.decode(), CSV.splitlines()[0] + "\n" + junk.decode(),
                 "[" + junk.decode(), "[" * 10_000_000, "1" * 10_000_000,
                 "{" + junk.decode()):
        err, calls, on_big = counted(measured.read_request_records, text)
        assert isinstance(err, ValueError), type(err)
        lines = text.count(b"\n" if isinstance(text, bytes) else "\n") + 1
        first = re.match(r"(?:text: )?line (\d+)\b", str(err))
        assert first and int(first[1]) <= 2, str(err)[:200]
        assert calls <= 16 * lines + 1000, (calls, lines)
        assert len(on_big) <= 64, len(on_big)


# ------------------------------------------------------------ property: CSV round trip

TIMES = st.floats(0.0, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False)
ROWS = st.lists(st.tuples(TIMES, st.integers(1, 10 ** 6), st.integers(1, 10 ** 5), TIMES,
                          TIMES), min_size=1, max_size=30)


def csv_text(rows, names=("arrival_s", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms")):
    return ",".join(names) + "\n" + "".join(
        f"{s!r},{i},{o},{t!r},{t + x!r}\n" for s, i, o, t, x in rows)


@settings(max_examples=200, deadline=None)
@given(rows=ROWS, names=st.sampled_from([
    ("arrival_s", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms"),
    ("send time (s)", "prompt tokens", "reply tokens", "TTFT (ms)", "end-to-end (ms)"),
    ("issue_time_s", "prompt_len", "output_len", "ttft_ms", "latency_ms")]))
def test_csv_of_drawn_records_reads_back_equal(rows, names):
    r = measured.read_request_records(csv_text(rows, names))
    order = sorted(range(len(rows)), key=lambda k: rows[k][0])      # stable, as the reader
    send = np.array([rows[k][0] for k in order])
    assert r.arrival_s.tolist() == (send - send[0]).tolist()
    assert r.input_tokens.tolist() == [rows[k][1] for k in order]
    assert r.output_tokens.tolist() == [rows[k][2] for k in order]
    assert r.ttft_ms.tolist() == [rows[k][3] for k in order]
    assert r.e2e_ms.tolist() == [rows[k][3] + rows[k][4] for k in order]
    again = measured.read_request_records(r.to_frame().to_csv(index=False))
    for name in FIELDS:
        assert np.array_equal(getattr(again, name), getattr(r, name), equal_nan=True), name
    assert again.n_requests == r.n_requests == len(rows)


# ------------------------------------------------------------ fuzz (tests/fuzzing.py contract)

@st.composite
def run_text(draw):
    """(format, text, rows) of drawn valid requests: (send s, prompt, reply, ttft ms,
    e2e − ttft ms)."""
    rows = draw(ROWS)
    fmt = draw(st.sampled_from(["distserve", "vllm-bench-detailed", "csv"]))
    if fmt == "csv":
        return fmt, csv_text(rows), rows
    if fmt == "distserve":
        reqs = [{"prompt_len": i, "output_len": o, "issue_time": s, "first_token_time": s,
                 "complete_time": s, "ttft_ms": t, "latency_ms": t + x}
                for s, i, o, t, x in rows]
        for q in reqs:          # timestamps agreeing with the times (to their own rounding)
            q["first_token_time"] = q["issue_time"] + q["ttft_ms"] / 1000
            q["complete_time"] = q["issue_time"] + q["latency_ms"] / 1000
            q["ttft_ms"] = (q["first_token_time"] - q["issue_time"]) * 1000
            q["latency_ms"] = (q["complete_time"] - q["issue_time"]) * 1000
        return fmt, str(reqs) + "\n{\n\tnum_requests: %d\n}" % len(rows), rows
    data = {"completed": len(rows), "input_lens": [r[1] for r in rows],
            "output_lens": [r[2] for r in rows], "ttfts": [r[3] / 1000 for r in rows],
            "itls": [[r[4] / 1000] for r in rows], "start_times": [r[0] for r in rows],
            "errors": [""] * len(rows)}
    return fmt, json.dumps(data), rows


@st.composite
def junk(draw):
    """Any text or bytes, or a valid sample cut, spliced with junk or garbled."""
    kind = draw(st.sampled_from(["text", "bytes", "garbled"]))
    if kind == "text":
        return draw(st.text(max_size=300))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    text = draw(st.sampled_from([EXP, vllm_detailed(), CSV]))
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, min(len(text), i + 40)))
    return text[:i] + draw(st.text(max_size=8)) + text[j:]


@FUZZ
@given(case=run_text(), garbage=junk())
def test_fuzz_read_request_records(case, garbage):
    """read_request_records on drawn valid runs of each format: sorted by send time, the
    drawn numbers back (to the float rounding of the format's units), derived columns
    by their definitions, NaN only in tpot_ms for one-token replies; any other text or
    bytes: a result or a ValueError with a message, never another exception."""
    fmt, text, rows = case
    r = measured.read_request_records(text)
    assert r.source == fmt and r.n_requests == len(rows)
    assert r.arrival_s[0] == 0.0 and np.all(np.diff(r.arrival_s) >= 0)
    order = sorted(range(len(rows)), key=lambda k: rows[k][0])
    assert r.input_tokens.tolist() == [rows[k][1] for k in order]
    assert r.output_tokens.tolist() == [rows[k][2] for k in order]
    assert np.allclose(r.ttft_ms, [rows[k][3] for k in order], rtol=1e-9, atol=1e-3)
    assert np.allclose(r.e2e_ms, [rows[k][3] + rows[k][4] for k in order], rtol=1e-9,
                       atol=1e-3)
    assert np.array_equal(np.isnan(r.tpot_ms), r.output_tokens < 2)
    for name in FIELDS:
        if name != "tpot_ms":
            assert not np.isnan(getattr(r, name)).any(), name
    assert np.all(r.first_token_s >= r.arrival_s) and np.all(r.finish_s >= r.first_token_s)
    tally(measured.read_request_records)
    try:
        measured.read_request_records(garbage)
    except ValueError as err:
        assert str(err)


def test_module_exports():
    assert requests_module.read_request_records is measured.read_request_records
    assert measured.RequestRecords is type(measured.read_request_records(CSV))
