"""Declared domains of the engine's parameters, checked at one boundary.

Every public engine function validates its arguments here (scipy's ``_argcheck``
pattern): a value outside its declared domain raises ``ValueError`` naming the
parameter and the valid range.  The same declarations give slider bounds and
the ranges property tests draw from (``typical``).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np


@dataclass(frozen=True)
class Domain:
    """Valid range of one real parameter.

    ``low``/``high`` bound the domain; ``low_open``/``high_open`` exclude the
    bound itself.  ``allow_inf`` admits +inf (e.g. an arrival rate beyond any
    capacity, which is *unstable*, not invalid).  ``typical`` is the range a
    user or a property test normally explores.
    """

    name: str
    unit: str
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    allow_inf: bool = False
    typical: tuple[float, float] = (0.0, 1.0)
    description: str = ""

    def describe(self) -> str:
        lo = "(" if self.low_open else "["
        hi = ")" if self.high_open or self.high == math.inf else "]"
        kind = "an integer" if self.integer else "a number"
        return f"{kind} in {lo}{self.low:g}, {self.high:g}{hi}"

    def check(self, value, name: str | None = None) -> np.ndarray:
        """Return ``value`` as a float array, or raise ``ValueError`` naming it."""
        name = name or self.name
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}") from None
        if np.isnan(arr).any():
            raise ValueError(f"{name} must be {self.describe()}, got NaN")
        bad = np.zeros(arr.shape, dtype=bool)
        if not self.allow_inf:
            bad |= np.isinf(arr)
        else:
            bad |= arr == -np.inf
        finite = np.isfinite(arr)
        bad |= (arr < self.low) | (arr > self.high)
        if self.low_open:
            bad |= arr == self.low
        if self.high_open:
            bad |= arr == self.high
        if self.integer:
            bad |= finite & (arr != np.round(arr))
        if bad.any():
            example = arr[bad].flat[0] if arr.ndim else float(arr)
            raise ValueError(f"{name} must be {self.describe()}, got {example:g}")
        return arr


LAM = Domain("lam", "jobs per time unit", low=0.0, allow_inf=True, typical=(0.0, 10.0),
             description="Poisson arrival rate λ (per ms with the presets)")
ALPHA = Domain("alpha", "time per job", low=0.0, low_open=True, typical=(0.01, 2.0),
               description="per-job batch time α (slope of τ[b] = αb + τ0)")
TAU0 = Domain("tau0", "time", low=0.0, typical=(0.0, 5.0),
              description="fixed batch overhead τ0 (intercept of τ[b] = αb + τ0)")
B_MAX = Domain("b_max", "jobs", low=1.0, integer=True, allow_inf=True, typical=(1, 256),
               description="largest batch the server forms (None or inf: unlimited)")
BETA = Domain("beta", "energy per job", low=0.0, low_open=True, typical=(0.001, 1.0),
              description="per-job energy β (slope of c[b] = βb + c0, Inoue 2021 eq 17)")
C0 = Domain("c0", "energy", low=0.0, typical=(0.0, 1.0),
            description="per-batch energy overhead c0 (intercept of c[b] = βb + c0)")
DELAY = Domain("max_queue_delay", "time", low=0.0, typical=(0.0, 10.0),
               description="longest wait for more requests before a batch below the preferred size starts")
PREFERRED = Domain("preferred_batch_size", "jobs", low=1.0, integer=True, typical=(1, 128),
                   description="batch size that starts at once without waiting")
N_JOBS = Domain("n_jobs", "jobs", low=1.0, integer=True, typical=(1_000, 1_000_000),
                description="number of simulated jobs")
WARMUP = Domain("warmup_jobs", "jobs", low=0.0, integer=True, typical=(0, 100_000),
                description="jobs left out of the statistics at the start of a run")


def check_b_max(b_max) -> np.ndarray:
    """b_max as a float array where ``inf`` means unlimited (``None`` accepted)."""
    if b_max is None:
        return np.asarray(np.inf)
    if isinstance(b_max, (list, tuple)):
        b_max = [np.inf if b is None else b for b in b_max]
    return B_MAX.check(b_max)
