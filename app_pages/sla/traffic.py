"""The autoscaling page under the chosen arrival process (``ui.arrivals_input``): the
mean wait of one central queue, simulated and by the GI/G/n two-moment approximation
(``engine.core.two_moment``), and the "Poisson vs this traffic" view: the replicas the
simulator needs for the page's percentile target under Poisson arrivals, the fitted
MMPP-2, a bursty renewal process and the replayed trace, all at the page's mean rate.
Memoised on the frozen scenario (its ``arrivals`` included)."""
from __future__ import annotations

from dataclasses import replace
import math

from engine import sla
from ui import arrivals_input
from ui.export import plain_number
from ui.memo import memo

from . import data

SEED = 2016                 # the central-queue runs' streams (the dispatch runs: data.SEED)


def under(s, choice):
    """The scenario ``s`` with the arrival process ``choice``."""
    return replace(s, arrivals=choice)


@memo(64)
def central_wait(s, n: int, simulate: bool) -> dict:
    """Mean wait before service (ms, the trip d1 included) of one central FIFO queue at n
    replicas: simulated under the scenario's arrivals (when simulated) and by the
    GI/G/n approximation (``engine.sla.central_mean_wait_s``)."""
    approx = float(sla.ms_from_s(s.model.central_mean_wait_s(s.arrivals.scv, n)))
    sim = None
    if data.can_simulate(s, n, simulate):
        run = s.model.simulate(int(n), "central_queue", data.sim_requests(n),
                               seed=(SEED, int(n)), arrivals=data.arrivals_of(s))
        sim = float(sla.ms_from_s(run.mean_waiting_s))
    return {"approx": approx, "sim": sim}


def wait_rows(s, n: int, simulate: bool) -> list:
    """The what-if rows of the central queue's mean wait at n replicas."""
    if s.model.utilization(n) >= 1.0:
        return []
    w = central_wait(s, n, simulate)
    head = f"Mean wait with {n} replicas, one central queue"
    return [(f"{head}, simulated", "off" if w["sim"] is None else f"{plain_number(w['sim'])} ms"),
            (f"{head}, approximation (GI/G/n)", f"{plain_number(w['approx'])} ms")]


def _within(s, n: int) -> float:
    return float(data.sim_point(s, float(n), data.sim_requests(n)).fraction_within(s.rt))


@memo(32)
def replicas_needed(s, bar=None) -> dict:
    """Fewest replicas whose simulated share within RT reaches the percentile under
    ``s.arrivals`` (``engine.sla.fewest_simulated``, one memoised run per count)."""
    def progress(done: float, n: int) -> None:
        if bar is not None:
            bar.progress(done, f"{s.arrivals.label}: simulating {n} replicas…")

    return s.model.fewest_simulated(lambda n: _within(s, n), data.answers(s)["approx"],
                                    s.percentile, progress)


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
    return [(choice.label, *sla.late_curve(got["points"])) for choice, got in found]


def choices(s) -> tuple:
    """The arrival processes compared for the scenario (``arrivals_input.comparison``)."""
    return arrivals_input.comparison(s.arrivals)
