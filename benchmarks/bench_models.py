"""Per-point cost of the other exact solvers, beside a cheaper method of the same run.

* LLM token limits: the exact M/G/1 + deterministic-patience solver (a Volterra
  equation) per point, against the paper's De Kok-Tijms interpolation per point.
* CPU-GPU pipeline: one exact matrix-geometric tandem solve for K <= 16, c <= 128,
  against the naive decomposition (independent stations); the goal is a slider's
  budget (tens of ms).
"""
import numpy as np

from benchmarks.harness import Row, best_time
from engine import pipeline, token_laws, token_limit


def run() -> list[Row]:
    rows = []
    dist = token_laws.lognormal(7.0, 0.7)
    a, c = 0.023087, 0.49
    limits = np.round(np.linspace(200, 3000, 20))
    exact = best_time(lambda: token_limit.impatience(1 / 25, a, c, dist, limits, 60.0,
                                                     method="exact"), repeat=3) / limits.size
    interp = best_time(lambda: token_limit.impatience(1 / 25, a, c, dist, limits, 60.0,
                                                      method="interpolation"),
                       repeat=3) / limits.size
    rows.append(Row("exact impatience solver, per point", exact * 1e3, "ms",
                    "interpolation ms", interp * 1e3, interp / exact, "report", None))
    mu = (1.0, 2.0, 0.1)
    for K, cu in ((8, 16), (16, 32), (16, 128)):
        lam = 0.5 * float(pipeline.capacity(*mu, K, cu))
        t = best_time(lambda: pipeline.tandem(lam, *mu, K, cu), repeat=1 if cu > 64 else 3)
        naive = best_time(lambda: pipeline.tandem_independent(lam, *mu, K, cu), repeat=3)
        rows.append(Row(f"exact tandem K={K}, c={cu}, one point", t * 1e3, "ms",
                        "naive ms", naive * 1e3, naive / t, "<= 50 ms", t <= 0.050))
    return rows
