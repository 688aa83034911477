"""The exact blocking tandem (``tandem``, ``capacity``, ``solve_phases``) and the naive
decomposition into independent stations (``tandem_independent``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import (LAM, PIPE_C, PIPE_K, PIPE_METHOD, PIPE_MU_CPU, PIPE_MU_CU,
                            PIPE_MU_MEM)
from ..core.renamed import renamed_attribute
from .blas import ensure_blas_limit
from .chain import Phases, free_phases, full_phases, units_never_all_busy
from .checks import blocking_rule, single_integer
from .qbd import saturation, solve_stable, solve_stable_lr
from .stations import mm1, mm1k, mmcc

METHODS = PIPE_METHOD.values
_CHUNK_ELEMENTS = 6_000_000   # batch points per dense solve: P·N² at most this


@dataclass(frozen=True)
class TandemMeasures:
    """Stationary measures of the CPU → memory → compute-unit tandem (broadcast arrays),
    in the pipeline's units: rates in jobs per ms, times in ms (the functions compute in
    any one time unit used consistently; the names say ms, the unit of the spec mapping
    and of ``Tandem``).

    ``l_*``: mean number of jobs at each stage (a count, no unit); ``w_*_ms``: mean time
    a job spends at each stage, by Little's law from ``l_*`` and ``throughput_per_ms``;
    the CPU's time includes time blocked.  ``p_*_blocked``: time fraction the stage
    holds a job it has finished (after) or may not work on (before) because the next
    stage is full.  Beyond ``max_throughput_per_ms`` the CPU queue grows without bound:
    ``l_cpu``, ``w_cpu_ms``, ``w_total_ms``, ``l_total`` are inf and the downstream
    measures are those of the saturated system.  The old field names (``w_cpu``,
    ``throughput``, …) still read, with a ``DeprecationWarning``.
    """

    stable: np.ndarray
    max_throughput_per_ms: np.ndarray    # the saturation throughput λ*, jobs per ms
    throughput_per_ms: np.ndarray        # completed jobs per ms
    l_cpu: np.ndarray                    # mean jobs at the CPU stage (queued, served, blocked)
    l_mem: np.ndarray                    # mean jobs in GPU memory
    l_cu: np.ndarray                     # mean jobs on compute units (= mean busy units)
    w_cpu_ms: np.ndarray                 # mean time at the CPU stage, ms
    w_mem_ms: np.ndarray                 # mean time in GPU memory, ms
    w_cu_ms: np.ndarray                  # mean time on a compute unit, ms
    p_cpu_blocked: np.ndarray            # time fractions, in [0, 1]
    p_mem_blocked: np.ndarray

    max_throughput = renamed_attribute("max_throughput_per_ms")
    throughput = renamed_attribute("throughput_per_ms")
    w_cpu = renamed_attribute("w_cpu_ms")
    w_mem = renamed_attribute("w_mem_ms")
    w_cu = renamed_attribute("w_cu_ms")
    w_total = renamed_attribute("w_total_ms")

    @property
    def l_total(self) -> np.ndarray:
        """Mean jobs in the pipeline (a count)."""
        return self.l_cpu + self.l_mem + self.l_cu

    @property
    def w_total_ms(self) -> np.ndarray:
        """Mean time in the pipeline, ms."""
        return self.w_cpu_ms + self.w_mem_ms + self.w_cu_ms


def tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking="before", *,
           method="auto") -> TandemMeasures:
    """Exact stationary solution of the blocking tandem (matrix-geometric).

    ``lam``, ``mu_cpu``, ``mu_mem``, ``mu_cu`` (jobs per ms; any one time unit used
    consistently gives the same numbers in that unit) broadcast;
    ``K``, ``c`` are integers (one phase space per call).  ``blocking="before"``:
    a stage does not start or continue work while the next stage is full (the
    paper's rule); ``"after"``: a finished job waits in its server until a place
    frees downstream.  λ ≥ ``max_throughput_per_ms`` is unstable (inf for the CPU queue
    and the totals).  ``method``: "auto" solves the points whose compute units are
    provably never all busy on K + 1 (K + 2) phases and the rest on the full
    N = (K+1)(c+1) (+ K + c + 2) phases, cost O(N³) a point; "full" every point
    on the full phases; "reference" the full phases by logarithmic reduction (an
    independent check).  The routes: docs/models/pipeline.md.
    """
    PIPE_METHOD.check(method)
    lam = LAM.check(lam)
    mu_cpu, mu_mem, mu_cu = (PIPE_MU_CPU.check(mu_cpu), PIPE_MU_MEM.check(mu_mem),
                             PIPE_MU_CU.check(mu_cu))
    K, c = single_integer(K, PIPE_K), single_integer(c, PIPE_C)
    blocking = blocking_rule(blocking)
    ensure_blas_limit()
    lam, mu_cpu, mu_mem, mu_cu = np.broadcast_arrays(lam, mu_cpu, mu_mem, mu_cu)
    shape = lam.shape
    lam = lam.ravel()
    rates = np.stack([mu_cpu.ravel(), mu_mem.ravel(), mu_cu.ravel()], axis=1)
    size = lam.size
    out = {k: np.zeros(size) for k in ("l_cpu", "l_mem", "l_cu", "p_cpu_blocked",
                                       "p_mem_blocked", "cap")}
    free = np.zeros(size, dtype=bool)
    if method == "auto" and size:
        free = units_never_all_busy(rates, K, c)
    solver = solve_stable_lr if method == "reference" else solve_stable
    for ph, sel in ((free_phases(K, blocking), np.flatnonzero(free)),
                    (full_phases(K, c, blocking), np.flatnonzero(~free))):
        _fill(ph, lam, rates, sel, out, solver)
    stable = lam < out["cap"]
    thr = np.where(stable, lam, out["cap"])
    # units left out of the chain: every job spends 1/μ_cu in one (Little's law)
    out["l_cu"][free] = thr[free] / rates[free, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = [np.where(lam > 0, out[f"l_{s}"] / thr, 1.0 / rates[:, j])
             for j, s in enumerate(("cpu", "mem", "cu"))]
    # time fractions: rounding of the solves can leave -1e-25 where one is 0
    blocked = [np.clip(out[f"p_{s}_blocked"], 0.0, 1.0) for s in ("cpu", "mem")]
    res = [stable, out["cap"], thr, out["l_cpu"], out["l_mem"], out["l_cu"], *w, *blocked]
    return TandemMeasures(*(np.asarray(x).reshape(shape)[()] for x in res))


def _fill(ph: Phases, lam, rates, sel, out, solver) -> None:
    """Write the measures of points ``sel`` (one phase space) into ``out``."""
    step = max(1, _CHUNK_ELEMENTS // (ph.n * ph.n))
    for lo in range(0, sel.size, step):
        part = sel[lo:lo + step]
        theta, cap = saturation(ph, rates[part])
        out["cap"][part] = cap
        # Saturated downstream: the CPU queue is infinite, the rest runs as θ.
        out["l_cpu"][part] = np.inf
        out["l_mem"][part], out["l_cu"][part] = theta @ ph.m, theta @ ph.b
        out["p_cpu_blocked"][part] = theta @ ph.cpu_blocked
        out["p_mem_blocked"][part] = theta @ ph.mem_blocked
        idx = part[(lam[part] < cap) & (lam[part] > 0)]
        if idx.size:
            sol = solver(ph, lam[idx], rates[idx])
            for k, val in sol.items():
                out[k][idx] = val
        zero = part[lam[part] == 0]
        for k in ("l_cpu", "l_mem", "l_cu", "p_cpu_blocked", "p_mem_blocked"):
            out[k][zero] = 0.0


def tandem_independent(lam, mu_cpu, mu_mem, mu_cu, K, c) -> TandemMeasures:
    """The naive decomposition: M/M/1 CPU, M/M/1/K memory, M/M/c/c compute units.

    Each station sees Poisson arrivals and ignores blocking: the memory stage
    gets λ and loses p_K of it, the compute units get the memory stage's
    throughput and lose Erlang-B of it; the CPU never blocks.  ``p_cpu_blocked``
    is the memory stage's loss probability p_K, ``p_mem_blocked`` Erlang's B
    of the compute units, ``throughput_per_ms`` the jobs that get through,
    ``max_throughput_per_ms`` = μ_cpu (the only stability condition this view sees).
    The exact ``tandem`` loses no job and is stable only below its own,
    smaller, saturation throughput: the two disagree most near saturation.
    """
    lam = LAM.check(lam)
    mu_cpu, mu_mem, mu_cu = (PIPE_MU_CPU.check(mu_cpu), PIPE_MU_MEM.check(mu_mem),
                             PIPE_MU_CU.check(mu_cu))
    K, c = single_integer(K, PIPE_K), single_integer(c, PIPE_C)
    cpu = mm1(lam, mu_cpu, n_max=0)
    mem = mm1k(np.minimum(lam, mu_cpu), mu_mem, K)        # the CPU passes on at most μ_cpu
    cu = mmcc(mem.throughput, mu_cu, c)
    lam, mu_cpu = np.broadcast_arrays(lam, mu_cpu)
    stable = lam < mu_cpu
    res = [stable, mu_cpu * np.ones(stable.shape), cu.throughput, cpu.L, mem.L, cu.L,
           cpu.W, mem.W, cu.W, mem.p_block, cu.p_block]
    res = [np.broadcast_to(x, np.broadcast(*res).shape) for x in res]
    return TandemMeasures(*(np.array(x)[()] for x in res))


def capacity(mu_cpu, mu_mem, mu_cu, K, c, blocking="before"):
    """Largest sustainable job rate of the tandem (θA2·1, the drift condition).

    Cheaper than ``tandem``: one stationary vector of the saturated downstream
    per point (K + 1 phases where the units are provably never all busy, else
    N = (K+1)(c+1), dense or sparse LU).  Never above min(μ_cpu, μ_mem, c·μ_cu).
    """
    mu_cpu, mu_mem, mu_cu = (PIPE_MU_CPU.check(mu_cpu), PIPE_MU_MEM.check(mu_mem),
                             PIPE_MU_CU.check(mu_cu))
    K, c = single_integer(K, PIPE_K), single_integer(c, PIPE_C)
    blocking = blocking_rule(blocking)
    ensure_blas_limit()
    mu_cpu, mu_mem, mu_cu = np.broadcast_arrays(mu_cpu, mu_mem, mu_cu)
    shape = mu_cpu.shape
    rates = np.stack([mu_cpu.ravel(), mu_mem.ravel(), mu_cu.ravel()], axis=1)
    cap = np.zeros(rates.shape[0])
    free = units_never_all_busy(rates, K, c)
    for ph, sel in ((free_phases(K, blocking), free), (full_phases(K, c, blocking), ~free)):
        if sel.any():
            cap[sel] = saturation(ph, rates[sel])[1]
    return cap.reshape(shape)[()]


def solve_phases(mu_cpu, mu_mem, mu_cu, K, c, blocking="before") -> int:
    """Phases N of the chain ``tandem`` solves for these rates (one point; its
    cost grows as N³): K + 1 (K + 2 after service) where the compute units
    provably never all fill, (K + 1)(c + 1) (+ K + c + 2 after) otherwise."""
    mu = [float(PIPE_MU_CPU.check(mu_cpu)), float(PIPE_MU_MEM.check(mu_mem)),
          float(PIPE_MU_CU.check(mu_cu))]
    K, c = single_integer(K, PIPE_K), single_integer(c, PIPE_C)
    blocking = blocking_rule(blocking)
    if units_never_all_busy(np.array([mu]), K, c)[0]:
        return free_phases(K, blocking).n
    return full_phases(K, c, blocking).n


