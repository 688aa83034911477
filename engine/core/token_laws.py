"""Laws of the number of output tokens a request asks for (Yang et al. §III).

Convention: a request's output-token count is the integer n = max(1, ⌈X⌉) of a
continuous law X (lognormal, uniform, truncated normal, or any scipy.stats
frozen distribution).  Hence P(n ≤ k) = F_X(k) for every integer k ≥ 1 and
P(n = 1) = F_X(1): the mass of X below 1 (and the fraction of a token above an
integer) is rounded *up*, since a reply that has started holds at least one
token.  A discrete law with integer values ≥ 1 (scipy ``rv_discrete`` or the
``EmpiricalTokens`` of an uploaded trace) is left unchanged by the same rule.

Everywhere a law is needed the engine accepts any object with the scipy frozen
distribution methods ``cdf``, ``sf``, ``ppf``, ``rvs`` (``pdf`` or ``pmf``,
``moment``, ``mean``, ``var``).  ``EmpiricalTokens`` offers them for a sample of
token counts; ``empirical_from_csv`` reads one from a CSV file, validated.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
import io
import math
from pathlib import Path

import numpy as np
from scipy import stats

from .domains import TOKEN_LOG_MEAN, TOKEN_LOG_SD, TOKEN_BOUND, TOKEN_SD

MAX_EMPIRICAL_ROWS = 1_000_000    # size cap of an uploaded trace
MAX_TOKEN_GRID = 1 << 23          # largest token count summed over exactly (8.4 M)
TAIL_EPS = 1e-15                  # tail mass P(n > K) left out when no limit is set


# ------------------------------------------------------------ parametric laws

def lognormal(log_mean=7.0, log_sd=0.7):
    """X = exp(N(log_mean, log_sd²)) as a scipy frozen law (§V-B uses 7, 0.7)."""
    mu = float(TOKEN_LOG_MEAN.check(log_mean, "log_mean"))
    sd = float(TOKEN_LOG_SD.check(log_sd, "log_sd"))
    return stats.lognorm(s=sd, scale=np.exp(mu))


def uniform(low=0.0, high=1000.0):
    """X uniform on [low, high] tokens (§V-C uses 0 to 1000)."""
    lo = float(TOKEN_BOUND.check(low, "low"))
    hi = float(TOKEN_BOUND.check(high, "high"))
    if not hi > lo:
        raise ValueError(f"high must exceed low, got low = {lo:g}, high = {hi:g}")
    return stats.uniform(loc=lo, scale=hi - lo)


def truncated_normal(mean=500.0, sd=200.0, low=0.0, high=np.inf):
    """N(mean, sd²) truncated to [low, high] tokens (high may be inf)."""
    m = float(TOKEN_BOUND.check(mean, "mean"))
    s = float(TOKEN_SD.check(sd, "sd"))
    lo = float(TOKEN_BOUND.check(low, "low"))
    hi = np.inf if high is None or high == np.inf else float(TOKEN_BOUND.check(high, "high"))
    if not hi > lo:
        raise ValueError(f"high must exceed low, got low = {lo:g}, high = {hi:g}")
    return stats.truncnorm((lo - m) / s, (hi - m) / s, loc=m, scale=s)


# ------------------------------------------------------------ empirical law

@dataclass(frozen=True, eq=False)
class EmpiricalTokens:
    """Law of a sample of token counts (integers ≥ 1), with scipy's frozen methods.

    ``values`` are the distinct counts (sorted), ``probs`` their frequencies.
    ``pdf`` is the pmf (a count law has no density).
    """

    values: np.ndarray
    probs: np.ndarray
    n_samples: int

    @classmethod
    def from_counts(cls, counts, name: str = "counts") -> "EmpiricalTokens":
        """Validate a sample (integers ≥ 1, at most ``MAX_EMPIRICAL_ROWS``) and build the law."""
        try:
            arr = np.asarray(counts, dtype=float).ravel()
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numbers") from None
        if arr.size == 0:
            raise ValueError(f"{name} is empty")
        if arr.size > MAX_EMPIRICAL_ROWS:
            raise ValueError(f"{name} has {arr.size} values, at most {MAX_EMPIRICAL_ROWS} allowed")
        bad = ~np.isfinite(arr) | (arr < 1) | (arr != np.round(arr)) | (arr > MAX_TOKEN_GRID)
        if bad.any():
            raise ValueError(f"{name} must be whole token counts in [1, {MAX_TOKEN_GRID}], "
                             f"got {arr[bad][0]:g} (value {np.flatnonzero(bad)[0] + 1})")
        values, n = np.unique(arr, return_counts=True)
        return cls(values, n / arr.size, int(arr.size))

    def pmf(self, k):
        k = np.asarray(k, dtype=float)
        idx = np.clip(np.searchsorted(self.values, k), 0, self.values.size - 1)
        return np.where(self.values[idx] == k, self.probs[idx], 0.0)[()]

    pdf = pmf

    def cdf(self, x):
        cum = np.concatenate([[0.0], np.cumsum(self.probs)])
        cum[-1] = 1.0
        return cum[np.searchsorted(self.values, np.asarray(x, dtype=float), side="right")][()]

    def sf(self, x):
        return (1.0 - np.asarray(self.cdf(x)))[()]

    def ppf(self, q):
        """Smallest count k with P(n ≤ k) ≥ q (q = 0 gives the smallest count)."""
        q = np.asarray(q, dtype=float)
        cum = np.cumsum(self.probs)
        cum[-1] = 1.0
        idx = np.clip(np.searchsorted(cum, q - 1e-12, side="left"), 0, self.values.size - 1)
        return np.where((q >= 0) & (q <= 1), self.values[idx], np.nan)[()]

    def rvs(self, size=None, random_state=None):
        rng = np.random.default_rng(random_state)
        return rng.choice(self.values, size=size, p=self.probs)

    def moment(self, order):
        return float(np.dot(self.probs, self.values ** int(order)))

    def mean(self):
        return self.moment(1)

    def var(self):
        m = self.mean()
        return float(np.dot(self.probs, (self.values - m) ** 2))

    def std(self):
        return float(np.sqrt(self.var()))

    def support(self):
        return float(self.values[0]), float(self.values[-1])


def empirical_from_csv(source, column=None, max_rows: int = MAX_EMPIRICAL_ROWS) -> EmpiricalTokens:
    """Read token counts from a CSV (a path, text, bytes or a file object).

    Takes ``column`` (a header name or a 0-based index; default the first
    column).  A first row that is not numeric is taken as the header.  Raises
    ``ValueError`` naming the row of a bad value, or when there are more than
    ``max_rows`` values.
    """
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source
                                    and "," not in source and Path(source).is_file()):
        text = Path(source).read_text(encoding="utf-8-sig")
    elif isinstance(source, bytes):
        text = source.decode("utf-8-sig")
    elif hasattr(source, "read"):
        text = source.read()
        text = text.decode("utf-8-sig") if isinstance(text, bytes) else text
    else:
        text = str(source)
    rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError("csv: no rows")
    header = None
    try:
        float(rows[0][0 if not isinstance(column, int) else column])
    except (ValueError, IndexError):
        header, rows = [c.strip() for c in rows[0]], rows[1:]
    if column is None:
        col = 0
    elif isinstance(column, str):
        if header is None or column not in header:
            raise ValueError(f"csv: no column named {column!r}")
        col = header.index(column)
    else:
        col = int(column)
    if len(rows) > max_rows:
        raise ValueError(f"csv: {len(rows)} rows, at most {max_rows} allowed")
    values = np.empty(len(rows))
    first = 2 if header is not None else 1
    for i, row in enumerate(rows):
        try:
            values[i] = float(row[col])
        except (ValueError, IndexError):
            raise ValueError(f"csv row {i + first}: not a token count: {row!r}") from None
    return EmpiricalTokens.from_counts(values, name="csv token counts")


# ------------------------------------------------------------ discretisation

def token_cdf(dist, k):
    """P(n ≤ k) for n = max(1, ⌈X⌉), X ~ ``dist``; k is rounded down to an integer."""
    k = np.floor(np.asarray(k, dtype=float))
    with np.errstate(invalid="ignore"):
        val = np.where(k >= 1, dist.cdf(np.maximum(k, 1.0)), 0.0)
    return np.clip(val, 0.0, 1.0)[()]


def token_pmf(dist, k):
    """P(n = k) for integer k (0 off the support)."""
    k = np.asarray(k, dtype=float)
    return np.where((k >= 1) & (k == np.round(k)),
                    token_cdf(dist, k) - token_cdf(dist, k - 1), 0.0)[()]


def token_quantile(dist, q):
    """Smallest integer k ≥ 1 with P(n ≤ k) ≥ q."""
    q = np.asarray(q, dtype=float)
    x = np.asarray(dist.ppf(q), dtype=float)
    lost = np.isnan(x) & (q >= 0) & (q <= 1)
    if lost.any() and callable(getattr(dist, "isf", None)):
        # scipy's truncnorm.ppf gives NaN at q = 1 − 1e-16; its isf does not
        x = np.where(lost, np.asarray(dist.isf(1.0 - q), dtype=float), x)
    return np.maximum(1.0, np.ceil(x))[()]


def sample_tokens(dist, size, rng) -> np.ndarray:
    """Draw n = max(1, ⌈X⌉) from ``dist`` with the ``numpy.random.Generator`` ``rng``."""
    x = np.asarray(dist.rvs(size=size, random_state=rng), dtype=float)
    return np.maximum(1.0, np.ceil(x))


def law_top(dist) -> float:
    """Last support point of n, or its (1 − ``TAIL_EPS``)-quantile when unbounded (≥ 1)."""
    hi = float(dist.ppf(1.0))
    if not np.isfinite(hi):
        hi = float(dist.ppf(1.0 - TAIL_EPS))
    return max(1.0, float(np.ceil(hi)))


def grid_top(dist, n_max=np.inf) -> int:
    """Largest token count K that must be summed over: min(max n_max, top of the law).

    The top of the law is its last support point, or the (1 − 1e-15)-quantile
    when unbounded (what lies beyond is left out and documented as such).
    Raises ``ValueError`` when K exceeds ``MAX_TOKEN_GRID``.
    """
    top = min(float(np.max(n_max)), law_top(dist))
    if top > MAX_TOKEN_GRID:
        raise ValueError(f"n_max: the token sums would reach {top:g} tokens, at most "
                         f"{MAX_TOKEN_GRID}; set a smaller n_max")
    return int(top)


def binned_pmf(dist, n_bins: int = 60, upper_q: float = 0.999):
    """Histogram of n: (bin edges, probability per bin) over 0..K, K the ``upper_q``-quantile.

    Bins hold the integer counts in (edge_i, edge_{i+1}]; the mass above K
    (1 − P(n ≤ K)) is left out.
    """
    top = float(min(token_quantile(dist, upper_q), MAX_TOKEN_GRID))
    edges = np.unique(np.round(np.linspace(0.0, max(top, 1.0), int(n_bins) + 1)))
    cdf = np.asarray(token_cdf(dist, edges), dtype=float)
    return edges, np.diff(cdf)


def clipped_tokens(dist, n_max) -> EmpiricalTokens:
    """The law of min(n, n_max): a reply cut at ``n_max`` tokens (0 or inf: not cut).

    An ``EmpiricalTokens`` with the counts above ``n_max`` moved onto ``n_max``; a
    parametric law is first laid on the integers 1..K (``grid_top``; the mass beyond an
    unbounded law's K, under ``TAIL_EPS``, is left out).  P(n > n_max) is the share of
    replies cut: ``dist``'s ``sf`` at ``n_max``.
    """
    try:
        cap = math.nan if isinstance(n_max, (bool, str, bytes)) else float(n_max)
    except (TypeError, ValueError, OverflowError):
        cap = math.nan
    if not (cap == 0 or cap >= 1) or (math.isfinite(cap) and cap != round(cap)):
        raise ValueError(f"n_max must be a whole number >= 1 (or 0 / inf: no limit), "
                         f"got {n_max!r}")
    cap = math.inf if cap == 0 else cap
    if isinstance(dist, EmpiricalTokens):
        values, probs = dist.values, dist.probs
    else:
        k = np.arange(1.0, grid_top(dist, cap) + 1.0)
        probs = np.asarray(token_pmf(dist, k), dtype=float)
        if math.isfinite(cap) and k.size:
            probs[-1] += float(1.0 - token_cdf(dist, k[-1]))
        keep = probs > 0
        values, probs = k[keep], probs[keep] / probs[keep].sum()
    if math.isfinite(cap):
        cut = np.minimum(values, cap)
        values, idx = np.unique(cut, return_inverse=True)
        probs = np.bincount(idx, weights=probs, minlength=values.size)
    return EmpiricalTokens(np.asarray(values, dtype=float), np.asarray(probs, dtype=float),
                           int(getattr(dist, "n_samples", 0)))


# ------------------------------------------------------------ reading counts

def invalid_token_count(values):
    """The first entry of ``values`` that is not a token count, as (index, reason):
    "nan" where it is not a number (NaN or infinite), else "range" where it is not a whole
    number in [1, ``MAX_TOKEN_GRID``]; None when every entry is a token count."""
    x = np.asarray(values, dtype=float).ravel()
    bad = ~np.isfinite(x)
    if bad.any():
        return int(np.flatnonzero(bad)[0]), "nan"
    bad = (x < 1) | (x != np.round(x)) | (x > MAX_TOKEN_GRID)
    if bad.any():
        return int(np.flatnonzero(bad)[0]), "range"
    return None


def nonzero_token_counts(tokens) -> tuple[np.ndarray, int]:
    """(the counts of ``tokens`` above 0, how many were 0): a request that generated no
    token has no place in a token law, which counts from 1 token."""
    t = np.asarray(tokens)
    return t[t > 0], int(np.count_nonzero(t == 0))


def mean_tokens(dist) -> float:
    """E[n], the mean token count of the law ``dist`` (a scipy law or ``EmpiricalTokens``)."""
    return float(dist.mean())
