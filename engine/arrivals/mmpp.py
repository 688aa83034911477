"""The two-phase Markov-modulated Poisson process (MMPP-2): exact moments, counting
probabilities and a vectorised sampler.

A phase process J(t) ∈ {1, 2} leaves phase 1 at rate s12 and phase 2 at rate s21;
arrivals come at rate r_J(t).  As a Markovian arrival process (MAP, Neuts 1979):
D0 = [[−r1−s12, s12], [s21, −r2−s21]], D1 = diag(r1, r2).  With σ = s12 + s21,
π = (s21, s12)/σ, λ = π1 r1 + π2 r2 and d = r1 − r2 (derivations:
docs/models/arrivals.md):

* gap SCV     c² = 1 + 2 π1 π2 d² / (r1 r2 + λσ)
* count law   Var N(t) = λt + 2 π1 π2 d² (σt − 1 + e^{−σt}) / σ²
* IDC         I(t) = Var N(t) / λt = 1 + (2 π1 π2 d² / λσ)·(1 − (1 − e^{−σt})/σt)

so 1 ≤ c² ≤ I(∞), with c² = I(∞) exactly when one phase has no arrivals (an
interrupted Poisson process, whose gaps are independent).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from ..core.domains import COUNT_MAX, COUNT_TIME, COUNT_WINDOW, PHASE_RATE, SWITCH_RATE
from .checks import _count, _generator, _scalar


_TAYLOR_TERMS = 18


def _squared(table: np.ndarray, tail: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The block sequence of exp(2Qh) from that of exp(Qh): C[n] = Σ_m A[m] @ A[n − m]
    (a product of block upper-triangular Toeplitz matrices, non-negative terms), with
    the mass of more than n_max arrivals carried along (both parts within the table but
    their sum beyond it, the first within and the second beyond, or the first beyond);
    each row of the whole renormalised to 1."""
    size = table.shape[0]
    within = table.sum(axis=0)
    out = np.zeros_like(table)
    out_tail = within @ tail + tail @ (within + tail)
    for i in range(2):
        for j in range(2):
            for k in range(2):
                full = np.convolve(table[:, i, j], table[:, j, k])
                out[:, i, k] += full[:size]
                out_tail[i, k] += full[size:].sum()
    norm = out.sum(axis=(0, 2)) + out_tail.sum(axis=1)
    return out / norm[None, :, None], out_tail / norm[:, None]


