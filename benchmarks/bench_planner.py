"""Capacity planner: configurations priced per second on each executor, and how the time
of a plan grows with its grid.

* Pricing rate: one GPU-workload grid (the default plan's ResNet-50 T4 / V100 / A100
  candidates at 2,000 images/s, wider b_max, queue-delay and replica ranges: 3,240
  configurations, Poisson arrivals, ``confirm=0`` so pricing is all there is) priced
  in-process (``executor="serial"``, the baseline), on local processes (the default
  pool, one worker per core, its start-up included as each plan pays it), on a pool kept
  warm across plans, and on a Dask LocalCluster of 2 single-threaded worker processes
  (``engine.sweep.dask_executor``; the cluster's start-up and its workers' first import of
  the engine are timed apart and left out of the rate).  The tables must be identical.
* The first local pool of a process also starts the fork server (which imports the
  engine once for every later pool): timed apart, before the rest.
* Plan time against grid size: end-to-end ``capacity_plan`` (pricing, ranking, the
  default 5 confirmations) of about 1,000 / 2,500 / 5,000 / 10,000 configurations on
  local processes and in-process; the goal is a 10,000-configuration exact plan in
  <= 10 s.  The time after the last configuration is priced (ranking, confirmation,
  fronts) is reported apart: a fixed cost.
* A simulation-priced plan: the ~1,000-configuration grid with arrivals from the MMPP-2
  fitted to the Azure code trace, against the Poisson plan of the same grid.

The scaling table and a Mermaid chart of it (for the README) are printed before the
results table.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import time

import pandas as pd

from benchmarks.harness import Row
from engine import planner

RATE_GRID = dict(b_max=(1, 2, 4, 8, 16, 32, 64, 128, 256), queue_delay_ms=(0.0, 1.0, 2.0),
                 replicas=tuple(range(1, 41)))                       # 3 x 9 x 3 x 40 = 3,240
B_WIDE = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
SCALING = [   # grids of about 1,000, 2,500, 5,000 and 10,000 configurations (3 candidates)
    dict(b_max=(1, 2, 4, 8, 16, 32, 64, 128), queue_delay_ms=(0.0,),
         replicas=tuple(range(1, 43))),                              # 1,008
    dict(b_max=RATE_GRID["b_max"], queue_delay_ms=(0.0, 1.0), replicas=tuple(range(1, 47))),
    dict(b_max=RATE_GRID["b_max"], queue_delay_ms=(0.0, 0.5, 1.0, 2.0),
         replicas=tuple(range(1, 47))),                              # 4,968
    dict(b_max=B_WIDE, queue_delay_ms=(0.0, 0.5, 1.0, 2.0), replicas=tuple(range(1, 53))),
]                                                                    # 2,484 and 9,984
GOAL_CONFIGS, GOAL_S = 10_000, 10.0
DASK_WORKERS = 2
TINY = dict(b_max=(64,), queue_delay_ms=(0.0,), replicas=(1, 2))    # 6 configurations


def spec_with(grid: dict, **changes) -> planner.PlanSpec:
    """The default GPU plan with the ranges of ``grid`` (and ``changes``)."""
    return planner.default_spec("gpu").with_(**grid, **changes)


def timed_plan(spec: planner.PlanSpec, executor) -> tuple[float, float, planner.CapacityPlan]:
    """(wall s, s after the last configuration was priced, plan) of one ``capacity_plan``."""
    priced = []

    def progress(done: int, total: int) -> None:
        if done == total:
            priced.append(time.perf_counter())

    t0 = time.perf_counter()
    plan = planner.capacity_plan(spec, executor=executor, progress=progress)
    end = time.perf_counter()
    return end - t0, end - (priced[-1] if priced else t0), plan


def best_plan(spec, executor, repeat: int):
    """The fastest of ``repeat`` plans (the tables are the same each time)."""
    return min((timed_plan(spec, executor) for _ in range(repeat)), key=lambda r: r[0])


def identical(tables: dict) -> str:
    """"" when every table equals the first, else what differs."""
    names = list(tables)
    for name in names[1:]:
        try:
            pd.testing.assert_frame_equal(tables[names[0]], tables[name])
        except AssertionError as err:
            return f"{names[0]} vs {name}: {str(err).splitlines()[0]}"
    return ""


def pricing_rows(repeat: int = 2) -> list[Row]:
    """Configurations priced per second on each executor, the same grid, one run."""
    spec = spec_with(RATE_GRID, confirm=0)
    n = len(planner.plan_grid(spec))
    t_serial, _, serial = best_plan(spec, "serial", repeat)
    t_pool, _, pool = best_plan(spec, None, repeat)
    tiny = spec_with(TINY, confirm=0)
    starts = [timed_plan(tiny, None) for _ in range(2)]     # one point a chunk: both start
    t_start, tiny_table = min(s[0] for s in starts), starts[0][2].table
    rate = n / t_serial
    rows = [
        Row(f"planner pricing in-process, {n:,} configs", rate, "configs/s",
            "in-process configs/s", rate, 1.0, "(baseline)", None),
        Row(f"planner pricing, local processes x{os.cpu_count()}", n / t_pool, "configs/s",
            "in-process configs/s", rate, t_serial / t_pool, "report", None),
        Row(f"  local pool start-up ({len(tiny_table)}-config plan)", t_start, "s",
            "in-process plan s", t_serial, t_serial / t_start, "(included above)", None),
    ]
    with warm_pool() as executor:
        t_warm, _, warm = best_plan(spec, executor, repeat)
    rows.append(Row(f"planner pricing, local pool kept warm x{os.cpu_count()}", n / t_warm,
                    "configs/s", "in-process configs/s", rate, t_serial / t_warm, "report",
                    None))
    tables = {"in-process": serial.table, "local processes": pool.table,
              "warm local pool": warm.table}
    try:
        t0 = time.perf_counter()
        executor = planner_dask_executor()
    except ImportError as err:
        print(f"Dask rows skipped: {err}")
    else:
        try:
            planner.capacity_plan(tiny, executor=executor)    # each worker imports the engine
            t_up = time.perf_counter() - t0
            t_dask, _, dask = best_plan(spec, executor, repeat)
        finally:
            executor.shutdown()
        tables[f"Dask LocalCluster x{DASK_WORKERS}"] = dask.table
        rows += [
            Row(f"planner pricing, Dask LocalCluster x{DASK_WORKERS}", n / t_dask, "configs/s",
                "in-process configs/s", rate, t_serial / t_dask, "report", None),
            Row("  Dask cluster start-up + first import", t_up, "s", "local pool start-up s",
                t_start, t_start / t_up, "(excluded above)", None),
        ]
    differ = identical(tables)
    print(f"planner tables {' / '.join(tables)}: "
          f"{'identical (assert_frame_equal)' if not differ else 'DIFFER: ' + differ}")
    rows.append(Row(f"  tables identical on {len(tables)} executors", len(tables) - bool(differ),
                    "agree", "executors", len(tables), 0.0, "identical", not differ))
    return rows


def warm_pool() -> cf.ProcessPoolExecutor:
    """A pool of one process per core (started as the default pool starts them), each
    having priced a configuration already: the rate without the pool's start-up."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    workers = os.cpu_count() or 1
    pool = cf.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))
    planner.capacity_plan(spec_with(TINY, confirm=0), executor=pool, chunksize=1)
    return pool


