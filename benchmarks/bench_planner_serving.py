"""Capacity planner, LLM serving families: a 10,000-configuration colocated plan end to
end (the approximation prices every configuration, the cheapest five are confirmed by
simulating the whole fleet, then the one-replica-fewer check), in-process and on local
processes, the goal <= 10 s each; the same table on a Dask LocalCluster of 2 workers
(its start-up timed apart); and a disaggregated plan of about 1,000 configurations.

The grid: the ten serving presets (Llama-2-70B at TP 2/4/8 on A100 and H100, BLOOM-176B,
OPT-13B, Qwen2.5-7B) × max_num_seqs 32-512 × budgets 1,024-8,192 × 1-50 replicas =
10,000, at 10 requests/s of the Azure conversation trace's prompts and replies, p95 TTFT
<= 2 s and p95 TPOT <= 100 ms, Poisson arrivals, least-outstanding dispatch.
"""
from __future__ import annotations

import time

from benchmarks.bench_planner import identical, planner_dask_executor
from benchmarks.harness import Row
from engine import planner

GOAL_S = 10.0


def serving_spec(**changes) -> planner.PlanSpec:
    presets = planner.hardware_presets("llm_serving")
    base = dict(workload="llm_serving", rate_per_s=10.0,
                sla=(("ttft", 95.0, 2000.0), ("tpot", 95.0, 100.0)),
                hardware=tuple(presets[k] for k in sorted(presets)),
                prompt_law="azure_2023_conv_prompt", token_law="azure_2023_conv_output",
                max_num_seqs=(32, 64, 128, 256, 512),
                max_num_batched_tokens=(1024, 2048, 4096, 8192),
                replicas=tuple(range(1, 51)), confirm=5)
    return planner.PlanSpec(**{**base, **changes})


def timed(spec, executor, repeat: int = 2):
    """(fastest wall s of ``repeat`` plans, the plan)."""
    best, plan = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        plan = planner.capacity_plan(spec, executor=executor)
        best = min(best, time.perf_counter() - t0)
    return best, plan


def run() -> list[Row]:
    spec = serving_spec()
    n = spec.n_configurations
    planner.capacity_plan(serving_spec(replicas=(1, 2), hardware=spec.hardware[:1]),
                          executor="serial")              # compile the loops once
    t_serial, serial = timed(spec, "serial")
    t_pool, pool = timed(spec, None)
    tables = {"in-process": serial.table, "local processes": pool.table}
    print(f"\nserving plan of {n:,} configurations: {serial.answer}")
    rows = [Row(f"serving plan of {n:,} configs, in-process", t_serial, "s", "goal s", GOAL_S,
                GOAL_S / t_serial, f"<= {GOAL_S:g} s", t_serial <= GOAL_S),
            Row(f"serving plan of {n:,} configs, local processes", t_pool, "s", "in-process s",
                t_serial, t_serial / t_pool, f"<= {GOAL_S:g} s", t_pool <= GOAL_S)]
    try:
        t0 = time.perf_counter()
        executor = planner_dask_executor()
    except ImportError as err:
        print(f"Dask row skipped: {err}")
    else:
        try:
            planner.capacity_plan(serving_spec(replicas=(1,), hardware=spec.hardware[:1],
                                               confirm=0), executor=executor)
            t_up = time.perf_counter() - t0
            t_dask, dask = timed(spec, executor, repeat=1)
        finally:
            executor.shutdown()
        tables["Dask LocalCluster x2"] = dask.table
        rows.append(Row(f"serving plan of {n:,} configs, Dask x2", t_dask, "s", "in-process s",
                        t_serial, t_serial / t_dask, "report", None))
        rows.append(Row("  Dask start-up + first import", t_up, "s", "(excluded)", 0.0, 0.0,
                        "report", None))
    differ = identical(tables)
    print(f"serving plan tables {' / '.join(tables)}: "
          f"{'identical' if not differ else 'DIFFER: ' + differ}")
    rows.append(Row(f"  serving tables identical on {len(tables)} executors",
                    len(tables) - bool(differ), "agree", "executors", len(tables), 0.0,
                    "identical", not differ))
    dis = serving_spec(workload="llm_disaggregated",
                       hardware=tuple(h for h in spec.hardware if "Llama-2-70B" in h.name),
                       max_num_seqs=(64, 128, 256), max_num_batched_tokens=(2048, 8192),
                       prefill_instances=(1, 2, 3, 4), decode_instances=(1, 2, 3, 4, 5, 6))
    t_dis, dplan = timed(dis, "serial", repeat=1)
    print(f"disaggregated plan of {dis.n_configurations:,} configurations "
          f"({len(dplan.table):,} pairs serving one model): {dplan.answer}")
    rows.append(Row(f"disaggregated plan of {len(dplan.table):,} configs, in-process", t_dis,
                    "s", "colocated s", t_serial, t_serial / t_dis, "report", None))
    return rows
