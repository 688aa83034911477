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


async def _user(port: int, seed: int, walls: dict, errors: list, deadline: float):
    rng = random.Random(seed)
    s = Session(port)
    try:
        await s.open(PAGE)
        await s.set("cap_batch", True)
        for i in range(MOVES):
            if time.monotonic() > deadline:
                break
            if i % 4 == 3:
                kind = "b_max"
                run = await s.set("b_max", rng.choice((8, 16, 24, 32, 48, 64, 96, 128)))
            else:
                kind = "load"
                run = await s.set("rho", round(rng.uniform(0.05, 0.95), 2))
            walls[kind].append(run.seconds)
            errors.extend(run.exceptions)
            errors.extend(e for e in run.errors if not e.startswith("Unstable"))
    except Exception as err:                      # a dropped session is an error too
        errors.append(f"session {seed}: {type(err).__name__}: {err}")
    finally:
        await s.close()


async def _load(port: int) -> tuple[dict, list]:
    walls, errors = {"load": [], "b_max": []}, []
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
    out = dict(moves=sum(len(w) for w in walls.values()), errors=errors, rss0=rss0,
               rss1=rss1, elapsed=elapsed)
    for kind, w in walls.items():
        w.sort()
        q = statistics.quantiles(w, n=20) if len(w) >= 2 else w * 19
        out[kind] = dict(n=len(w), p50=statistics.median(w), p95=q[18], max=w[-1])
    return out


def run() -> list[Row]:
    r = measure()
    for e in r["errors"][:5]:
        print("load test error:", e[:300])
    name = f"load, {SESSIONS} sessions"
    rows = []
    for kind, what in (("load", "load-slider moves"), ("b_max", "b_max changes")):
        k = r[kind]
        rows.append(Row(f"{name}, {what}: p50", k["p50"] * 1e3, "ms", "p95 ms", k["p95"] * 1e3,
                        k["p95"] / k["p50"], "(shown)", None))
        rows.append(Row(f"{name}, {what}: max", k["max"] * 1e3, "ms", "moves", k["n"], 0.0,
                        "(shown)", None))
    return rows + [
        Row(f"{name}, errors", len(r["errors"]), "", "moves", r["moves"], 0.0, "0 errors",
            not r["errors"]),
        Row(f"{name}, server memory", r["rss1"], "MB", "before MB", r["rss0"],
            r["rss0"] / r["rss1"], "< +500 MB", r["rss1"] - r["rss0"] < 500),
    ]
