"""The GPU's batch time read off the shape of an offline table, and the closed loop it gives.

An offline perf_analyzer run (one client, a request of b inputs) pays, in series,

    L(b) = f + t_x·b + g(b),      g(b) = max(g0, α_g·b),

a fixed round trip f, the serial transfer (and framework handling) of the b inputs t_x
per input, and the GPU's batch time g(b): flat at g0 while the batch does not fill the
GPU, then proportional to the work, α_g·b, once it does (the batch b_s = g0/α_g where
the GPU saturates).  L(b) is then two lines meeting at b_s: below it slope t_x and
intercept f + g0, above it slope t_x + α_g and intercept f.  Their difference separates
the terms: t_x the small-batch slope, α_g the growth of the slope at the knee, g0 the
drop of the intercept, f the large-batch intercept.  ``_gpu_knee`` fits those two
lines (a continuous hinge) to the rows up to the offline throughput's peak and keeps
them only where two lines beat one (an F-test at ``KNEE_SIGNIFICANCE``) and the terms
are physical (t_x ≥ 0, α_g > 0, f ≥ 0).

Online, each request carries one input: its transfer and round trip are a per-request
delay θ = f + t_x, overlapped across the clients' connections; the instances' batches
share one GPU.  ``_gpu_loop_per_ms`` is that closed loop: a batch of b on an instance
first spends max(0, g0 − α_g·b) in work that overlaps other batches (launch latency
while the GPU is not full), then α_g·b holding the GPU alone (the GPU runs one
saturated batch at a time, first come first served).  Derivation: docs/models/measured.md.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

KNEE_SIGNIFICANCE = 0.05      # two lines must beat one at this level (F-test, 2 more terms)
KNEE_GRID = 400               # knee positions tried (log-spaced between the 2nd and 2nd-last b)


@dataclass(frozen=True)
class _Knee:
    """The terms of L(b) = f + t_x·b + max(g0, α_g·b) (ms), or why none were kept."""

    front_ms: float               # f: the large-batch line's intercept
    transfer_ms: float            # t_x: the small-batch slope, per input
    gpu_alpha_ms: float           # α_g: large-batch slope − small-batch slope
    gpu_floor_ms: float           # g0 = α_g·b_s
    knee_batch: float             # b_s
    p_value: float                # of two lines against one (F-test)
    r2: float                     # of the hinge on the rows used
    rows: int                     # rows used (b ≤ the throughput's peak)
    found: bool                   # False: not significant or not physical (terms then NaN)
    reason: str = ""              # why not, in words


def _hinge(b: np.ndarray, y: np.ndarray, k: float) -> tuple:
    """(SSE, (c, s1, d)) of y ≈ c + s1·b + d·max(0, b − k) by least squares."""
    a = np.column_stack([np.ones_like(b), b, np.maximum(0.0, b - k)])
    coef = np.linalg.lstsq(a, y, rcond=None)[0]
    return float(np.sum((a @ coef - y) ** 2)), coef


def _gpu_knee(batch_size, batch_time_ms, throughput_per_s) -> _Knee:
    """The hinge of the offline batch times over b ≤ the batch of peak throughput (past
    it the throughput falls, which no f ≥ 0 allows: those rows carry a cost outside this
    form and are left out)."""
    b = np.asarray(batch_size, dtype=float)
    y = np.asarray(batch_time_ms, dtype=float)
    x = np.asarray(throughput_per_s, dtype=float)
    peak = b[x >= x.max() * (1.0 - 1e-9)].max()
    keep = b <= peak
    order = np.argsort(b[keep])
    b, y = b[keep][order], y[keep][order]
    n = b.size
    nan = float("nan")

    def none(reason, p=nan, r2=nan):
        return _Knee(nan, nan, nan, nan, nan, p, r2, n, False, reason)

    if n < 5:
        return none(f"{n} rows up to the throughput's peak: two lines need at least 5")
    sst = float(np.sum((y - y.mean()) ** 2))
    line = np.polyfit(b, y, 1)
    sse1 = float(np.sum((np.polyval(line, b) - y) ** 2))
    if sst <= 0 or sse1 <= 1e-12 * sst:
        return none("the batch time is one straight line: no knee", 1.0, 1.0)
    grid = np.geomspace(b[1], b[-2], KNEE_GRID)
    i = int(np.argmin([_hinge(b, y, k)[0] for k in grid]))
    k = optimize.minimize_scalar(lambda k: _hinge(b, y, k)[0], method="bounded", bounds=(
        grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]), options={"xatol": 1e-9}).x
    sse, (c, s1, d) = _hinge(b, y, float(k))
    f_stat = np.inf if sse <= 1e-12 * sst else ((sse1 - sse) / 2) / (sse / (n - 4))
    p = float(stats.f.sf(f_stat, 2, n - 4)) if np.isfinite(f_stat) else 0.0
    r2 = 1.0 - sse / sst
    front = c - d * k
    if d <= 0:
        return none("the latency's slope does not grow past any batch (no sign of the GPU "
                     "saturating)", p, r2)
    if p >= KNEE_SIGNIFICANCE:
        return none(f"two lines do not beat one (F-test p = {p:.2g} ≥ "
                    f"{KNEE_SIGNIFICANCE:g})", p, r2)
    if s1 < -1e-6 * (abs(s1) + d) or front < -1e-6 * (abs(c) + d * k):   # beyond rounding
        return none("the two lines give a negative transfer or round trip", p, r2)
    front, s1 = max(front, 0.0), max(s1, 0.0)
    return _Knee(front_ms=float(front), transfer_ms=float(s1), gpu_alpha_ms=float(d),
                 gpu_floor_ms=float(d * k), knee_batch=float(k), p_value=p, r2=float(r2),
                 rows=n, found=True)


def _gpu_loop_per_ms(n_clients: int, alpha_g: float, g0: float, b_max, theta: float,
                     instances: int, batches: int, rng, own_ms: float = 0.0) -> float:
    """Throughput (per ms) of the closed loop with K instances on one GPU (module doc).

    N clients, each request preceded by an exponential front end of mean θ; one FIFO
    queue; a free instance takes every waiting request (≤ b_max).  Exponential front
    ends are memoryless, so while every instance is busy the returns before the next
    event are drawn at once (binomial), and one at a time only while an instance waits.
    ``own_ms``: work per input the instance itself spends off the GPU (compute input and
    output, where a breakdown run measures it), added to the overlapping phase.
    The first tenth of the batches is a warm-up."""
    n = int(n_clients)
    cap = n if b_max is None or not math.isfinite(b_max) else min(n, int(b_max))
    k = int(instances)
    state = [0] * k               # 0 idle, 1 overlapping phase, 2 waiting for the GPU, 3 on it
    phase_end = [math.inf] * k
    size = [0] * k
    waiting: deque = deque()
    owner, gpu_end = -1, math.inf
    t, front, queue = 0.0, 0, n
    done, warm, served, t_start = 0, batches // 10, 0, 0.0
    while done < batches:
        for i in range(k):                          # start batches on idle instances
            if state[i] == 0 and queue > 0:
                size[i] = min(queue, cap)
                queue -= size[i]
                overlap = own_ms * size[i] + max(0.0, g0 - alpha_g * size[i])
                if overlap > 0:
                    state[i], phase_end[i] = 1, t + overlap
                else:
                    state[i] = 2
                    waiting.append(i)
        if owner < 0 and waiting:
            owner = waiting.popleft()
            state[owner], gpu_end = 3, t + alpha_g * size[owner]
        nxt, who = gpu_end, -1
        for i in range(k):
            if state[i] == 1 and phase_end[i] < nxt:
                nxt, who = phase_end[i], i
        if front > 0:
            if theta <= 0:
                queue, front = queue + front, 0
                continue
            if 0 in state:                          # an idle instance: the next return
                arrive = t + rng.exponential(theta / front)
                if arrive < nxt:
                    t, front, queue = arrive, front - 1, queue + 1
                    continue
            else:                                   # all busy: every return before nxt
                back = int(rng.binomial(front, -math.expm1(-(nxt - t) / theta)))
                front, queue = front - back, queue + back
        t = nxt
        if who >= 0:                                # overlapping phase over: to the GPU
            state[who] = 2
            waiting.append(who)
            continue
        i, owner, gpu_end = owner, -1, math.inf     # a batch leaves the GPU: replies
        state[i] = 0
        front += size[i]
        done += 1
        if done == warm:
            t_start, served = t, 0
        elif done > warm:
            served += size[i]
    return served / (t - t_start)
