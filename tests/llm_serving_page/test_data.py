"""The LLM serving page's memoised engine calls: the load sweep and the search for the
largest load meeting a latency target, checked against the simulator itself."""
from __future__ import annotations

import pytest

from app_pages.llm_serving import data
from app_pages.llm_serving.inputs import Scenario, Slo
from app_pages.llm_serving.workload_input import PromptChoice, Workload
from engine import llm_serving as ls
from ui import token_law_input as tli

PRESET = "splitwise_h100_llama2_70b_tp4"


@pytest.fixture(scope="module")
def scenario():
    p = data.presets()[PRESET]
    return Scenario(p.cost, p.scheduler(),
                    Workload(PromptChoice(("measured", "azure_2023_conv_prompt")),
                             tli.measured("azure_2023_conv_output")))


def test_sweep_loads_are_below_capacity_and_tpot_grows(scenario):
    cap = data.capacity(scenario).rate_per_s
    sw = data.sweep(scenario)
    assert sw.rate.tolist() == pytest.approx([f * cap for f in data.SWEEP])
    tpot = sw.stat("tpot_ms", 50)
    assert tpot[-1] > tpot[0]
    assert (sw.stat("ttft_ms", 99) >= sw.stat("ttft_ms", 50)).all()


def test_slo_search_brackets_the_largest_load(scenario):
    slo = Slo(1000.0, 100.0, 90)
    found = data.slo_rate(scenario, slo)
    assert 0 < found.rate_per_s < found.fails_at_per_s <= data.capacity(scenario).rate_per_s
    assert data.meets(data.sim_point(scenario, found.rate_per_s), slo)
    assert not data.meets(data.sim_point(scenario, found.fails_at_per_s), slo)
    cap = data.capacity(scenario).rate_per_s
    assert found.fails_at_per_s - found.rate_per_s <= 0.25 * cap / 2 ** 4 + 1e-9
    tighter = data.slo_rate(scenario, Slo(500.0, 60.0, 90))
    assert tighter.rate_per_s < found.rate_per_s


def test_the_run_at_a_load_keeps_its_timeline(scenario):
    run = data.at_load(scenario, 1.0)
    assert run.timeline is not None and 0 < run.timeline.time_s.size <= data.TIMELINE_STEPS
    assert run.n_requests + run.warmup_requests == data.N_AT


def test_approximation_is_unstable_past_capacity(scenario):
    ap = data.approximation(scenario)
    cap = data.capacity(scenario).rate_per_s
    assert (ap.stable == (ap.rate_per_s < cap)).all()
    assert ap.rate_per_s[-1] == pytest.approx(data.axis_top(cap))


def test_a_trace_draws_whole_requests():
    import numpy as np
    from engine.llm_serving import TraceTokens
    prompts, replies = np.arange(1, 11) * 100, np.arange(1, 11)
    t = TraceTokens("upload:x", "t.csv (uploaded)", 10, prompts, replies)
    inp, out = data._trace_draw(t, 500)
    assert (inp == out * 100).all() and set(out) <= set(replies)
    p = data.presets()[PRESET]
    s = Scenario(p.cost, p.scheduler(), Workload(trace=t))
    assert data.capacity(s).rate_per_s == pytest.approx(
        ls.max_rate_per_s(p.cost, p.scheduler(), prompts, replies))
