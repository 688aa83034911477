"""The capacity plan: every configuration priced (``engine.sweep.run``), the cheapest
that meet the SLA ranked and the top ones confirmed by longer simulations, the Pareto
fronts of cost against latency and against energy, and why each rejected candidate fails.

Confirmation: each of the cheapest screened configurations, in order, is simulated again
``CONFIRM_RUNS`` times with independent streams of ``CONFIRM_JOBS`` requests (more for a
far percentile); the percentile is the mean of the runs' percentiles with a 95 %
Student-t interval.  It is "confirmed" when that estimate is within the target; one that
misses is marked so and the next is tried, until ``spec.confirm`` are confirmed or
``CONFIRM_TRIES`` × ``spec.confirm`` were tried.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import partial
import io
import math

import numpy as np
import pandas as pd
from scipy import stats

from .. import sweep
from .price import (REASONS, ConfigPrice, price_configuration, screen_jobs,
                    simulate_configuration)
from .files import arrival_process
from .spec import PlanSpec, _number, _whole

CONFIRM_RUNS = 4
CONFIRM_JOBS = 100_000
CONFIRM_TRIES = 3
PARAMETERS = ("hardware", "b_max", "queue_delay_ms", "token_limit", "replicas")
UNITS = {"b_max": "b_max", "queue_delay_ms": "queue_delay_ms", "token_limit": "token_limit_tokens",
         "replicas": "replicas", "mean_latency_ms": "mean_latency_ms",
         "latency_percentile_ms": "screened_percentile_latency_ms",
         "utilization": "utilization_fraction", "mean_batch_size": "mean_batch_size_requests",
         "energy_j_per_request": "energy_J_per_request", "cost_usd_per_hour": "cost_usd_per_hour",
         "cost_usd_per_million": "cost_usd_per_million_requests",
         "truncated_fraction": "truncated_fraction", "capacity_per_s": "capacity_requests_per_s",
         "confirmed_percentile_ms": "confirmed_percentile_latency_ms",
         "confirmed_ci_ms": "confirmed_percentile_ci95_ms"}


@dataclass(frozen=True)
class CapacityPlan:
    """The answer to a ``PlanSpec``.

    ``table``: every configuration priced (one row each, grid order: hardware, b_max,
    queue delay, token limit, replicas; ``engine.planner.price.ConfigPrice`` columns);
    ``ranked``: those meeting the SLA, cheapest first (ties: lower percentile), with
    ``confirmed`` (True / False / NaN: not simulated again), ``confirmed_percentile_ms``
    and ``confirmed_ci_ms`` for those confirmed or refuted; ``pareto_latency``,
    ``pareto_energy``: the stable configurations no other beats on both cost and the
    screened percentile (energy per request); ``rejected``: one row per candidate that
    never meets the SLA, with ``reason`` and ``detail``; ``per_hardware``: each
    candidate's cheapest configuration meeting the SLA in the screening run (its ranked
    row) or, for a rejected one, a row with ``reason`` and ``detail`` (which hardware is
    worth it, and by how much); ``best``: the cheapest confirmed
    row as a dict (None if none; with ``spec.confirm == 0`` the cheapest screened row,
    its ``confirmed`` NaN); ``answer``: the plan in one sentence, saying which.
    """

    spec: PlanSpec
    table: pd.DataFrame
    ranked: pd.DataFrame
    pareto_latency: pd.DataFrame
    pareto_energy: pd.DataFrame
    rejected: pd.DataFrame
    best: dict | None
    answer: str
    arrivals_label: str
    per_hardware: pd.DataFrame


def plan_grid(spec: PlanSpec) -> list[dict]:
    """The configurations of ``spec`` as a list of points for ``engine.sweep.run``: every
    combination of the ranges, but a GPU b_max only up to the candidate's largest measured
    batch (the profile says nothing beyond it)."""
    points = []
    for hw in spec.hardware:
        for b in spec.b_max:
            if hw.workload == "gpu" and b > hw.max_batch:
                continue
            for d in spec.queue_delay_ms:
                for k in spec.token_limit:
                    for r in spec.replicas:
                        points.append(dict(hardware=hw.name, b_max=b, queue_delay_ms=d,
                                           token_limit=k, replicas=r))
    return points


def pareto_front(cost, other) -> np.ndarray:
    """Indices of the points no other point beats on both (cost, other), both lower is
    better, sorted by cost: a point is kept when its ``other`` is below that of every
    cheaper point (ties in cost: the lower ``other`` only)."""
    cost, other = np.asarray(cost, dtype=float), np.asarray(other, dtype=float)
    ok = np.flatnonzero(np.isfinite(cost) & np.isfinite(other))
    order = ok[np.lexsort((other[ok], cost[ok]))]
    keep, best = [], math.inf
    for i in order:
        if other[i] < best:
            keep.append(i)
            best = other[i]
    return np.asarray(keep, dtype=int)


def _confirm(spec: PlanSpec, row, arrivals) -> tuple[float, float]:
    """(percentile, 95 % CI half-width) in ms from ``CONFIRM_RUNS`` independent runs."""
    n = max(CONFIRM_JOBS, 5 * screen_jobs(spec.percentile))
    base = np.random.SeedSequence([spec.seed, 1729, int(row.b_max), int(row.replicas),
                                   int(row.token_limit),
                                   int(round(float(row.queue_delay_ms) * 1e6))])
    values = [simulate_configuration(spec, row.hardware, row.b_max, row.queue_delay_ms,
                                     row.token_limit, row.replicas, arrivals=arrivals,
                                     n_jobs=n, seed=s)["latency_percentile_ms"]
              for s in base.spawn(CONFIRM_RUNS)]
    half = stats.t.ppf(0.975, CONFIRM_RUNS - 1) * np.std(values, ddof=1) / math.sqrt(CONFIRM_RUNS)
    return float(np.mean(values)), float(half)


def _rejection(spec: PlanSpec, rows: pd.DataFrame) -> tuple[str, str]:
    """Why a candidate whose configurations all fail does: the first test every one of
    them fails, with the closest it came."""
    unit = "images/s" if spec.workload == "gpu" else "requests/s"
    if rows.empty:
        return "not searched", "no b_max in the range is within its measured batch sizes"
    if not rows["stable"].any():
        most = rows["capacity_per_s"].max()
        return ("unstable", f"at most {most:,.4g} {unit} with {int(rows['replicas'].max())} "
                            f"replicas, below the {spec.rate_per_s:,.4g} {unit} offered")
    stable = rows[rows["stable"]]
    if (stable["reason"] == "latency").all():
        low = stable.loc[stable["latency_percentile_ms"].idxmin()]
        return ("latency", f"best p{spec.percentile:g} "
                           f"{duration_text(low.latency_percentile_ms)} (b_max {int(low.b_max)}, "
                           f"{int(low.replicas)} replicas) > {duration_text(spec.target_ms)}")
    fast = stable[stable["reason"] != "latency"]
    if (fast["reason"] == "energy").all():
        low = fast["energy_j_per_request"].min()
        return "energy", f"least {low:,.4g} J per request > {spec.energy_cap_j:,.4g} J cap"
    low = fast["truncated_fraction"].min()
    return ("truncation", f"the limits that meet the latency cut {low:.1%} of replies > "
                          f"{spec.truncation_cap:.1%} allowed")


def _plain(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits without an exponent ("0.0617", "2,500")."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{round(x, decimals):,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def duration_text(ms: float) -> str:
    """A latency in plain words: "0.0617 ms", "16.9 ms", "2.5 s", "52.2 s" (s from 1 s)."""
    ms = float(ms)
    if math.isnan(ms):
        return "not known"
    if not math.isfinite(ms):
        return "unstable"
    return f"{_plain(ms / 1000.0)} s" if abs(ms) >= 1000 else f"{_plain(ms)} ms"


def money_text(usd: float) -> str:
    """Dollars in plain words: "$0.00001", "$0.292", "$81.94", "$22,761"."""
    usd = float(usd)
    if not math.isfinite(usd):
        return f"${usd:g}"
    return (f"${_plain(usd)}" if abs(usd) < 10 else f"${usd:,.2f}" if abs(usd) < 1000
            else f"${usd:,.0f}")


def settings_text(spec: PlanSpec, row) -> str:
    """A configuration's batching settings in plain words: "b_max 8", "b_max 8, max queue
    delay 2 ms" (GPU), "b_max 32, token limit 512" / "b_max 32, no token limit" (LLM).
    ``row``: a mapping or row with ``b_max``, ``queue_delay_ms`` and ``token_limit``."""
    if not isinstance(spec, PlanSpec):
        raise ValueError(f"spec must be a PlanSpec, got {type(spec).__name__}")
    try:
        b, delay, limit = (_whole(row["b_max"], "b_max", 1, 1 << 20),
                           _number(row["queue_delay_ms"], "queue_delay_ms", low=0.0),
                           _whole(row["token_limit"], "token_limit", 0, 1 << 20))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"row must hold a whole b_max >= 1, a queue_delay_ms >= 0 and a "
                         f"whole token_limit >= 0 ({exc})") from None
    text = f"b_max {b}"
    if spec.workload == "gpu":
        return text + (f", max queue delay {delay:g} ms" if delay > 0 else "")
    return text + (f", token limit {limit:,}" if limit > 0 else ", no token limit")


def _answer(spec: PlanSpec, best, label: str, ranked: pd.DataFrame) -> str:
    unit = "images/s" if spec.workload == "gpu" else "requests/s"
    sla = f"{spec.percentile:g} % of requests within {duration_text(spec.target_ms)}"
    load = f"{spec.rate_per_s:,.4g} {unit} ({label})"
    if best is None and ranked.empty:
        return (f"No configuration searched keeps {sla} at {load}: see why each candidate "
                f"fails, then widen the ranges.")
    if best is None:
        tried = ranked[ranked["confirmed"] == False]  # noqa: E712 (object column)
        near = tried.loc[tried["confirmed_percentile_ms"].idxmin()]
        return (f"{len(ranked):,} configurations passed the screening simulation for {sla} at "
                f"{load}, but none of the {len(tried)} cheapest held the target in the longer "
                f"confirmation runs (closest: p{spec.percentile:g} "
                f"{duration_text(near.confirmed_percentile_ms)} with {int(near.replicas)} "
                f"replicas of {near.hardware}): add replicas to the range or relax the target.")
    copies = f"{int(best['replicas'])} replica{'s' if best['replicas'] > 1 else ''}"
    head = (f"Cheapest: {copies} of {best['hardware']} ({settings_text(spec, best)}) at "
            f"{money_text(best['cost_usd_per_hour'])}/h "
            f"({money_text(best['cost_usd_per_million'])} per million requests) keeps {sla} "
            f"at {load}: p{spec.percentile:g} ")
    if best["confirmed"] is True:
        return (head + f"{duration_text(best['confirmed_percentile_ms'])} "
                f"(± {duration_text(best['confirmed_ci_ms'])}), confirmed by simulation.")
    return (head + f"{duration_text(best['latency_percentile_ms'])} in one screening "
            f"simulation of {screen_jobs(spec.percentile):,} requests, not confirmed by "
            f"longer runs (confirm = 0).")


def capacity_plan(spec: PlanSpec, *, arrivals=None, executor=None, chunksize=None,
                  progress=None) -> CapacityPlan:
    """Price every configuration of ``spec`` and rank those meeting its SLA.

    ``arrivals``: the total stream as an ``engine.arrivals`` process (requests per s)
    instead of the one ``spec`` names (``arrival_process``); ``executor``, ``chunksize``,
    ``progress``: as in ``engine.sweep.run`` (``executor="serial"`` runs in this
    process).  The same spec gives the same tables on every executor.
    """
    if not isinstance(spec, PlanSpec):
        raise ValueError(f"spec must be a PlanSpec, got {type(spec).__name__}")
    if arrivals is None:
        arrivals = arrival_process(spec)
    label = "Poisson arrivals" if arrivals is None else f"arrivals: {arrivals.label}"
    points = plan_grid(spec)
    func = partial(price_configuration, spec, arrivals=arrivals)
    if points:
        table = sweep.run(func, points, executor=executor, chunksize=chunksize,
                          progress=progress)
    else:                                   # no b_max within any candidate's measured batches
        table = pd.DataFrame(columns=[*PARAMETERS, *(f.name for f in fields(ConfigPrice))])
    meets = table[table["meets_sla"].astype(bool)]
    ranked = meets.sort_values(["cost_usd_per_hour", "latency_percentile_ms"], kind="stable")
    ranked = ranked.reset_index(drop=True)
    ranked["confirmed"] = pd.Series([np.nan] * len(ranked), dtype=object)
    ranked["confirmed_percentile_ms"] = np.nan
    ranked["confirmed_ci_ms"] = np.nan
    done = tries = 0
    for i in range(len(ranked)):
        if done >= spec.confirm or tries >= CONFIRM_TRIES * spec.confirm:
            break
        pct, half = _confirm(spec, ranked.loc[i], arrivals)
        tries += 1
        ok = bool(pct <= spec.target_ms)
        done += ok
        ranked.at[i, "confirmed"] = ok
        ranked.loc[i, ["confirmed_percentile_ms", "confirmed_ci_ms"]] = [pct, half]
    good = ranked[ranked["confirmed"] == True]  # noqa: E712 (object column)
    best = None if good.empty else good.iloc[0].to_dict()
    if spec.confirm == 0 and len(ranked):
        best = ranked.iloc[0].to_dict()          # screened only: the answer says so
    stable = table[table["stable"].astype(bool)]
    fronts = []
    for col in ("latency_percentile_ms", "energy_j_per_request"):
        idx = pareto_front(stable["cost_usd_per_hour"], stable[col]) if len(stable) else []
        fronts.append(stable.iloc[idx].reset_index(drop=True))
    rejected = []
    for hw in spec.hardware:
        rows = table[table["hardware"] == hw.name] if len(table) else table
        if len(rows) and rows["meets_sla"].any():
            continue
        reason, detail = _rejection(spec, rows)
        rejected.append(dict(hardware=hw.name, reason=reason, detail=detail))
    rejected = pd.DataFrame(rejected, columns=["hardware", "reason", "detail"])
    firsts = ranked.drop_duplicates("hardware", keep="first")
    per_hardware = pd.concat([firsts, rejected], ignore_index=True) if len(rejected) else firsts
    order = {hw.name: i for i, hw in enumerate(spec.hardware)}
    per_hardware = per_hardware.sort_values(
        ["cost_usd_per_hour", "hardware"], key=lambda c: c.map(order) if c.name == "hardware"
        else c, na_position="last", kind="stable").reset_index(drop=True) \
        if len(per_hardware) else per_hardware.reset_index(drop=True)
    return CapacityPlan(spec=spec, table=table, ranked=ranked, pareto_latency=fronts[0],
                        pareto_energy=fronts[1], rejected=rejected, best=best,
                        answer=_answer(spec, best, label, ranked), arrivals_label=label,
                        per_hardware=per_hardware)


def spreadsheet_safe(text: str) -> str:
    """``text`` as a spreadsheet shows it and never runs it: a leading ``= + - @`` (a
    formula to Excel or LibreOffice) is preceded by an apostrophe."""
    text = str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def ranked_csv(plan: CapacityPlan) -> str:
    """The ranked configurations as CSV text, units in the column names, the plan's
    SLA and traffic in a comment header."""
    if not isinstance(plan, CapacityPlan):
        raise ValueError(f"plan must be a CapacityPlan, got {type(plan).__name__}")
    s = plan.spec
    cols = [c for c in ("hardware", "b_max", "queue_delay_ms", "token_limit", "replicas",
                        "cost_usd_per_hour", "cost_usd_per_million", "mean_latency_ms",
                        "method", "latency_percentile_ms", "confirmed",
                        "confirmed_percentile_ms", "confirmed_ci_ms", "utilization",
                        "mean_batch_size", "energy_j_per_request", "truncated_fraction")
            if c in plan.ranked.columns]
    if s.workload == "gpu":
        cols.remove("token_limit")
    else:
        cols.remove("queue_delay_ms")
    out = plan.ranked[cols].rename(columns=UNITS)
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    out["hardware"] = out["hardware"].map(spreadsheet_safe)
    unit = "images/s" if s.workload == "gpu" else "requests/s"
    buf = io.StringIO()
    answer = " ".join(plan.answer.split())            # one line: the header is a comment
    buf.write(f"# {spreadsheet_safe(answer)}\n# SLA: p{s.percentile:g} <= "
              f"{s.target_ms:g} ms; traffic {s.rate_per_s:g} {unit}, {plan.arrivals_label}\n")
    out.to_csv(buf, index=False)
    return buf.getvalue()


__all__ = ["CapacityPlan", "capacity_plan", "duration_text", "money_text", "pareto_front",
           "plan_grid", "ranked_csv", "settings_text", "spreadsheet_safe", "REASONS"]
