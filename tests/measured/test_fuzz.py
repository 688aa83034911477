"""Fuzz tests of the readers of real tools' files (engine.measured): the contract of
tests/fuzzing.py for readers.  Each reader gets drawn valid files of each format it
takes (values recomputed here from the drawn numbers, no NaN), and any text or bytes
(random, or a valid file cut, spliced or garbled): a result or a ``ValueError`` with a
message, never another exception.  ``FUZZED`` maps each public name to its test
(checked by tests/test_fuzz_contract.py)."""
import json

from engine.measured import (online, online_terms, parsing, profiles, results, sweeps, traces,
                             vllm)
from engine.measured import requests as request_records
from tests.fuzzing import *  # noqa: F401,F403 (settings, checks, engine modules, domains)
from tests.measured import samples as S

CASES_EACH = FULL_CASES  # a reader call costs ~1 ms: the full 2,000 cases fit the budget
POSITIVE = st.floats(1e-3, 1e6, allow_nan=False, allow_infinity=False)
BAD_CELLS = st.sampled_from(["abc", "0", "-1", "nan", "inf", "", "1e999", "0x1"])
SAMPLES = (S.MODEL_ANALYZER, S.MODEL_ANALYZER_GPU, S.PERF_ANALYZER, S.DLE_BATCH,
           S.TRITON_OFFLINE, S.TRITON_ONLINE, S.PLAIN_PROFILE, S.AZURE, S.MOONCAKE,
           S.PLAIN_TRACE, S.VLLM)


def read_or_refuse(fn, text, **kwargs):
    """``fn(text)``'s result, or None when it raised a ``ValueError`` with a message;
    any other exception fails the test."""
    try:
        return fn(text, **kwargs)
    except ValueError as err:
        assert str(err), "a ValueError without a message"
        return None


@st.composite
def junk(draw):
    """Any text or bytes, or a sample file garbled: cut, spliced with junk, or one
    character replaced."""
    kind = draw(st.sampled_from(["text", "bytes", "garbled"]))
    if kind == "text":
        return draw(st.text(max_size=300))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    text = draw(st.sampled_from(SAMPLES))
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, min(len(text), i + 40)))
    return text[:i] + draw(st.text(max_size=8)) + text[j:]


@st.composite
def profile_rows(draw, low=2):
    """Distinct batch sizes with throughput, power and p99 latency, in a drawn order."""
    sizes = draw(st.lists(st.integers(1, 4096), min_size=low, max_size=12, unique=True))
    return [(b, draw(POSITIVE), draw(POSITIVE), draw(POSITIVE)) for b in sizes]


def profile_text(fmt: str, table: list) -> str:
    """A file of format ``fmt`` holding the rows (b, throughput, power, p99)."""
    r = repr
    if fmt == "plain_csv":
        return "batch_size,throughput_per_s,power_w,p99_latency_ms\n" + "".join(
            f"{b},{r(x)},{r(w)},{r(p)}\n" for b, x, w, p in table)
    if fmt == "dle_batch_table":
        return "gpu,table,batch_size,throughput_img_per_s,latency_p99_ms\n" + "".join(
            f"G,T,{b},{r(x)},{r(p)}\n" for b, x, w, p in table)
    if fmt == "triton_dle_table":
        return ("gpu,backend,precision,model_instances,client_batch_size,inferences_per_second,"
                "p99_latency_ms\n" + "".join(f"G,B,FP16,1,{b},{r(x)},{r(p)}\n"
                                             for b, x, w, p in table))
    if fmt == "perf_analyzer":
        return "Concurrency,Inferences/Second,p99 latency\n" + "".join(
            f"{b},{r(x)},{r(1000 * p)}\n" for b, x, w, p in table)
    # Model Analyzer: one config per B, saturating (peak at concurrency 2 of 1, 2, 4)
    return ("Model,Batch,Concurrency,Model Config Path,Max Batch Size,Throughput (infer/sec),"
            "p99 Latency (ms)\n" + "".join(
                f"m,1,{n},cfg_{b},{b},{r(x * f)},{r(p)}\n" for b, x, w, p in table
                for n, f in ((4, 1.0), (1, 0.5), (2, 1.0))))


def ma_gpu_text(table: list) -> str:
    return ("Model Config Path,Concurrency,Batch,GPU Power Usage (W)\n"
            + "".join(f"cfg_{b},2,1,{w!r}\n" for b, x, w, p in table))


PROFILE_FORMATS = ("plain_csv", "dle_batch_table", "triton_dle_table", "perf_analyzer",
                   "model_analyzer")


