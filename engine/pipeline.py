"""CPU-GPU pipeline as a three-stage tandem with blocking (May & Voigt 2010).

A job passes a CPU stage (one server, unbounded queue: host preparation and the
host-to-device copy), the GPU global memory (one server, room for K jobs, the
one in service included) and c compute units (servers without buffer).  All
service times are exponential; arrivals are Poisson of rate λ.

* Station formulas (``mm1``, ``mm1k``, ``mmcc``, ``mmck``): the textbook M/M/c/K
  family the paper prints, vectorised over the rates.  State probabilities are
  formed in log space from p_n ∝ aⁿ/Π min(i, c), a = λ/μ, and every mean is a
  finite sum over them, so there is no 0/0 at ρ = 1.
* ``tandem``: the exact coupled system.  Level = jobs at the CPU stage, phase =
  the downstream state, a quasi-birth-death process (QBD) with up-rate λI.  Phase
  (m, b) = (jobs in memory, busy compute units) for blocking before service; for
  blocking after service only these blocked states are possible: the memory
  stage holds a finished job only when b = c (m = 1..K), the CPU only when
  m = K, so the phase space has (K+1)(c+1) + K + c + 2 states, not 4(K+1)(c+1).
  Two routes, both exact:

  1. Units never all busy.  The units act on the upstream stages only when all
     c are busy (the memory then blocks).  ``_log_all_units_busy_bound`` bounds
     P(b = c) for any λ by two pathwise couplings: memory completions thin a
     Poisson(μ_mem) clock, so b ≤ an M/M/∞ count, P ≤ P(Poisson(μ_mem/μ_cu) ≥ c);
     and the units receive at most K + 1 held jobs plus the ticks of the CPU's
     Poisson(μ_cpu) clock in any window, a shot noise whose Chernoff bound
     follows from Campbell's formula.  Where the bound is ≤ 1e-18 the states
     with b = c carry no mass to double precision (even multiplied by the
     ~1e4 sensitivity of the means at 98 % load), b drops out, and the chain is
     (level, m[, CPU holds]) with K + 1 (K + 2) phases; l_cu = throughput/μ_cu
     (Little: a job never waits in a unit), p_mem_blocked = 0.  This covers 10
     of the 12 GPU preset/workload pairs at their full SM counts (not the T4's
     40 SMs under the two compute-heavy workloads) and c = 128 at the
     benchmark's rates.
  2. Otherwise the full phase space.  G (first passage one level down) by
     cyclic reduction with the shift that moves G's eigenvalue 1 to 0 (Bini,
     Latouche & Meini 2005, §7.3; He, Meini & Rhee 2001): about 7 steps of one
     LU and four products instead of the ~11 heavier steps of logarithmic
     reduction (Latouche & Ramaswami 1993, the previous solver, kept as
     ``_solve_stable_lr`` for the tests), and a step count that barely grows
     near saturation.  G is checked a posteriori (residual of
     A2 + A1G + λG² = 0 and G1 = 1, to 1e-12 relative) and the reduction
     continues until it passes.  Then R = λ(−A1 − λG)⁻¹, π0 from the censored
     level-0 generator B1 + λG, and the moments from (I − R)⁻¹ in closed form.

  Stable iff λ < θA2·1, θ the stationary vector of A0 + A1 + A2 (the drift
  condition); θ by GTH elimination up to 48 phases (relative accuracy in tiny
  entries), a dense solve below 300 phases, sparse LU from 300 on; the capacity
  is capped at min(μ_cpu, μ_mem, c·μ_cu).
* ``tandem_independent``: the naive answer, the three stations solved as if
  they were independent (the CU stage is fed the memory stage's throughput).
* ``rates_from_specs``: μ_cpu, μ_mem, μ_cu, c, K from a GPU spec and a workload;
  ``group_compute_units`` models the c SMs as fewer, faster servers (the
  stage's total rate kept) so the exact solve stays small where the units can
  all be busy.
* ``capacity``: the saturation throughput alone (one stationary vector per
  point, of K + 1 phases where the units are never all busy).

Cost, measured on a shared 2-core machine (one BLAS thread, best of 2-9 runs
while the machine was lightly loaded), one point at 98 % of the capacity, rates
μ = (1, 2, 0.1), before / after service:

* route 1 (units never all busy), K = 16, c = 128: 1.3 / 1.2 ms, against
  72 / 91 s for the previous solver on the full 2193 (2339) phases; a 200-point
  curve 0.1-0.3 s.
* route 2, O(N³) per step, N = (K+1)(c+1) (+ K + c + 2 after service):
  K = 8, c = 16 (N = 153) 20 / 30 ms (previous solver 29 / 43 ms);
  K = 16, c = 32 (N = 561) 0.63 / 0.86 s (1.07 / 1.45 s);
  K = 16, c = 64 (N = 1105) 4.6 / 6.3 s (6.5 / 10.0 s).  Where the units do
  fill at K = 16, c = 128 (N = 2193; μ_cu = 0.006, before service) a point
  takes 49 s.  A slider gets the exact answer in tens of ms on this route only
  up to N of about 150.

Dense N³ work is the floor of route 2: one LU of N = 2193 alone takes 0.2 s
here.  Sparse direct solves of the level-truncated chain were slower still
(2 s for K = 8, c = 16 with 60 levels, 12 s for K = 16, c = 32 with 40: the
fill of a 3-D grid).  At K = 16, c = 32 and 98 % load all N eigenvalues of R
exceed 0.1 (no small dominant invariant subspace to truncate a spectral
expansion to), and R and G have off-diagonal ranks of 70-90 in the b-major
order (too high for rank-structured, HODLR, cyclic reduction to pay off).

Times are in any one unit, used consistently; the spec mapping gives rates per
ms.  An unstable load gives ``inf`` for the unbounded queue's means; an argument
outside its domain raises ``ValueError`` naming it.

Errata in the paper, checked in ``tests/test_pipeline.py``:

* M/M/1: W = 1/(λ − μ) is printed; it is 1/(μ − λ).
* M/M/c/K: both mean times are printed as "W"; the second is Wq = Lq/(λ(1 − p_K)).
  They divide by λ(1 − p_k): read p_K (blocking probability, capital K).
* M/M/c/K L_q: the paper defines ρ = λ/(cμ) but its L_q and L formulas use ρ
  for the offered load λ/μ (Gross & Harris write r = λ/μ, ρ = r/c); read with
  its own ρ the L_q formula is wrong.  Read with r it is right except at
  r = c, where it is 0/0 (the limit is p0 rᶜ (K−c)(K−c+1)/(2c!)).
* The blocking rule "service rate of zero while the next stage is full" is
  blocking *before* service; blocking *after* service (a finished job waits in
  its server) is another model: a stage then finishes a job while the next one
  is full and hands it on the moment a place frees, so its saturation
  throughput is higher.  Both are solved here (``blocking="before"`` /
  ``"after"``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import functools
import math

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import splu
from scipy.special import expi, pdtrc

from .core.domains import LAM, PIPE_C, PIPE_K, PIPE_MU, PIPE_MU_CPU, PIPE_MU_CU, PIPE_MU_MEM

BLOCKING = ("before", "after")
_LR_TOL = 1e-13          # logarithmic reduction stops when max |1 − G·1| is below this
                         # (or when the remaining correction T is below 1e-18)
_LR_MAX_ITER = 80
_CR_TOL = 1e-17          # cyclic reduction: neglected term below this (see _cyclic_reduction)
_CR_MAX_ITER = 60
_LOG_CU_FULL_EPS = math.log(1e-18)   # units "never all busy" when P(all c busy) ≤ 1e-18
_GTH_PHASES = 48         # stationary vectors by GTH elimination up to this many phases
_SPARSE_PHASES = 300     # saturation vector by sparse LU from this many phases on
_CHUNK_ELEMENTS = 6_000_000   # batch points per dense solve: P·N² at most this


# ---------------------------------------------------------------- stations

@dataclass(frozen=True)
class Station:
    """Stationary measures of one M/M/c/K station (arrays, broadcast shape).

    ``p[..., n]`` is the probability of n jobs present (for M/M/1 the first
    ``n_max + 1`` states; the rest of the mass is ρ^(n_max+1)).
    """

    L: np.ndarray            # mean number present
    Lq: np.ndarray           # mean number waiting
    W: np.ndarray            # mean sojourn of an admitted job
    Wq: np.ndarray           # mean wait of an admitted job
    p_block: np.ndarray      # probability an arrival is lost (0 for M/M/1)
    throughput: np.ndarray   # admitted (= departure) rate
    p: np.ndarray            # state probabilities, last axis n = 0, 1, ...


try:  # small dense solves are fastest on one BLAS thread
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover - optional speed-up
    ThreadpoolController = None
_BLAS = []               # one controller, built on first use (scanning the libraries costs ms)


def _one_blas_thread(fn):
    """Run ``fn`` with BLAS limited to one thread.  The phase blocks here are at most
    a few thousand wide; on 2 busy cores OpenBLAS's threads made a K=8, c=16 curve
    35x slower (0.77 s with one thread against 14-27 s)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if ThreadpoolController is None:
            return fn(*args, **kwargs)
        if not _BLAS:
            _BLAS.append(ThreadpoolController())
        with _BLAS[0].limit(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper


def _finite_station(lam, mu, c: int, K: int) -> Station:
    """M/M/c/K by finite sums over p_n ∝ aⁿ/Π_{i≤n} min(i, c), computed in log space."""
    lam, mu = np.broadcast_arrays(lam, mu)
    a = np.minimum(lam / mu, 1e300)[..., None]           # λ = inf: all mass at K
    n = np.arange(K + 1)
    servers = np.minimum(n[1:], c)
    with np.errstate(divide="ignore"):
        steps = np.log(a) - np.log(servers)
    logw = np.concatenate([np.zeros(a.shape), np.cumsum(steps, axis=-1)], axis=-1)
    logw -= logw.max(axis=-1, keepdims=True)
    p = np.exp(logw)
    p /= p.sum(axis=-1, keepdims=True)
    L = p @ n
    Lq = p @ np.maximum(n - c, 0)
    thr = mu * (p @ np.minimum(n, c))                     # departure rate = λ(1 − p_K)
    with np.errstate(invalid="ignore", divide="ignore"):
        W = np.where(lam > 0, L / thr, 1.0 / mu)
        Wq = np.where(lam > 0, Lq / thr, 0.0)
    return Station(L[()], Lq[()], W[()], Wq[()], p[..., K][()], thr[()], p)


def _int(value, domain) -> int:
    arr = domain.check(value)
    if arr.ndim:
        raise ValueError(f"{domain.name} must be a single integer, got shape {arr.shape}")
    return int(arr)


def mmck(lam, mu, c, K) -> Station:
    """M/M/c/K: c servers, at most K ≥ c jobs present (Gross & Harris §2.5).

    p_n = p0 aⁿ/n! (n ≤ c), p0 aⁿ/(c! c^(n−c)) (c < n ≤ K), a = λ/μ;
    W = L/(λ(1 − p_K)), Wq = Lq/(λ(1 − p_K)) (May & Voigt print both as "W").
    λ = 0 gives W = 1/μ, Wq = 0 (the limit).
    """
    lam, mu = LAM.check(lam), PIPE_MU.check(mu)
    c, K = _int(c, PIPE_C), _int(K, PIPE_K)
    if K < c:
        raise ValueError(f"K must be at least c = {c}, got {K}")
    return _finite_station(lam, mu, c, K)


def mm1k(lam, mu, K) -> Station:
    """M/M/1/K (the GPU global memory alone): p_n = (1 − ρ)ρⁿ/(1 − ρ^(K+1))."""
    lam, mu, K = LAM.check(lam), PIPE_MU.check(mu), _int(K, PIPE_K)
    return _finite_station(lam, mu, 1, K)


def mmcc(lam, mu, c) -> Station:
    """M/M/c/c (the compute units alone): Erlang loss, p_c is Erlang's B formula."""
    lam, mu, c = LAM.check(lam), PIPE_MU.check(mu), _int(c, PIPE_C)
    return _finite_station(lam, mu, c, c)


def mm1(lam, mu, n_max: int = 64) -> Station:
    """M/M/1 (the CPU alone): L = ρ/(1 − ρ), W = 1/(μ − λ) (the paper prints 1/(λ − μ)).

    ρ ≥ 1 gives inf for L, Lq, W, Wq, throughput μ and p = 0 (the mass has
    drifted to infinity).  ``p`` holds states 0..n_max.
    """
    lam, mu = LAM.check(lam), PIPE_MU.check(mu)
    lam, mu = np.broadcast_arrays(lam, mu)
    rho = lam / mu
    stable = rho < 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        L = np.where(stable, rho / (1.0 - rho), np.inf)
        Lq = np.where(stable, rho * rho / (1.0 - rho), np.inf)
        W = np.where(stable, 1.0 / (mu - lam), np.inf)
        Wq = np.where(stable, rho / (mu - lam), np.inf)
        n = np.arange(int(n_max) + 1)
        p = np.where(stable[..., None], (1.0 - rho[..., None]) * rho[..., None] ** n, 0.0)
    thr = np.where(stable, lam, mu)
    return Station(L[()], Lq[()], W[()], Wq[()], np.zeros(rho.shape)[()], thr[()], p)


# ---------------------------------------------------------------- the tandem

@dataclass(frozen=True)
class Tandem:
    """Stationary measures of the CPU → memory → compute-unit tandem (broadcast arrays).

    ``w_*`` by Little's law from ``l_*`` and ``throughput``; the CPU's time
    includes time blocked.  ``p_*_blocked``: time fraction the stage holds a
    job it has finished (after) or may not work on (before) because the next
    stage is full.  Beyond ``max_throughput`` the CPU queue grows without
    bound: ``l_cpu``, ``w_cpu``, ``w_total``, ``l_total`` are inf and the
    downstream measures are those of the saturated system.
    """

    stable: np.ndarray
    max_throughput: np.ndarray
    throughput: np.ndarray
    l_cpu: np.ndarray
    l_mem: np.ndarray
    l_cu: np.ndarray
    w_cpu: np.ndarray
    w_mem: np.ndarray
    w_cu: np.ndarray
    p_cpu_blocked: np.ndarray
    p_mem_blocked: np.ndarray

    @property
    def l_total(self) -> np.ndarray:
        return self.l_cpu + self.l_mem + self.l_cu

    @property
    def w_total(self) -> np.ndarray:
        return self.w_cpu + self.w_mem + self.w_cu


@dataclass(frozen=True)
class _Phases:
    """Phase space and transitions of the downstream (memory, compute units).

    Event arrays list (source, target, kind, multiplier, down): kind 0 = CPU
    service, 1 = memory service, 2 = compute-unit service (rate multiplied by
    the busy units); ``down`` marks a job leaving the CPU stage (level − 1).
    ``level0`` marks phases possible with the CPU empty.
    """

    n: int
    m: np.ndarray
    b: np.ndarray
    cpu_blocked: np.ndarray
    mem_blocked: np.ndarray
    level0: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    kind: np.ndarray
    mult: np.ndarray
    down: np.ndarray


@lru_cache(maxsize=64)
def _phases(K: int, c: int, blocking: str) -> _Phases:
    if blocking == "before":
        states = [(m, b, 0, 0) for m in range(K + 1) for b in range(c + 1)]
    else:
        states = ([(m, b, 0, 0) for m in range(K + 1) for b in range(c + 1)]
                  + [(m, c, 1, 0) for m in range(1, K + 1)]
                  + [(K, b, 0, 1) for b in range(c + 1)] + [(K, c, 1, 1)])
    index = {s: i for i, s in enumerate(states)}
    ev = []                                   # (src, dst, kind, mult, down)
    for i, (m, b, hm, hc) in enumerate(states):
        if blocking == "before":
            if m < K:
                ev.append((i, index[m + 1, b, 0, 0], 0, 1, True))
            if m >= 1 and b < c:
                ev.append((i, index[m - 1, b + 1, 0, 0], 1, 1, False))
            if b >= 1:
                ev.append((i, index[m, b - 1, 0, 0], 2, b, False))
            continue
        if not hc:                            # CPU finishes: passes the job on or holds it
            if m < K:
                ev.append((i, index[m + 1, b, hm, 0], 0, 1, True))
            else:
                ev.append((i, index[K, b, hm, 1], 0, 1, False))
        if m >= 1 and not hm:                 # memory finishes
            if b < c:                         # to a free unit; a held CPU job follows
                ev.append((i, index[K, b + 1, 0, 0] if hc else index[m - 1, b + 1, 0, 0],
                           1, 1, bool(hc)))
            else:
                ev.append((i, index[m, c, 1, hc], 1, 1, False))
        if b >= 1:                            # a unit finishes; held jobs move up
            if hm:
                ev.append((i, index[K, c, 0, 0] if hc else index[m - 1, c, 0, 0],
                           2, b, bool(hc)))
            else:
                ev.append((i, index[m, b - 1, 0, hc], 2, b, False))
    arr = np.array(states)
    src, dst, kind, mult, down = (np.array(x) for x in zip(*ev))
    level0 = arr[:, 3] == 0
    if blocking == "before":
        cpu_blocked = arr[:, 0] == K                      # counted at levels ≥ 1 only
        mem_blocked = (arr[:, 0] >= 1) & (arr[:, 1] == c)
    else:
        cpu_blocked, mem_blocked = arr[:, 3] == 1, arr[:, 2] == 1
    return _Phases(len(states), arr[:, 0].astype(float), arr[:, 1].astype(float),
                   cpu_blocked, mem_blocked, level0, src, dst, kind,
                   mult.astype(float), down.astype(bool))


@lru_cache(maxsize=64)
def _phases_free(K: int, blocking: str) -> _Phases:
    """Phases of the tandem whose compute units are never all busy (b is dropped).

    A memory completion then always finds a free unit, so the units never act
    on the upstream stages and (level, m[, CPU holds]) is a Markov chain of its
    own: K + 1 phases before service, K + 2 after (the memory never holds a job).
    The event rules are those of ``_phases`` with b < c throughout.
    """
    states = [(m, 0) for m in range(K + 1)] + ([(K, 1)] if blocking == "after" else [])
    index = {s: i for i, s in enumerate(states)}
    ev = []                                   # (src, dst, kind, mult, down)
    for i, (m, hc) in enumerate(states):
        if blocking == "before":
            if m < K:
                ev.append((i, index[m + 1, 0], 0, 1, True))
            if m >= 1:
                ev.append((i, index[m - 1, 0], 1, 1, False))
            continue
        if not hc:
            ev.append((i, index[m + 1, 0], 0, 1, True) if m < K
                      else (i, index[K, 1], 0, 1, False))
        if m >= 1:                            # a held CPU job follows into memory
            ev.append((i, index[K, 0] if hc else index[m - 1, 0], 1, 1, bool(hc)))
    arr = np.array(states)
    src, dst, kind, mult, down = (np.array(x) for x in zip(*ev))
    cpu_blocked = arr[:, 0] == K if blocking == "before" else arr[:, 1] == 1
    n = len(states)
    return _Phases(n, arr[:, 0].astype(float), np.zeros(n), cpu_blocked,
                   np.zeros(n, dtype=bool), arr[:, 1] == 0, src, dst, kind,
                   mult.astype(float), down.astype(bool))


def _log_all_units_busy_bound(rates, K: int, c: int) -> np.ndarray:
    """log of an upper bound on P(all c compute units busy), any λ, either blocking rule.

    Two couplings, each a pathwise bound (the smaller is returned):

    * memory completions are a thinning of a Poisson(μ_mem) clock, so b is at
      most an M/M/∞ count fed by every tick: P(b ≥ c) ≤ P(Poisson(μ_mem/μ_cu) ≥ c);
    * in any window (t − v, t] the memory hands on at most K + 1 jobs it held (or
      the CPU held) at t − v plus the ticks of the CPU's Poisson(μ_cpu) clock.  With
      service times independent of the entry times s_j,
      E[e^{θb}] ≤ E[exp(θ' Σ_j e^{−μ_cu(t − s_j)})], θ' = e^θ − 1, and Campbell's
      formula for the clock's shot noise gives the Chernoff bound
      min_θ θ'(K + 1) + (μ_cpu/μ_cu)·Ein(θ') − θc,  Ein(x) = ∫₀¹ (e^{xu} − 1)/u du.
    """
    mu_cpu, mu_mem, mu_cu = rates[:, 0:1], rates[:, 1], rates[:, 2:3]
    theta = np.linspace(0.02, 6.5, 325)                  # θ' ≤ 664: Ei stays finite
    tp = np.expm1(theta)
    ein = expi(tp) - np.euler_gamma - np.log(tp)
    with np.errstate(over="ignore", divide="ignore"):
        chernoff = (tp * (K + 1) + (mu_cpu / mu_cu) * ein - theta * c).min(axis=1)
        return np.minimum(chernoff, np.log(pdtrc(c - 1, mu_mem / rates[:, 2])))


def _blocks(ph: _Phases, lam, rates):
    """Dense QBD blocks for P points: A1, A2 (levels ≥ 1) and B1 (level 0).

    ``rates`` has shape (P, 3): μ_cpu, μ_mem, μ_cu.  A0 = λI.
    """
    P, N = rates.shape[0], ph.n
    r = rates[:, ph.kind] * ph.mult                       # (P, events)
    A1 = np.zeros((P, N, N))
    A2 = np.zeros((P, N, N))
    B1 = np.zeros((P, N, N))
    loc, dn = ~ph.down, ph.down
    np.add.at(A1, (slice(None), ph.src[loc], ph.dst[loc]), r[:, loc])
    np.add.at(A2, (slice(None), ph.src[dn], ph.dst[dn]), r[:, dn])
    keep = loc & (ph.kind != 0)                           # no CPU service at level 0
    np.add.at(B1, (slice(None), ph.src[keep], ph.dst[keep]), r[:, keep])
    diag = np.arange(N)
    A1[:, diag, diag] -= A1.sum(axis=2) + A2.sum(axis=2) + lam[:, None]
    B1[:, diag, diag] -= B1.sum(axis=2) + lam[:, None]
    return A1, A2, B1


def _stationary_vector(Q: np.ndarray) -> np.ndarray:
    """θ with θQ = 0, θ1 = 1 for a stack of irreducible generators (P, N, N).

    Up to ``_GTH_PHASES`` phases by ``_gth``; above, a linear solve (GTH's
    Python loop over N costs ~10x the batched LU at N = 289).
    """
    if Q.shape[-1] <= _GTH_PHASES:
        return _gth(Q)
    M = np.array(Q)
    M[:, :, 0] = 1.0
    rhs = np.zeros(M.shape[:2])
    rhs[:, 0] = 1.0
    return np.linalg.solve(np.swapaxes(M, 1, 2), rhs[..., None])[..., 0]


def _gth(Q: np.ndarray) -> np.ndarray:
    """Stationary vectors of a stack of generators by GTH elimination (Grassmann,
    Taksar & Heyman 1985): only sums and products of
    non-negative numbers, no subtraction, so every θ_i has a small *relative*
    error even where it is tiny.  A linear solve gave θ_i of 1e-11 with absolute
    errors of ~1e-16, and capacities above c·μ_cu by 3e-6 relative when the
    rates span 1e10.  The diagonal of Q is not read.  O(N³) in a loop over N.
    """
    M = np.array(Q, dtype=float)
    N = M.shape[-1]
    scale = np.empty(M.shape[:2])
    for k in range(N - 1, 0, -1):
        s = M[:, k, :k].sum(axis=1)                 # rate out of k to the states left
        scale[:, k] = s
        M[:, :k, :k] += M[:, :k, k, None] * (M[:, k, None, :k] / s[:, None, None])
    theta = np.zeros(M.shape[:2])
    theta[:, 0] = 1.0
    for k in range(1, N):
        theta[:, k] = np.einsum("pi,pi->p", theta[:, :k], M[:, :k, k]) / scale[:, k]
    return theta / theta.sum(axis=1, keepdims=True)


def _log_reduction(lam, A1, A2):
    """Minimal solution G of A2 + A1 G + λ G² = 0 (Latouche & Ramaswami's algorithm).

    Quadratic convergence: each step doubles the number of levels the
    first-passage probabilities account for.  Stops when G is stochastic to
    ``_LR_TOL`` (positive recurrent case) or the next correction vanishes.
    """
    N = A1.shape[-1]
    eye = np.eye(N)
    inv = np.linalg.inv(-A1)
    B0 = lam[:, None, None] * inv
    B2 = inv @ A2
    G = B2.copy()
    T = B0.copy()
    for _ in range(_LR_MAX_ITER):
        if np.max(np.abs(1.0 - G.sum(axis=2))) < _LR_TOL or np.max(np.abs(T)) < 1e-18:
            break
        D = B0 @ B2 + B2 @ B0
        sq = np.linalg.solve(eye - D, np.concatenate([B0 @ B0, B2 @ B2], axis=2))
        B0, B2 = sq[:, :, :N], sq[:, :, N:]
        G += T @ B2
        T = T @ B0
    return G


def _cyclic_reduction(lam, A1, A2):
    """Minimal solution G of A2 + A1 G + λ G² = 0 by shifted cyclic reduction.

    Bini & Meini's cyclic reduction (Bini, Latouche & Meini, *Numerical Methods
    for Structured Markov Chains*, 2005, §7.3) applied after the shift of He,
    Meini & Rhee (2001): with v = 1/N, Ã2 = A2 − A2·1vᵀ and Ã1 = A1 + λ1vᵀ,
    G̃ = G − 1vᵀ solves Ã2 + Ã1G̃ + λG̃² = 0 and has the eigenvalues of G except
    that 1 becomes 0.  Eliminating odd levels of the system for (G̃, G̃², ...)
    squares the level scale each step; with S = (−B0)⁻¹

        B₋ ← B₋ S B₋,  B₊ ← B₊ S B₊,  B0 ← B0 + B₋ S B₊ + B₊ S B₋,  B̂ ← B̂ + B₊ S B₋

    from B₋ = Ã2, B0 = B̂ = Ã1, B₊ = λI, and G̃ = (−B̂)⁻¹Ã2 at the end.  The error
    falls like (ρ₂(G)·ρ(R))^(2ᵏ), ρ₂(G) < 1 the second eigenvalue, instead of
    ρ(R)^(2ᵏ) unshifted: about 7 steps instead of 11 at 98 % load, and the count
    barely grows as λ approaches the capacity.  The loop stops when the
    neglected term, of order ‖B₊‖∞‖B₋‖∞/λ², is below _CR_TOL; G is then
    checked a posteriori (residual of the equation and G1 = 1, both to 1e-12
    relative) and the reduction continues while it fails.  The first step uses
    B₊ = λI (two products fewer); a step costs one LU and four products.
    """
    N = A1.shape[-1]
    lam3 = lam[:, None, None]
    v = np.full(N, 1.0 / N)
    A2s = A2 - A2.sum(axis=2)[:, :, None] * v
    A1s = A1 + lam3 * v
    X = np.linalg.solve(-A1s, np.concatenate([A2s, np.broadcast_to(np.eye(N), A1.shape)],
                                             axis=2))
    SBm, S = X[:, :, :N], X[:, :, N:]                 # (−B0)⁻¹B₋, (−B0)⁻¹
    Bh = A1s + lam3 * SBm
    B0 = Bh + lam3 * (A2s @ S)
    Bm = A2s @ SBm
    Bp = lam3 * lam3 * S
    scale = np.abs(A1).sum(axis=2).max()
    for _ in range(_CR_MAX_ITER):
        up = np.abs(Bp).sum(axis=2).max(axis=1)
        with np.errstate(over="ignore", invalid="ignore"):   # λ near the underflow limit
            small = np.where(up == 0.0, 0.0,
                             (up / lam) * (np.abs(Bm).sum(axis=2).max(axis=1) / lam))
        if np.max(small) < _CR_TOL:
            G = np.linalg.solve(-Bh, A2s) + v
            resid = np.abs(A2 + A1 @ G + lam3 * (G @ G)).max()
            if resid < 1e-12 * scale and np.abs(1.0 - G.sum(axis=2)).max() < 1e-12:
                return G
        X = np.linalg.solve(-B0, np.concatenate([Bm, Bp], axis=2))
        SBm, SBp = X[:, :, :N], X[:, :, N:]
        up_down = Bp @ SBm
        Bh = Bh + up_down
        B0 = B0 + up_down + Bm @ SBp
        Bm = Bm @ SBm
        Bp = Bp @ SBp
    return np.linalg.solve(-Bh, A2s) + v


def _solve_stable(ph: _Phases, lam, rates):
    """Exact measures of stable points (arrays of length P).

    G by ``_cyclic_reduction``.  The shift leaves entries that should vanish at
    ±1e-17, which matters only when λ (and with it every measure) is tiny; so
    G is clipped at 0 and passed once through G ← (−A1 − λG)⁻¹A2, a map of
    nonnegative matrices (−A1 − λG is an M-matrix) that is accurate entry by
    entry, and whose inverse gives R = λ(−A1 − λG)⁻¹ (so RA2 = λG holds
    exactly).  Then π0 from the censored level-0 generator B1 + λG with
    π0(I − R)⁻¹1 = 1, Σπ_n = π0(I − R)⁻¹ and Σnπ_n·1 = π0R(I − R)⁻²1
    (Latouche & Ramaswami 1999, §6.4).  R is formed explicitly: solving with
    I − R alone keeps the stiffness of −A1 − λG (rates 1e5 apart) out of the
    near-singular solves.
    """
    A1, A2, B1 = _blocks(ph, lam, rates)
    G = np.maximum(_cyclic_reduction(lam, A1, A2), 0.0)
    inv = np.linalg.inv(-A1 - lam[:, None, None] * G)
    return _moments(ph, lam, B1, inv @ A2, lam[:, None, None] * inv)


def _moments(ph: _Phases, lam, B1, G, R):
    """The measures from G and R."""
    P, N = lam.size, ph.n
    one = np.ones((P, N, 1))
    ImR = np.eye(N) - R
    v = np.linalg.solve(ImR, one)                          # (I − R)⁻¹ 1
    M = B1 + lam[:, None, None] * G                        # censored level-0 generator
    M[:, :, 0] = v[:, :, 0]
    rhs = np.zeros((P, N, 1))
    rhs[:, 0] = 1.0
    pi0 = np.linalg.solve(np.swapaxes(M, 1, 2), rhs)[..., 0]
    x = np.linalg.solve(np.swapaxes(ImR, 1, 2), pi0[..., None])[..., 0]   # Σ_n π_n
    w = np.linalg.solve(ImR, v)[..., 0]                    # (I − R)⁻² 1
    l_cpu = np.einsum("pi,pij,pj->p", pi0, R, w)           # π0 R (I − R)⁻² 1
    busy = x - pi0                                         # levels ≥ 1
    return dict(l_cpu=l_cpu, l_mem=x @ ph.m, l_cu=x @ ph.b,
                p_cpu_blocked=busy @ ph.cpu_blocked, p_mem_blocked=x @ ph.mem_blocked)


def _solve_stable_lr(ph: _Phases, lam, rates):
    """Exact measures of stable points by logarithmic reduction and dense inverses.

    The solver before ``_solve_stable``; kept as an independent reference for the
    tests (G by another algorithm; the measures from G and R are the same algebra).
    """
    A1, A2, B1 = _blocks(ph, lam, rates)
    G = _log_reduction(lam, A1, A2)
    R = lam[:, None, None] * np.linalg.inv(-A1 - lam[:, None, None] * G)
    return _moments(ph, lam, B1, G, R)


def _saturation(ph: _Phases, rates):
    """θ of the downstream with the CPU never empty, and θA2·1 (the capacity).

    Dense stacked solves for small phase spaces; from ``_SPARSE_PHASES`` phases
    on one sparse LU per point (the generator has at most four entries a row).
    The capacity is capped at min(μ_cpu, μ_mem, c·μ_cu), a theorem (no stage
    passes more than its own rate): where the rates span ~1e10 and N is above
    ``_GTH_PHASES``, a linear solve's absolute error could pass it by ~1e-6.
    """
    if ph.n < _SPARSE_PHASES:
        zero = np.zeros(rates.shape[0])
        A1, A2, _ = _blocks(ph, zero, rates)
        theta = _stationary_vector(A1 + A2)
        return theta, _stage_cap(ph, rates, np.einsum("pi,pij->p", theta, A2))
    theta = np.empty((rates.shape[0], ph.n))
    rhs = np.zeros(ph.n)
    rhs[0] = 1.0
    for p, r in enumerate(rates[:, ph.kind] * ph.mult):
        Q = sparse.csr_matrix((r, (ph.src, ph.dst)), shape=(ph.n, ph.n))
        Q = (Q - sparse.diags(np.asarray(Q.sum(axis=1)).ravel())).T.tocsr()
        Q = sparse.vstack([np.ones((1, ph.n)), Q[1:]]).tocsc()   # θ1 = 1 replaces one row
        theta[p] = splu(Q).solve(rhs)
    cap = (theta[:, ph.src[ph.down]] * (rates[:, ph.kind[ph.down]] * ph.mult[ph.down])).sum(axis=1)
    return theta, _stage_cap(ph, rates, cap)


def _stage_cap(ph: _Phases, rates, cap):
    """``cap`` no higher than any stage's own rate (c·μ_cu only where units can fill)."""
    units = ph.b.max()
    cu = units * rates[:, 2] if units > 0 else np.inf
    return np.minimum(cap, np.minimum(np.minimum(rates[:, 0], rates[:, 1]), cu))


def _check_blocking(blocking: str) -> str:
    if blocking not in BLOCKING:
        raise ValueError(f"blocking must be 'before' or 'after', got {blocking!r}")
    return blocking


def tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking="before") -> Tandem:
    """Exact stationary solution of the blocking tandem (matrix-geometric, see module doc).

    ``lam``, ``mu_cpu``, ``mu_mem``, ``mu_cu`` broadcast; ``K``, ``c`` are
    integers (one phase space per call).  ``blocking="before"``: a stage does
    not start or continue work while the next stage is full (the paper's
    rule); ``"after"``: a finished job waits in its server until a place
    frees downstream.  λ ≥ ``max_throughput`` is unstable (inf for the CPU
    queue and the totals).  Cost: where the compute units are provably never
    all busy (P ≤ 1e-18, ``_log_all_units_busy_bound``) the chain has K + 1
    (K + 2) phases and a point costs about 2 ms; otherwise
    O(N³) per point and reduction step, N = (K+1)(c+1) phases (+ K + c + 2
    after service).
    """
    return _tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking)


