"""The tandem as a quasi-birth-death process: phase spaces, QBD blocks, and the bound
that decides which phase space a point needs.

Level = jobs at the CPU stage; phase = the downstream state ((jobs in memory, busy
units), plus the held jobs under blocking after service).  ``free_phases`` drops the
units where they are provably never all busy (``log_all_units_busy_bound``).  The
construction and the bound are derived in docs/models/pipeline.md.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
import math

import numpy as np
from scipy.special import expi, pdtrc

PHASE_CACHE_SIZE = 64    # phase spaces kept per builder (one per (K, c, blocking))
LOG_UNITS_FREE_EPS = math.log(1e-18)   # units "never all busy" where P(all c busy) ≤ 1e-18


@dataclass(frozen=True)
class Phases:
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


@lru_cache(maxsize=PHASE_CACHE_SIZE)
def full_phases(K: int, c: int, blocking: str) -> Phases:
    """Every phase (m, b[, memory holds, CPU holds]) of the downstream and its events:
    (K+1)(c+1) phases before service, (K+1)(c+1) + K + c + 2 after."""
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
    return _frozen(Phases(len(states), arr[:, 0].astype(float), arr[:, 1].astype(float),
                   cpu_blocked, mem_blocked, level0, src, dst, kind,
                   mult.astype(float), down.astype(bool)))


@lru_cache(maxsize=PHASE_CACHE_SIZE)
def free_phases(K: int, blocking: str) -> Phases:
    """Phases of the tandem whose compute units are never all busy (b is dropped).

    A memory completion then always finds a free unit, so the units never act
    on the upstream stages and (level, m[, CPU holds]) is a Markov chain of its
    own: K + 1 phases before service, K + 2 after (the memory never holds a job).
    The event rules are those of ``full_phases`` with b < c throughout.
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
    return _frozen(Phases(n, arr[:, 0].astype(float), np.zeros(n), cpu_blocked,
                          np.zeros(n, dtype=bool), arr[:, 1] == 0, src, dst, kind,
                          mult.astype(float), down.astype(bool)))


def log_all_units_busy_bound(rates, K: int, c: int) -> np.ndarray:
    """log of an upper bound on P(all c compute units busy), any λ, either blocking rule.

    The smaller of two pathwise bounds (docs/models/pipeline.md): P(Poisson(μ_mem/μ_cu)
    ≥ c) (an M/M/∞ count fed by the memory's clock), and the Chernoff bound
    min_θ θ'(K + 1) + (μ_cpu/μ_cu)·Ein(θ') − θc, θ' = e^θ − 1, of the units fed by at
    most K + 1 held jobs plus the CPU's Poisson(μ_cpu) clock (Campbell's formula).
    """
    mu_cpu, mu_mem, mu_cu = rates[:, 0:1], rates[:, 1], rates[:, 2:3]
    theta = np.linspace(0.02, 6.5, 325)                  # θ' ≤ 664: Ei stays finite
    tp = np.expm1(theta)
    ein = expi(tp) - np.euler_gamma - np.log(tp)
    with np.errstate(over="ignore", divide="ignore"):
        chernoff = (tp * (K + 1) + (mu_cpu / mu_cu) * ein - theta * c).min(axis=1)
        return np.minimum(chernoff, np.log(pdtrc(c - 1, mu_mem / rates[:, 2])))


def qbd_blocks(ph: Phases, lam, rates):
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


def units_never_all_busy(rates, K: int, c: int) -> np.ndarray:
    """Mask of the points (rows of ``rates``: μ_cpu, μ_mem, μ_cu) whose c compute units
    are provably never all busy (P ≤ 1e-18 at any λ): they are solved on ``free_phases``."""
    return log_all_units_busy_bound(rates, K, c) <= LOG_UNITS_FREE_EPS


def _frozen(ph: Phases) -> Phases:
    """``ph`` with its arrays read-only: the cached phase spaces are shared by every
    thread of the process, so nothing may write into them."""
    for f in fields(ph):
        value = getattr(ph, f.name)
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return ph
