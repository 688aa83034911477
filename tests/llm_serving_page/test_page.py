"""The LLM serving page, driven headless with Streamlit's AppTest."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests import pagetest
from tests.input_cases import GARBAGE_KINDS, garbage, markdown_escaped
from tests.pagetest import charts, metric, trace

from app_pages.llm_serving import data, inputs
from engine import llm_serving as ls

PAGE = str(Path(__file__).resolve().parents[2] / pagetest.script("llm_serving"))
MS = re.compile(r"^[\d,.]+ ms$")


def open_page(query: dict | None = None):
    return pagetest.open_page(PAGE, query)


def test_default_page_answers_with_units_and_no_error():
    at = open_page()
    assert not at.error, [e.value for e in at.error]
    for label in ("TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "End-to-end p99"):
        assert MS.match(metric(at, label)), (label, metric(at, label))
    assert metric(at, "Capacity").endswith(" requests/s")
    assert metric(at, "Largest load meeting the target (p90)").endswith(" requests/s")
    assert metric(at, "KV cache peak use").endswith(" %")
    assert metric(at, "Requests preempted").endswith(" %")
    # the simulation (with its 95 % CI) beside the approximation
    table = next(m.value for m in at.markdown if "mean, approximation" in m.value)
    assert re.search(r"\| TTFT \| [\d,.]+ \| [\d,.]+ \| [\d,.]+ \| [\d,.]+ ± [\d,.]+ \| "
                     r"[\d,.]+ \|", table)
    ttft, tpot = charts(at)
    assert ttft["layout"]["yaxis"]["title"]["text"] == "TTFT (ms)"
    assert tpot["layout"]["xaxis"]["title"]["text"] == "load (requests/s)"
    for name in ("simulated p50", "simulated p90", "simulated p99",
                 "approximation (mean, no simulation)"):
        assert trace(ttft, name)["y"], name
    mean = trace(ttft, "simulated mean ±95% CI")
    assert len(mean["error_y"]["array"]) == len(data.SWEEP)


def test_the_answer_is_the_engine_run_at_this_load():
    at = open_page()
    s = _scenario(at)
    run = data.at_load(s, at.session_state["rate"])
    assert float(metric(at, "TPOT p99").split()[0].replace(",", "")) == pytest.approx(
        run.tpot_ms.p99, rel=1e-3)
    cap = ls.capacity_limit(s.cost, s.scheduler, *s.workload.tokens())
    assert float(metric(at, "Capacity").split()[0].replace(",", "")) == pytest.approx(
        cap.rate_per_s, rel=1e-3)


def _scenario(at) -> inputs.Scenario:
    """The page's scenario rebuilt from its session state (what the sidebar returns)."""
    from app_pages.llm_serving import workload_input as wl
    from ui import token_law_input as tli
    ss = at.session_state
    cost = ls.StepCost(**{f.key: float(ss[f.key]) for f in inputs.COST_FIELDS})
    sch = ls.Scheduler(max_num_seqs=int(ss["max_num_seqs"]),
                       max_num_batched_tokens=int(ss["max_num_batched_tokens"]),
                       kv_cache_tokens=None if ss["kv_unbounded"] else int(ss["kv_cache_tokens"]),
                       block_size=int(ss["block_size"]), chunked_prefill=ss["chunked_prefill"],
                       prefix_caching=ss["prefix_caching"])
    pid = ss["prompt_law"]
    prompt = wl.PromptChoice(("measured", pid), "")
    return inputs.Scenario(cost, sch, wl.Workload(prompt, tli.measured(ss["law"])))


def test_moving_the_load_changes_the_answer_and_the_marker():
    at = open_page()
    before = metric(at, "TTFT p99")
    at.slider(key="rate").set_value(4.5).run()
    assert not at.exception
    assert metric(at, "TTFT p99") != before
    assert metric(at, "Load").startswith("4.5 requests/s")
    point = charts(at)[0]["data"][-1]
    assert point["x"] == [pytest.approx(4.5)] and point["name"].startswith("now: p99 ")


def test_a_load_past_capacity_says_unstable_with_the_limit():
    at = open_page({"rate": "7"})
    cap = metric(at, "Capacity")
    err = next(e.value for e in at.error if e.value.startswith("Unstable"))
    assert f"carries at most {cap}" in err and "the KV cache" in err
    assert metric(at, "TTFT p99") == f"unstable (> {cap})"
    assert charts(at)                                  # the curves over load still drawn


