"""Timing and the one results table every benchmark reports into."""
from __future__ import annotations

from dataclasses import dataclass
import time


def best_time(fn, repeat: int = 5, min_time: float = 0.0) -> float:
    """Best wall time of ``fn()`` over ``repeat`` runs (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


@dataclass
class Row:
    name: str
    value: float
    unit: str
    baseline_name: str
    baseline: float
    ratio: float            # how many times better than the baseline (higher is better)
    goal: str
    met: bool | None


def print_table(rows: list[Row]) -> None:
    head = f"{'benchmark':44} {'value':>14} {'baseline':>30} {'ratio':>10}  {'goal':18} ok"
    print(head)
    print("-" * len(head))
    for r in rows:
        value = f"{r.value:,.3g} {r.unit}"
        base = f"{r.baseline_name} {r.baseline:,.3g}"
        ok = "-" if r.met is None else ("yes" if r.met else "NO")
        print(f"{r.name:44} {value:>14} {base:>30} {r.ratio:>9.1f}x  {r.goal:18} {ok}")
