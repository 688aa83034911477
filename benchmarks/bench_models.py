"""Per-point cost of the other exact solvers, beside a cheaper or older method of the same run.

* LLM token limits: the exact M/G/1 + deterministic-patience solver (a Volterra
  equation) per point, against the paper's De Kok-Tijms interpolation per point.
* CPU-GPU pipeline: one exact tandem solve at 98 % of the capacity for K <= 16,
  c <= 128, both blocking rules (rates 1, 2, 0.1 per time unit), against the
  previous solver (logarithmic reduction on the full phase space, kept as
  ``pipeline.tandem(..., method="reference")``) or, where that takes minutes,
  the naive decomposition.  At c = 128 these rates leave the compute units never
  all busy (probability below 1e-18), so the reduced chain applies; at c <= 64
  the full phase space is solved (O(N^3), N = (K+1)(c+1)).  Where the units can
  fill at c = 128 a point takes about 50 s on that route, too slow for this
  table (see engine/pipeline/); the previous solver took 70-90 s a point at
  c = 128 even here, so that row's baseline is the naive decomposition.  The
  goal is a slider's budget (tens of ms).
"""
import numpy as np

from benchmarks.harness import Row, best_time
from engine import pipeline, token_limit
from engine.core import token_laws


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
    cases = [((1.0, 2.0, 0.1), 8, 16, "previous"), ((1.0, 2.0, 0.1), 16, 32, "previous"),
             ((1.0, 2.0, 0.1), 16, 64, "naive"), ((1.0, 2.0, 0.1), 16, 128, "naive")]
    for mu, K, cu, base in cases:
        for blocking in pipeline.BLOCKING:
            rows.append(_tandem_row(mu, K, cu, blocking, base))
    return rows


def _tandem_row(mu, K, cu, blocking, base):
    lam = 0.98 * float(pipeline.capacity(*mu, K, cu, blocking))
    slow = cu > 32 and not _units_never_full(mu, K, cu)
    t = best_time(lambda: pipeline.tandem(lam, *mu, K, cu, blocking), repeat=1 if slow else 5)
    if base == "previous":
        ref = best_time(lambda: pipeline.tandem(lam, *mu, K, cu, blocking, method="reference"),
                        repeat=1 if cu > 16 else 3)
        base_name = "previous solver ms"
    else:
        ref = best_time(lambda: pipeline.tandem_independent(lam, *mu, K, cu), repeat=3)
        base_name = "naive ms"
    name = f"exact tandem K={K}, c={cu}, {blocking}, 98 %"
    return Row(name, t * 1e3, "ms", base_name, ref * 1e3, ref / t, "<= 50 ms", t <= 0.050)


def _units_never_full(mu, K, cu) -> bool:
    return pipeline.solve_phases(*mu, K, cu) == K + 1
