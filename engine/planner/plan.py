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
from .families.base import METRICS, sla_text
from .words import duration_text, money_text
from .families.batch import CONFIRM_JOBS, CONFIRM_RUNS, BatchFamily  # noqa: F401
from .price import REASONS, ConfigPrice, price_configuration, screen_jobs  # noqa: F401
from .files import arrival_process
from .spec import PlanSpec

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
    ``pareto_energy``: of the configurations passing every other test of the plan
    (``front_rows``), those no other beats on both cost and the screened percentile
    (energy per request); ``rejected``: one row per candidate that
    never meets the SLA, with ``reason`` and ``detail``; ``per_hardware``: each
    candidate's cheapest configuration meeting the SLA in the screening run and not
    refuted by the longer runs (its ranked row) or, for a rejected one, a row with
    ``reason`` and ``detail`` (which hardware is worth it, and by how much:
    ``cost_vs_cheapest``, its cost over the cheapest candidate's); ``best``: the cheapest confirmed
    row as a dict (None if none; with ``spec.confirm == 0`` the cheapest screened row,
    its ``confirmed`` NaN); ``answer``: the plan in one sentence, saying which;
    ``fronts``: the cost front against each SLA column and energy (``pareto_latency``
    is the first SLA column's); ``fewer``: for the serving families, the confirmed best
    with one server fewer of each kind, simulated the same way (it misses, or it would
    have been the answer), else None.
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
    fronts: dict = None
    fewer: pd.DataFrame | None = None


def plan_grid(spec: PlanSpec) -> list[dict]:
    """The configurations of ``spec`` as a list of points for ``engine.sweep.run``: every
    combination of the family's ranges (``spec.family.grid``), but a GPU b_max only up to
    the candidate's largest measured batch (the profile says nothing beyond it)."""
    return spec.family.grid(spec)


def price_point(spec: PlanSpec, *, arrivals=None, **config):
    """One point of ``plan_grid`` priced by the plan's family.  The spec was validated on
    construction and the grid holds only its values: the point is priced as it is, not
    checked again (``price_configuration`` is the checked entry for one configuration)."""
    return spec.family.price(spec, arrivals=arrivals, **config)


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


def settings_text(spec: PlanSpec, row) -> str:
    """A configuration's settings in plain words (its family's wording): "b_max 8",
    "b_max 8, max queue delay 2 ms" (GPU), "b_max 32, token limit 512" / "b_max 32, no
    token limit" (LLM batch), "max_num_seqs 128, token budget 8,192" (serving).
    ``row``: a mapping or row with the family's settings."""
    if not isinstance(spec, PlanSpec):
        raise ValueError(f"spec must be a PlanSpec, got {type(spec).__name__}")
    return spec.family.settings_text(spec, row)


def _sla_words(spec: PlanSpec) -> str:
    if len(spec.sla) == 1 and spec.workload in ("gpu", "llm"):
        return f"{spec.percentile:g} % of requests within {duration_text(spec.target_ms)}"
    return sla_text(spec.sla)


def _measured_text(spec: PlanSpec, best, confirmed: bool, ci: bool = True) -> str:
    """The SLA's percentiles of ``best`` in words, confirmed or screened."""
    fam = spec.family
    parts = []
    for (metric, q, _), col in zip(spec.sla, fam.sla_columns(spec)):
        name = "" if spec.workload in ("gpu", "llm") else f" {METRICS[metric][1]}"
        if confirmed:
            est, half = fam.confirm_columns(spec)[col]
            parts.append(f"p{q:g}{name} {duration_text(best[est])}"
                         + (f" (± {duration_text(best[half])})" if ci else ""))
        else:
            parts.append(f"p{q:g}{name} {duration_text(best[col])}")
    return ", ".join(parts)


def _answer(spec: PlanSpec, best, label: str, ranked: pd.DataFrame) -> str:
    fam = spec.family
    sla = _sla_words(spec)
    load = f"{fam.rate_text(spec)} ({label})"
    if best is None and ranked.empty:
        return (f"No configuration searched keeps {sla} at {load}: see why each candidate "
                f"fails, then widen the ranges.")
    if best is None:
        tried = ranked[ranked["confirmed"] == False]  # noqa: E712 (object column)
        first = fam.confirm_columns(spec)[fam.sla_columns(spec)[0]][0]
        near = tried.loc[tried["sla_confirmed_ratio"].idxmin()] if \
            "sla_confirmed_ratio" in tried else tried.loc[tried[first].idxmin()]
        return (f"{len(ranked):,} configurations passed the screening {fam.screening_noun} "
                f"for {sla} at {load}, but none of the {len(tried)} cheapest held the target "
                f"in the longer confirmation runs (closest: "
                f"{_measured_text(spec, near, True, ci=False)} with {fam.closest_text(near)}): "
                f"{fam.more_servers_words} or relax the target.")
    head = (f"Cheapest: {fam.fleet_text(best)} ({settings_text(spec, best)}) at "
            f"{money_text(best['cost_usd_per_hour'])}/h "
            f"({money_text(best['cost_usd_per_million'])} per million requests) keeps {sla} "
            f"at {load}: ")
    if best["confirmed"] is True:
        return head + f"{_measured_text(spec, best, True)}, {fam.confirmed_words(spec)}."
    return (head + f"{_measured_text(spec, best, False)} {fam.screened_words(spec)}, not "
            f"confirmed by longer runs (confirm = 0).")


def _meets(spec: PlanSpec, values: dict) -> bool:
    """Every SLA row within its target, from {sla column: (estimate, ci)}."""
    return all(values[c][0] <= t for c, (_, _, t) in zip(spec.family.sla_columns(spec),
                                                          spec.sla))


def _confirm_row(spec, ranked, i, arrivals) -> bool:
    fam = spec.family
    values = fam.confirm(spec, ranked.loc[i], arrivals)
    ok = _meets(spec, values)
    ranked.at[i, "confirmed"] = ok
    cols = fam.confirm_columns(spec)
    for c, (est, half) in values.items():
        ranked.loc[i, list(cols[c])] = [est, half]
    if "sla_confirmed_ratio" in ranked:
        ranked.at[i, "sla_confirmed_ratio"] = max(
            values[c][0] / t for c, (_, _, t) in zip(fam.sla_columns(spec), spec.sla))
    return ok


def _same_but_scale(fam, ranked, row) -> np.ndarray:
    """Rows of ``ranked`` with ``row``'s settings but at most its servers (a family's
    ``scale_knobs``): no faster than ``row``."""
    same = np.ones(len(ranked), bool)
    for c in ranked.columns:
        if c in fam.setting_columns() and c not in fam.scale_knobs:
            same &= (ranked[c] == row[c]).to_numpy()
    for c in fam.scale_knobs:
        same &= (ranked[c] <= row[c]).to_numpy()
    return same


def front_rows(spec: PlanSpec, table: pd.DataFrame, column: str) -> np.ndarray:
    """Which rows of the priced ``table`` a cost front against ``column`` runs through:
    the stable configurations that pass every other test of the plan (the other SLA
    rows, the energy cap, the share of replies cut), so a front never passes through a
    configuration the plan rejects for something the chart does not show."""
    fam = spec.family
    ok = np.array(table["stable"], dtype=bool)
    for c, (_, _, target) in zip(fam.sla_columns(spec), spec.sla):
        if c != column:
            ok &= (table[c] <= target).to_numpy()
    if column != "energy_j_per_request":
        ok &= (table["energy_j_per_request"] <= spec.energy_cap_j).to_numpy()
    if "truncated_fraction" in table:
        ok &= (table["truncated_fraction"] <= spec.truncation_cap).to_numpy()
    return ok


def _fewest(spec: PlanSpec, best: dict, table: pd.DataFrame, ranked: pd.DataFrame,
            arrivals):
    """The confirmed ``best`` with one server fewer of each kind, simulated the same way;
    one that meets the SLA becomes the best (cheaper) and is tried again.  Returns (best,
    the table of the misses with one server fewer)."""
    fam = spec.family
    settings = fam.setting_columns()
    while True:
        rows = []
        for change in fam.neighbours(spec, best):
            row = {**best, **change}
            match = np.ones(len(table), bool)
            for c in settings:
                match &= (table[c] == row[c]).to_numpy()
            priced = table[match]
            if len(priced):
                row.update({k: v for k, v in priced.iloc[0].to_dict().items()})
            cols = fam.confirm_columns(spec)
            if len(priced) and not bool(priced.iloc[0]["stable"]):
                values = {c: (math.inf, math.nan) for c in cols}   # past its capacity
            else:
                values = fam.confirm(spec, best, arrivals, **change)
            for c, (est, half) in values.items():
                row[cols[c][0]], row[cols[c][1]] = est, half
            row["confirmed"] = _meets(spec, values)
            row["sla_confirmed_ratio"] = max(values[c][0] / t for c, (_, _, t) in
                                             zip(fam.sla_columns(spec), spec.sla))
            rows.append(row)
        cheaper = [r for r in rows if r["confirmed"]]
        if not cheaper:
            return best, (pd.DataFrame(rows) if rows else None)
        best = min(cheaper, key=lambda r: r["cost_usd_per_hour"])


def _confirm_ranking(spec: PlanSpec, ranked: pd.DataFrame, arrivals) -> None:
    """Confirm down the ranking (the module docstring).  A family with ``scale_knobs``
    skips the configurations a miss rules out (the same settings with no more servers)."""
    fam = spec.family
    done = tries = 0
    ruled_out = np.zeros(len(ranked), bool)
    for i in range(len(ranked)):
        if done >= spec.confirm or tries >= CONFIRM_TRIES * spec.confirm:
            break
        if ruled_out[i]:
            continue
        ok = _confirm_row(spec, ranked, i, arrivals)
        tries += 1
        done += ok
        if not ok and fam.scale_knobs:
            ruled_out |= _same_but_scale(fam, ranked, ranked.loc[i])


def capacity_plan(spec: PlanSpec, *, arrivals=None, workload=None, executor=None,
                  chunksize=None, progress=None) -> CapacityPlan:
    """Price every configuration of ``spec`` and rank those meeting its SLA.

    ``arrivals``: the total stream as an ``engine.arrivals`` process (requests per s)
    instead of the one ``spec`` names (``arrival_process``); ``workload`` (serving
    families): the prompts and replies (``engine.planner.families.llm_serving.
    ServingWorkload``) instead of those ``spec`` names; ``executor``, ``chunksize``,
    ``progress``: as in ``engine.sweep.run`` (``executor="serial"`` runs in this
    process).  The same spec gives the same tables on every executor.
    """
    if not isinstance(spec, PlanSpec):
        raise ValueError(f"spec must be a PlanSpec, got {type(spec).__name__}")
    fam = spec.family
    if arrivals is None:
        arrivals = arrival_process(spec)
    label = "Poisson arrivals" if arrivals is None else f"arrivals: {arrivals.label}"
    context = fam.prepare(spec, workload)
    points = plan_grid(spec)
    func = partial(price_point, spec, arrivals=arrivals, **context)
    if points:
        table = sweep.run(func, points, executor=executor, chunksize=chunksize,
                          progress=progress)
    else:                                   # no b_max within any candidate's measured batches
        table = pd.DataFrame(columns=fam.columns(spec))
    meets = table[table["meets_sla"].astype(bool)]
    ranked = meets.sort_values(["cost_usd_per_hour", fam.tie_column(spec)], kind="stable")
    ranked = ranked.reset_index(drop=True)
    ranked["confirmed"] = pd.Series([np.nan] * len(ranked), dtype=object)
    for est, ci in fam.confirm_columns(spec).values():
        ranked[est] = np.nan
        ranked[ci] = np.nan
    if fam.scale_knobs:
        ranked["sla_confirmed_ratio"] = np.nan
    _confirm_ranking(spec, ranked, arrivals)
    good = ranked[ranked["confirmed"] == True]  # noqa: E712 (object column)
    best = None if good.empty else good.iloc[0].to_dict()
    if spec.confirm == 0 and len(ranked):
        best = ranked.iloc[0].to_dict()          # screened only: the answer says so
    fewer = None
    if best is not None and best["confirmed"] is True and hasattr(fam, "neighbours"):
        best, fewer = _fewest(spec, best, table, ranked, arrivals)
    fronts = {}
    for col in [*fam.sla_columns(spec), "energy_j_per_request"]:
        shown = table[front_rows(spec, table, col)] if len(table) else table
        idx = pareto_front(shown["cost_usd_per_hour"], shown[col]) if len(shown) else []
        fronts[col] = shown.iloc[idx].reset_index(drop=True)
    rejected = []
    for hw in fam.candidates(spec):
        rows = table[fam.uses(table, hw)] if len(table) else table
        if len(rows) and rows["meets_sla"].any():
            continue
        reason, detail = fam.rejection(spec, rows)
        rejected.append(dict(hardware=hw, reason=reason, detail=detail))
    rejected = pd.DataFrame(rejected, columns=["hardware", "reason", "detail"])
    # each candidate at its cheapest: a configuration the longer runs refuted is not it
    firsts = ranked[~ranked["confirmed"].eq(False)].drop_duplicates(
        fam.candidate_columns(), keep="first")
    if fam.candidate_columns() != ["hardware"]:
        firsts = firsts.assign(hardware=[fam.candidate_of(r) for _, r in firsts.iterrows()]) \
            if len(firsts) else firsts.assign(hardware=pd.Series([], dtype=object))
    refuted = []                      # candidates whose every passing row the runs refuted
    for name in fam.candidates(spec):
        mine = ranked[fam.uses(ranked, name)] if len(ranked) else ranked
        if len(mine) and mine["confirmed"].eq(False).all():
            near = mine.loc[mine[fam.confirm_columns(spec)[fam.sla_columns(spec)[0]][0]]
                            .idxmin()]
            refuted.append(dict(hardware=name, reason="confirmation", detail=(
                f"the {len(mine)} configurations the screening passed missed the target in "
                f"the longer runs (closest: {_measured_text(spec, near, True, ci=False)} "
                f"with {fam.closest_text(near)})")))
    extra = pd.concat([rejected, pd.DataFrame(refuted, columns=rejected.columns)],
                      ignore_index=True) if refuted else rejected
    per_hardware = pd.concat([firsts, extra], ignore_index=True) if len(extra) else firsts
    order = {name: i for i, name in enumerate(fam.candidates(spec))}
    per_hardware = per_hardware.sort_values(
        ["cost_usd_per_hour", "hardware"], key=lambda c: c.map(order) if c.name == "hardware"
        else c, na_position="last", kind="stable").reset_index(drop=True) \
        if len(per_hardware) else per_hardware.reset_index(drop=True)
    if len(per_hardware):           # how much more each candidate costs than the cheapest
        cost = per_hardware["cost_usd_per_hour"].astype(float)
        per_hardware["cost_vs_cheapest"] = cost / cost.min()
    first = fam.sla_columns(spec)[0]
    return CapacityPlan(spec=spec, table=table, ranked=ranked, pareto_latency=fronts[first],
                        pareto_energy=fronts["energy_j_per_request"], rejected=rejected,
                        best=best, answer=_answer(spec, best, label, ranked),
                        arrivals_label=label, per_hardware=per_hardware, fronts=fronts,
                        fewer=fewer)


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
    cols = [c for c in s.family.csv_columns(s) if c in plan.ranked.columns]
    out = plan.ranked[cols].rename(columns=UNITS)
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    out["hardware"] = out["hardware"].map(spreadsheet_safe)
    unit = s.family.load_unit
    buf = io.StringIO()
    answer = " ".join(plan.answer.split())            # one line: the header is a comment
    if s.workload in ("gpu", "llm"):
        sla = f"p{s.percentile:g} <= {s.target_ms:g} ms"
    else:
        sla = "; ".join(f"p{q:g} {METRICS[m][1]} <= {t:g} ms" for m, q, t in s.sla)
    buf.write(f"# {spreadsheet_safe(answer)}\n# SLA: {sla}; traffic {s.rate_per_s:g} {unit}, "
              f"{plan.arrivals_label}\n")
    out.to_csv(buf, index=False)
    return buf.getvalue()


__all__ = ["CapacityPlan", "capacity_plan", "front_rows", "duration_text", "money_text", "pareto_front",
           "plan_grid", "ranked_csv", "settings_text", "spreadsheet_safe", "REASONS"]