@fuzz(CASES_EACH)
@given(st.sampled_from(PROFILE_FORMATS), profile_rows(), junk(), BAD_CELLS, st.data())
def test_batch_profiles(fmt, table, garbage, bad, data):
    """read_batch_profile / read_batch_profiles: τ[b] = 1000·b/throughput sorted by b,
    power and p99 carried; a bad cell is named by line and column; any text: a result
    or a ValueError."""
    text = profile_text(fmt, table)
    gpu = ma_gpu_text(table) if fmt == "model_analyzer" else None
    p = profiles.read_batch_profile(text, gpu_metrics_text=gpu)
    assert_no_nan(p)
    want = sorted(table)
    assert p.source_format == fmt and p.batch_size.tolist() == [t[0] for t in want]
    assert close(p.batch_time_ms, [1000 * b / x for b, x, w, p_ in want], 1e-12)
    assert close(p.throughput_per_s, [x for b, x, w, p_ in want], 1e-9)
    if fmt in ("plain_csv", "model_analyzer"):
        assert close(p.power_w, [w for b, x, w, p_ in want])
    assert close(p.p99_latency_ms, [p_ for b, x, w, p_ in want], 1e-12)
    assert profiles.read_batch_profiles(text, gpu_metrics_text=gpu)[0].label == p.label
    tally(profiles.read_batch_profile)
    tally(profiles.read_batch_profiles)
    raises_naming("table", profiles.read_batch_profile, text, table="no such table")
    lines = text.splitlines()
    k = data.draw(st.integers(1, len(lines) - 1), label="bad line")
    cells = lines[k].split(",")
    j = data.draw(st.integers(0, len(cells) - 1), label="bad column")
    name = lines[0].split(",")[j]
    if fmt != "model_analyzer" and name not in ("gpu", "table", "backend", "precision"):
        cells[j] = bad                          # every BAD_CELLS value is refused
        lines[k] = ",".join(cells)
        with pytest.raises(ValueError, match=f"line {k + 1}, column {j + 1} "):
            profiles.read_batch_profile("\n".join(lines))
    for fn in (profiles.read_batch_profile, profiles.read_batch_profiles):
        read_or_refuse(fn, garbage)
        read_or_refuse(fn, text, gpu_metrics_text=garbage if fmt == "model_analyzer" else None)


def sweep_text(fmt: str, table: list) -> str:
    """A closed-loop sweep file: concurrency, throughput, p99 and one latency part."""
    r = repr
    if fmt == "perf_analyzer":
        head = ("Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
                "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
                "p99 latency\n")
        return head + "".join(f"{n},{r(x)},0,0,0,0,{r(1000 * w)},0,0,{r(1000 * p)}\n"
                              for n, x, w, p in table)
    if fmt == "triton_dle_table":
        return ("gpu,backend,precision,model_instances,max_batch_size,concurrent_client_requests,"
                "inferences_per_second,p99_latency_ms,avg_latency_ms\n" + "".join(
                    f"G,B,FP16,2,64,{n},{r(x)},{r(p)},{r(w)}\n" for n, x, w, p in table))
    return ("Model,Batch,Concurrency,Model Config Path,Max Batch Size,Throughput (infer/sec),"
            "p99 Latency (ms)\n" + "".join(f"m,1,{n},cfg,8,{r(x)},{r(p)}\n"
                                           for n, x, w, p in table))


@fuzz(CASES_EACH)
@given(st.sampled_from(("perf_analyzer", "triton_dle_table", "model_analyzer")),
       profile_rows(low=1), junk())
def test_concurrency_sweeps(fmt, table, garbage):
    """read_concurrency_sweep(s): sorted by concurrency; the mean latency is the drawn
    one (perf_analyzer: µs -> ms, the sum of its parts; DLE: avg_latency_ms) or
    Little's law 1000·N/X (Model Analyzer)."""
    text = sweep_text(fmt, table)
    s = sweeps.read_concurrency_sweep(text)
    assert_no_nan(s)
    want = sorted(table)
    n = np.array([t[0] for t in want], dtype=float)
    assert s.concurrency.tolist() == n.tolist() and s.source_format == fmt
    assert close(s.throughput_per_s, [t[1] for t in want])
    mean = (1000 * n / [t[1] for t in want] if fmt == "model_analyzer"
            else [t[2] for t in want])
    assert close(s.mean_latency_ms, mean, 1e-12)
    assert close(s.p99_latency_ms, [t[3] for t in want], 1e-12)
    assert len(sweeps.read_concurrency_sweeps(text)) == 1
    tally(sweeps.read_concurrency_sweep)
    tally(sweeps.read_concurrency_sweeps)
    raises_naming("table", sweeps.read_concurrency_sweep, text, table="no such table")
    read_or_refuse(sweeps.read_concurrency_sweep, garbage)
    read_or_refuse(sweeps.read_concurrency_sweeps, garbage)


