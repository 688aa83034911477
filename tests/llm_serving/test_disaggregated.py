"""Prefill/decode disaggregation: exact cases derived by hand, and DistServe's
disaggregated run (OPT-13B: prefill on 2 GPUs, decode on 1) replayed request by request
with DistServe's own step fit."""
import numpy as np
import pytest

from engine.llm_serving import (Scheduler, StepCost, simulate_disaggregated,
                                step_cost_from_distserve, transfer_ms)
from engine.measured import read_request_records
from tests.real_data import real_file

PREFILL = StepCost(base_ms=5.0, prefill_base_ms=4.0, prefill_ms_per_token=0.05,
                   prefill_ms_per_token_sq=1e-5, frontend_ms=3.0)
DECODE = StepCost(base_ms=10.0, decode_ms_per_seq=0.5, context_ms_per_token=1e-3,
                  frontend_ms=99.0)          # the decode side has no front end: ignored
WHOLE = Scheduler(max_num_seqs=64, max_num_batched_tokens=8192, chunked_prefill=False,
                  prefix_caching=False)
LINK = dict(kv_bytes_per_token=1e6, link_gb_per_s=10.0, link_latency_ms=0.5)


def test_one_request_alone_is_prompt_step_copy_and_decode_steps():
    """TTFT = front end + the prompt step; then the copy (1 MB a token over 10 GB/s:
    0.1 ms a token, + 0.5 ms) and o − 1 decode steps of one request."""
    l, o = 400, 6
    r = simulate_disaggregated(PREFILL, DECODE, prefill_scheduler=WHOLE,
                               decode_scheduler=WHOLE, input_tokens=l, output_tokens=o,
                               arrival_s=[0.0], return_records=True, **LINK)
    ttft = 3.0 + 4.0 + 0.05 * l + 1e-5 * l * l
    copy = float(transfer_ms(l, 1e6, 10.0, 0.5))
    assert copy == pytest.approx(0.1 * l + 0.5)
    decodes = sum(10.0 + 0.5 + 1e-3 * (l + g) for g in range(1, o))
    assert r.records.ttft_ms[0] == pytest.approx(ttft, rel=1e-12)
    assert r.records.e2e_ms[0] == pytest.approx(ttft + copy + decodes, rel=1e-12)
    assert r.tpot_ms.mean == pytest.approx((copy + decodes) / (o - 1), rel=1e-12)


def test_copies_queue_on_the_link_one_after_the_other():
    """Two prompts of 200 tokens finish in one prefill step (3 + 4 + 0.05·400 + 1e-5·2·200²
    = 27.8 ms) and share the link: request 0 lands a copy (20.5 ms) later, request 1 two
    copies later, during request 0's last decode step; so request 1 decodes alone after
    it."""
    l = 200
    r = simulate_disaggregated(PREFILL, DECODE, prefill_scheduler=WHOLE,
                               decode_scheduler=WHOLE, input_tokens=l, output_tokens=3,
                               arrival_s=[0.0, 0.0], return_records=True, **LINK)
    rec = r.records
    first = 3.0 + 4.0 + 0.05 * 2 * l + 1e-5 * 2 * l * l
    copy = 0.1 * l + 0.5

    def step(g):
        return 10.0 + 0.5 + 1e-3 * (l + g)
    finish0 = first + copy + step(1) + step(2)
    assert first + 2 * copy < finish0                      # request 1 lands during it
    finish1 = finish0 + step(1) + step(2)
    np.testing.assert_allclose(rec.first_token_s * 1e3, [first, first], rtol=1e-12)
    np.testing.assert_allclose(rec.finish_s * 1e3, [finish0, finish1], rtol=1e-12)


def test_one_token_replies_end_on_the_prefill_side():
    r = simulate_disaggregated(PREFILL, DECODE, prefill_scheduler=WHOLE,
                               decode_scheduler=WHOLE, input_tokens=50, output_tokens=1,
                               arrival_s=[0.0, 0.1], return_records=True, **LINK)
    assert np.array_equal(r.records.finish_s, r.records.first_token_s)


