"""Exact mean latency: a 200-point curve up to ρ = 0.99, against the truncated chain.

Baseline: the batch-size chain of Inoue 2021 eq 6 truncated to convergence and
solved as a sparse linear system (tests/reference.py), per point, at loads on
the same curve.  The goal for the curve is ≤ 50 ms (a slider's budget).
"""
import numpy as np

from benchmarks.harness import Row, best_time
from engine import batching as bt
from tests.reference import converged_batch_chain_latency

PRESETS = {"V100": (0.1438, 1.8874), "P4": (0.5833, 1.4284)}


def run() -> list[Row]:
    rows = []
    rho = np.linspace(0.005, 0.99, 200)
    for name, (alpha, tau0) in PRESETS.items():
        lam = rho / alpha
        curve = best_time(lambda: bt.mean_latency(lam, alpha, tau0), repeat=7)
        sample = rho[::40]                      # 5 points of the same curve
        chain = best_time(lambda: [converged_batch_chain_latency(r / alpha, alpha, tau0)
                                   for r in sample], repeat=1) / sample.size
        per_point = curve / rho.size
        rows.append(Row(f"exact E[W] curve, 200 pts, {name}", curve * 1e3, "ms",
                        "chain ms/pt", chain * 1e3, chain / per_point, "<= 50 ms",
                        curve <= 0.050))
    alpha, tau0 = PRESETS["V100"]
    lam = 0.7 * bt.capacity(alpha, tau0, 64) * np.linspace(0.1, 1, 20)
    finite = best_time(lambda: [bt.exact.limited_solution(x, alpha * np.arange(1, 65) + tau0)
                                for x in lam], repeat=3) / lam.size
    phi = best_time(lambda: bt.phi(rho / alpha, alpha, tau0), repeat=20)
    rows.append(Row("exact E[W], b_max = 64, per point", finite * 1e3, "ms",
                    "phi (closed) ms/200", phi * 1e3, phi / finite, "report", None))
    return rows