def planner_dask_executor():
    """A LocalCluster of ``DASK_WORKERS`` single-threaded worker processes on loopback."""
    from engine import sweep

    return sweep.dask_executor(n_workers=DASK_WORKERS, threads_per_worker=1)


def scaling(repeat: int = 2) -> list[dict]:
    """End-to-end plans of each ``SCALING`` grid, local processes and in-process (the
    fastest of ``repeat``: the machine is shared)."""
    out = []
    for grid in SCALING:
        spec = spec_with(grid)
        n = len(planner.plan_grid(spec))
        t_pool, tail_pool, plan = best_plan(spec, None, repeat)
        t_serial, tail_serial, _ = best_plan(spec, "serial", repeat)
        memory = int(plan.table.memory_usage(deep=True).sum())
        out.append(dict(n=n, pool_s=t_pool, serial_s=t_serial, pool_tail_s=tail_pool,
                        serial_tail_s=tail_serial, bytes_per_row=memory / n))
    return out


def scaling_rows(points: list[dict]) -> list[Row]:
    """One row per plan size (the goal judged at ~10,000), and the table's memory."""
    rows = []
    for p in points:
        goal = p["n"] >= 0.99 * GOAL_CONFIGS
        rows.append(Row(f"plan of {p['n']:,} configs (confirm 5), local processes",
                        p["pool_s"], "s", "in-process s", p["serial_s"],
                        p["serial_s"] / p["pool_s"], f"<= {GOAL_S:g} s" if goal else "report",
                        p["pool_s"] <= GOAL_S if goal else None))
    last = points[-1]
    rows.append(Row(f"  plan table memory, {last['n']:,} configs", last["bytes_per_row"],
                    "B/config", "table MB", last["bytes_per_row"] * last["n"] / 1e6, 0.0,
                    "report", None))
    return rows