@pytest.mark.parametrize("query,says", [
    ({"prompt_law": "fixed", "prompt_fixed": "200000"}, "can never run"),
    ({"kv_cache_tokens": "8"}, "at least one block of 16 tokens"),
    ({"chunked_prefill": "false", "prompt_law": "fixed", "prompt_fixed": "4096"},
     "exceeds max_num_batched_tokens"),
    ({k: "0" for k in ("base_ms", "prefill_base_ms", "prefill_ms_per_token",
                       "prefill_ms_per_token_sq", "decode_ms_per_seq",
                       "context_ms_per_token")}, "no limit"),
])
def test_inputs_that_cannot_be_served_say_why(query, says):
    at = open_page(query)
    assert any(says in e.value for e in at.error), [e.value for e in at.error]


def test_a_budget_of_zero_in_a_link_is_refused_with_a_warning():
    at = open_page({"max_num_batched_tokens": "0"})
    assert any(w.value.startswith("Link parameter `max_num_batched_tokens`")
               and "below the minimum 1" in w.value for w in at.warning)
    assert at.session_state["max_num_batched_tokens"] == inputs.BUDGET.default
    assert charts(at)


def test_share_link_round_trip():
    query = {"preset": "splitwise_h100_llama2_70b_tp4", "rate": "1.5", "ttft_slo_ms": "800",
             "tpot_slo_ms": "80", "slo_pct": "95", "view": "Timeline", "max_num_seqs": "48"}
    at = open_page(query)
    link = pagetest.link(at)
    assert {k: link[k] for k in ("preset", "ttft_slo_ms", "slo_pct", "view", "max_num_seqs")} == {
        "preset": "splitwise_h100_llama2_70b_tp4", "ttft_slo_ms": "800", "slo_pct": "95",
        "view": "Timeline", "max_num_seqs": "48"}
    assert set(link) >= {f.key for f in inputs.FIELDS} - {"arrivals_scv", "arrivals_trace"}
    again = open_page(link)
    for key in ("TTFT p50", "TPOT p99", "Capacity", "Largest load meeting the target (p95)"):
        assert metric(again, key) == metric(at, key), key
    assert again.session_state["view"] == "Timeline"
    assert charts(again) == charts(at)


def test_a_link_naming_a_preset_loads_its_numbers():
    """The home page's example gives only the preset: its step cost and scheduler come
    with it (a typed number in the link wins)."""
    pid = "splitwise_h100_llama2_70b_tp4"
    p = data.presets()[pid]
    at = open_page({"preset": pid, "max_num_seqs": "32"})
    assert at.session_state["base_ms"] == pytest.approx(p.cost.base_ms)
    assert at.session_state["kv_cache_tokens"] == p.kv_cache_tokens
    assert at.session_state["chunked_prefill"] is p.chunked_prefill
    assert at.session_state["max_num_seqs"] == 32


def test_choosing_a_preset_loads_its_numbers():
    at = open_page()
    pid = "distserve_vllm_a100_opt_13b"
    at.selectbox(key="preset").set_value(pid).run()
    p = data.presets()[pid]
    assert at.session_state["decode_ms_per_seq"] == pytest.approx(p.cost.decode_ms_per_seq)
    assert at.session_state["max_num_seqs"] == p.max_num_seqs
    assert not at.session_state["chunked_prefill"]
    assert pagetest.link(at)["base_ms"] == inputs.BASE.format(p.cost.base_ms)


def test_timeline_view_draws_one_run_step_by_step():
    at = open_page({"view": "Timeline"})
    fig = charts(at)[0]
    names = [t["name"] for t in fig["data"]]
    assert names == ["running", "waiting", "KV cache in use", "preemptions so far"]
    kv = np.asarray(trace(fig, "KV cache in use")["y"], float)
    assert 0 <= kv.min() and kv.max() <= 100
    assert fig["layout"]["yaxis2"]["title"]["text"] == "KV cache in use (%)"


def test_formulas_view():
    at = open_page({"view": "Formulas"})
    assert at.latex and any("Notation" in m.value for m in at.markdown)
    assert any("Scheduler rules" in m.value for m in at.markdown)


def _records_csv(cost, scheduler, n=200, rate=1.0) -> bytes:
    """A run of the simulator itself, written as a measured run's CSV."""
    run = ls.simulate_serving(cost, scheduler, input_tokens=np.full(n, 300),
                              output_tokens=np.arange(n) % 50 + 2, rate_per_s=rate,
                              n_requests=n, seed=3, return_records=True).records
    rows = ["send_s,prompt_tokens,reply_tokens,ttft_ms,e2e_ms"]
    rows += [f"{float(a)!r},{i},{o},{float(t)!r},{float(e)!r}" for a, i, o, t, e in zip(
        run.arrival_s, run.input_tokens, run.output_tokens, run.ttft_ms, run.e2e_ms)]
    return ("\n".join(rows) + "\n").encode()