def test_more_prefill_instances_cut_ttft_under_load():
    kw = dict(prefill_scheduler=WHOLE, decode_scheduler=WHOLE, input_tokens=1500,
              output_tokens=20, rate_per_s=9.0, n_requests=3000, seed=3, **LINK)
    one = simulate_disaggregated(PREFILL, DECODE, **kw)
    two = simulate_disaggregated(PREFILL, DECODE, prefill_instances=2, **kw)
    assert two.ttft_ms.mean < 0.8 * one.ttft_ms.mean


@pytest.mark.parametrize("kwargs, match", [
    (dict(prefill_instances=0), "prefill_instances"),
    (dict(decode_instances=1.5), "decode_instances"),
    (dict(link_gb_per_s=0.0), "link_gb_per_s"),
    (dict(kv_bytes_per_token=-1), "kv_bytes_per_token"),
    (dict(decode_scheduler=Scheduler(kv_cache_tokens=256)), "decode side"),
    (dict(prefill_scheduler=Scheduler(kv_cache_tokens=256)), "prefill side"),
    (dict(decode_scheduler="vllm"), "decode_scheduler"),
])
def test_bad_input_is_a_clear_message(kwargs, match):
    args = dict(prefill_scheduler=WHOLE, decode_scheduler=WHOLE, input_tokens=300,
                output_tokens=10, arrival_s=[0.0, 1.0], **LINK)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        simulate_disaggregated(PREFILL, DECODE, **args)


def test_distserves_disaggregated_run_within_15_percent():
    """DistServe's run of the 300 requests at 3 requests/s: its context instance on 2
    GPUs (whole prompts first come first served, at most 128 requests and 32,768 tokens
    a step, about 10,200 KV blocks), its decoding instance on 1 GPU (up to 1,024
    requests, about 4,100 blocks), KV over NVLink.  The step cost is DistServe's own fit
    (TP 2 prefill, TP 1 decode, the small-batch decode piece) plus the overhead its own
    simulator adds (2 ms + 1e-4 ms per context token a step) and the ~10 ms front end its
    fit lacks (the data README): nothing fitted to this run.  TTFT and TPOT p50/p90
    within 15 %."""
    folder = "distserve_opt13b_a100"
    run = read_request_records(real_file(f"{folder}/distserve-c21d11-300-3.exp"))
    profile = real_file(f"{folder}/profiler-a100-80g.distserve.json")

    def served(tp, front):
        c = step_cost_from_distserve(profile, "facebook/opt-13b", tp, decode="small").cost
        return StepCost(
            base_ms=c.base_ms + 2.0, prefill_base_ms=c.prefill_base_ms + 2.0,
            prefill_ms_per_token=c.prefill_ms_per_token + 1e-4,
            prefill_ms_per_token_sq=c.prefill_ms_per_token_sq,
            decode_ms_per_seq=c.decode_ms_per_seq,
            context_ms_per_token=c.context_ms_per_token + 1e-4, frontend_ms=front)

    prefill = Scheduler(max_num_seqs=128, max_num_batched_tokens=32_768,
                        kv_cache_tokens=10_200 * 16, chunked_prefill=False,
                        prefix_caching=False)
    decode = Scheduler(max_num_seqs=1024, max_num_batched_tokens=10 ** 8,
                       kv_cache_tokens=4_100 * 16, chunked_prefill=False,
                       prefix_caching=False)
    r = simulate_disaggregated(served(2, 10.0), served(1, 0.0), prefill_scheduler=prefill,
                               decode_scheduler=decode, kv_bytes_per_token=819_200,
                               link_gb_per_s=300.0, input_tokens=run.input_tokens,
                               output_tokens=run.output_tokens, arrival_s=run.arrival_s,
                               return_records=True)
    two = run.output_tokens >= 2
    for measured, predicted in ((run.ttft_ms, r.records.ttft_ms),
                                (run.tpot_ms[two], r.records.tpot_ms[two])):
        for q in (50, 90):
            want, got = np.percentile(measured, q), np.percentile(predicted, q)
            assert got == pytest.approx(want, rel=0.15), (q, want, got)
