"""The plan's tables in plain words with units, for every family: the columns come from
the family's declaration (``csv_columns``, ``sla_columns``, ``confirm_columns``, its
knobs), their headers and units from ``header``.  Latencies in the family's
``time_unit`` (ms or s), the unit in every column header.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

from engine.planner import money_text, ranked_csv
from engine.planner.families import METRICS
from engine.planner.price import REASONS
from ui.export import significant
from ui.uploads import to_safe_csv

TOP = 20                   # rows of the ranked table
ALL_ROWS = 2000            # rows of the "All configurations" view
CONFIRMED = {True: "✓ confirmed", False: "✗ missed"}
NOT_SIMULATED = "—"
WHY = {**REASONS, "not searched": "not searched: every b_max picked is above its largest "
                                  "measured batch",
       "kv": "the KV cache cannot hold the longest request"}
MISS = {"unstable": "cannot carry the load", "latency": "miss the latency target",
        "kv": "cannot hold the longest request in their KV cache",
        "energy": "are above the energy cap", "truncation": "cut too many replies"}
#: short headers of known columns (a knob not here is headed by its label)
HEADERS = {"hardware": "hardware", "prefill_hardware": "prefill hardware",
           "decode_hardware": "decode hardware", "b_max": "b_max",
           "queue_delay_ms": "queue delay (ms)", "token_limit": "token limit (tokens)",
           "replicas": "replicas", "max_num_seqs": "max_num_seqs",
           "max_num_batched_tokens": "token budget (tokens)",
           "prefill_instances": "prefill instances", "decode_instances": "decode instances",
           "gpus": "GPUs", "cost_usd_per_hour": "cost ($/h)",
           "cost_usd_per_million": "$ per million requests", "binding": "binding",
           "sla_ratio": "worst / target", "confirmed": "confirmed",
           "utilization": "utilization (%)", "mean_batch_size": "mean batch (requests)",
           "energy_j_per_request": "energy (J/request)", "truncated_fraction": "replies cut (%)"}
MEANS = {"mean_latency_ms": "mean latency", "mean_ttft_ms": "mean TTFT",
         "mean_tpot_ms": "mean TPOT", "mean_e2e_ms": "mean e2e"}


def latency_unit(spec) -> tuple[str, float]:
    """(unit, factor from ms): the family's ``time_unit``."""
    return ("s", 1e-3) if spec.family.time_unit == "s" else ("ms", 1.0)


def sla_name(spec, metric: str, q: float) -> str:
    """An SLA row's short name: "p99" (a family held to one metric), "p95 TTFT"."""
    one = len(spec.family.metrics) == 1
    return f"p{q:g}" if one else f"p{q:g} {METRICS[metric][1]}"


def sla_rows(spec) -> list[tuple[str, str, tuple]]:
    """(SLA column, its short name, its (confirmed estimate, CI) columns) per SLA row."""
    fam = spec.family
    conf = fam.confirm_columns(spec)
    return [(c, sla_name(spec, m, q), conf[c]) for c, (m, q, _) in
            zip(fam.sla_columns(spec), spec.sla)]


def _headers(spec) -> dict:
    """{column: (header, how to show it)} for every column a table of ``spec`` shows."""
    fam = spec.family
    u, f = latency_unit(spec)
    out = {c: (HEADERS[c], None) for c in HEADERS}
    for knob in fam.knobs:
        if knob.name not in HEADERS:
            out[knob.name] = (f"{knob.label} ({knob.unit})", None)
    out["token_limit"] = (HEADERS["token_limit"],
                          lambda v: ["none" if k == 0 else f"{int(k):,}" for k in v])
    out["capacity_per_s"] = (f"capacity ({fam.load_unit})", significant)
    for c in ("cost_usd_per_hour", "cost_usd_per_million", "energy_j_per_request", "sla_ratio"):
        out[c] = (HEADERS[c], significant)
    for c in ("utilization", "truncated_fraction"):
        out[c] = (HEADERS[c], lambda v: significant(100 * np.asarray(v, float), 3))
    out["mean_batch_size"] = (HEADERS["mean_batch_size"], lambda v: significant(v, 3))
    out["confirmed"] = ("confirmed", lambda v: [CONFIRMED.get(c if isinstance(c, bool) else None,
                                                              NOT_SIMULATED) for c in v])
    scaled = lambda digits=4: (lambda v: significant(np.asarray(v, float) * f, digits))  # noqa: E731
    for c, word in MEANS.items():
        out[c] = (f"{word} ({u})", scaled())
    out["method"] = ("mean from" if "mean_latency_ms" in fam.csv_columns(spec)
                     else "screened by", None)
    rows = sla_rows(spec)
    for col, name, (est, ci) in rows:
        out[col] = (f"{name} screened ({u})", scaled())
        out[est] = (f"{name} confirmed ({u})", scaled())
        out[ci] = (f"± 95 % CI ({u})" if len(rows) == 1 else f"{name} ± 95 % CI ({u})",
                   scaled(2))
    return out


def _frame(rows: pd.DataFrame, spec, cols) -> dict:
    """The columns ``cols`` of ``rows`` with their headers, shown as ``_headers`` says
    (a column the table lacks is left out)."""
    heads = _headers(spec)
    out = {}
    for c in cols:
        if c not in rows.columns:
            continue
        head, show = heads.get(c, (c, None))
        values = rows[c].to_numpy()
        out[head] = show(values) if show is not None else values
    return out


