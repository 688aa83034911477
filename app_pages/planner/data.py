"""The page's one engine call, memoised, and its tables in plain words with units.

``plan(spec, arrivals)``: ``engine.planner.capacity_plan`` on the spec and the arrival
choice (both frozen and hashable: the memo key).  Up to ``SERIAL_MAX`` configurations
it runs in this process (a process pool's start-up costs more than it saves there); above,
on local processes.  Tables for the page: latencies in ms (GPU) or s (LLM), the unit in
every column header.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

from engine.planner import capacity_plan, money_text, ranked_csv, settings_text
from engine.planner.plan import CONFIRM_JOBS, CONFIRM_RUNS
from engine.planner.price import REASONS, screen_jobs
from ui.budget import long_running
from ui.export import format_number
from ui.memo import memo
from ui.uploads import to_safe_csv

SERIAL_MAX = 3000          # plan_work priced in this process, at most (about 1.2 s)
TOP = 20                   # rows of the ranked table
ALL_ROWS = 2000            # rows of the "All configurations" view
WHY = {**REASONS, "not searched": "not searched: every b_max picked is above its largest "
                                  "measured batch"}
CONFIRMED = {True: "✓ confirmed", False: "✗ missed"}
NOT_SIMULATED = "—"


COST_WEIGHT = {"gpu": 1, "llm": 10}   # an LLM configuration costs ~10 GPU ones (chain: 2-170 ms)
SIMULATED_WEIGHT = 3                  # arrivals not Poisson: priced by simulation (~2.7x)


def plan_work(spec, arrivals) -> int:
    """The plan's cost in GPU configurations with Poisson arrivals (~400 µs each in this
    process, ``python -m benchmarks planner``): an LLM configuration weighs
    ``COST_WEIGHT["llm"]``, a non-Poisson one ``SIMULATED_WEIGHT`` times more."""
    weight = COST_WEIGHT[spec.workload] * (1 if arrivals.is_poisson else SIMULATED_WEIGHT)
    return spec.n_configurations * weight


def executor_for(work: int):
    """``"serial"`` up to ``SERIAL_MAX`` units of ``plan_work``, else None (local
    processes: their ~0.25 s start-up pays off from there)."""
    return "serial" if work <= SERIAL_MAX else None


@memo(4, ttl=3600)          # a plan holds its whole table: few, and they expire
@long_running
def plan(spec, arrivals, bar=None):
    """``capacity_plan`` of ``spec`` under the arrival choice ``arrivals``
    (``ui.arrivals_input.ArrivalChoice``; Poisson: the exact models' case); ``bar`` (a
    ``ui.memo.LazyProgress``, not part of the key) moves as the configurations are
    priced."""
    process = None if arrivals.is_poisson else arrivals.process(spec.rate_per_s)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            text = (f"Pricing configurations: {done:,} of {total:,}" if done < total else
                    f"Confirming the cheapest by simulation ({CONFIRM_RUNS} runs each)…")
            bar.progress(done / max(total, 1), text)
    return capacity_plan(spec, arrivals=process,
                         executor=executor_for(plan_work(spec, arrivals)), progress=progress)


def unsearchable(spec) -> str:
    """Why no configuration would be priced ("" if some would): every b_max above
    every GPU candidate's largest measured batch."""
    if spec.workload == "gpu" and all(b > h.max_batch for h in spec.hardware
                                      for b in spec.b_max):
        largest = max(h.max_batch for h in spec.hardware)
        return (f"every b_max picked is above the largest batch any candidate measured "
                f"({largest}): pick a b_max of {largest} or less.")
    return ""


def grid_words(spec) -> str:
    """The grid's factors in words: "3 candidates × 8 b_max × 1 queue delay × 32 replica
    counts"."""
    def count(n: int, word: str, plural: str | None = None) -> str:
        return f"{n:,} {word if n == 1 else plural or word + 's'}"
    third = (count(len(spec.token_limit), "token limit") if spec.workload == "llm"
             else count(len(spec.queue_delay_ms), "queue delay"))
    return " × ".join([count(len(spec.hardware), "candidate"), f"{len(spec.b_max)} b_max",
                       third, count(len(spec.replicas), "replica count")])


def latency_unit(spec) -> tuple[str, float]:
    """(unit, factor from ms): ms for the GPU workload, s for the LLM one."""
    return ("s", 1e-3) if spec.workload == "llm" else ("ms", 1.0)


