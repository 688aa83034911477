"""Family "llm_disaggregated": prefill and decode on separate servers (Splitwise,
DistServe, Dynamo): P prefill instances of one candidate and D decode instances of
another (or the same), the KV moving between them over a link; searched: the pair of
candidates (serving the same model), P, D, ``max_num_seqs`` and
``max_num_batched_tokens`` (each side runs the same scheduler settings); held to TTFT,
TPOT and e2e percentiles.

Screening (every configuration), ``engine.llm_serving.approximate_percentiles`` on each
side at its share of the traffic (Poisson): the prefill side as a server whose every
request is one token long (its TTFT is the plan's TTFT); the decode side as a server
whose prompt step costs one decode step (the prefill terms of its cost set to 0) and
whose requests hold prompt + reply tokens; TPOT adds the copy and the decode side's
wait for a seat spread over the reply, (transfer + decode TTFT)/(E[o] − 1); capacity
the smaller side's.  Confirmation: ``engine.llm_serving.simulate_disaggregated`` with
the plan's link; then one prefill and one decode instance fewer are simulated.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
import hashlib
import math

import numpy as np

from ...core.domains import MAX_BATCHED_TOKENS, MAX_NUM_SEQS, SERVING_INSTANCES
from ...llm_serving import (approximate_percentiles, approximate_serving,
                            simulate_disaggregated, transfer_ms)
from .base import Knob, sla_column
from .llm_serving import CONFIRM_RUNS, ServingFamily


class LlmServingDisaggregated(ServingFamily):
    name = "llm_disaggregated"
    title = "LLM serving, prefill/decode disaggregated"
    hardware_axes = 2                      # a prefill and a decode candidate
    cost_weight = 2                        # each side's approximation
    request_weight = 0.012                 # both sides and the link simulated: ~5 µs a request
    knobs = (Knob("max_num_seqs", "Most requests running at once (max_num_seqs)", "requests",
                  MAX_NUM_SEQS, (64, 128, 256),
                  "vLLM's max_num_seqs on each side."),
             Knob("max_num_batched_tokens", "Token budget per step (max_num_batched_tokens)",
                  "tokens", MAX_BATCHED_TOKENS, (8192,),
                  "vLLM's max_num_batched_tokens on each side: the prompt tokens a prefill "
                  "step may compute."),
             Knob("prefill_instances", "Prefill instances", "servers", SERVING_INSTANCES,
                  (1, 2, 3, 4), "Servers computing prompts and the first token."),
             Knob("decode_instances", "Decode instances", "servers", SERVING_INSTANCES,
                  (1, 2, 3, 4), "Servers decoding the replies."))
    scale_knobs = ("prefill_instances", "decode_instances")
    more_servers_words = "add instances to the ranges"
    pricing = ("approximate: each side's birth-death chain at its share of the traffic "
               "(Poisson), percentiles from its tails; the cheapest confirmed by "
               "simulating both sides and the link")

    def default_fields(self) -> dict:
        """The colocated family's default question, prefill and decode on separate
        servers: 1 request/s of Llama-2-70B, the Azure conversation trace's prompts and
        replies, 99 % within 60 s end to end, 1-4 instances a side, InfiniBand NDR."""
        base = super().presets()
        ids = [p for p in ("splitwise_a100_llama2_70b_tp4", "splitwise_a100_llama2_70b_tp8",
                           "splitwise_h100_llama2_70b_tp4", "splitwise_h100_llama2_70b_tp8")
               if p in base]
        return dict(workload=self.name, rate_per_s=1.0, sla=(("e2e", 99.0, 60_000.0),),
                        hardware=tuple(base[p] for p in ids),
                        prompt_law="azure_2023_conv_prompt",
                        token_law="azure_2023_conv_output", max_num_seqs=(64, 128),
                        max_num_batched_tokens=(8192,), prefill_instances=(1, 2, 3),
                        decode_instances=(1, 2, 3), link_gb_per_s=50.0)

    def point_columns(self) -> list[str]:
        return ["prefill_hardware", "decode_hardware"]

    def candidate_columns(self) -> list[str]:
        return ["hardware"]

    def setting_columns(self) -> list[str]:
        return ["prefill_hardware", "decode_hardware", *(k.name for k in self.knobs)]

    def grid(self, spec) -> list[dict]:
        """Every pair of candidates serving the same model (prefill, decode) × the
        knobs."""
        points = []
        for hp in spec.hardware:
            for hd in spec.hardware:
                if hp.model != hd.model:
                    continue
                for s in spec.max_num_seqs:
                    for b in spec.max_num_batched_tokens:
                        for p in spec.prefill_instances:
                            for d in spec.decode_instances:
                                points.append(dict(prefill_hardware=hp.name,
                                                   decode_hardware=hd.name, max_num_seqs=s,
                                                   max_num_batched_tokens=b,
                                                   prefill_instances=p, decode_instances=d))
        return points

    def candidates(self, spec) -> list[str]:
        return [pair_name(hp.name, hd.name) for hp in spec.hardware for hd in spec.hardware
                if hp.model == hd.model]

    def uses(self, table, name: str):
        return table["hardware"] == name

    def confirmed_words(self, spec) -> str:
        return (f"confirmed by simulating both sides and the KV link ({CONFIRM_RUNS} runs of "
                f"{self.confirm_requests(spec):,} requests, {spec.link_gb_per_s:g} GB/s)")

    def fleet_text(self, row) -> str:
        p, d = int(row["prefill_instances"]), int(row["decode_instances"])
        return (f"{p} prefill instance{'s' if p != 1 else ''} of {row['prefill_hardware']} "
                f"and {d} decode instance{'s' if d != 1 else ''} of {row['decode_hardware']} "
                f"(disaggregated)")

    def price(self, spec, *, arrivals=None, workload=None, prefill_hardware, decode_hardware,
              max_num_seqs, max_num_batched_tokens, prefill_instances,
              decode_instances) -> dict:
        wl = workload if workload is not None else self.workload_for(spec)
        pre = _side(spec, wl, "prefill", prefill_hardware, int(max_num_seqs),
                    int(max_num_batched_tokens))
        dec = _side(spec, wl, "decode", decode_hardware, int(max_num_seqs),
                    int(max_num_batched_tokens))
        i = spec.prefill_instances.index(int(prefill_instances))
        j = spec.decode_instances.index(int(decode_instances))
        hp, hd = spec.hardware_named(prefill_hardware), spec.hardware_named(decode_hardware)
        n_p, n_d = int(prefill_instances), int(decode_instances)
        copy = float(transfer_ms(wl.mean_prompt(), hp.kv_bytes_per_token, spec.link_gb_per_s,
                                 spec.link_latency_ms))
        e_out = wl.mean_reply()
        values = {}
        for metric, q, _ in spec.sla:
            c = sla_column(metric, q)
            if metric == "ttft":
                values[c] = pre["values"][c][i]
            elif metric == "tpot":
                values[c] = dec["values"][c][j] + (copy + dec["ttft"][c][j]) / max(e_out - 1,
                                                                                   1.0)
            else:
                values[c] = pre["ttft"][c][i] + copy + dec["values"][c][j]
        cap = min(pre["cap"] * n_p, dec["cap"] * n_d)
        rate = spec.rate_per_s
        power = ((hp.busy_power_w * n_p + hd.busy_power_w * n_d),
                 (hp.idle_power_w * n_p + hd.idle_power_w * n_d))
        cost_h = hp.price_usd_per_hour * n_p + hd.price_usd_per_hour * n_d
        row = self.judged(spec, values=values, cap=cap, rate=rate, power=power,
                          fits=pre["fits"] and dec["fits"], cost_h=cost_h)
        row.update(hardware=pair_name(prefill_hardware, decode_hardware),
                   mean_ttft_ms=pre["means"][0][i], mean_tpot_ms=dec["means"][1][j],
                   mean_e2e_ms=pre["means"][0][i] + copy + dec["means"][2][j],
                   gpus=hp.gpus * n_p + hd.gpus * n_d, capacity_per_s=cap,
                   method="approximate" + ("" if arrivals is None else " (as Poisson)"))
        return row

    def kv_detail(self, spec, row) -> str:
        wl = self.workload_for(spec)
        hp = spec.hardware_named(row["prefill_hardware"])
        hd = spec.hardware_named(row["decode_hardware"])
        if hp.kv_cache_tokens is not None and wl.longest_prompt() > hp.kv_cache_tokens:
            return (f"the prefill side's KV cache holds {hp.kv_cache_tokens:,} tokens, less "
                    f"than the longest prompt ({wl.longest_prompt():,} tokens)")
        return (f"the decode side's KV cache holds {hd.kv_cache_tokens:,} tokens, less than "
                f"the longest request's prompt and reply ({wl.longest():,} tokens)")

    def floor_text(self, spec, row, metric) -> str:
        if metric != "tpot":
            return ""
        cost = spec.hardware_named(row["decode_hardware"]).step_cost
        one = cost.base_ms + cost.decode_ms_per_seq
        target = next(t for m, _, t in spec.sla if m == "tpot")
        return (f"; one decode step alone takes {one:.3g} ms, above the "
                f"{target:g} ms target: no load meets it" if one > target else "")

    def simulate(self, spec, row, arrivals, *, workload=None, n_requests, seed):
        """Both sides and the link of ``row`` simulated once: a ``ServingResult``."""
        wl = workload if workload is not None else self.workload_for(spec)
        hp = spec.hardware_named(row["prefill_hardware"])
        hd = spec.hardware_named(row["decode_hardware"])
        inputs, outputs = wl.draw(n_requests, seed)
        load = dict(rate_per_s=spec.rate_per_s) if arrivals is None else dict(arrivals=arrivals)
        return simulate_disaggregated(
            hp.step_cost, hd.step_cost,
            prefill_scheduler=self.scheduler_of(hp, row["max_num_seqs"],
                                           row["max_num_batched_tokens"]),
            decode_scheduler=self.scheduler_of(hd, row["max_num_seqs"],
                                          row["max_num_batched_tokens"]),
            prefill_instances=int(row["prefill_instances"]),
            decode_instances=int(row["decode_instances"]),
            kv_bytes_per_token=hp.kv_bytes_per_token, link_gb_per_s=spec.link_gb_per_s,
            link_latency_ms=spec.link_latency_ms, input_tokens=inputs, output_tokens=outputs,
            n_requests=n_requests, seed=seed, **load)

    def confirm(self, spec, row, arrivals, *, workload=None, **change) -> dict:
        n = self.confirm_requests(spec)
        cfg = {**dict(row), **change}
        key = [spec.seed, 1730, int(cfg["max_num_seqs"]), int(cfg["max_num_batched_tokens"]),
               int(cfg["prefill_instances"]), int(cfg["decode_instances"]),
               int(hashlib.sha256(str(cfg["hardware"]).encode()).hexdigest()[:8], 16)]
        runs = [self.simulate(spec, cfg, arrivals, workload=workload, n_requests=n,
                              seed=int(s.generate_state(1)[0]))
                for s in np.random.SeedSequence(key).spawn(CONFIRM_RUNS)]
        return self.estimates(spec, runs)

    def neighbours(self, spec, best) -> list[dict]:
        """One prefill instance fewer, one decode instance fewer (where there are two)."""
        out = []
        for k in self.scale_knobs:
            if int(best[k]) > 1:
                out.append({k: int(best[k]) - 1})
        return out


def pair_name(prefill: str, decode: str) -> str:
    """The words for a (prefill, decode) pair of candidates."""
    return f"prefill {prefill} → decode {decode}"


@lru_cache(maxsize=512)
def _side(spec, wl, side: str, hardware: str, max_num_seqs: int,
          max_num_batched_tokens: int) -> dict:
    """One side priced for every instance count searched: the SLA columns and the
    approximation's (TTFT, TPOT, e2e) columns at rate/P (prefill) or rate/D (decode),
    the means, the capacity of one instance, whether the requests fit."""
    hw = spec.hardware_named(hardware)
    sched = spec.family.scheduler_of(hw, max_num_seqs, max_num_batched_tokens)
    counts = spec.prefill_instances if side == "prefill" else spec.decode_instances
    rates = spec.rate_per_s / np.asarray(counts, float)
    if side == "prefill":
        cost, outputs = hw.step_cost, _ones(wl)
        need = wl.longest_prompt()
    else:
        c = hw.step_cost
        cost = replace(c, prefill_ms_per_token=0.0, prefill_ms_per_token_sq=0.0,
                       prefill_base_ms=c.base_ms, frontend_ms=0.0)
        outputs = wl.replies
        need = wl.longest()
    fits = hw.kv_cache_tokens is None or need <= hw.kv_cache_tokens
    inf = np.full(rates.size, math.inf)
    if not fits:
        cols = {sla_column(m, q): inf for m, q, _ in spec.sla}
        return dict(values=cols, ttft=cols, means=(inf, inf, inf), cap=0.0, fits=False)
    # every SLA row's percentile of each metric: the sides combine them per metric
    values, ttft = {}, {}
    cap = math.nan
    for q in sorted({q for _, q, _ in spec.sla}):        # one call per percentile
        ap = approximate_percentiles(cost, sched, input_tokens=wl.prompts,
                                     output_tokens=outputs, rate_per_s=rates, percentile=q)
        for metric, q_row, _ in spec.sla:
            if q_row != q:
                continue
            c = sla_column(metric, q)
            values[c] = np.asarray(getattr(ap, f"{'ttft' if side == 'prefill' else metric}_ms"),
                                   float)
            ttft[c] = np.asarray(ap.ttft_ms, float)
        cap = ap.rate_limit_per_s
    means = approximate_serving(cost, sched, input_tokens=wl.prompts, output_tokens=outputs,
                                rate_per_s=rates)
    return dict(values=values, ttft=ttft, cap=cap, fits=True,
                means=(np.asarray(means.ttft_ms), np.asarray(means.tpot_ms),
                       np.asarray(means.e2e_ms)))


def _ones(wl):
    """Replies of one token: a prefill instance's requests end with their first token."""
    return np.ones_like(wl.prompts) if wl.paired else 1


FAMILY = LlmServingDisaggregated()
__all__ = ["LlmServingDisaggregated", "FAMILY", "pair_name"]
