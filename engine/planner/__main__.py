"""``python -m engine.planner PLAN.toml [--out results.csv] [--dask ADDRESS]``: run a plan
file (``engine.planner.read_plan``; the planner page downloads its inputs as one) and print
the answer, the cheapest configurations and why rejected candidates fail.  ``--out``
writes the ranked table as CSV (units in the column names); ``--dask ADDRESS`` prices the
configurations on a Dask cluster (``tcp://host:8786``; ``local`` starts one on this
machine; needs ``pip install -r requirements-dask.txt``); without it, local processes."""
from __future__ import annotations

import argparse
from pathlib import Path
import sys
import time

from .. import sweep
from .files import arrival_process, read_plan
from .plan import capacity_plan, ranked_csv

SHOWN = ["hardware", "b_max", "queue_delay_ms", "token_limit", "replicas", "cost_usd_per_hour",
         "mean_latency_ms", "latency_percentile_ms", "confirmed", "confirmed_percentile_ms"]


def shown_columns(spec) -> list[str]:
    """The columns the command line prints of the ranked table."""
    fam = spec.family
    if spec.workload == "gpu":
        return [c for c in SHOWN if c != "token_limit"]
    if spec.workload == "llm":
        return [c for c in SHOWN if c != "queue_delay_ms"]
    est = [pair[0] for pair in fam.confirm_columns(spec).values()]
    return [*fam.point_columns(), *(k.name for k in fam.knobs), "cost_usd_per_hour",
            *fam.sla_columns(spec), "confirmed", *est] if fam.point_columns() else \
        ["hardware", *(k.name for k in fam.knobs), "cost_usd_per_hour",
         *fam.sla_columns(spec), "confirmed", *est]


def progress_bar(stream=None, width: int = 40, tty=None):
    """A ``progress(done, total)`` callback drawing a text bar on ``stream`` (default: the
    standard error stream of the moment).  On a terminal (``tty`` None: the stream says)
    the bar redraws in place; written to a file or a pipe, one plain line per tenth of
    the work and the last, so a log holds lines, not carriage returns."""
    stream = sys.stderr if stream is None else stream
    if tty is None:
        tty = bool(getattr(stream, "isatty", lambda: False)())
    start = time.perf_counter()
    shown = [-1]

    def draw(done: int, total: int) -> None:
        filled = int(width * done / max(total, 1))
        text = (f"[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} "
                f"configurations, {time.perf_counter() - start:.1f} s")
        if tty:
            stream.write("\r" + text + ("\n" if done >= total else ""))
        else:
            tenth = 10 * done // max(total, 1)
            if tenth == shown[0] and done < total:
                return
            shown[0] = tenth
            stream.write(text + "\n")
        stream.flush()
    return draw


def _plain(x: float) -> str:
    """A table cell: whole numbers from 1,000 (thousands separated), else 4 significant
    digits; "unstable" for an infinite latency, "—" for none."""
    if x != x:
        return "—"
    if x in (float("inf"), float("-inf")):
        return "unstable"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.planner", description=__doc__)
    parser.add_argument("plan", help="the plan file (TOML)")
    parser.add_argument("--out", help="write the ranked configurations to this CSV file")
    parser.add_argument("--dask", metavar="ADDRESS",
                        help="a Dask scheduler (tcp://host:8786), or 'local' for a local cluster")
    args = parser.parse_args(argv)
    path = Path(args.plan)
    try:
        spec = read_plan(path.read_bytes())
        arrivals = arrival_process(spec, base_dir=path.parent)
        workload = (spec.family.workload(spec, base_dir=path.parent)
                    if hasattr(spec.family, "workload") else None)
    except OSError as exc:
        print(f"error: cannot read {args.plan}: {exc.strerror}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error in {args.plan}: {exc}", file=sys.stderr)
        return 2
    executor = None
    if args.dask:
        try:
            executor = sweep.dask_executor(None if args.dask == "local" else args.dask)
        except (ImportError, OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    try:
        print(f"Pricing {spec.n_configurations:,} configurations "
              f"({'Dask at ' + args.dask if args.dask else 'local processes'})...",
              file=sys.stderr)
        plan = capacity_plan(spec, arrivals=arrivals, workload=workload, executor=executor,
                             progress=progress_bar())
    finally:
        if executor is not None:
            executor.shutdown()
    print(plan.answer)
    cols = [c for c in shown_columns(spec) if c in plan.ranked.columns]
    if len(plan.ranked):
        print("\nCheapest configurations meeting the SLA (latencies in ms, cost in $/h):")
        print(plan.ranked[cols].head(10).to_string(index=False, float_format=_plain))
    if plan.fewer is not None and len(plan.fewer):
        for _, row in plan.fewer.iterrows():
            print(f"With {spec.family.fleet_text(row)}: misses the SLA in simulation.")
    for row in plan.rejected.itertuples():
        print(f"Rejected: {row.hardware}: {row.reason} ({row.detail})")
    if args.out:
        Path(args.out).write_text(ranked_csv(plan), encoding="utf-8")
        print(f"\nWrote {len(plan.ranked):,} ranked configurations to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
