"""Independent reference solutions used only by the tests.

They solve the same queues by other, slower routes than the engine: truncated
Markov chains built entry by entry from the paper's transition matrix (eq 6),
solved as sparse linear systems, and textbook closed forms.
"""
import numpy as np
from scipy import sparse
from scipy.sparse.linalg import spsolve
from scipy.stats import poisson


def md1_mean_latency(lam, service):
    """M/D/1 mean sojourn time (Pollaczek-Khinchine): S + λS²/(2(1 − λS))."""
    return service + lam * service ** 2 / (2.0 * (1.0 - lam * service))


def _stationary(rows, cols, vals, n):
    """Stationary vector of a (sub)stochastic matrix given as COO triplets."""
    p = sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))
    a = (p.T - sparse.identity(n)).tolil()
    a[n - 1, :] = np.ones(n)
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    return spsolve(a.tocsc(), rhs)


def batch_chain_latency(lam, alpha, tau0, n_states):
    """E[W] and E[B] from the batch-size chain of Inoue 2021 eq 6, truncated.

    State b = 1..n_states; from b the next batch is A + 1{A=0} with
    A ~ Poisson(λ(αb + τ0)); mass beyond the truncation goes to the last state.
    Lemma 2 (eq 15) with eq 30 gives E[W].
    """
    b = np.arange(1, n_states + 1)
    mean = lam * (alpha * b + tau0)                  # row b: A ~ Poisson(mean), k = lo..hi
    lo = np.maximum(0, (mean - 12 * np.sqrt(mean) - 10).astype(int))
    hi = np.minimum(n_states, (mean + 12 * np.sqrt(mean) + 10).astype(int))
    size = hi - lo + 1
    first = np.cumsum(size) - size                   # where each row's entries start
    rows = np.repeat(b - 1, size)
    k = np.arange(size.sum()) - np.repeat(first - lo, size)
    vals = poisson.pmf(k, np.repeat(mean, size))
    vals[first + size - 1] += poisson.sf(hi, mean)   # augment each row's last column
    cols = np.maximum(k, 1) - 1                      # A = 0 -> batch of 1
    pi = _stationary(rows, cols, vals, n_states)
    eb, eb2 = pi @ b, pi @ b ** 2
    e_hat_h = alpha * eb2 / eb + tau0
    tail = pi[-max(n_states // 4, 1):].sum()
    return (eb2 - eb) / (2 * lam * eb) + e_hat_h, eb, tail


def converged_batch_chain_latency(lam, alpha, tau0, start=100, tail_tol=1e-10):
    """E[W], E[B] of ``batch_chain_latency``, doubling the truncation until the
    probability in the top quarter of the states is below ``tail_tol``."""
    n = start
    while n <= 32_000:
        w, eb, tail = batch_chain_latency(lam, alpha, tau0, n)
        if tail < tail_tol:
            return w, eb
        n *= 2
    raise RuntimeError("truncated chain did not converge")


def departure_chain_latency(lam, tau, n_states):
    """E[W] and E[B] for finite b_max = len(tau) from the departure chain, dense.

    State n = jobs waiting just after a departure (0..n_states-1); the next batch
    takes B = min(max(n, 1), b_max) jobs for tau[B-1].  E[W] by Little's law
    from the time-average number in system over departure cycles.
    """
    tau = np.asarray(tau, dtype=float)
    b_max = tau.size
    n = np.arange(n_states)
    batch = np.minimum(np.maximum(n, 1), b_max)
    rows, cols, vals = [], [], []
    for i in range(n_states):
        base = 0 if i == 0 else i - batch[i]
        mean = lam * tau[batch[i] - 1]
        hi = min(n_states - 1 - base, int(mean + 12 * np.sqrt(mean) + 10))
        k = np.arange(0, hi + 1)
        p = poisson.pmf(k, mean)
        p[-1] += poisson.sf(hi, mean)                # augment the last reachable state
        rows += [i] * k.size
        cols += list(base + k)
        vals += list(p)
    q = _stationary(rows, cols, vals, n_states)
    t = tau[batch - 1]
    present = np.maximum(n, 1)
    area = q @ (present * t + 0.5 * lam * t ** 2)
    cycle = q @ t + q[0] / lam
    tail = q[-max(n_states // 4, 1):].sum()
    return area / cycle / lam, q @ batch, tail


def converged_departure_chain_latency(lam, tau, start=250, tail_tol=1e-11):
    """``departure_chain_latency`` with the truncation doubled until the top
    quarter of the states holds less than ``tail_tol``."""
    n = start
    while n <= 16_000:
        w, eb, tail = departure_chain_latency(lam, tau, n)
        if tail < tail_tol:
            return w, eb
        n *= 2
    raise RuntimeError("truncated departure chain did not converge")
