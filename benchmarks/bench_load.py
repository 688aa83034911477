"""Load test: concurrent sessions moving sliders on the heaviest page.

``SESSIONS`` websocket sessions (the browser's protocol, ``benchmarks/live.py``)
open the GPU batching page on one loopback server and each makes ``MOVES``
moves: mostly the load slider to a random new value (each new load runs a
fresh p99 simulation), and every fourth move a new b_max (a full rerun: the
exact finite-b_max curves and a 10-load simulated sweep).  Bounded in count
and time (``DEADLINE_S``).  Reported: rerun latency p50/p95/max, errors
(exceptions or error alerts other than the page's "Unstable" notice), the
server's resident memory before and after, and its growth.
"""
from __future__ import annotations

import asyncio
import random
import statistics
import time

from benchmarks.harness import Row
from benchmarks.live import Session, rss_mb, server

SESSIONS = 10
MOVES = 24
DEADLINE_S = 240.0
PAGE = "gpu-batching"


async def _user(port: int, seed: int, walls: list, errors: list, deadline: float):
    rng = random.Random(seed)
    s = Session(port)
    try:
        await s.open(PAGE)
        await s.set("cap_batch", True)
        for i in range(MOVES):
            if time.monotonic() > deadline:
                break
            if i % 4 == 3:
                run = await s.set("b_max", rng.choice((8, 16, 24, 32, 48, 64, 96, 128)))
            else:
                run = await s.set("rho", round(rng.uniform(0.05, 0.95), 2))
            walls.append(run.seconds)
            errors.extend(run.exceptions)
            errors.extend(e for e in run.errors if not e.startswith("Unstable"))
    except Exception as err:                      # a dropped session is an error too
        errors.append(f"session {seed}: {type(err).__name__}: {err}")
    finally:
        await s.close()


async def _load(port: int) -> tuple[list, list]:
    walls, errors = [], []
    deadline = time.monotonic() + DEADLINE_S
    await asyncio.gather(*(_user(port, seed, walls, errors, deadline)
                           for seed in range(SESSIONS)))
    return walls, errors


def measure() -> dict:
    with server() as (port, pid):
        warm = Session(port)

        async def first():
            await warm.open(PAGE)
            await warm.close()

        asyncio.run(first())
        rss0 = rss_mb(pid)
        t0 = time.perf_counter()
        walls, errors = asyncio.run(_load(port))
        elapsed = time.perf_counter() - t0
        rss1 = rss_mb(pid)
    walls.sort()
    q = statistics.quantiles(walls, n=20) if len(walls) >= 2 else walls * 19
    return dict(moves=len(walls), p50=statistics.median(walls), p95=q[18], max=walls[-1],
                errors=errors, rss0=rss0, rss1=rss1, elapsed=elapsed)


def run() -> list[Row]:
    r = measure()
    for e in r["errors"][:5]:
        print("load test error:", e[:300])
    name = f"load: {SESSIONS} sessions x {MOVES} moves"
    return [
        Row(f"{name}, p50 rerun", r["p50"] * 1e3, "ms", "p95 ms", r["p95"] * 1e3,
            r["p95"] / r["p50"], "(shown)", None),
        Row(f"{name}, max rerun", r["max"] * 1e3, "ms", "moves", r["moves"], 0.0, "(shown)", None),
        Row(f"{name}, errors", len(r["errors"]), "", "moves", r["moves"], 0.0, "0 errors",
            not r["errors"]),
        Row(f"{name}, server memory", r["rss1"], "MB", "before MB", r["rss0"],
            r["rss0"] / r["rss1"], "< +500 MB", r["rss1"] - r["rss0"] < 500),
    ]
