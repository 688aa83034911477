"""The autoscaling page under the chosen arrival process (``ui.arrivals_input``): the
mean wait of one central queue, simulated and by the GI/G/n two-moment approximation
(``engine.core.two_moment``), and the "Poisson vs this traffic" view: the replicas the
simulator needs for the page's percentile target under Poisson arrivals, the fitted
MMPP-2, a bursty renewal process and the replayed trace, all at the page's mean rate.
Memoised on the frozen scenario (its ``arrivals`` included)."""
from __future__ import annotations

from dataclasses import replace
import math

import numpy as np

from engine import sla
from engine.core.two_moment import mean_wait_ggn
from ui import arrivals_input
from ui.export import plain_number
from ui.memo import memo

from . import data

SEED = 2016                 # the central-queue runs' streams (the dispatch runs: data.SEED)


def service_scv(s) -> float:
    """Squared coefficient of variation of the scenario's service time (0: deterministic)."""
    if not hasattr(s.service, "var"):
        return 0.0
    return float(s.service.var() / s.service.mean() ** 2)


def under(s, choice):
    """The scenario ``s`` with the arrival process ``choice``."""
    return replace(s, arrivals=choice)


@memo(64)
def central_wait(s, n: int, simulate: bool) -> dict:
    """Mean wait before service (ms, the trip d1 included) of one central FIFO queue at n
    replicas: simulated under the scenario's arrivals (when simulated) and by the
    GI/G/n approximation d1 + E[W_q](λ, 1/μ, n, ca², cs²)."""
    approx = float(sla.ms_from_s(s.d1 + mean_wait_ggn(s.lam, 1.0 / s.mu, n, s.arrivals.scv,
                                                      service_scv(s))))
    sim = None
    if data.can_simulate(s, n, simulate):
        run = sla.simulate_dispatch("central_queue", s.lam, s.service, int(n), s.d1, s.d2,
                                    s.delta, n_requests=data.sim_requests(n),
                                    seed=(SEED, int(n)), arrivals=data.arrivals_of(s))
        sim = float(sla.ms_from_s(run.mean_waiting))
    return {"approx": approx, "sim": sim}


def wait_rows(s, n: int, simulate: bool) -> list:
    """The what-if rows of the central queue's mean wait at n replicas."""
    if sla.utilisation(s.lam, s.mu, n) >= 1.0:
        return []
    w = central_wait(s, n, simulate)
    head = f"Mean wait with {n} replicas, one central queue"
    return [(f"{head}, simulated", "off" if w["sim"] is None else f"{plain_number(w['sim'])} ms"),
            (f"{head}, approximation (GI/G/n)", f"{plain_number(w['approx'])} ms")]


def _within(s, n: int) -> float:
    return float(data.sim_point(s, float(n), data.sim_requests(n)).fraction_within(s.rt))


@memo(32)
def replicas_needed(s, bar=None) -> dict:
    """Fewest replicas whose simulated share within RT reaches the percentile, under
    ``s.arrivals``: the page's grid first (from 4 below eq 7's answer), then down while
    the first meets it, else up in doubling steps and by bisection.  Returns
    {"n": the fewest (inf: none up to data.SIM_MAX_N), "points": ((n, share late), ...)}."""
    p = s.percentile / 100.0
    low = int(sla.stable_replicas(s.lam, s.mu))
    approx = data.answers(s)["approx"]
    start = max(low, int(approx - 4)) if math.isfinite(approx) else low
    seen = {}

    def meets(n: int) -> bool:
        if n not in seen:
            seen[n] = _within(s, n)
            if bar is not None:
                bar.progress(min(1.0, len(seen) / (2 * data.SIM_POINTS)),
                             f"{s.arrivals.label}: simulating {n} replicas…")
        return seen[n] >= p

    grid = [n for n in range(start, start + data.SIM_POINTS) if n <= data.SIM_MAX_N]
    ok = [n for n in grid if meets(n)]
    if ok:
        best = ok[0]
        while best - 1 >= low and meets(best - 1):
            best -= 1
    else:
        fail, step, best = (grid[-1] if grid else start - 1), data.SIM_POINTS, math.inf
        while fail < data.SIM_MAX_N:
            n = min(fail + step, data.SIM_MAX_N)
            if meets(n):
                while n - fail > 1:                 # bisection: fail misses, n meets
                    mid = (fail + n) // 2
                    fail, n = (fail, mid) if meets(mid) else (mid, n)
                best = n
                break
            fail, step = n, 2 * step
    points = tuple((float(n), 1.0 - w) for n, w in sorted(seen.items()))
    return {"n": float(best), "points": points}


@memo(16)
def comparison(s, choices: tuple, bar=None) -> tuple:
    """((choice, replicas needed), ...) for each arrival choice at the scenario's mean
    rate (``replicas_needed``)."""
    return tuple((c, replicas_needed(under(s, c), bar)) for c in choices)


def rows(s, found: tuple) -> list[dict]:
    """The comparison table: one row per arrival process."""
    base = found[0][1]["n"]
    out = []
    for choice, got in found:
        n = got["n"]
        more = "" if not (math.isfinite(n) and math.isfinite(base)) else f"{n - base:+.0f}"
        out.append({"arrivals": choice.label, "inter-arrival SCV": f"{choice.scv:.3g}",
                    f"replicas for p{s.percentile:g} ≤ {float(sla.ms_from_s(s.rt)):g} ms "
                    "(simulated)": f"{n:.0f}" if math.isfinite(n) else f"> {data.SIM_MAX_N}",
                    "vs Poisson": more or "n/a"})
    return out


def curves(found: tuple) -> list:
    """(label, n, share late) per arrival process, for the chart."""
    out = []
    for choice, got in found:
        pts = np.array(got["points"], dtype=float).reshape(-1, 2)
        out.append((choice.label, pts[:, 0], pts[:, 1]))
    return out


def choices(s) -> tuple:
    """The arrival processes compared for the scenario (``arrivals_input.comparison``)."""
    return arrivals_input.comparison(s.arrivals)