def test_model_vs_measurement_replays_an_uploaded_run():
    """A run of the model itself, uploaded as a measurement, is predicted exactly."""
    at = open_page({"view": "Model vs measurement"})
    assert any(i.value.startswith("Upload a run") for i in at.info)
    s = _scenario(at)
    at.file_uploader(key="measured_records_upload").set_value(
        ("run.csv", _records_csv(s.cost, s.scheduler), "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe[-1].value
    assert list(table["metric"].unique()) == ["TTFT", "TPOT", "e2e"]
    assert np.abs(table["error_pct"].to_numpy(float)).max() < 1e-3
    fig = charts(at)[0]
    assert fig["layout"]["xaxis"]["title"]["text"] == "measured (ms)"
    assert [t["name"] for t in fig["data"]][-1] == "prediction = measurement"
    at.file_uploader(key="measured_records_upload").set_value(
        ("bad.csv", b"send_s,prompt_tokens\n1,2\n", "text/csv")).run()
    assert any(e.value.startswith("Run not used") for e in at.error)


def test_model_vs_measurement_of_distserves_vllm_run():
    from tests.real_data import real_file
    text = real_file("distserve_opt13b_a100/vllm-100-1.exp")
    at = open_page({"view": "Model vs measurement", "preset": "distserve_vllm_a100_opt_13b"})
    at.file_uploader(key="measured_records_upload").set_value(
        ("vllm-100-1.exp", text.encode(), "text/plain")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe[-1].value
    ttft = table[(table["metric"] == "TTFT") & (table["statistic"] == "mean")]
    assert ttft["measured_ms"].iloc[0] == pytest.approx(161.2, abs=0.1)     # the file's own
    assert any("100 requests of vllm-100-1.exp" in c.value.replace("\\", "")
               for c in at.caption)


def test_calibrating_on_a_low_load_run_fills_the_step_cost():
    """DistServe's 1 request/s run: its offline profile replays it optimistic; the
    overhead fitted to the run, applied, predicts it within 25 % (the engine's
    calibration checked in depth in tests/llm_serving/test_real_runs.py)."""
    from tests.real_data import real_file
    text = real_file("distserve_opt13b_a100/vllm-100-1.exp")
    at = open_page({"view": "Model vs measurement", "preset": "distserve_vllm_a100_opt_13b"})
    at.file_uploader(key="measured_records_upload").set_value(
        ("vllm-100-1.exp", text.encode(), "text/plain")).run()
    before = at.dataframe[-1].value
    tpot = before[(before["metric"] == "TPOT") & (before["statistic"] == "p50")]
    assert tpot["error_pct"].iloc[0] < -15                       # the profile alone
    at.toggle(key="calibrate_on").set_value(True).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Fitted on vllm-100-1.exp" in c.value.replace("\\", "") for c in at.caption)
    base = at.session_state["base_ms"]
    at.button(key="calibrate_apply").click().run()
    assert at.session_state["base_ms"] > base                    # a step's overhead added
    assert float(pagetest.link(at)["base_ms"]) == pytest.approx(at.session_state["base_ms"])
    after = at.dataframe[-1].value
    assert np.abs(after["error_pct"].to_numpy(float)).max() < 25


def test_a_tighter_target_gives_a_lower_load():
    loose = open_page({"ttft_slo_ms": "2000", "tpot_slo_ms": "150"})
    tight = open_page({"ttft_slo_ms": "500", "tpot_slo_ms": "50"})
    key = "Largest load meeting the target (p90)"
    value = lambda at: float(metric(at, key).split()[0].replace(",", ""))   # noqa: E731
    assert value(tight) < value(loose)
    never = open_page({"ttft_slo_ms": "1", "tpot_slo_ms": "1"})
    assert metric(never, key).startswith("none (fails even at ")


def test_pin_baseline_overlays_and_tabulates():
    at = open_page()
    at.button(key="pin_llm_serving").click().run()
    at.number_input(key="max_num_seqs").set_value(64).run()
    assert not at.exception
    assert trace(charts(at)[0], "baseline (pinned), p99")["y"]
    assert len(at.dataframe) == 1


def test_non_poisson_arrivals_are_named_and_the_approximation_says_poisson():
    at = open_page({"arrivals": "bursty", "arrivals_scv": "4"})
    ttft = charts(at)[0]
    assert trace(ttft, "simulated p99, bursty arrivals (SCV 4)")["y"]
    assert trace(ttft, "approximation (mean, no simulation, Poisson arrivals)")
    assert any("Poisson" in c.value for c in at.caption)


def _trace_csv(n=60, bad=False) -> bytes:
    rows = ["timestamp_s,input_tokens,output_tokens"]
    rng = np.random.default_rng(1)
    for i in range(n):
        rows.append(f"{0.5 * i:.3f},{int(rng.integers(100, 2000))},{int(rng.integers(2, 400))}")
    if bad:
        rows.append("nonsense,1,2")
    return ("\n".join(rows) + "\n").encode()


def test_trace_upload_gives_prompts_and_replies_together():
    at = open_page({"prompt_law": "trace"})
    assert any("No trace uploaded yet" in i.value for i in at.info)
    at.file_uploader(key="serving_trace_upload").set_value(("mine.csv", _trace_csv(),
                                                             "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("prompts and replies of mine" in c.value for c in at.caption)
    good = metric(at, "TTFT p50")
    at.file_uploader(key="serving_trace_upload").set_value(("bad.csv", _trace_csv(bad=True),
                                                             "text/csv")).run()
    assert not at.exception
    assert any(e.value.startswith("Trace not used") for e in at.error)
    assert metric(at, "TTFT p50") == good                 # the last valid trace kept


def test_step_cost_from_a_csv_of_step_times_goes_into_the_inputs():
    cost = ls.StepCost(base_ms=12.0, prefill_base_ms=8.0, prefill_ms_per_token=0.05,
                       prefill_ms_per_token_sq=1e-6, decode_ms_per_seq=0.3,
                       context_ms_per_token=2e-4)
    rows = ["prompt_tokens,prompt_tokens_sq,decoding,context_tokens,step_ms"]
    for p, d, k in [(512, 0, 0), (1024, 0, 0), (2048, 0, 0), (4096, 0, 0), (0, 8, 8000),
                    (0, 32, 20000), (0, 64, 90000), (256, 16, 30000), (0, 128, 50000)]:
        rows.append(f"{p},{p * p},{d},{k},{float(cost.step_ms(p, p * p, d, k)):.6f}")
    at = open_page()
    at.selectbox(key="cost_source").set_value("csv").run()
    at.file_uploader(key="cost_upload_csv").set_value(
        ("steps.csv", ("\n".join(rows) + "\n").encode(), "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.button(key="cost_apply").click().run()
    assert at.session_state["base_ms"] == pytest.approx(12.0, rel=1e-4)
    assert at.session_state["decode_ms_per_seq"] == pytest.approx(0.3, rel=1e-4)
    assert float(pagetest.link(at)["prefill_ms_per_token"]) == pytest.approx(0.05, rel=1e-4)
    at.file_uploader(key="cost_upload_csv").set_value(
        ("bad.csv", b"prompt_tokens,step_ms\nx,1\n", "text/csv")).run()
    assert any(e.value.startswith("Step cost not fitted") for e in at.error)


@pytest.mark.parametrize("run", range(3))
def test_garbage_link_values_fall_back_with_a_warning(run):
    """Every field gets a garbage value at once (each run a different kind per field)."""
    fields = inputs.FIELDS
    kinds = [GARBAGE_KINDS[(i + 2 * run) % len(GARBAGE_KINDS)] for i in range(len(fields))]
    at = open_page({f.key: garbage(f, kind) for f, kind in zip(fields, kinds)})
    warnings = [w.value for w in at.warning]
    for field in fields:
        assert at.session_state[field.key] == field.default, field.key
        named = [w for w in warnings if w.startswith(f"Link parameter `{field.key}` = ")]
        assert named, field.key
        assert markdown_escaped(named[0].split(" = ", 1)[1].split(" ignored ")[0])


def test_model_vs_measurement_of_vllm_bench_runs():
    from tests.real_data import REAL_DATA, real_file
    folder = "vllm_bench_rtx4090_qwen2.5-7b"
    real_file(f"{folder}/p1_bf16_4096_c1.json")                      # or skip
    files = [(p.name, p.read_bytes(), "application/json")
             for p in sorted((REAL_DATA / folder).glob("p1_bf16_4096_c*.json"))]
    at = open_page({"view": "Model vs measurement"})
    at.radio(key="measured_kind").set_value("vllm_bench").run()
    at.file_uploader(key="measured_bench_upload").set_value(files).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe[-1].value
    assert sorted(table["max_concurrency"]) == [1, 4, 8]
    want = ls.compare_vllm_bench([f[1] for f in files], kv_cache_tokens=110_896,
                                 max_num_batched_tokens=2048, max_num_seqs=256, block_size=16)
    assert table["predicted_mean_ttft_ms"].to_numpy() == pytest.approx(
        want["predicted_mean_ttft_ms"].round(3).to_numpy(), abs=1e-3)
    assert abs(table["mean_tpot_ms_error_pct"]).max() < 15
    fig = charts(at)[0]
    assert {t["name"] for t in fig["data"]} >= {"mean TTFT", "p99 TTFT", "mean TPOT"}