def _shown_columns(spec, *, confirmed: bool) -> list[str]:
    """The family's CSV columns as the page shows them: "hardware" left out where the
    prefill and decode hardware are columns; without the confirmation, for the screening
    tables."""
    fam = spec.family
    cols = list(fam.csv_columns(spec))
    if set(fam.point_columns() if hasattr(fam, "point_columns") else ()) & set(cols):
        cols.remove("hardware")
    if not confirmed:
        drop = {"confirmed", *(c for pair in fam.confirm_columns(spec).values() for c in pair)}
        cols = [c for c in cols if c not in drop]
    return cols


def ranked_table(plan, top: int = TOP) -> pd.DataFrame:
    """The cheapest ``top`` configurations meeting the SLA, with their confirmation:
    ✓ confirmed / ✗ missed / — not simulated again, the confirmed percentiles and their
    95 % CI half-widths."""
    spec = plan.spec
    table = pd.DataFrame(_frame(plan.ranked.head(top), spec,
                                _shown_columns(spec, confirmed=True)))
    table.index = np.arange(1, len(table) + 1)
    table.index.name = "rank"
    return table


def all_table(plan, rows: int = ALL_ROWS) -> pd.DataFrame:
    """Every configuration priced, cheapest first (then the family's tie column), at
    most ``rows``, with whether it meets the SLA and why not."""
    spec, t = plan.spec, plan.table
    if not len(t):
        return pd.DataFrame()
    t = t.sort_values(["cost_usd_per_hour", spec.family.tie_column(spec)],
                      kind="stable").head(rows)
    out = _frame(t, spec, _shown_columns(spec, confirmed=False))
    out["meets the SLA (screening)"] = ["yes" if m else why(spec, r)
                                        for m, r in zip(t["meets_sla"], t["reason"])]
    return pd.DataFrame(out).replace([np.inf], np.nan)


def why(spec, reason: str) -> str:
    """Why a configuration or candidate fails, in plain words."""
    if reason in METRICS and reason not in WHY:
        return f"{METRICS[reason][1]} above the target"
    return WHY.get(reason, reason)


def servers_text(spec, row, short: bool = False) -> str:
    """A configuration's servers in a few words: "7 replicas", "1 prefill + 2 decode
    instances" (``short``: "1 P + 2 D")."""
    fam = spec.family
    counts = [(k, int(row[k])) for k in fam.scale_knobs] or [("replicas", int(row["replicas"]))]
    if len(counts) == 1:
        k, n = counts[0]
        return f"{n} {k.replace('_', ' ') if n != 1 else k.rstrip('s').replace('_', ' ')}"
    if short:
        return " + ".join(f"{n} {k[0].upper()}" for k, n in counts)
    return " + ".join(f"{n} {k.split('_')[0]}" for k, n in counts) + " instances"


def per_hardware_table(plan) -> pd.DataFrame:
    """Each candidate at its cheapest configuration meeting the SLA (screening), its
    cost against the cheapest candidate's, or why it never meets the SLA."""
    spec, rows = plan.spec, plan.per_hardware
    fam = spec.family
    u, f = latency_unit(spec)
    shown = sla_rows(spec)
    out = []
    for r in rows.to_dict("records"):
        reason = r.get("reason")
        if isinstance(reason, str) and reason:
            out.append({"candidate": r["hardware"], "servers": "—", "cost ($/h)": "—",
                        "cost against the cheapest": "—",
                        **{f"{name} screened ({u})": "—" for _, name, _ in shown},
                        "verdict": f"{why(spec, reason)}: {r['detail']}"})
            continue
        out.append({"candidate": r["hardware"], "servers": servers_text(spec, r),
                    "cost ($/h)": money_text(r["cost_usd_per_hour"]),
                    "cost against the cheapest": f"× {r['cost_vs_cheapest']:.2f}",
                    **{f"{name} screened ({u})": f"{r[col] * f:.4g}" for col, name, _ in shown},
                    "verdict": f"meets the SLA with {fam.settings_text(spec, r)}"})
    return pd.DataFrame(out)


def rejected_table(plan) -> pd.DataFrame:
    """One row per candidate that never meets the SLA: why, in plain words, and the
    closest it came."""
    r = plan.rejected
    return pd.DataFrame({"candidate": r["hardware"].to_numpy(),
                         "why it fails": [why(plan.spec, x) for x in r["reason"]],
                         "closest it came": r["detail"].to_numpy()})


def reason_counts(plan) -> str:
    """How the configurations priced fared, in one sentence."""
    t = plan.table
    if not len(t):
        return "No configuration was priced."
    counts = t["reason"].value_counts()
    parts = [f"{int(counts.get('', 0)):,} meet the SLA in the screening"]
    words = {**MISS, **{m: f"miss the {METRICS[m][1]} target" for m in plan.spec.family.metrics
                        if m not in MISS}}
    parts += [f"{int(counts[k]):,} {w}" for k, w in words.items() if k in counts]
    return f"Of {len(t):,} configurations priced: " + "; ".join(parts) + "."


def ranked_csv_bytes(plan) -> bytes:
    """``engine.planner.ranked_csv`` (units in the column names, the answer and the SLA
    in its comment lines) with every cell a spreadsheet would evaluate neutralised."""
    lines = ranked_csv(plan).splitlines(keepends=True)
    head = "".join(ln.rstrip("\r\n") + "\r\n" for ln in lines if ln.startswith("#"))
    body = "".join(ln for ln in lines if not ln.startswith("#"))
    frame = pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)
    return head.encode("utf-8") + to_safe_csv(frame)