@fuzz(CASES_EACH)
@given(st.sampled_from(("plain_csv", "mooncake_jsonl", "azure_llm_csv")),
       st.lists(st.tuples(st.integers(0, 10 ** 12), st.integers(0, 10 ** 6),
                          st.integers(0, 10 ** 6)), min_size=2, max_size=30), junk())
def test_traces(fmt, requests, garbage):
    """read_trace: arrivals sorted from 0 (ns offsets for the Azure datetimes, ms for the
    JSON lines, s for the plain CSV), each request's tokens kept with it."""
    if fmt == "plain_csv":
        text = "timestamp_s,input_tokens,output_tokens\n" + "".join(
            f"{t / 1e6!r},{i},{o}\n" for t, i, o in requests)
        unit = 1e6
    elif fmt == "mooncake_jsonl":
        text = "\n".join(json.dumps({"timestamp": t, "input_length": i, "output_length": o})
                         for t, i, o in requests)
        unit = 1e3
    else:
        stamps = np.datetime64("2023-11-16T18:00:00", "ns") + np.array([t for t, _, _ in requests],
                                                                         dtype="timedelta64[ns]")
        text = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n" + "\r\n".join(
            f"{str(s).replace('T', ' ')},{i},{o}" for s, (_, i, o) in zip(stamps, requests))
        unit = 1e9
    trace = traces.read_trace(text)
    assert_no_nan(trace)
    assert trace.source_format == fmt and trace.n_requests == len(requests)
    order = sorted(range(len(requests)), key=lambda k: requests[k][0])
    start = requests[order[0]][0]
    assert np.allclose(trace.arrival_s, [(requests[k][0] - start) / unit for k in order],
                       rtol=1e-12, atol=1e-6)
    assert trace.input_tokens.tolist() == [requests[k][1] for k in order]
    assert trace.output_tokens.tolist() == [requests[k][2] for k in order]
    assert trace.mean_rate_per_s > 0
    tally(traces.read_trace)
    read_or_refuse(traces.read_trace, garbage)


VLLM_KEYS = ("request_throughput", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms",
             "median_ttft_ms", "duration")


@fuzz(CASES_EACH)
@given(st.integers(0, 10 ** 6), st.integers(0, 10 ** 9), st.integers(0, 10 ** 9),
       st.lists(st.floats(0, 1e9), min_size=len(VLLM_KEYS), max_size=len(VLLM_KEYS)),
       st.one_of(st.none(), st.integers(1, 1024)),
       st.one_of(st.just("inf"), st.floats(1e-3, 1e6)), junk(), st.sampled_from(VLLM_KEYS))
def test_vllm_bench(completed, tokens_in, tokens_out, values, cap, rate, garbage, missing):
    """read_vllm_bench: every field as in the JSON ("inf" -> float inf); a missing or
    non-number key is named with its line."""
    data = dict(zip(VLLM_KEYS, values), completed=completed, total_input_tokens=tokens_in,
                total_output_tokens=tokens_out, max_concurrency=cap, request_rate=rate,
                label=None, request_goodput=None, date=f"2025{completed % 10000:04d}-103711")
    data["duration"] = max(data["duration"], 1e-3)
    r = vllm.read_vllm_bench(json.dumps(data, indent=2))
    assert_no_nan(r)
    assert (r.completed, r.total_input_tokens, r.total_output_tokens, r.max_concurrency) == (
        completed, tokens_in, tokens_out, cap)
    assert r.request_throughput_per_s == data["request_throughput"]
    assert r.mean_tpot_ms == data["mean_tpot_ms"] and r.p99_ttft_ms == data["p99_ttft_ms"]
    assert r.request_rate_per_s == (math.inf if rate == "inf" else rate)
    assert r.date == data["date"]
    tally(vllm.read_vllm_bench)
    data[missing] = "x"
    raises_naming(f"'{missing}'", vllm.read_vllm_bench, json.dumps(data, indent=2))
    read_or_refuse(vllm.read_vllm_bench, garbage)


# ============================================================ engine.measured.online

def line_table(alpha, tau0, sizes) -> list:
    """(b, throughput) rows of an exact line τ[b] = αb + τ0 (ms)."""
    return [(b, 1000 * b / (alpha * b + tau0)) for b in sorted(sizes)]