_SOLVERS = {"auto": _solve_stable, "full": _solve_stable, "reference": _solve_stable_lr}


@_one_blas_thread
def _tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking="before", method="auto") -> Tandem:
    """``tandem`` with the route named.

    "auto": the reduced chain (``_phases_free``) for points whose compute units
    are provably never all busy, the full phase space by cyclic reduction for
    the rest; "full": the full phase space for every point; "reference": the
    full phase space by the logarithmic-reduction solver (an independent check).
    """
    lam = LAM.check(lam)
    mu_cpu, mu_mem, mu_cu = (PIPE_MU_CPU.check(mu_cpu), PIPE_MU_MEM.check(mu_mem),
                             PIPE_MU_CU.check(mu_cu))
    K, c = _int(K, PIPE_K), _int(c, PIPE_C)
    blocking = _check_blocking(blocking)
    lam, mu_cpu, mu_mem, mu_cu = np.broadcast_arrays(lam, mu_cpu, mu_mem, mu_cu)
    shape = lam.shape
    lam = lam.ravel()
    rates = np.stack([mu_cpu.ravel(), mu_mem.ravel(), mu_cu.ravel()], axis=1)
    size = lam.size
    out = {k: np.zeros(size) for k in ("l_cpu", "l_mem", "l_cu", "p_cpu_blocked",
                                       "p_mem_blocked", "cap")}
    free = np.zeros(size, dtype=bool)
    if method == "auto" and size:
        free = _log_all_units_busy_bound(rates, K, c) <= _LOG_CU_FULL_EPS
    for ph, sel in ((_phases_free(K, blocking), np.flatnonzero(free)),
                    (_phases(K, c, blocking), np.flatnonzero(~free))):
        _fill(ph, lam, rates, sel, out, _SOLVERS[method])
    stable = lam < out["cap"]
    thr = np.where(stable, lam, out["cap"])
    # units left out of the chain: every job spends 1/μ_cu in one (Little's law)
    out["l_cu"][free] = thr[free] / rates[free, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = [np.where(lam > 0, out[f"l_{s}"] / thr, 1.0 / rates[:, j])
             for j, s in enumerate(("cpu", "mem", "cu"))]
    res = [stable, out["cap"], thr, out["l_cpu"], out["l_mem"], out["l_cu"], *w,
           out["p_cpu_blocked"], out["p_mem_blocked"]]
    return Tandem(*(np.asarray(x).reshape(shape)[()] for x in res))


def _fill(ph: _Phases, lam, rates, sel, out, solver) -> None:
    """Write the measures of points ``sel`` (one phase space) into ``out``."""
    step = max(1, _CHUNK_ELEMENTS // (ph.n * ph.n))
    for lo in range(0, sel.size, step):
        part = sel[lo:lo + step]
        theta, cap = _saturation(ph, rates[part])
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


def tandem_independent(lam, mu_cpu, mu_mem, mu_cu, K, c) -> Tandem:
    """The naive decomposition: M/M/1 CPU, M/M/1/K memory, M/M/c/c compute units.

    Each station sees Poisson arrivals and ignores blocking: the memory stage
    gets λ and loses p_K of it, the compute units get the memory stage's
    throughput and lose Erlang-B of it; the CPU never blocks.  ``p_cpu_blocked``
    is the memory stage's loss probability p_K, ``p_mem_blocked`` Erlang's B
    of the compute units, ``throughput`` the jobs that get through,
    ``max_throughput`` = μ_cpu (the only stability condition this view sees).
    The exact ``tandem`` loses no job and is stable only below its own,
    smaller, saturation throughput: the two disagree most near saturation.
    """
    lam = LAM.check(lam)
    mu_cpu, mu_mem, mu_cu = (PIPE_MU_CPU.check(mu_cpu), PIPE_MU_MEM.check(mu_mem),
                             PIPE_MU_CU.check(mu_cu))
    K, c = _int(K, PIPE_K), _int(c, PIPE_C)
    cpu = mm1(lam, mu_cpu, n_max=0)
    mem = mm1k(np.minimum(lam, mu_cpu), mu_mem, K)        # the CPU passes on at most μ_cpu
    cu = mmcc(mem.throughput, mu_cu, c)
    lam, mu_cpu = np.broadcast_arrays(lam, mu_cpu)
    stable = lam < mu_cpu
    res = [stable, mu_cpu * np.ones(stable.shape), cu.throughput, cpu.L, mem.L, cu.L,
           cpu.W, mem.W, cu.W, mem.p_block, cu.p_block]
    res = [np.broadcast_to(x, np.broadcast(*res).shape) for x in res]
    return Tandem(*(np.array(x)[()] for x in res))


# ---------------------------------------------------------------- rates from hardware

@dataclass(frozen=True)
class PipelineRates:
    """Service rates of the three stages, in jobs per ms, and the two capacities."""

    mu_cpu: float            # jobs per ms
    mu_mem: float            # jobs per ms
    mu_cu: float             # jobs per ms, one compute unit
    K: int                   # jobs the GPU global memory holds
    c: int                   # compute units (SMs)
    flops_per_job: float
    mem_traffic_bytes_per_job: float

    def tandem(self, lam_per_ms, blocking="before") -> Tandem:
        return tandem(lam_per_ms, self.mu_cpu, self.mu_mem, self.mu_cu, self.K, self.c, blocking)


def rates_from_specs(spec, workload) -> PipelineRates:
    """μ_cpu, μ_mem, μ_cu (jobs per ms), K and c from a GPU spec and a workload.

    ``spec`` has ``host_link_bandwidth_GB_per_s``, ``memory_bandwidth_GB_per_s``,
    ``memory_GB``, ``sm_count``, ``boost_clock_MHz``, ``fp32_peak_TFLOP_per_s``,
    ``fp16_peak_TFLOP_per_s`` (``engine.presets.gpu_specs()``); ``workload`` has
    ``job_size_bytes`` S, ``flops_per_byte`` I, ``parallel_fraction`` f,
    ``reuse_factor`` r, ``precision`` ("fp32"/"fp16"), ``host_GFLOP_per_s`` and
    ``memory_slots`` K (``engine.presets.pipeline_workloads()``).

    Assumptions (May & Voigt name the inputs, not the mapping; these are ours):

    * A job carries S bytes and F = I·S floating-point operations.
    * CPU stage: the serial part (1 − f)F runs on the host at
      ``host_GFLOP_per_s``, then the S bytes cross the host link once:
      t_cpu = (1 − f)F/host + S/link (one direction of the link, GB = 1e9 B).
    * Memory stage: each of the f·F parallel operations needs one byte operand,
      a byte fetched from global memory serves r operations from on-chip
      memory, and the S bytes are read at least once: traffic =
      S·max(1, f·I/r), t_mem = traffic/memory bandwidth.  The paper's
      "parallelisability" and "reuse" factors enter here as service times, not
      as thinned arrival rates: in a tandem every job passes every stage.
    * Compute units: one job occupies one SM (the paper: a job is the size of a
      unit's shared memory) and runs at the SM's share of the peak of the chosen
      precision, peak/(SMs · clock) operations per cycle at the boost clock:
      t_cu = f·F/(peak/SMs); c = SM count.
    * K = ``memory_slots`` jobs fit in global memory (checked: K·S ≤ memory).
    * All times exponential with these means (the model's assumption).
    """
    s = float(workload.job_size_bytes)
    intensity = float(workload.flops_per_byte)
    f = float(workload.parallel_fraction)
    reuse = float(workload.reuse_factor)
    if not s > 0:
        raise ValueError(f"job_size_bytes must be positive, got {s:g}")
    if not intensity > 0:
        raise ValueError(f"flops_per_byte must be positive, got {intensity:g}")
    if not 0.0 < f <= 1.0:
        raise ValueError(f"parallel_fraction must be in (0, 1], got {f:g}")
    if not reuse >= 1.0:
        raise ValueError(f"reuse_factor must be at least 1, got {reuse:g}")
    peaks = {"fp32": spec.fp32_peak_TFLOP_per_s, "fp16": spec.fp16_peak_TFLOP_per_s}
    if workload.precision not in peaks:
        raise ValueError(f"precision must be 'fp32' or 'fp16', got {workload.precision!r}")
    K, c = _int(workload.memory_slots, PIPE_K), _int(spec.sm_count, PIPE_C)
    if K * s > spec.memory_GB * 1e9:
        raise ValueError(f"memory_slots: {K} jobs of {s:g} bytes exceed {spec.memory_GB:g} GB")
    flops = intensity * s
    per_cycle = peaks[workload.precision] * 1e12 / (c * spec.boost_clock_MHz * 1e6)
    t_cpu = (1.0 - f) * flops / (workload.host_GFLOP_per_s * 1e9) + s / (
        spec.host_link_bandwidth_GB_per_s * 1e9)
    traffic = s * max(1.0, f * intensity / reuse)
    t_mem = traffic / (spec.memory_bandwidth_GB_per_s * 1e9)
    t_cu = f * flops / (per_cycle * spec.boost_clock_MHz * 1e6)
    return PipelineRates(mu_cpu=1e-3 / t_cpu, mu_mem=1e-3 / t_mem, mu_cu=1e-3 / t_cu, K=K, c=c,
                         flops_per_job=flops, mem_traffic_bytes_per_job=traffic)


# ---------------------------------------------------------------- capacities and grouping

@_one_blas_thread
def capacity(mu_cpu, mu_mem, mu_cu, K, c, blocking="before"):
    """Largest sustainable job rate of the tandem (θA2·1, the drift condition).

    Cheaper than ``tandem``: one stationary vector of the saturated downstream
    per point (K + 1 phases where the units are provably never all busy, else
    N = (K+1)(c+1), dense or sparse LU).  Never above min(μ_cpu, μ_mem, c·μ_cu).
    """
    mu_cpu, mu_mem, mu_cu = (PIPE_MU_CPU.check(mu_cpu), PIPE_MU_MEM.check(mu_mem),
                             PIPE_MU_CU.check(mu_cu))
    K, c = _int(K, PIPE_K), _int(c, PIPE_C)
    blocking = _check_blocking(blocking)
    mu_cpu, mu_mem, mu_cu = np.broadcast_arrays(mu_cpu, mu_mem, mu_cu)
    shape = mu_cpu.shape
    rates = np.stack([mu_cpu.ravel(), mu_mem.ravel(), mu_cu.ravel()], axis=1)
    cap = np.zeros(rates.shape[0])
    free = _log_all_units_busy_bound(rates, K, c) <= _LOG_CU_FULL_EPS
    for ph, sel in ((_phases_free(K, blocking), free), (_phases(K, c, blocking), ~free)):
        if sel.any():
            cap[sel] = _saturation(ph, rates[sel])[1]
    return cap.reshape(shape)[()]


def solve_phases(mu_cpu, mu_mem, mu_cu, K, c, blocking="before") -> int:
    """Phases N of the chain ``tandem`` solves for these rates (one point; its
    cost grows as N³): K + 1 (K + 2 after service) where the compute units
    provably never all fill, (K + 1)(c + 1) (+ K + c + 2 after) otherwise."""
    mu = [float(PIPE_MU_CPU.check(mu_cpu)), float(PIPE_MU_MEM.check(mu_mem)),
          float(PIPE_MU_CU.check(mu_cu))]
    K, c = _int(K, PIPE_K), _int(c, PIPE_C)
    blocking = _check_blocking(blocking)
    if _log_all_units_busy_bound(np.array([mu]), K, c)[0] <= _LOG_CU_FULL_EPS:
        return _phases_free(K, blocking).n
    return _phases(K, c, blocking).n


def group_compute_units(rates: PipelineRates, units: int) -> PipelineRates:
    """The same pipeline with its c compute units modelled as ``units`` servers.

    Each modelled unit stands for c/units SMs and serves a job c/units times
    faster, so the compute stage's total rate c·μ_cu is kept; with fewer
    servers fewer jobs run at once, so blocking is somewhat overstated.  Where
    the units can all be busy the exact tandem costs O(((K+1)(units+1))³), and
    grouping is what keeps an SM count of 108 at slider speed; where they
    provably cannot (``tandem``'s first route, most GPU presets) it is not needed.
    """
    units = _int(units, PIPE_C)
    return PipelineRates(mu_cpu=rates.mu_cpu, mu_mem=rates.mu_mem,
                         mu_cu=rates.mu_cu * rates.c / units, K=rates.K, c=units,
                         flops_per_job=rates.flops_per_job,
                         mem_traffic_bytes_per_job=rates.mem_traffic_bytes_per_job)
