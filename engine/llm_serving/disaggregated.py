"""Prefill/decode disaggregation (Splitwise, DistServe, Dynamo): P prefill instances run
prompt-only steps and emit the first token; the KV then moves over a link to one of D
decode instances, which run continuous batching of decodes.

``simulate_disaggregated`` serves the requests through the two sides in turn, each
instance on the compiled loop of ``simulate_serving``:

1. Prefill: requests go to the P instances in turn (round robin by send order); each
   instance runs its own scheduler and KV cache, a request's reply there being its first
   token.  The prompt's blocks are freed when its prompt step ends (the copy's time is
   not held on the prefill side: no back-pressure from the decode side).
2. The copy: bytes per token × prompt / link bandwidth + link latency, one copy at a time
   on each prefill instance's link (first come first served).
3. Decode: the requests, in the order their copies land, go to the D instances in turn;
   a request is admitted when its instance has a seat and blocks for its prompt and next
   token (it waits otherwise); an instance short of blocks preempts its newest request,
   which then recomputes its prompt and tokens on the decode instance (vLLM's
   recomputation).

Times in ms inside, s in records; TTFT is the prefill side's (send → first token), TPOT
the decode side's with the copy and the wait for a decode seat in it (vLLM's TPOT =
(e2e − TTFT)/(output − 1)).  Derivation and the check against DistServe's run:
docs/models/llm_serving.md.
"""
from __future__ import annotations

from dataclasses import replace
import math

import numpy as np

from ..core.domains import KV_BYTES, LINK_LATENCY, LINK_RATE, SERVING_INSTANCES
from .cost import StepCost
from .result import ServingRecords
from .scheduler import Scheduler
from .sim import _ro, _serve_requests, _Totals, _workload, check_fits

__all__ = ["simulate_disaggregated", "LINK_GB_PER_S", "transfer_ms"]

# One direction of a link, GB/s (10⁹ bytes/s): what a KV copy between two GPUs gets.
LINK_GB_PER_S = {
    "NVLink 3 (A100 SXM, 600 GB/s both ways)": 300.0,
    "NVLink 4 (H100 SXM, 900 GB/s both ways)": 450.0,
    "InfiniBand HDR (200 Gb/s)": 25.0,
    "InfiniBand NDR (400 Gb/s)": 50.0,
    "PCIe 4.0 x16 (about 25 GB/s in practice)": 25.0,
    "PCIe 5.0 x16 (about 50 GB/s in practice)": 50.0,
}


def transfer_ms(prompt_tokens, kv_bytes_per_token, link_gb_per_s, link_latency_ms=0.0):
    """Time of one KV copy (ms): bytes per token × prompt / bandwidth + latency;
    broadcasts."""
    b = KV_BYTES.check(kv_bytes_per_token)
    g = LINK_RATE.check(link_gb_per_s)
    lat = LINK_LATENCY.check(link_latency_ms)
    return (np.asarray(prompt_tokens, dtype=float) * b / (g * 1e9) * 1e3 + lat)[()]


def _instances(value, name) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be {SERVING_INSTANCES.describe()}, got {value!r}")
    return int(SERVING_INSTANCES.check(value, name))


def simulate_disaggregated(prefill_cost: StepCost, decode_cost: StepCost, *,
                           prefill_scheduler: Scheduler, decode_scheduler: Scheduler,
                           prefill_instances=1, decode_instances=1, kv_bytes_per_token,
                           link_gb_per_s, link_latency_ms=0.0, input_tokens, output_tokens,
                           rate_per_s=None, arrivals=None, arrival_s=None, n_requests=None,
                           seed=None, return_records=False):
    """Serve requests on P prefill and D decode instances (see the module's docstring);
    a ``ServingResult`` like ``simulate_serving``'s.  ``prefill_cost``'s ``frontend_ms``
    is the client's path to the prefill side; the decode side has none.  ``kv_peak_
    fraction`` and ``mean_running`` are the decode side's (the busiest instance's peak;
    the running requests summed over instances)."""
    for name, value, kind in (("prefill_cost", prefill_cost, StepCost),
                              ("decode_cost", decode_cost, StepCost),
                              ("prefill_scheduler", prefill_scheduler, Scheduler),
                              ("decode_scheduler", decode_scheduler, Scheduler)):
        if not isinstance(value, kind):
            raise ValueError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
    n_p = _instances(prefill_instances, "prefill_instances")
    n_d = _instances(decode_instances, "decode_instances")
    copy = transfer_ms(1.0, kv_bytes_per_token, link_gb_per_s, 0.0)        # ms per token
    latency = float(LINK_LATENCY.check(link_latency_ms, "link_latency_ms"))
    arr_ms, _, l, o, w = _workload(input_tokens=input_tokens, output_tokens=output_tokens,
                                   rate_per_s=rate_per_s, arrivals=arrivals,
                                   arrival_s=arrival_s, n_requests=n_requests, seed=seed)
    n = l.size
    ones = np.ones(n, np.int64)
    try:
        check_fits(prefill_scheduler, l, ones)
    except ValueError as err:
        raise ValueError(f"prefill side: {err}") from None
    try:
        check_fits(decode_scheduler, l, o)
    except ValueError as err:
        raise ValueError(f"decode side: {err}") from None
    # 1. prefill: round robin by send order; the first token ends a request there
    start = np.full(n, np.nan)
    first = np.full(n, np.nan)
    pre_p = np.zeros(n, np.int64)
    cached = np.zeros(n, np.int64)
    for i in range(n_p):
        sel = np.arange(i, n, n_p)
        if sel.size == 0:
            continue
        run = _serve_requests(prefill_cost, prefill_scheduler, arr_ms[sel], l[sel], ones[sel])
        start[sel], first[sel] = run.start_ms, run.first_ms
        pre_p[sel], cached[sel] = run.preemptions, run.cached_tokens
    # 2. the copies, one at a time on each prefill instance's link
    landed = np.empty(n)
    for i in range(n_p):
        sel = np.arange(i, n, n_p)
        free = -math.inf
        for j in sel[np.argsort(first[sel], kind="stable")]:
            begin = max(first[j], free)
            free = landed[j] = begin + l[j] * copy + latency
    # 3. decode: in landing order, round robin over the instances
    finish = first.copy()
    pre_d = np.zeros(n, np.int64)
    totals = _Totals()
    decoding = np.flatnonzero(o >= 2)
    order = decoding[np.argsort(landed[decoding], kind="stable")]
    quiet = replace(decode_cost, frontend_ms=0.0)
    for i in range(n_d):
        sel = order[i::n_d]
        if sel.size == 0:
            continue
        run = _serve_requests(quiet, decode_scheduler, landed[sel], l[sel], o[sel],
                              ready=l[sel], first_in_ms=first[sel])
        finish[sel], pre_d[sel] = run.finish_ms, run.preemptions
        totals.add(run)                 # every request's gaps (warm-up too): ITL only
    records = ServingRecords(
        arrival_s=_ro(arr_ms / 1e3), first_token_s=_ro(first / 1e3),
        finish_s=_ro(finish / 1e3), input_tokens=_ro(l), output_tokens=_ro(o),
        preemptions=_ro(pre_p + pre_d), cached_tokens=_ro(cached),
        scheduled_s=_ro(start / 1e3))
    return totals.result(
        records, warmup=w, queue_s=(start - arr_ms) / 1e3, scheduler=decode_scheduler,
        keep_records=return_records, span_ms=max(totals.end, float(np.max(finish))),
        notes=(f"{n_p} prefill and {n_d} decode instance(s); KV copies of "
               f"{copy * 1e3:.3g} µs a token + {latency:g} ms",))