def offline_text(rows, gpu="G") -> str:
    return ("gpu,backend,precision,model_instances,client_batch_size,inferences_per_second\n"
            + "".join(f"{gpu},B,FP16,1,{b},{x!r}\n" for b, x in rows))


def online_text(pred, gpu="G", instances=2, b_max=64) -> str:
    return ("gpu,backend,precision,model_instances,max_batch_size,concurrent_client_requests,"
            "inferences_per_second,avg_latency_ms\n" + "".join(
                f"{gpu},B,FP16,{instances},{b_max},{int(n)},{float(x)!r},{float(lat)!r}\n"
                for n, x, lat in zip(pred.n_clients, pred.throughput_per_s,
                                     pred.mean_latency_ms)))


ONLINE_CASES = 100      # several instances simulate one run per concurrency (~10 ms each)


@fuzz(ONLINE_CASES)
@given(st.floats(0.01, 10.0), st.floats(0.0, 50.0),
       st.lists(st.integers(1, 256), min_size=2, max_size=8, unique=True),
       st.lists(st.integers(1, 40), min_size=1, max_size=3, unique=True),
       st.integers(1, 3), st.one_of(st.none(), st.integers(1, 64)))
def test_online_prediction(alpha, tau0, sizes, clients, instances, b_max):
    """predict_online / predict_profile_online / transfer_time_ms on an exact line: α and
    τ0 recovered, Little's law N = X·latency, X at most N/(τ[1] + θ) (each round trip
    holds a batch and a front-end time; 5 % slack for a simulated mean) and at most the
    capacity; the comparisons against a table built from the prediction itself: zero
    error; out-of-domain n_clients, instances, b_max: ValueError naming them."""
    rows = line_table(alpha, tau0, sizes)
    text = offline_text(rows)
    pred = online.predict_online(text, clients, instances=instances, b_max=b_max)
    assert_no_nan(pred)
    assert close(pred.alpha_ms, alpha, 1e-6) and abs(pred.tau0_ms - tau0) <= 1e-6 * (1 + tau0)
    n = np.asarray(clients, dtype=float)
    assert close(n, pred.throughput_per_s * pred.mean_latency_ms / 1000, 1e-9)
    theta = online.transfer_time_ms(profiles.read_batch_profile(text))
    assert theta >= 0 and close(theta, pred.transfer_ms)
    assert np.all(pred.throughput_per_s <= 1.05 * 1000 * n / (alpha + tau0 + theta))
    b = np.inf if b_max is None else b_max
    cap = instances * (1000 / alpha if b == np.inf else 1000 * b / (alpha * b + tau0))
    assert np.all(pred.throughput_per_s <= 1.05 * cap)
    tally(online.predict_online)
    tally(online.transfer_time_ms)
    profile = profiles.read_batch_profile(text)
    again = online.predict_profile_online(profile, clients, instances=instances, b_max=b_max)
    assert np.array_equal(again.throughput_per_s, pred.throughput_per_s)
    tally(online.predict_profile_online)
    if b_max is not None:
        same = online.compare_online(text, online_text(pred, instances=instances, b_max=b_max))
        assert len(same) == 1 and np.allclose(same[0].throughput_error, 0, atol=1e-9)
        assert same[0].median_abs_latency_error <= 1e-9
        tally(online.compare_online)
        sweep = sweeps.read_concurrency_sweep(online_text(pred, instances=instances,
                                                          b_max=b_max))
        one = online.compare_profile_online(profile, sweep)
        assert one.max_abs_throughput_error <= 1e-9
        tally(online.compare_profile_online)
    raises_naming("n_clients", online.predict_online, text, [0])
    raises_naming("instances", online.predict_online, text, clients, instances=0)
    raises_naming("b_max", online.predict_online, text, clients, b_max=0)