def _decay(x) -> np.ndarray:
    """(x − 1 + e^{−x})/x, x ≥ 0: the IDC's growth from 0 towards 1 (series near 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(all="ignore"):
        direct = (x + np.expm1(-x)) / x
        series = x / 2.0 - x * x / 6.0 + x ** 3 / 24.0
    return np.where(x < 1e-4, series, np.where(np.isinf(x), 1.0, direct))


@dataclass(frozen=True)
class MMPP2:
    """A two-phase Markov-modulated Poisson process.

    ``rate_1``, ``rate_2``: arrivals per time unit in phase 1 and 2 (≥ 0, not both 0);
    ``switch_12``, ``switch_21``: rates of leaving phase 1 and phase 2 (> 0); ``name``:
    words for ``label`` (e.g. "fitted to the code trace").  Exact ``rate``, ``scv``,
    ``idc(window)``, ``count_variance(t)``, ``counting_probabilities(t, n_max)``;
    ``sample(n, rng)`` draws exact sample paths.  Equal rates give a Poisson process.
    """

    rate_1: float
    rate_2: float
    switch_12: float
    switch_21: float
    name: str = ""

    def __post_init__(self):
        for field in ("rate_1", "rate_2"):
            object.__setattr__(self, field, _scalar(PHASE_RATE, getattr(self, field), field))
        for field in ("switch_12", "switch_21"):
            object.__setattr__(self, field, _scalar(SWITCH_RATE, getattr(self, field), field))
        if self.rate_1 == 0 and self.rate_2 == 0:
            raise ValueError("rate_1 and rate_2 must not both be 0 (no arrivals at all)")
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a string, got {type(self.name).__name__}")

    # ---------------------------------------------------------------- the MAP
    @property
    def D0(self) -> np.ndarray:
        """Generator of the phase without arrivals: [[−r1−s12, s12], [s21, −r2−s21]]."""
        r1, r2, s12, s21 = self._params
        return np.array([[-r1 - s12, s12], [s21, -r2 - s21]])

    @property
    def D1(self) -> np.ndarray:
        """Rates of transitions with an arrival: diag(r1, r2)."""
        return np.diag([self.rate_1, self.rate_2])

    @property
    def _params(self) -> tuple:
        return self.rate_1, self.rate_2, self.switch_12, self.switch_21

    @property
    def stationary_phase(self) -> np.ndarray:
        """Time-stationary phase law π = (s21, s12)/(s12 + s21)."""
        s12, s21 = self.switch_12, self.switch_21
        return np.array([s21, s12]) / (s12 + s21)

    @property
    def arrival_phase(self) -> np.ndarray:
        """Phase law just after an arrival, α = π D1 / λ (the gaps' initial law)."""
        pi = self.stationary_phase
        w = pi * np.array([self.rate_1, self.rate_2])
        return w / w.sum()

    @property
    def rate(self) -> float:
        """Mean arrival rate λ = π1 r1 + π2 r2."""
        pi = self.stationary_phase
        return float(pi[0] * self.rate_1 + pi[1] * self.rate_2)

    @property
    def _spread(self) -> float:
        """2 π1 π2 (r1 − r2)²: twice the variance of the arrival rate over phases."""
        pi = self.stationary_phase
        return 2.0 * pi[0] * pi[1] * (self.rate_1 - self.rate_2) ** 2

    @property
    def scv(self) -> float:
        """Squared coefficient of variation of the stationary gap:
        c² = 1 + 2 π1 π2 (r1 − r2)² / (r1 r2 + λσ) (from E[X^k] = k! α (−D0)^{−k} 1)."""
        r1, r2, s12, s21 = self._params
        return float(1.0 + self._spread / (r1 * r2 + self.rate * (s12 + s21)))

    @property
    def idc_limit(self) -> float:
        """I(∞) = 1 + 2 π1 π2 (r1 − r2)² / (λσ), the IDC of very long windows."""
        return float(1.0 + self._spread / (self.rate * (self.switch_12 + self.switch_21)))

    def idc(self, window) -> np.ndarray:
        """Index of dispersion of counts Var N(w) / E N(w) over a window of length
        ``window`` (> 0, broadcasts): 1 + (I(∞) − 1)·(σw − 1 + e^{−σw})/σw, exact."""
        w = COUNT_WINDOW.check(window, "window")
        sigma = self.switch_12 + self.switch_21
        with np.errstate(over="ignore"):
            x = sigma * w
        return (1.0 + (self.idc_limit - 1.0) * _decay(x))[()]

    def count_variance(self, t) -> np.ndarray:
        """Var N(t), the variance of the number of arrivals in [0, t] of the stationary
        process (t ≥ 0, broadcasts): λt + 2 π1 π2 (r1 − r2)² (σt − 1 + e^{−σt})/σ²."""
        t = COUNT_TIME.check(t, "t")
        sigma = self.switch_12 + self.switch_21
        with np.errstate(over="ignore"):
            lt, x = self.rate * t, sigma * t
        return (lt * (1.0 + (self.idc_limit - 1.0) * _decay(x)))[()]

    def counting_probabilities(self, t, n_max) -> np.ndarray:
        """P[n, i, j] = Pr(N(t) = n, J(t) = j | J(0) = i) for n = 0..``n_max``: the
        counting matrices P(n, t) of the MAP, shape (n_max + 1, 2, 2).

        P(·, t) is the first block row of exp(Qt), Q the block-bidiagonal generator
        with D0 on the diagonal and D1 beside it (truncating Q at n_max changes none of
        these blocks).  Computed by scaling and squaring on the block sequence: a Taylor
        series of exp(Qt/2^s) (norm ≤ 1/2), then s squarings, each a convolution of
        non-negative block sequences (no cancellation) that also carries the mass of
        more than n_max arrivals, so every row of the whole is renormalised to 1 (it is
        exactly 1: D1 + D0 has zero row sums) and rounding does not compound over the
        squarings.  Checked against scipy.linalg.expm of the block matrix and, for
        equal rates, Poisson probabilities (tests/arrivals).
        """
        t = _scalar(COUNT_TIME, t, "t")
        n_max = int(_scalar(COUNT_MAX, n_max, "n_max"))
        r1, r2, s12, s21 = self._params
        theta = max(r1 + s12, r2 + s21)
        steps = 0 if t == 0 else max(0, math.ceil(math.log2(4.0 * theta) + math.log2(t)))
        h = math.ldexp(t, -steps)
        d0, d1 = self.D0 * h, self.D1 * h
        size = max(n_max + 1, _TAYLOR_TERMS + 1)       # the first step whole, no tail
        term = np.zeros((size, 2, 2))
        term[0] = np.eye(2)
        table = term.copy()
        for k in range(1, _TAYLOR_TERMS + 1):          # ‖Qh‖ ≤ 2θh ≤ 1/2: 0.5^18/18! < 1e-21
            shifted = np.zeros_like(term)
            shifted[1:] = term[:-1] @ d1
            term = (term @ d0 + shifted) / k
            table += term
        table = np.maximum(table, 0.0)
        tail = table[n_max + 1:].sum(axis=0)
        table = table[:n_max + 1]
        for _ in range(steps):
            if not table.any():                        # every path beyond n_max already
                break
            table, tail = _squared(table, tail)
        return np.minimum(table, 1.0)

    @property
    def label(self) -> str:
        if self.name:
            return f"MMPP-2 {self.name}"
        r1, r2, s12, s21 = self._params
        return f"MMPP-2 (rates {r1:.3g}/{r2:.3g}, switching {s12:.3g}/{s21:.3g})"

    # ---------------------------------------------------------------- sampling
    def _arrival_phases(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Phases J_0..J_n (0: phase 1, 1: phase 2) just after arrivals 0..n, J_0 ~ α:
        a Markov chain with P = (−D0)^{−1} D1, drawn as alternating runs of geometric
        length (whole chunks of runs at a time, no loop per arrival)."""
        r1, r2, s12, s21 = self._params
        det = r1 * r2 + r1 * s21 + r2 * s12
        leave = np.array([s12 * r2 / det, s21 * r1 / det])   # P12, P21
        with np.errstate(all="ignore"):
            per = -np.log1p(-leave)                          # -log(stay), inf at leave 1
        need = n + 1
        phase = int(rng.random() >= self.arrival_phase[0])
        with np.errstate(all="ignore"):
            cycle = float(np.sum(1.0 / leave))
        chunk = int(min(2 * need + 2, max(64, 4 * need / cycle + 64)))
        runs, lengths, total = [], [], 0
        while total < need:
            ph = (phase + np.arange(chunk)) % 2
            with np.errstate(all="ignore"):
                extra = np.floor(rng.exponential(1.0, chunk) / per[ph])
            length = np.minimum(1.0 + np.where(per[ph] == np.inf, 0.0, extra), need)
            runs.append(ph)
            lengths.append(length.astype(np.int64))
            total += int(lengths[-1].sum())
            phase = (phase + chunk) % 2
        return np.repeat(np.concatenate(runs), np.concatenate(lengths))[:need]

    def sample(self, n, rng) -> np.ndarray:
        """``n`` sorted arrival times (float64) of the process started just after an
        arrival at time 0 (not returned) in a phase drawn from α, so the gaps are the
        stationary sequence of inter-arrival times.

        Exact and vectorised: the phases at arrivals form a Markov chain (P =
        (−D0)^{−1} D1); between two arrivals the phase makes M round trips 1 → 2 → 1
        (or 2 → 1 → 2), M geometric with Pr(M = m) = q^m (1 − q), q = s12 s21 /
        ((r1+s12)(r2+s21)), independent of the end phase; each visit to phase i lasts
        Exp(r_i + s_i), so a gap is Gamma(n1, r1+s12) + Gamma(n2, r2+s21) with n1, n2
        the visits.  The cost is O(n) whatever the switching rates.
        """
        n, rng = _count(n), _generator(rng)
        if n == 0:
            return np.zeros(0)
        r1, r2, s12, s21 = self._params
        a, b = r1 + s12, r2 + s21
        det = r1 * r2 + r1 * s21 + r2 * s12
        q = s12 * s21 / (a * b)
        with np.errstate(divide="ignore"):     # Pr(M ≥ m) = q^m: M = ⌊E / (−log q)⌋
            per_trip = -np.log(q) if q <= 0.5 else -np.log1p(-det / a / b)
        phases = self._arrival_phases(n, rng)
        start, end = phases[:-1], phases[1:]
        trips = np.floor(rng.exponential(1.0, n) / per_trip)
        visits_1 = trips + ((start == 0) | (end == 0))
        visits_2 = trips + ((start == 1) | (end == 1))
        gaps = rng.gamma(visits_1, 1.0 / a) + rng.gamma(visits_2, 1.0 / b)
        return np.cumsum(gaps)
