"""AIConfigurator's fleet size against the fleet simulated, on one step cost.

The question: Llama-3.1-8B on one H100 per replica (vLLM, TP 1), prompts of 1,024 and
replies of 256 tokens, 20 requests/s, TTFT p95 ≤ 500 ms and TPOT p95 ≤ 30 ms.

* The step cost: fitted to AIConfigurator's step times (``step_cost_from_aiconfigurator``)
  when the package is installed, else ``STAND_IN``: the same fit's numbers typed here.
* (a) AIConfigurator's rule on that cost (``aiconfigurator_replicas``: ⌈rate / one
  replica's mean-value rate at its best batch⌉, with vLLM's 0.8 ms per layer of dispatch
  in TTFT, as AIConfigurator adds), and, with the package, its own ``cli_recommend``
  (its aggregated TP 1 answer; the fewest-GPU answer beside);
* (b) each answer's fleet simulated whole (``simulate_fleet``, least-outstanding
  dispatch, Poisson arrivals, 12,000 requests after 1,000 of warm-up) with TTFT and TPOT
  p50/p95 and whether both p95 meet the limits; the smallest replica count meeting them
  in simulation, searched upward from 1.  The server is the one AIConfigurator's
  generator writes for its answer (aiconfigurator/generator/rule_plugin/vllm.rule:
  max_num_seqs 512 below a batch of 512, max_num_batched_tokens = batch + prompt +
  1,500), chunked prefill (vLLM V1), no prefix caching, the KV cache of an 80 GiB H100 at
  vLLM's utilization 0.92 after 14.96 GiB of BF16 weights.
* Then the same at rates just under 1, 2 and 4 times the rule's per-replica rate, where
  ⌈·⌉ leaves the least headroom.

``planner_answer`` is the hook for the capacity planner's serving family (None until
it is written).  Rows report; nothing here is a pass/fail goal.
"""
from __future__ import annotations

import numpy as np

import importlib.util
import logging
import math
import time

from benchmarks.harness import Row
from engine.llm_serving import Scheduler, StepCost, kv_capacity_tokens, simulate_fleet
from engine.llm_serving.aiconfigurator import aiconfigurator_replicas, step_cost_from_aiconfigurator

MODEL, SYSTEM, BACKEND, TP = "meta-llama/Meta-Llama-3.1-8B", "h100_sxm", "vllm", 1
RATE_PER_S, INPUT_TOKENS, OUTPUT_TOKENS = 20.0, 1024, 256
TTFT_P95_MS, TPOT_P95_MS = 500.0, 30.0
MAX_BATCH = 512                # AIConfigurator's sweep_agg default max_batch_size
LAYERS = 32                    # Llama-3.1-8B
DISPATCH_MS = 0.8 * LAYERS     # vllm_backend._prefill_dispatch_overhead_ms
N_REQUESTS, WARMUP, SEED = 12_000, 1_000, 1

# step_cost_from_aiconfigurator("meta-llama/Meta-Llama-3.1-8B", "h100_sxm", "vllm") with
# aiconfigurator 0.12.0 (its vllm 0.24.0 database for h100_sxm, TP 1, default grids):
# R² prefill 0.992, decode 0.999.  Typed here so the benchmark runs without the package.
STAND_IN = StepCost(base_ms=6.3617, prefill_base_ms=4.1191, prefill_ms_per_token=0.017311,
                    prefill_ms_per_token_sq=9.7188e-07, decode_ms_per_seq=0.011554,
                    context_ms_per_token=4.1144e-05, frontend_ms=0.0,
                    label="stand-in: the AIConfigurator 0.12.0 fit of Llama-3.1-8B, "
                          "h100_sxm, vllm 0.24.0, TP 1, typed in")


def have_aiconfigurator() -> bool:
    return importlib.util.find_spec("aiconfigurator") is not None