@fuzz(CASES_EACH // 4)
@given(st.floats(0.01, 10.0), st.floats(0.0, 50.0),
       st.lists(st.integers(1, 64), min_size=2, max_size=6, unique=True),
       st.integers(1, 4096), st.floats(0.5, 0.999))
def test_model_analyzer_comparison(alpha, tau0, caps, n, q):
    """compare_model_analyzer on a drawn Model Analyzer file of an exact line (each
    cap's sweep saturating at concurrency 2·B): the model's throughput at N ≥ B is the
    file's; cycle_latency_quantile_ms is k or k + 1 batch times, k = ⌊N/b⌋."""
    text = ("Model,Batch,Concurrency,Model Config Path,Max Batch Size,Throughput (infer/sec),"
            "p99 Latency (ms)\n")
    for b in caps:
        x = 1000 * b / (alpha * b + tau0)
        for c in (b, 2 * b, 4 * b):
            text += f"m,1,{c},cfg_{b},{b},{x!r},{1000 * c / x!r}\n"
    comps = online.compare_model_analyzer(text)
    assert len(comps) == len(caps)
    for c in comps:
        assert_no_nan(c)
        assert np.allclose(c.throughput_error, 0, atol=1e-6)
    tally(online.compare_model_analyzer)
    for b_max in (None, caps[0]):
        got = online.cycle_latency_quantile_ms(n, alpha, tau0, b_max, q)
        b = n if b_max is None else min(n, b_max)
        tau = alpha * b + tau0
        assert got in (pytest.approx(n // b * tau), pytest.approx((n // b + 1) * tau))
    tally(online.cycle_latency_quantile_ms)
    raises_naming("Model Analyzer", online.compare_model_analyzer, offline_text(
        line_table(alpha, tau0, caps)))


# ============================================================ engine.measured.online_terms

def breakdown_text(rows) -> str:
    """A perf_analyzer -f CSV (µs) of rows (N, front µs, input µs, infer µs, output µs)."""
    return ("Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
            "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
            "p99 latency\n" + "".join(
                f"{n},{1e6 * n / (f + i + x + o)!r},0,{f!r},0,{i!r},{x!r},{o!r},0,"
                f"{f + i + x + o!r}\n" for n, f, i, x, o in rows))


@fuzz(ONLINE_CASES)
@given(st.floats(0.01, 10.0), st.floats(0.0, 50.0),
       st.lists(st.integers(1, 256), min_size=2, max_size=8, unique=True),
       st.integers(1, 8), st.floats(1.0, 1e4), st.floats(0.0, 1e4), st.floats(1.0, 1e5),
       st.floats(0.0, 1e4), st.integers(1, 4), junk())
def test_online_terms(alpha, tau0, sizes, instances, front, c_in, c_infer, c_out, n_low,
                      garbage):
    """identify_online_terms on an exact line: α and τ0 recovered, the saturation batch the
    largest (the throughput of a line only grows), no excess; without a breakdown the
    GPU share is assumed (one sentence) when K > 1 and the factor is K/(1 + ln K); with a
    perf_analyzer breakdown read by read_server_breakdown the front end and
    γ = infer/(input + infer + output) are the file's (µs → ms), the instance's time per
    input c₁ = min(c/b̄, α) split γ on the GPU, and sharing_factor is max(1, Kγ);
    sharing_factor refuses K < 1 and γ outside [0, 1]; any text: a ServerBreakdown or a
    ValueError."""
    profile = profiles.read_batch_profile(offline_text(line_table(alpha, tau0, sizes)))
    t = online_terms.identify_online_terms(profile, instances)
    assert isinstance(t, online_terms.OnlineTerms)
    assert close(t.alpha_ms, alpha, 1e-6) and abs(t.tau0_ms - tau0) <= 1e-6 * (1 + tau0)
    assert t.saturation_batch == max(sizes) and t.excess_ms <= 1e-9 * (alpha + tau0)
    assert t.gpu_share is None and len(t.assumed) == (instances > 1)
    assert close(t.sharing_factor, instances / (1 + np.log(instances)), 1e-12)
    tally(online_terms.identify_online_terms)
    text = breakdown_text([(n_low, front, c_in, c_infer, c_out), (64, 1.0, 1.0, 1.0, 1.0)])
    b = online_terms.read_server_breakdown(text)
    assert isinstance(b, online_terms.ServerBreakdown) and b.concurrency == n_low
    assert close(b.front_end_ms, front / 1000, 1e-9)
    gamma = c_infer / (c_in + c_infer + c_out)
    assert close(b.gpu_share, gamma, 1e-9)
    tally(online_terms.read_server_breakdown)
    m = online_terms.identify_online_terms(profile, instances, b)
    assert len(m.assumed) == 1 and close(m.transfer_ms, front / 1000, 1e-9)
    # the breakdown splits the line: the instance's c₁ = min(c/b̄, α) per input, γ of it
    # on the GPU, the rest overlapping (b̄ = ⌈N/K⌉, the breakdown run's batch)
    c1 = min((c_in + c_infer + c_out) / 1000 / np.ceil(n_low / instances), alpha)
    assert m.gpu_floor_ms == 0.0 and m.knee_batch is None and m.sharing_factor == 1.0
    assert close(m.alpha_ms, gamma * c1, 1e-6) and close(m.instance_ms_per_input,
                                                         (1 - gamma) * c1, 1e-6)
    assert close(online_terms.sharing_factor(instances, gamma), max(1.0, instances * gamma),
                 1e-9)
    tally(online_terms.sharing_factor)
    raises_naming("instances", online_terms.sharing_factor, 0)
    raises_naming("gpu_share", online_terms.sharing_factor, 2, 1.5)
    raises_naming("concurrency", online_terms.read_server_breakdown,
                  breakdown_text([(64, front, c_in, c_infer, c_out)]))
    read_or_refuse(online_terms.read_server_breakdown, garbage)


@fuzz(ONLINE_CASES // 4)
@given(st.floats(0.0, 5.0), st.floats(0.0, 2.0), st.floats(0.01, 2.0), st.floats(2.5, 60.0),
       st.lists(st.integers(1, 300), min_size=1, max_size=3, unique=True),
       st.integers(1, 3), st.one_of(st.none(), st.integers(1, 128)))
def test_online_knee(front, tx, alpha_g, knee, clients, instances, b_max):
    """predict_online / identify_online_terms on an exact table with a GPU knee,
    L(b) = f + t_x·b + max(α_g·b_s, α_g·b) over b = 1 … 128: the knee is found and each
    term recovered; Little's law; the GPU bounds the throughput (≤ 1/α_g) and each round
    trip holds at least a front end and g0 (X ≤ N/(θ + g0), 5 % slack for a simulated
    mean)."""
    sizes = (1, 2, 4, 8, 16, 32, 64, 128)
    rows = [(b, 1000 * b / (front + tx * b + max(alpha_g * knee, alpha_g * b))) for b in sizes]
    text = offline_text(rows)
    t = online_terms.identify_online_terms(profiles.read_batch_profile(text), instances)
    assert t.knee_batch is not None
    g0 = alpha_g * knee
    assert close(t.alpha_ms, alpha_g, 1e-5) and close(t.gpu_floor_ms, g0, 1e-4)
    assert abs(t.transfer_ms - (front + tx)) <= 1e-4 * (1 + front + tx + g0)
    tally(online_terms.identify_online_terms)
    pred = online.predict_online(text, clients, instances=instances, b_max=b_max)
    assert_no_nan(pred)
    n = np.asarray(clients, dtype=float)
    assert close(n, pred.throughput_per_s * pred.mean_latency_ms / 1000, 1e-9)
    assert np.all(pred.throughput_per_s <= 1.001 * 1000 / alpha_g)
    assert np.all(pred.throughput_per_s <= 1.05 * 1000 * n / (pred.transfer_ms + g0))
    # the line's reading beside the knee's: the same table read without the knee
    line = pred.throughput_without_knee_per_s
    assert line.shape == n.shape and np.all(np.isfinite(line)) and np.all(line > 0)
    plain = online_terms.identify_online_terms(profiles.read_batch_profile(text), instances,
                                               use_knee=False)
    assert plain.knee_batch is None and plain.gpu_floor_ms is None
    tally(online.predict_online)


# ============================================================ engine.measured.requests

REQUEST_TIMES = st.floats(0.0, 1e5, allow_nan=False, allow_infinity=False, allow_subnormal=False)
REQUEST_ROWS = st.lists(st.tuples(REQUEST_TIMES, st.integers(1, 10 ** 6), st.integers(1, 10 ** 5),
                                  REQUEST_TIMES, REQUEST_TIMES), min_size=1, max_size=30)
REQUEST_CSV_NAMES = (("arrival_s", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms"),
                     ("send time (s)", "prompt tokens", "reply tokens", "TTFT (ms)",
                      "end-to-end (ms)"),
                     ("issue_time_s", "prompt_len", "output_len", "ttft_ms", "latency_ms"))


def request_run_text(fmt: str, rows: list, names=REQUEST_CSV_NAMES[0]) -> str:
    """A run of drawn requests (send s, prompt, reply, ttft ms, e2e − ttft ms) in one of
    read_request_records' formats: DistServe's .exp (timestamps agreeing with the times
    to their own rounding), vllm bench --save-detailed JSON, or a CSV."""
    if fmt == "csv":
        return ",".join(names) + "\n" + "".join(
            f"{s!r},{i},{o},{t!r},{t + x!r}\n" for s, i, o, t, x in rows)
    if fmt == "distserve":
        reqs = []
        for s, i, o, t, x in rows:
            first, done = s + t / 1000, s + (t + x) / 1000
            reqs.append({"prompt_len": i, "output_len": o, "issue_time": s,
                         "first_token_time": first, "complete_time": done,
                         "ttft_ms": (first - s) * 1000, "latency_ms": (done - s) * 1000})
        return str(reqs) + "\n{\n\tnum_requests: %d\n}" % len(rows)
    return json.dumps({"completed": len(rows), "input_lens": [r[1] for r in rows],
                       "output_lens": [r[2] for r in rows],
                       "ttfts": [r[3] / 1000 for r in rows],
                       "itls": [[r[4] / 1000] for r in rows],
                       "start_times": [r[0] for r in rows], "errors": [""] * len(rows)})


REQUEST_SAMPLES = tuple(request_run_text(f, [(10.5, 100, 5, 40.0, 80.0), (10.0, 200, 1, 50.0, 0.0),
                                             (13.0, 300, 3, 60.0, 40.0)])
                        for f in ("distserve", "vllm-bench-detailed", "csv"))


@st.composite
def request_junk(draw):
    """Any text or bytes, or a request-records sample (or another reader's) garbled."""
    if draw(st.booleans()):
        return draw(junk())
    text = draw(st.sampled_from(REQUEST_SAMPLES))
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, min(len(text), i + 40)))
    return text[:i] + draw(st.text(max_size=8)) + text[j:]


@fuzz(CASES_EACH // 4)  # up to 30 requests a file (~3 ms a case): 500 cases in ~2 s
@given(st.sampled_from(("distserve", "vllm-bench-detailed", "csv")), REQUEST_ROWS,
       st.sampled_from(REQUEST_CSV_NAMES), request_junk(),
       st.sampled_from(["input", "output", "ttft", "e2e", "send"]), BAD_CELLS)
def test_request_records(fmt, rows, names, garbage, role, bad):
    """read_request_records on drawn runs of each format: sorted by send time from 0, the
    drawn numbers back (to the float rounding of the format's units), tpot_ms NaN exactly
    for one-token replies and (e2e − ttft)/(o − 1) otherwise, first token and finish by
    their definitions, to_frame one row a request; a bad CSV cell is named by its line;
    any text or bytes: a result or a ValueError, never another exception."""
    text = request_run_text(fmt, rows, names)
    r = request_records.read_request_records(text)
    assert isinstance(r, results.RequestRecords) and r.source == fmt
    assert r.n_requests == len(rows)
    assert_no_nan(r, allowed=("tpot_ms",))
    assert r.arrival_s[0] == 0.0 and np.all(np.diff(r.arrival_s) >= 0)
    order = sorted(range(len(rows)), key=lambda k: rows[k][0])          # stable, as the reader
    assert r.input_tokens.tolist() == [rows[k][1] for k in order]
    assert r.output_tokens.tolist() == [rows[k][2] for k in order]
    assert np.allclose(r.ttft_ms, [rows[k][3] for k in order], rtol=1e-9, atol=1e-3)
    assert np.allclose(r.e2e_ms, [rows[k][3] + rows[k][4] for k in order], rtol=1e-9, atol=1e-3)
    several = r.output_tokens >= 2
    assert np.array_equal(np.isnan(r.tpot_ms), ~several)
    assert close(r.tpot_ms[several], (r.e2e_ms - r.ttft_ms)[several]
                 / (r.output_tokens[several] - 1))
    assert close(r.first_token_s, r.arrival_s + r.ttft_ms / 1e3)
    assert close(r.finish_s, r.arrival_s + r.e2e_ms / 1e3)
    assert np.all(r.first_token_s >= r.arrival_s) and np.all(r.finish_s >= r.first_token_s)
    frame = r.to_frame()
    assert len(frame) == len(rows) and list(frame.columns)[:3] == ["arrival_s", "input_tokens",
                                                                   "output_tokens"]
    tally(request_records.read_request_records)
    if fmt == "csv":
        column = ["send", "input", "output", "ttft", "e2e"].index(role)
        lines = text.splitlines()
        k = len(lines) - 1
        cells = lines[k].split(",")
        cells[column] = bad if role in ("input", "output") or bad not in ("0", "inf") else "-1"
        lines[k] = ",".join(cells)
        with pytest.raises(ValueError, match=f"line {k + 1}"):
            request_records.read_request_records("\n".join(lines))
    read_or_refuse(request_records.read_request_records, garbage)


@FUZZ
@given(data=st.one_of(st.binary(max_size=200), st.text(max_size=200)),
       name=st.text(alphabet="abcdefgh_", min_size=1, max_size=12))
def test_decode_text(data, name):
    """Any bytes or text: the text itself (UTF-8, the BOM dropped, no NUL, not blank) or a
    ValueError naming the file's ``name``."""
    try:
        text = parsing.decode_text(data, name)
    except ValueError as err:
        assert str(err).startswith(f"{name}: ")
        return
    finally:
        tally(parsing.decode_text)
    raw = data.decode("utf-8") if isinstance(data, bytes) else data
    assert text == raw.removeprefix("\ufeff") and text.strip() and "\x00" not in text
    try:                                    # the one CSV reading: a table or a named refusal
        table = parsing.read_csv_table(text, name)
    except ValueError as err:
        assert str(err).startswith(f"{name}: ")
    else:
        assert table.rows and all(len(r) == len(table.header) for r in table.rows)
    tally(parsing.read_csv_table)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12)


@FUZZ
@given(value=JSON_VALUES, cut=st.integers(0, 400), junk=st.text(max_size=4),
       depth=st.sampled_from((0,) * 8 + (1, 100)))
def test_read_json_object(value, cut, junk, depth):
    """A JSON text, whole or cut and followed by junk, or inside ``depth`` thousand
    nested lists (100,000: too deep for the library): the object the standard library reads from it, or a ValueError naming
    the line (and the column of a syntax error, the library's) and what was expected."""
    whole = json.dumps(value)
    text = ("[" * (1000 * depth) + whole + "]" * (1000 * depth) if depth
            else whole[:cut] + junk if cut < len(whole) else whole)
    try:
        want = json.loads(text)
    except json.JSONDecodeError as err:
        want = f"line {err.lineno}, column {err.colno}: not JSON ({err.msg})"
    except (ValueError, RecursionError):
        want = "line 1: not JSON (nested too deeply or unreadable)"
    else:
        if not isinstance(want, dict):
            want = f"line 1: expected a summary, got a JSON {type(want).__name__}"
    try:
        got = parsing.read_json_object(text, "a summary", extra_data=" (a hint)")
    except ValueError as err:
        assert isinstance(want, str), (text, err)
        assert str(err).startswith(want.replace("(Extra data)", "(Extra data) (a hint)"))
        assert "expected a summary" in str(err)
    else:
        assert got == want
        tally(parsing.read_json_object)


@FUZZ
@given(value=JSON_VALUES, text=st.text(alphabet="ab\n\r", max_size=40),
       offset=st.integers(-5, 50))
def test_quote_and_line_of(value, text, offset):
    """The message helpers every reader of real files shares (engine.measured and
    engine.llm_serving's step-cost sources): ``quote`` is the value's ``repr`` cut after 60
    characters with an ellipsis; ``line_of`` the 1-based line of a character (an offset
    before the text is line 1, one past its end the last line)."""
    shown, whole = parsing.quote(value), repr(value)
    assert shown == (whole if len(whole) <= 60 else whole[:60] + "\u2026")
    tally(parsing.quote)
    assert parsing.line_of(text, offset) == len(text[:max(offset, 0)].split("\n"))
    tally(parsing.line_of)


FUZZED = {
    parsing: {"decode_text": test_decode_text, "read_csv_table": test_decode_text,
              "read_json_object": test_read_json_object, "quote": test_quote_and_line_of,
              "line_of": test_quote_and_line_of},
    request_records: {"read_request_records": test_request_records},
    profiles: {"read_batch_profile": test_batch_profiles,
               "read_batch_profiles": test_batch_profiles},
    sweeps: {"read_concurrency_sweep": test_concurrency_sweeps,
             "read_concurrency_sweeps": test_concurrency_sweeps},
    traces: {"read_trace": test_traces},
    vllm: {"read_vllm_bench": test_vllm_bench},
    results: {"MeasuredBatchProfile": (test_batch_profiles, "read_batch_profile"),
              "MeasuredConcurrencySweep": (test_concurrency_sweeps, "read_concurrency_sweep"),
              "RequestTrace": (test_traces, "read_trace"),
              "VllmBenchResult": (test_vllm_bench, "read_vllm_bench"),
              "RequestRecords": (test_request_records, "read_request_records")},
    online_terms: {"identify_online_terms": test_online_terms,
                   "read_server_breakdown": test_online_terms,
                   "sharing_factor": test_online_terms,
                   "ServerBreakdown": (test_online_terms, "read_server_breakdown"),
                   "OnlineTerms": (test_online_terms, "identify_online_terms")},
    online: {"predict_online": test_online_prediction,
             "predict_profile_online": test_online_prediction,
             "transfer_time_ms": test_online_prediction,
             "compare_online": test_online_prediction,
             "compare_profile_online": test_online_prediction,
             "compare_model_analyzer": test_model_analyzer_comparison,
             "cycle_latency_quantile_ms": test_model_analyzer_comparison,
             "OnlinePrediction": (test_online_prediction, "predict_online"),
             "OnlineComparison": (test_online_prediction, "compare_online"),
             "ModelAnalyzerComparison": (test_model_analyzer_comparison,
                                         "compare_model_analyzer")},
}
