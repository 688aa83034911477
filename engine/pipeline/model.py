"""The frozen model object of the CPU → GPU memory → compute-unit tandem (numpy.polynomial's
class layer over the module functions): ``Tandem`` binds the three stage rates
(jobs per ms), the room K in GPU memory, the c compute units and the blocking rule, and
its methods give the exact answers (the matrix-geometric ``tandem``, the capacity
θA2·1, the naive decomposition, the operating point, the what-ifs) and a simulated
run, each the module function of the same name.

``Tandem`` is the model, like ``batching.DynamicBatching``; the exact solution's measures
are ``exact.TandemMeasures`` (the class that was called ``Tandem`` before).  The model's
old name ``BlockingTandem`` still reads from ``engine.pipeline`` for one release, with a
``DeprecationWarning``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.domains import PIPE_C, PIPE_K, PIPE_MU_CPU, PIPE_MU_CU, PIPE_MU_MEM
from .answers import OperatingPoint, operating_point
from .checks import blocking_rule, single_integer
from .curves import family_cases, what_if_capacities
from .exact import TandemMeasures, capacity, solve_phases, tandem, tandem_independent
from .sim import TandemSimResult, simulate_tandem
from .specs import PipelineRates


@dataclass(frozen=True)
class Tandem:
    """The blocking tandem of May & Voigt (2010) with its parameters bound.

    >>> m = Tandem(1.0, 2.0, 0.1, K=8, c=16)
    >>> bool(m.capacity_per_ms < min(1.0, 2.0, 16 * 0.1))
    True
    >>> m.n_phases
    153
    """

    mu_cpu_per_ms: float           # CPU + host link, jobs per ms
    mu_mem_per_ms: float           # GPU global memory, jobs per ms
    mu_cu_per_ms: float            # one compute unit, jobs per ms
    K: int                         # jobs the GPU memory holds
    c: int                         # compute units
    blocking: str = "before"       # "before" (the paper's rule) or "after" service

    def __post_init__(self):
        PIPE_MU_CPU.check(self.mu_cpu_per_ms, "mu_cpu_per_ms")
        PIPE_MU_MEM.check(self.mu_mem_per_ms, "mu_mem_per_ms")
        PIPE_MU_CU.check(self.mu_cu_per_ms, "mu_cu_per_ms")
        single_integer(self.K, PIPE_K)
        single_integer(self.c, PIPE_C)
        blocking_rule(self.blocking)

    @classmethod
    def from_rates(cls, rates: PipelineRates, blocking: str = "before") -> Tandem:
        """The tandem of spec-based ``rates`` (``rates_from_specs``)."""
        return cls(float(rates.mu_cpu_per_ms), float(rates.mu_mem_per_ms),
                   float(rates.mu_cu_per_ms), int(rates.K), int(rates.c), blocking)

    @property
    def args(self) -> tuple:
        """(μ_cpu, μ_mem, μ_cu, K, c, blocking): the module functions' arguments."""
        return (self.mu_cpu_per_ms, self.mu_mem_per_ms, self.mu_cu_per_ms, self.K, self.c,
                self.blocking)

    @property
    def capacity_per_ms(self) -> float:
        """The exact capacity λ* = θA2·1, jobs per ms (``exact.capacity``)."""
        return float(capacity(*self.args))

    @property
    def n_phases(self) -> int:
        """Phases of the exact solve (its cost grows as their cube; ``solve_phases``)."""
        return solve_phases(*self.args)

    def exact(self, lam_per_ms) -> TandemMeasures:
        """The exact stationary measures at the loads ``lam_per_ms`` (``exact.tandem``)."""
        return tandem(lam_per_ms, *self.args)

    def naive(self, lam_per_ms) -> TandemMeasures:
        """The naive decomposition into independent stations (``tandem_independent``)."""
        return tandem_independent(lam_per_ms, *self.args[:5])

    def operating_point(self, rates: PipelineRates, lam_per_ms: float) -> OperatingPoint:
        """Each stage at one load (``answers.operating_point``; ``rates`` for the
        stages' own rates, those of this tandem)."""
        return operating_point(rates, lam_per_ms, self.exact(lam_per_ms), self.capacity_per_ms)

    def what_if_capacities(self, max_phases: int = 3_000) -> dict:
        """λ* with K + 1, 2K, c + 1 and 2c (``curves.what_if_capacities``)."""
        return what_if_capacities(*self.args, max_phases)

    def family_cases(self, vary: str, max_phases: int = 3_000) -> tuple:
        """The (K, c) pairs of capacity against K or c (``curves.family_cases``)."""
        return family_cases(vary, self.K, self.c, *self.args[:3], self.blocking, max_phases)

    def simulate(self, lam_per_ms, n_jobs: int = 200_000, seed=None, *, warmup_jobs=None,
                 backend: str | None = None, arrivals=None) -> TandemSimResult:
        """A simulated run (``sim.simulate_tandem``)."""
        return simulate_tandem(lam_per_ms, *self.args, n_jobs, seed, warmup_jobs=warmup_jobs,
                               backend=backend, arrivals=arrivals)