def step_cost() -> tuple[StepCost, str]:
    """(the cost, where it comes from)."""
    if not have_aiconfigurator():
        return STAND_IN, f"{STAND_IN.label} (AIConfigurator not installed)"
    fit = step_cost_from_aiconfigurator(MODEL, SYSTEM, BACKEND, tensor_parallel=TP)
    r2 = ", ".join(f"R² {k} {v:.3f}" for k, v in fit.r2.items())
    return fit.cost, f"{fit.source} ({r2})"


def server(batch: int) -> Scheduler:
    """The vLLM server AIConfigurator's generator writes for an aggregated answer at
    ``batch`` (rule_plugin/vllm.rule), on an 80 GiB H100."""
    kv = kv_capacity_tokens(gpu_memory_gib=80, weights_gib=8.03e9 * 2 / 2 ** 30, layers=LAYERS,
                            kv_heads=8, head_dim=128, gpu_memory_utilization=0.92)
    return Scheduler(max_num_seqs=512 if batch < 512 else 2 * batch,
                     max_num_batched_tokens=batch + INPUT_TOKENS + 1500, kv_cache_tokens=kv,
                     chunked_prefill=True, prefix_caching=False)


def rule_answer(cost: StepCost, rate_per_s: float = RATE_PER_S):
    return aiconfigurator_replicas(rate_per_s, cost=cost, input_tokens=INPUT_TOKENS,
                                   output_tokens=OUTPUT_TOKENS, max_batch=MAX_BATCH,
                                   ttft_ms=TTFT_P95_MS, tpot_ms=TPOT_P95_MS,
                                   dispatch_overhead_ms=DISPATCH_MS)


def recommend_answer() -> dict | None:
    """AIConfigurator's own ``cli_recommend`` for the question: its aggregated TP 1 row
    (replicas, batch, TTFT, TPOT, rate per replica) and its fewest-GPU pick."""
    if not have_aiconfigurator():
        return None
    from aiconfigurator.cli.api import cli_recommend

    logging.disable(logging.WARNING)
    try:
        result = cli_recommend(MODEL, SYSTEM, target_request_rate=RATE_PER_S, backend=BACKEND,
                               isl=INPUT_TOKENS, osl=OUTPUT_TOKENS, ttft=TTFT_P95_MS,
                               tpot=TPOT_P95_MS)
    except Exception as err:                            # noqa: BLE001 (report, go on)
        return {"error": f"{type(err).__name__}: {err}"[:200]}
    finally:
        logging.disable(logging.NOTSET)
    agg = result.best_configs.get("agg")
    if agg is None or agg.empty or not (agg["tp"] == TP).any():
        return {"error": "no aggregated TP 1 row in its answer"}
    row = agg[agg["tp"] == TP].iloc[0]
    best = {mode: int(df.iloc[0]["total_gpus_needed"])
            for mode, df in result.best_configs.items() if df is not None and not df.empty}
    return {"replicas": int(row["replicas_needed"]), "batch": int(row["bs"]),
            "ttft_ms": float(row["ttft"]), "tpot_ms": float(row["tpot"]),
            "rate_per_s": float(row["seq/s"]), "fewest_gpus": best}


def planner_answer(*, cost: StepCost, scheduler: Scheduler, rate_per_s: float,
                   input_tokens: int, output_tokens: int, ttft_p95_ms: float,
                   tpot_p95_ms: float) -> int | None:
    """The capacity planner's answer on the same server (the colocated serving family,
    one candidate of this cost and scheduler, replicas 1-64, least-outstanding dispatch,
    confirmed by whole-fleet simulation and the one-fewer check): its replica count."""
    from engine.planner import PlanSpec, ServingHardware, capacity_plan
    from engine.planner.families.llm_serving import workload_from_pairs

    hw = ServingHardware(name=f"{MODEL} on {SYSTEM}", price_usd_per_hour=1.0, step_cost=cost,
                         kv_cache_tokens=scheduler.kv_cache_tokens,
                         kv_bytes_per_token=1.0, block_size=scheduler.block_size)
    spec = PlanSpec(workload="llm_serving", rate_per_s=rate_per_s,
                    sla=(("ttft", 95.0, ttft_p95_ms), ("tpot", 95.0, tpot_p95_ms)),
                    hardware=(hw,), max_num_seqs=(scheduler.max_num_seqs,),
                    max_num_batched_tokens=(scheduler.max_num_batched_tokens,),
                    replicas=tuple(range(1, 65)), token_trace="fixed lengths", confirm=1,
                    dispatch="least_outstanding")
    fixed = workload_from_pairs(np.full(2, input_tokens), np.full(2, output_tokens),
                                "fixed lengths")
    plan = capacity_plan(spec, workload=fixed, executor="serial")
    return None if plan.best is None else int(plan.best["replicas"])