def _sig(x, digits: int = 4):
    """A number rounded to ``digits`` significant digits (nan and inf kept)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.where(np.isfinite(x) & (x != 0), np.floor(np.log10(np.abs(x))), 0)
        scale = 10.0 ** (digits - 1 - mag)
        return np.where(np.isfinite(x), np.round(x * scale) / scale, x)


def _configuration_columns(rows: pd.DataFrame, spec) -> dict:
    u, f = latency_unit(spec)
    p = f"p{spec.percentile:g}"
    out = {"hardware": rows["hardware"].to_numpy(), "b_max": rows["b_max"].to_numpy()}
    if spec.workload == "gpu":
        out["queue delay (ms)"] = rows["queue_delay_ms"].to_numpy()
    else:
        out["token limit (tokens)"] = [("none" if k == 0 else f"{int(k):,}")
                                       for k in rows["token_limit"]]
    out.update({"replicas": rows["replicas"].to_numpy(),
                "cost ($/h)": _sig(rows["cost_usd_per_hour"]),
                "$ per million requests": _sig(rows["cost_usd_per_million"]),
                f"mean latency ({u})": _sig(rows["mean_latency_ms"] * f),
                "mean from": rows["method"].to_numpy(),
                f"{p} screened ({u})": _sig(rows["latency_percentile_ms"] * f)})
    return out


def _tail_columns(rows: pd.DataFrame, spec) -> dict:
    out = {"utilisation (%)": _sig(100 * rows["utilization"], 3),
           "energy (J/request)": _sig(rows["energy_j_per_request"])}
    if spec.workload == "llm":
        out["replies cut (%)"] = _sig(100 * rows["truncated_fraction"], 3)
    return out


def ranked_table(plan, top: int = TOP) -> pd.DataFrame:
    """The cheapest ``top`` configurations meeting the SLA, with their confirmation:
    ✓ confirmed / ✗ missed / — not simulated again, the confirmed percentile and its
    95 % CI half-width."""
    spec, rows = plan.spec, plan.ranked.head(top)
    u, f = latency_unit(spec)
    p = f"p{spec.percentile:g}"
    out = _configuration_columns(rows, spec)
    out["confirmed"] = [CONFIRMED.get(c if isinstance(c, bool) else None, NOT_SIMULATED)
                        for c in rows["confirmed"]]
    out[f"{p} confirmed ({u})"] = _sig(rows["confirmed_percentile_ms"] * f)
    out[f"± 95 % CI ({u})"] = _sig(rows["confirmed_ci_ms"] * f, 2)
    out.update(_tail_columns(rows, spec))
    table = pd.DataFrame(out)
    table.index = np.arange(1, len(table) + 1)
    table.index.name = "rank"
    return table


def all_table(plan, rows: int = ALL_ROWS) -> pd.DataFrame:
    """Every stable configuration priced, cheapest first (then the lower percentile), at
    most ``rows``, with whether it meets the SLA and why not."""
    spec, t = plan.spec, plan.table
    if not len(t):
        return pd.DataFrame()
    t = t.sort_values(["cost_usd_per_hour", "latency_percentile_ms"], kind="stable").head(rows)
    out = _configuration_columns(t, spec)
    out.update(_tail_columns(t, spec))
    out["meets the SLA (screening)"] = ["yes" if m else WHY.get(r, r)
                                        for m, r in zip(t["meets_sla"], t["reason"])]
    return pd.DataFrame(out).replace([np.inf], np.nan)


def per_hardware_table(plan) -> pd.DataFrame:
    """Each candidate at its cheapest configuration meeting the SLA (screening run), its
    cost against the cheapest candidate's, or why it never meets the SLA."""
    spec, rows = plan.spec, plan.per_hardware
    u, f = latency_unit(spec)
    low = rows["cost_usd_per_hour"].min()
    out = []
    for r in rows.itertuples():
        fails = isinstance(r.reason, str) and r.reason not in ("",)
        if fails:
            out.append({"candidate": r.hardware, "replicas": "—", "cost ($/h)": "—",
                        "cost against the cheapest": "—",
                        f"p{spec.percentile:g} screened ({u})": "—",
                        "verdict": f"{WHY.get(r.reason, r.reason)}: {r.detail}"})
            continue
        out.append({"candidate": r.hardware, "replicas": str(int(r.replicas)),
                    "cost ($/h)": money_text(r.cost_usd_per_hour),
                    "cost against the cheapest": f"× {r.cost_usd_per_hour / low:.2f}",
                    f"p{spec.percentile:g} screened ({u})": f"{r.latency_percentile_ms * f:.4g}",
                    "verdict": f"meets the SLA with b_max {int(r.b_max)}"})
    return pd.DataFrame(out)