def mmpp_rows(poisson: dict) -> list[Row]:
    """The ~1,000-configuration plan with MMPP-2 arrivals fitted to the Azure code trace,
    against the Poisson plan of the same grid (local processes, and in-process)."""
    spec = spec_with(SCALING[0], arrivals_kind="mmpp2", arrivals_trace="azure_2023_code")
    t, _, plan = best_plan(spec, None, 2)
    t_serial = best_plan(spec, "serial", 2)[0]
    n = len(plan.table)
    simulated = int((plan.table["method"] == "simulated").sum())
    print(f"MMPP-2 plan: {n:,} configs, {simulated:,} priced by simulation alone, "
          f"{int(plan.table['meets_sla'].sum()):,} meet the SLA, "
          f"{int((plan.ranked['confirmed'] == True).sum())} confirmed; {t:.2f} s "  # noqa: E712
          f"({1e6 * t / n:,.0f} µs/config; Poisson {1e6 * poisson['pool_s'] / n:,.0f})")
    return [Row(f"plan of {n:,} configs, MMPP-2 (Azure code), processes", t, "s",
                "Poisson plan s", poisson["pool_s"], poisson["pool_s"] / t, "report", None),
            Row("  the same, in-process", t_serial, "s", "Poisson plan s", poisson["serial_s"],
                poisson["serial_s"] / t_serial, "report", None)]


def scaling_table(points: list[dict]) -> str:
    """The plan times as a markdown table."""
    lines = ["| configurations | local processes (2 workers) | in-process | "
             "µs per configuration (processes / in-process) | after pricing (confirm 5) |",
             "| ---: | ---: | ---: | ---: | ---: |"]
    for p in points:
        lines.append(f"| {p['n']:,} | {p['pool_s']:.2f} s | {p['serial_s']:.2f} s | "
                     f"{1e6 * p['pool_s'] / p['n']:,.0f} / {1e6 * p['serial_s'] / p['n']:,.0f} "
                     f"| {p['pool_tail_s']:.2f} / {p['serial_tail_s']:.2f} s |")
    return "\n".join(lines)


def mermaid(points: list[dict]) -> str:
    """A Mermaid ``xychart-beta`` of plan time against grid size (the README's chart)."""
    top = max(GOAL_S, max(p["serial_s"] for p in points))
    xs = ", ".join(f'"{p["n"]:,}"' for p in points)
    line = lambda key: ", ".join(f"{p[key]:.2f}" for p in points)   # noqa: E731
    return "\n".join([
        "```mermaid",
        "xychart-beta",
        '    title "Capacity plan time, s (steeper line: in-process; other: local processes)"',
        f'    x-axis "configurations" [{xs}]',
        f'    y-axis "seconds per plan" 0 --> {int(top) + 1}',
        f"    line [{line('serial_s')}]",
        f"    line [{line('pool_s')}]",
        "```"])


def first_pool_row() -> Row:
    """The first local pool of a process also starts the fork server, which imports the
    engine once for every later pool of that process (``engine.sweep``): timed apart, so
    the plans below show what each further plan costs."""
    tiny = spec_with(TINY, confirm=0)
    t_first = timed_plan(tiny, None)[0]
    t_serial = timed_plan(tiny, "serial")[0]
    return Row("first local pool of a process (fork server)", t_first, "s",
               "same plan in-process s", t_serial, t_serial / t_first, "(once a process)", None)


def run() -> list[Row]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    planner.capacity_plan(spec_with(SCALING[0], confirm=1), executor="serial")   # warm up
    rows = [first_pool_row()]
    points = scaling()
    rows += pricing_rows() + scaling_rows(points) + mmpp_rows(points[0])
    after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine load (1-minute average): {load:.2f} before, {after:.2f} after (this "
          f"group keeps up to {os.cpu_count()} cores busy; more: other work shared them)")
    print(f"plan time against grid size ({os.cpu_count()} cores; GPU workload, Poisson, "
          f"confirm 5):")
    print(scaling_table(points))
    print(mermaid(points))
    return rows