def simulate(cost: StepCost, scheduler: Scheduler, replicas: int, rate_per_s: float):
    return simulate_fleet(cost, scheduler, replicas=replicas, dispatch="least_outstanding",
                          input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS,
                          rate_per_s=rate_per_s, n_requests=N_REQUESTS, seed=SEED,
                          warmup_requests=WARMUP)


def meets(result) -> bool:
    return result.ttft_ms.p95 <= TTFT_P95_MS and result.tpot_ms.p95 <= TPOT_P95_MS


def smallest_meeting(cost, scheduler, rate_per_s, cache, limit=64):
    """The fewest replicas whose simulated fleet meets both p95 limits (from 1 up)."""
    for r in range(1, limit + 1):
        if r not in cache:
            cache[r] = simulate(cost, scheduler, r, rate_per_s)
        if meets(cache[r]):
            return r
    return None


def _line(name, replicas, res, note=""):
    if res is None:
        return f"{name:34} {'-' if replicas is None else replicas:>8}   {note}"
    ok = "yes" if meets(res) else "NO"
    return (f"{name:34} {replicas:>8} {res.ttft_ms.p50:>9.0f} {res.ttft_ms.p95:>9.0f} "
            f"{res.tpot_ms.p50:>9.1f} {res.tpot_ms.p95:>9.1f} {ok:>5}   {note}")


