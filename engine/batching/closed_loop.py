"""The closed loop perf_analyzer and Model Analyzer measure: N clients, a fixed concurrency.

Each of ``n_clients`` clients sends a request, waits for its reply, spends a think
time outside the server (client and network: a pure delay, exponential with mean
``think_time_ms``) and sends the next.  Requests join one FIFO queue shared by
``instances`` copies of the batching server; a free copy takes every waiting request
(at most ``b_max``) as one batch of deterministic time τ[b] = αb + τ0.

``closed_loop`` returns the throughput, mean latency (queue arrival to batch
completion, think time excluded), mean batch size and utilization, with the method
used for each point:

* ``"cycle"``: zero think time, one copy (or N ≥ instances·b_max): every batch holds
  min(N, b_max) requests, in closed form;
* ``"cycle: all clients start at once"``: zero think time, several copies,
  N < instances·b_max: the steady state reached from perf_analyzer's start;
* ``"chain"``: one copy, think time > 0: the exact Markov chain embedded at batch
  starts, solved to rounding;
* ``"exact: every request starts alone"``: several copies, think time > 0, N ≤ instances;
* ``"approximation: flow-equivalent server"``: several copies, think time > 0.

Little's law n = throughput·(mean latency + think time) holds exactly for every
method.  Derivations, the approximation's measured error: docs/models/batching.md,
"Closed loop".

>>> r = closed_loop(4, alpha_ms=1.0, tau0_ms=1.0)    # all four in every batch: τ[4] = 5
>>> float(r.throughput_per_ms), float(r.mean_latency_ms), r.method
(0.8, 5.0, 'cycle')
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph
from scipy.special import betaln

from ..core.domains import ALPHA, INSTANCES, N_CLIENTS, TAU0, THINK_TIME, check_b_max
from ..core.jit import BACKEND, compiled
from ..core.renamed import renamed_attribute, renamed_keywords

CYCLE = "cycle"
CYCLE_START = "cycle: all clients start at once"
CHAIN = "chain"
ALONE = "exact: every request starts alone"
FLOW = "approximation: flow-equivalent server"

TAIL = 1e-30              # binomial tails and transitions below this are dropped
RESTART = 1e-15           # restart probability per batch in the stationary solve


@dataclass(frozen=True)
class ClosedLoop:
    """Closed-loop steady state, arrays of the broadcast shape (floats for scalars).

    Times in ms, the unit of α, τ0 and θ (``alpha_ms``, ``tau0_ms``, ``think_time_ms``).
    ``throughput_per_ms``: requests per ms; ``mean_latency_ms``: from a request's arrival
    at the queue to its batch's completion, think time excluded; ``mean_batch_size``: per
    batch; ``utilization``: mean busy copies / instances; ``method``: how each point was
    computed (a str, or an array of str).  The names without a unit (``throughput``,
    ``mean_latency``) still read the fields, with a ``DeprecationWarning``.
    """

    throughput_per_ms: np.ndarray
    mean_latency_ms: np.ndarray
    mean_batch_size: np.ndarray
    utilization: np.ndarray
    method: object

    throughput = renamed_attribute("throughput_per_ms")
    mean_latency = renamed_attribute("mean_latency_ms")


@renamed_keywords(alpha="alpha_ms", tau0="tau0_ms", think_time="think_time_ms")
def closed_loop(n_clients, alpha_ms, tau0_ms, b_max=None, think_time_ms=0.0,
                instances=1) -> ClosedLoop:
    """Throughput, mean latency, mean batch size and utilization of N clients in a loop.

    All arguments broadcast like a numpy ufunc: ``n_clients`` N (integer, 1..4096),
    ``alpha_ms``/``tau0_ms`` (τ[b] = αb + τ0 in ms), ``b_max`` (None or inf: unlimited),
    ``think_time_ms`` θ (mean exponential think time in ms), ``instances`` (copies
    sharing the queue).  The keywords of before (``alpha=``, ``tau0=``, ``think_time=``)
    still work, with a ``DeprecationWarning``.  The method per point: the module docstring.  The
    closed forms are vectorised; the chain and the flow-equivalent server are solved
    once per distinct parameter tuple (the chain's states and transition laws depend
    on N, α, τ0, b_max and θ together, so no two points share a matrix) and cached.
    """
    n = N_CLIENTS.check(n_clients)
    a, t0 = ALPHA.check(alpha_ms, "alpha_ms"), TAU0.check(tau0_ms, "tau0_ms")
    b = check_b_max(b_max)
    theta = THINK_TIME.check(think_time_ms, "think_time_ms")
    c = INSTANCES.check(instances)
    n, a, t0, b, theta, c = np.broadcast_arrays(n, a, t0, b, theta, c)
    shape = n.shape
    n, a, t0, b, theta, c = (np.array(x, dtype=float).ravel() for x in (n, a, t0, b, theta, c))
    b = np.minimum(b, n)                       # no batch holds more than N requests
    out = np.zeros((4, n.size))
    method = np.empty(n.size, dtype=object)

    zero = theta == 0.0
    full = zero & ((c == 1) | (n >= c * b))
    out[:, full] = _cycle(n[full], a[full], t0[full], b[full], c[full])
    method[full] = CYCLE
    sel = zero & ~full
    out[:, sel] = _cycle_from_start(n[sel], a[sel], t0[sel], b[sel], c[sel])
    method[sel] = CYCLE_START
    alone = ~zero & (c > 1) & (n <= c)
    tau1 = a[alone] + t0[alone]
    out[0, alone] = n[alone] / (tau1 + theta[alone])
    out[1, alone], out[2, alone] = tau1, 1.0
    out[3, alone] = out[0, alone] * tau1 / c[alone]
    method[alone] = ALONE
    for i in np.flatnonzero(~zero & ~alone):
        key = (int(n[i]), float(a[i]), float(t0[i]), int(b[i]), float(theta[i]))
        if c[i] == 1:
            out[:, i] = _chain(*key)
            method[i] = CHAIN
        else:
            out[:, i] = _flow_equivalent(*key, int(c[i]))
            method[i] = FLOW
    x, w, eb, util = (v.reshape(shape)[()] for v in out)
    m = method.reshape(shape)
    return ClosedLoop(x, w, eb, util, m[()] if m.ndim == 0 else m.astype(str))


# ------------------------------------------------------------------ zero think time

def _cycle(n, a, t0, b, c):
    """Every batch holds b = min(N, b_max) and every copy is always busy: X = c·b/τ[b]
    (one copy, or N ≥ c·b_max: a copy that frees finds N − (c − 1)·b_max ≥ b_max
    waiting), W = N/X (Little)."""
    x = c * b / (a * b + t0)
    return x, n / x, b, np.ones_like(n)


def _cycle_from_start(n, a, t0, b, c):
    """All N start at once on idle copies: ⌊N/b⌋ copies take full batches of b, one
    takes the r = N − ⌊N/b⌋·b left over; each group then cycles on its own copy (a
    group returns the instant its batch ends, when only its own copy is free)."""
    k = np.floor(n / b)
    r = n - k * b
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):   # r = 0 branch unused
        part = np.where(r > 0, r / (a * r + t0), 0.0)
        batches = k / (a * b + t0) + np.where(r > 0, 1.0 / (a * r + t0), 0.0)
    x = k * b / (a * b + t0) + part
    return x, n / x, x / batches, (k + (r > 0)) / c


# ------------------------------------------------------------------ the exact chain

def _transitions(n, a, t0, b_max, theta):
    """The chain of q = requests waiting when a batch starts (states 1..N, index q − 1).

    From q the batch takes b = min(q, b_max); each of the m = N − q thinking clients
    fails to return within τ[b] with probability f = exp(−τ[b]/θ), so K failures are
    Binomial(m, f) and q' = q − b + m − K; q' = 0 idles until the first return and
    becomes 1.  Built as a sparse matrix from the rows' Bernstein windows of K
    (mass outside < 2·TAIL), pmf in log space: log C(m, k) − kτ/θ + (m − k) log(1 − f).
    Returns (P, probability of idling, τ[b], b) per state.
    """
    q = np.arange(1, n + 1)
    b = np.minimum(q, b_max)
    tau = a * b + t0
    with np.errstate(over="ignore"):
        x = tau / theta                        # inf when θ is subnormal: f = 0
    f = np.exp(-x)
    m = n - q
    mean, var = m * f, m * f * (1.0 - f)
    log_tail = -np.log(TAIL)
    half = log_tail / 3.0 + np.sqrt((log_tail / 3.0) ** 2 + 2.0 * log_tail * var)
    lo = np.maximum(0, np.floor(mean - half)).astype(np.int64)
    hi = np.minimum(m, np.ceil(mean + half)).astype(np.int64)
    count = hi - lo + 1
    row = np.repeat(np.arange(n), count)
    k = lo[row] + np.arange(count.sum()) - (np.cumsum(count) - count)[row]
    mm, xx = m[row], x[row]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_p = (-np.log1p(mm) - betaln(mm - k + 1, k + 1) - np.where(k > 0, k * xx, 0.0)
                 + np.where(mm > k, (mm - k) * np.log(-np.expm1(-xx)), 0.0))
    p = np.exp(log_p)
    nxt = (q - b)[row] + mm - k
    keep = p >= TAIL
    idle = np.bincount(row[keep & (nxt == 0)], p[keep & (nxt == 0)], minlength=n)
    matrix = sparse.csr_matrix((p[keep], (row[keep], np.maximum(nxt[keep], 1) - 1)),
                               shape=(n, n))
    return matrix, idle, tau, b


def _gth(a):
    """Stationary law of the irreducible stochastic matrix ``a`` (overwritten) by
    Grassmann-Taksar-Heyman elimination: no subtractions, so every probability is
    accurate to rounding even when some are 1e-300."""
    n = a.shape[0]
    for k in range(n - 1, 0, -1):
        s = 0.0
        for j in range(k):
            s += a[k, j]
        for i in range(k):
            a[i, k] /= s
        for i in range(k):
            aik = a[i, k]
            if aik != 0.0:
                for j in range(k):
                    a[i, j] += aik * a[k, j]
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        acc = 0.0
        for i in range(k):
            acc += pi[i] * a[i, k]
        pi[k] = acc
        if acc > 1e150:                   # state 0 may be 1e-300 as likely as k
            for i in range(k + 1):
                pi[i] *= 1e-150
    return pi / pi.sum()


def _gth_numpy(a):
    """``_gth`` with each elimination step as one outer product (no numba)."""
    n = a.shape[0]
    for k in range(n - 1, 0, -1):
        a[:k, k] /= a[k, :k].sum()
        a[:k, :k] += np.outer(a[:k, k], a[k, :k])
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        pi[k] = pi[:k] @ a[:k, k]
        if pi[k] > 1e150:
            pi[:k + 1] *= 1e-150
    return pi / pi.sum()


_gth = compiled(_gth) if BACKEND == "numba" else _gth_numpy


def _stationary_law(matrix, start: int) -> np.ndarray:
    """Long-run law of a finite chain (sparse stochastic ``matrix``) started in ``start``.

    One closed class (a strongly connected component with no way out): its
    stationary law, the chain's.  Several (return failures below 1e-300 round to
    zero; moving between them would take more batches than any run): the law of the
    states reachable from ``start``, i.e. the mix a run from ``start`` settles in.
    Either is solved by GTH with a restart to the class's (or start's) first state
    of probability ``RESTART`` per step, which keeps every elimination pivot ≥
    RESTART (no underflow) and moves π by O(RESTART × mixing time).  Checked:
    probabilities ≥ 0 summing to 1, ‖πP − π‖₁ < 1e-9.
    """
    matrix = sparse.csr_matrix(matrix)
    matrix.eliminate_zeros()
    n_comp, label = csgraph.connected_components(matrix, directed=True, connection="strong")
    coo = matrix.tocoo()
    closed = np.ones(n_comp, dtype=bool)
    closed[label[coo.row[label[coo.row] != label[coo.col]]]] = False
    if closed.sum() == 1:
        states = np.flatnonzero(label == np.flatnonzero(closed)[0])
    else:
        states = csgraph.breadth_first_order(matrix, start, directed=True,
                                             return_predecessors=False)
    sub = matrix[states][:, states].toarray() * (1.0 - RESTART)
    sub[:, 0] += RESTART
    pi = np.zeros(matrix.shape[0])
    pi[states] = _gth(sub)
    if not (np.all(pi >= 0) and abs(pi.sum() - 1.0) < 1e-9
            and np.abs(matrix.T @ pi - pi).sum() < 1e-9):
        raise ArithmeticError("the closed-loop chain's stationary law failed its check")
    return pi


@lru_cache(maxsize=1024)
def _chain(n, a, t0, b_max, theta):
    """(X, W, E[b], utilization) of one copy with exponential think time θ > 0.

    Renewal reward over batch starts with the chain's law π.  A cycle from q lasts
    τ[b] plus, when the batch empties the system, the idle time θ/N until the first
    of the N thinking clients returns.  Requests at the server during the batch:
    q plus the returns so far, m(1 − e^(−s/θ)) on average at time s, so the area is
    qτ + m(τ − θ(1 − e^(−τ/θ))).  W = E[area]/E[b] (Little's law
    at the server), X = N/(W + θ) (over the loop; equal to E[b]/E[cycle]),
    utilization E[τ]/E[cycle].
    """
    matrix, idle, tau, b = _transitions(n, a, t0, b_max, theta)
    pi = _stationary_law(matrix, start=n - 1)      # all N waiting: perf_analyzer's start
    q = np.arange(1, n + 1)
    area = q * tau + (n - q) * _late_time(tau, theta)
    w = (pi @ area) / (pi @ b)
    return n / (w + theta), w, pi @ b, (pi @ tau) / (pi @ (tau + idle * theta / n))


def _late_time(tau, theta):
    """θ·g(τ/θ) = τ − θ(1 − e^(−τ/θ)): the mean time within τ that a thinking client
    spends back at the server, without cancellation (a series below τ/θ = 1e-3)."""
    with np.errstate(over="ignore"):
        x = tau / theta
    small = x < 1e-3
    xs = np.where(small, x, 0.0)
    series = theta * xs * xs * (0.5 - xs * (1.0 / 6.0 - xs / 24.0))
    return np.where(small, series, tau + theta * np.expm1(-np.where(small, 1.0, x)))


# ------------------------------------------------------------------ several copies

def _group_rate(k, a, t0, b_max, copies):
    """Throughput of the copies with k requests present and no think time (jittered):
    k ≤ copies: each alone, k/τ[1]; otherwise copies + 1 groups of g = k/(copies + 1)
    (at most b_max) rotate, one waiting while every copy serves one: copies·g/τ[g]."""
    g = np.minimum(k / (copies + 1.0), b_max)
    rate = np.where(k <= copies, k / (a + t0), copies * g / (a * g + t0))
    batches = np.where(k <= copies, k / (a + t0), copies / (a * g + t0))
    return rate, batches, np.minimum(k, copies) / copies


@lru_cache(maxsize=1024)
def _flow_equivalent(n, a, t0, b_max, theta, copies):
    """(X, W, E[b], utilization) of several copies by a flow-equivalent server (an
    approximation): the copies are replaced by one station serving at ``_group_rate``
    μ(k) with k present, fed by the delay station; the birth-death law
    P(k) ∝ θ^(N−k)/(N−k)! / Π_{j≤k} μ(j) gives X = Σ P(k) μ(k), W = E[k]/X and
    X = N/(W + θ) (flow balance makes the two X equal)."""
    k = np.arange(1, n + 1, dtype=float)
    rate, batches, busy = _group_rate(k, a, t0, b_max, copies)
    log_w = np.concatenate([[0.0], np.cumsum(np.log(n - k + 1) - np.log(theta) - np.log(rate))])
    p = np.exp(log_w - log_w.max())
    p /= p.sum()
    x = p[1:] @ rate
    w = (p[1:] @ k) / x                        # Little's law at the copies
    return n / (w + theta), w, x / (p[1:] @ batches), p[1:] @ busy