def rejected_table(plan) -> pd.DataFrame:
    """One row per candidate that never meets the SLA: why, in plain words, and the
    closest it came."""
    r = plan.rejected
    return pd.DataFrame({"candidate": r["hardware"].to_numpy(),
                         "why it fails": [WHY.get(x, x) for x in r["reason"]],
                         "closest it came": r["detail"].to_numpy()})


def reason_counts(plan) -> str:
    """How the configurations priced fared, in one sentence."""
    t = plan.table
    if not len(t):
        return "No configuration was priced."
    counts = t["reason"].value_counts()
    parts = [f"{int(counts.get('', 0)):,} meet the SLA in the screening run"]
    words = {"unstable": "cannot carry the load", "latency": "miss the latency target",
             "energy": "are above the energy cap", "truncation": "cut too many replies"}
    parts += [f"{int(counts[k]):,} {w}" for k, w in words.items() if k in counts]
    return f"Of {len(t):,} configurations priced: " + "; ".join(parts) + "."


def confirmation(plan) -> dict:
    """How many of the cheapest were simulated again, confirmed and missed."""
    c = plan.ranked["confirmed"] if len(plan.ranked) else pd.Series([], dtype=object)
    tried = int(sum(isinstance(v, bool) for v in c))
    ok = int(sum(v is True for v in c))
    return {"tried": tried, "confirmed": ok, "missed": tried - ok,
            "passed": int(len(plan.ranked))}


def confirmation_sentence(plan) -> str:
    """What "confirmed" means, with the counts."""
    c, spec = confirmation(plan), plan.spec
    n = max(CONFIRM_JOBS, 5 * screen_jobs(spec.percentile))
    screened = screen_jobs(spec.percentile)
    text = (f"Every stable configuration was screened by one simulation of {screened:,} "
            f"requests. Before being shown as meeting the SLA, the cheapest that passed "
            f"were simulated again, in order, with {CONFIRM_RUNS} independent runs of "
            f"{n:,} requests each (the percentile is their mean, ± its 95 % interval): "
            f"{c['tried']} tried, {c['confirmed']} confirmed")
    if c["missed"]:
        text += (f", {c['missed']} missed the target on the longer runs (✗: close to the "
                 "target, the screening run was lucky)")
    return text + "."


def best_text(plan) -> dict:
    """The best configuration's numbers as plain text (empty if none)."""
    b, spec = plan.best, plan.spec
    if b is None:
        return {}
    u, f = latency_unit(spec)
    p = f"p{spec.percentile:g}"
    return {"configuration": f"{int(b['replicas'])} × {b['hardware']} "
                             f"({settings_text(spec, b)})",
            "replicas": f"{int(b['replicas'])} × {b['hardware'].split(' · ')[0]}",
            "cost": f"{money_text(b['cost_usd_per_hour'])}/h",
            "per_million": money_text(b["cost_usd_per_million"]),
            "latency": f"{format_number(b['confirmed_percentile_ms'] * f, 3)} {u}",
            "ci": f"± {format_number(b['confirmed_ci_ms'] * f, 2)} {u}",
            "label": f"{p} latency, confirmed",
            "utilisation": f"{100 * b['utilization']:.1f} %",
            "energy": f"{format_number(b['energy_j_per_request'], 3)} J",
            "mean": f"{format_number(b['mean_latency_ms'] * f, 3)} {u} ({b['method']})",
            "cut": f"{100 * b['truncated_fraction']:.2f} %"}


def ranked_csv_bytes(plan) -> bytes:
    """``engine.planner.ranked_csv`` (units in the column names, the answer and the SLA
    in its comment lines) with every cell a spreadsheet would evaluate neutralised."""
    lines = ranked_csv(plan).splitlines(keepends=True)
    head = "".join(ln.rstrip("\r\n") + "\r\n" for ln in lines if ln.startswith("#"))
    body = "".join(ln for ln in lines if not ln.startswith("#"))
    frame = pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)
    return head.encode("utf-8") + to_safe_csv(frame)