def run() -> list[Row]:
    t0 = time.perf_counter()
    cost, where = step_cost()
    rule = rule_answer(cost)
    if rule.replicas is None:
        raise RuntimeError(f"AIConfigurator's rule finds no batch meeting the limits on "
                           f"{cost.formula()}")
    sched = server(rule.batch_size)
    aic = recommend_answer()
    planned = planner_answer(cost=cost, scheduler=sched, rate_per_s=RATE_PER_S,
                             input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS,
                             ttft_p95_ms=TTFT_P95_MS, tpot_p95_ms=TPOT_P95_MS)
    runs = {}

    def fleet(r):
        if r not in runs:
            runs[r] = simulate(cost, sched, r, RATE_PER_S)
        return runs[r]

    print(f"\nAIConfigurator bridge: {MODEL} on {SYSTEM} ({BACKEND}, TP {TP}), prompts "
          f"{INPUT_TOKENS:,}, replies {OUTPUT_TOKENS}, {RATE_PER_S:g} requests/s, TTFT p95 ≤ "
          f"{TTFT_P95_MS:g} ms, TPOT p95 ≤ {TPOT_P95_MS:g} ms")
    print(f"step cost: {where}\n  {cost.formula()}")
    print(f"server (AIConfigurator's generator for batch {rule.batch_size}): "
          f"{sched.describe()}")
    print(f"fleets simulated: least-outstanding dispatch, Poisson, {N_REQUESTS:,} requests "
          f"({WARMUP:,} warm-up), seed {SEED}\n")
    head = (f"{'answer':34} {'replicas':>8} {'TTFT p50':>9} {'TTFT p95':>9} {'TPOT p50':>9} "
            f"{'TPOT p95':>9} {'meets':>5}   (ms)")
    print(head)
    print("-" * len(head))
    print(_line("AIConfigurator rule on this cost", rule.replicas, fleet(rule.replicas),
                f"batch {rule.batch_size}: {rule.replica_rate_per_s:.4g}/s per replica, "
                f"TTFT {rule.ttft_ms:.4g}, TPOT {rule.tpot_ms:.4g} as means"))
    if aic is None:
        print(_line("AIConfigurator recommend", None, None, "not installed"))
    elif "error" in aic:
        print(_line("AIConfigurator recommend", None, None, aic["error"]))
    else:
        fewest = ", ".join(f"{m} {g}" for m, g in aic["fewest_gpus"].items())
        print(_line("AIConfigurator recommend (agg TP 1)", aic["replicas"],
                    fleet(aic["replicas"]),
                    f"batch {aic['batch']}: {aic['rate_per_s']:.4g}/s per replica, TTFT "
                    f"{aic['ttft_ms']:.4g}, TPOT {aic['tpot_ms']:.4g} as means; its fewest "
                    f"GPUs: {fewest}"))
    if planned is None:
        print(_line("planner (serving family)", None, None, "hook planner_answer: not yet"))
    else:
        print(_line("planner (serving family)", planned, fleet(planned)))
    least = smallest_meeting(cost, sched, RATE_PER_S, runs)
    print(_line("smallest meeting it, simulated", least, runs.get(least),
                f"searched from 1 (fleets simulated: {len(runs)})"))

    print(f"\nnear the rule's ceiling: rates just under k × its {rule.replica_rate_per_s:.4g}"
          f"/s per replica")
    head2 = (f"{'rate /s':>8} {'rule':>5} {'TTFT p95':>9} {'TPOT p95':>9} {'meets':>5} "
             f"{'smallest simulated':>19} {'planner':>8}")
    print(head2)
    print("-" * len(head2))
    near, simulated = [], len(runs)
    for k in (1, 2, 4):
        rate = round(0.99 * k * rule.replica_rate_per_s, 1)
        r_rule = rule_answer(cost, rate).replicas
        cache = {}
        at_rule = cache[r_rule] = simulate(cost, sched, r_rule, rate)
        small = smallest_meeting(cost, sched, rate, cache)
        simulated += len(cache)
        planned_k = planner_answer(cost=cost, scheduler=sched, rate_per_s=rate,
                                   input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS,
                                   ttft_p95_ms=TTFT_P95_MS, tpot_p95_ms=TPOT_P95_MS)
        near.append((rate, r_rule, small, planned_k))
        print(f"{rate:>8.4g} {r_rule:>5} {at_rule.ttft_ms.p95:>9.0f} {at_rule.tpot_ms.p95:>9.1f} "
              f"{'yes' if meets(at_rule) else 'NO':>5} {small if small else '> 64':>19} "
              f"{planned_k if planned_k else '-':>8}")
    seconds = time.perf_counter() - t0
    print()
    # ratio: the answer over the smallest count meeting the limits in simulation (below 1:
    # too few replicas; above 1: more than needed)
    rows = [Row("aiconfigurator: rule's replicas, 20/s", rule.replicas, "replicas",
                "smallest simulated", least or math.nan, rule.replicas / (least or math.nan),
                "report: answer/sim", None)]
    if aic is not None and "error" not in aic:
        rows.append(Row("aiconfigurator: recommend's replicas, 20/s", aic["replicas"],
                        "replicas", "smallest simulated", least or math.nan,
                        aic["replicas"] / (least or math.nan), "report: answer/sim", None))
    if planned is not None:
        rows.append(Row("aiconfigurator: planner's replicas, 20/s", planned, "replicas",
                        "smallest simulated", least or math.nan, planned / (least or math.nan),
                        "report: answer/sim", None))
    for rate, r_rule, small, planned_k in near:
        rows.append(Row(f"aiconfigurator: rule's replicas, {rate:g}/s", r_rule, "replicas",
                        "smallest simulated", small or math.nan, r_rule / (small or math.nan),
                        "report: answer/sim", None))
        if planned_k is not None:
            rows.append(Row(f"aiconfigurator: planner's replicas, {rate:g}/s", planned_k,
                            "replicas", "smallest simulated", small or math.nan,
                            planned_k / (small or math.nan), "report: answer/sim", None))
    rows.append(Row("aiconfigurator: whole benchmark", seconds, "s", "fleets simulated",
                    simulated, 1.0, "report", None))
    return rows
