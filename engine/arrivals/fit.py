"""An MMPP-2 fitted to a trace: the mean rate, the gap SCV and the index of dispersion
of counts (IDC) at two window lengths."""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
from scipy.optimize import brentq, least_squares

from .checks import _gap_scv, _mean_rate, _times
from .mmpp import MMPP2, _decay
from .stats import _checked_windows, _default_windows, _frozen, _idc_peak

FIT_GAPS = 100.0            # default long window, in mean gaps (at most span/10)
SHORT = 10.0                # the short window is the long one / SHORT
BOUND = (25.0, 15.0, 25.0)  # |logit p|, |log σw|, |logit u| searched
STARTS = [(zp, zs, zu) for zp in (-2.0, 0.0, 2.0) for zs in (-3.0, 0.0, 3.0)
          for zu in (0.0, 3.0)]
MAX_EVALUATIONS = 100      # per start
GOOD = 1e-3                 # relative error below which a moment counts as matched


@dataclass(frozen=True)
class Mmpp2Fit:
    """An MMPP-2 fitted to arrival times, and how well it matches them.

    ``process``: the fitted ``MMPP2``; ``fit_windows``: the two windows (short, long)
    whose IDC the fit aims at; ``windows``: every window reported (``describe``'s and
    the fit's, increasing); ``target_*`` the trace's, ``achieved_*`` the process's mean
    rate, gap SCV and IDC per window (exact formulas); ``notes``: what was matched and
    what could not be, in words.
    """

    process: MMPP2
    fit_windows: np.ndarray
    windows: np.ndarray
    target_rate: float
    target_scv: float
    target_idc: np.ndarray
    achieved_rate: float
    achieved_scv: float
    achieved_idc: np.ndarray
    notes: tuple

    @property
    def rate_error(self) -> float:
        """Relative error of the mean rate (achieved / target − 1)."""
        return self.achieved_rate / self.target_rate - 1.0

    @property
    def scv_error(self) -> float:
        """Relative error of the gap SCV (inf where the trace's SCV is 0)."""
        return float(_relative(self.achieved_scv, self.target_scv))

    @property
    def idc_error(self) -> np.ndarray:
        """Relative error of the IDC at each of ``windows`` (inf where the trace's is 0)."""
        return _relative(self.achieved_idc, self.target_idc)


def _relative(achieved, target) -> np.ndarray:
    achieved, target = np.asarray(achieved, dtype=float), np.asarray(target, dtype=float)
    safe = np.where(target > 0, target, 1.0)
    return np.where(target > 0, achieved / safe - 1.0, np.inf)[()]


def _shape(x: np.ndarray) -> tuple[float, float, float]:
    """(p, u, σw) of the unconstrained parameters x = (logit p, log σw, logit u):
    p = π1, the time in the busier phase; u ∈ (0, 1), r2 = λ(1 − u)."""
    zp, zs, zu = x
    return 1.0 / (1.0 + math.exp(-zp)), 1.0 / (1.0 + math.exp(-zu)), math.exp(zs)


def _moments(x, m_short: float, m_long: float) -> np.ndarray:
    """(c², I(short), I(long)) of the MMPP-2 with λ = 1 and shape x; m_* = λ·window."""
    p, u, sw = _shape(x)
    r1, r2 = 1.0 + u * math.exp(-x[0]), 1.0 / (1.0 + math.exp(x[2]))
    spread = 2.0 * (1.0 - p) * u * u / p           # 2 π1 π2 (r1 − r2)², λ = 1
    sigma = sw / m_long
    scv = 1.0 + spread / (r1 * r2 + sigma)
    idc = 1.0 + spread / sigma * _decay(sigma * np.array([m_short, m_long]))
    return np.concatenate(([scv], idc))


def _process(x, lam: float, window: float, name: str) -> MMPP2:
    """The MMPP-2 of the unconstrained parameters x (least squares)."""
    p, u, sw = _shape(x)
    sigma = sw / window
    r2 = lam / (1.0 + math.exp(x[2]))
    r1 = lam * (1.0 + u * math.exp(-x[0]))
    return MMPP2(r1, r2, sigma * (1.0 - p), sigma * p, name)


def _closed_form(target: np.ndarray, m_short: float, m_long: float):
    """(π1, π2, r1 − r2, σ) at λ = 1 matching the SCV and the IDC at both windows
    exactly, or None where no MMPP-2 does (derivation: docs/models/arrivals.md).

    The IDC excesses' ratio (I_s − 1)/(I_l − 1) = g(σ m_s)/g(σ m_l), g(x) = (x − 1 +
    e^{−x})/x, rises from m_s/m_l to 1 with σ: it gives σ; then S = 2π1π2 d² =
    σ (I_l − 1)/g(σ m_l); R = r1 r2 = S/(c² − 1) − σ; with K = R − 1 + S/2,
    d = √(K² + 2S) and π1 = (d − K)/2d.
    """
    scv, i_short, i_long = target
    if not (scv > 1.0 and i_short > 1.0 and i_long > 1.0):
        return None
    ratio = (i_short - 1.0) / (i_long - 1.0)
    f = lambda z: float(_decay(math.exp(z) * m_short / m_long) / _decay(math.exp(z))) - ratio
    if not f(-30.0) < 0.0 < f(40.0):
        return None
    x = math.exp(brentq(f, -30.0, 40.0, xtol=1e-13, rtol=1e-15))
    sigma = x / m_long
    spread = sigma * (i_long - 1.0) / float(_decay(x))
    product = spread / (scv - 1.0) - sigma
    k = product - 1.0 + spread / 2.0
    d = math.sqrt(k * k + 2.0 * spread)
    # π1 = (d − K)/2d, π2 = (d + K)/2d, each without cancellation (d² − K² = 2S)
    p1 = (d - k) / (2 * d) if k <= 0 else spread / (d * (d + k))
    p2 = (d + k) / (2 * d) if k >= 0 else spread / (d * (d - k))
    if product < 0 or p1 * d > 1.0 + 1e-12 or not (p1 > 0 and p2 > 0):
        return None
    return p1, p2, d, sigma


def _exact_process(target, m, lam: float, name: str):
    """The MMPP-2 of ``_closed_form`` (rates scaled back to λ), or None."""
    found = _closed_form(target, *m)
    if found is None:
        return None
    p1, p2, d, sigma = found
    r1, r2 = lam * (1.0 + p2 * d), lam * max(0.0, 1.0 - p1 * d)
    try:
        return MMPP2(r1, r2, lam * sigma * p2, lam * sigma * p1, name)
    except ValueError:                  # a switching rate below the floats: no closed form
        return None


def _least_squares(goal: np.ndarray, m: np.ndarray, lam: float, window: float,
                   name: str) -> MMPP2:
    """The MMPP-2 nearest the targets in log terms: least squares from up to 18 starts
    (stopping once three of them reach the same least cost)."""
    best, hits = None, 0
    for x0 in STARTS:
        res = least_squares(lambda x: np.log(_moments(x, *m)) - goal, x0,
                            bounds=(-np.array(BOUND), np.array(BOUND)), xtol=1e-12,
                            ftol=1e-12, gtol=1e-12, max_nfev=MAX_EVALUATIONS)
        if best is None or res.cost < best.cost * (1 - 1e-6):
            best, hits = res, 1
        elif res.cost <= best.cost * (1 + 1e-6):
            hits += 1                    # the best found again from another start
        if best.cost < 1e-20 or hits == 3:
            break
    return _process(best.x, lam, window, name)


def _fit_window(t: np.ndarray, window) -> float:
    if window is None:
        span = t[-1] - t[0]
        return min(FIT_GAPS * span / (t.size - 1), span / 10.0)
    w = _checked_windows(t, window, "window")
    if w.size != 1:
        raise ValueError(f"window must be a single number, got {w.size} values")
    return float(w[0])


def _with_defaults(fit_w: np.ndarray, defaults: np.ndarray) -> np.ndarray:
    """The fit windows and the default ones not within 1e-9 (relative) of them, sorted."""
    near = np.abs(defaults[:, None] - fit_w[None, :]) <= 1e-9 * fit_w[None, :]
    return np.sort(np.concatenate((fit_w, defaults[~near.any(axis=1)])))


def fit_mmpp2_report(arrival_times, window=None, name: str = "a trace") -> Mmpp2Fit:
    """An MMPP-2 fitted to sorted ``arrival_times``, with the moments it matches.

    Matched: the mean rate λ = (n − 1)/span exactly (by construction), and the gap SCV
    and the IDC at ``window`` and at ``window``/10: three equations for the three
    parameters left (the time share of the busier phase, the rate contrast, the
    switching speed; the IDC at two windows fixes how fast the rate's correlation
    decays).  Where an MMPP-2 meets them, exactly: the one solution, in closed form
    (docs/models/arrivals.md); elsewhere the nearest by least squares on their
    logarithms.  Default ``window``: 100 mean gaps, at most span/10.  An MMPP-2 has
    SCV ≥ 1, an IDC ≥ 1 growing with the window and SCV ≤ IDC(∞): targets outside that
    are approached as closely as it can (``notes`` says so, with the errors), and a
    trace with SCV and both IDCs ≤ 1 gets a Poisson process (both phases at λ).
    ``name`` goes into the process's label ("MMPP-2 fitted to <name>").
    """
    t = _times(arrival_times)
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {type(name).__name__}")
    w = _fit_window(t, window)
    lam, scv = _mean_rate(t), _gap_scv(t)
    fit_w = np.array([w / SHORT, w])
    idc_fit, _ = _idc_peak(t, fit_w)
    target = np.concatenate(([scv], idc_fit))
    goal = np.log(np.maximum(target, 1.0))
    label = f"fitted to {name}"
    where = f"the IDC at windows {fit_w[0]:.4g} and {fit_w[1]:.4g}"
    notes = []
    if np.any(target < 1.0):
        notes.append("below 1 (more regular than Poisson): " + ", ".join(
            f"{what} {v:.3g}" for what, v in zip(("SCV", "IDC short", "IDC long"), target)
            if v < 1.0) + "; an MMPP's SCV and IDC are at least 1: aimed at 1")
    if np.all(goal <= 1e-12):
        process = MMPP2(lam, lam, 1.0 / w, 1.0 / w, label)
        notes.append("a Poisson process (both phases at the mean rate): the trace is no "
                     "burstier than Poisson at these windows")
    else:
        m = lam * fit_w
        process = _exact_process(target, m, lam, label)
        reached = None if process is None else \
            np.concatenate(([process.scv], process.idc(fit_w))) / target - 1.0
        if reached is not None and np.max(np.abs(reached)) <= 1e-9:
            notes.insert(0, f"matched exactly: the mean rate, the gap SCV and {where} "
                            f"(the one MMPP-2 that does, in closed form)")
        else:
            process = _least_squares(goal, m, lam, w, label)
    if not notes or not notes[0].startswith("matched"):
        notes.insert(0, f"matched: the mean rate exactly; the gap SCV and {where} as "
                        f"closely as an MMPP-2 can (least squares on their logarithms)")
    windows = _with_defaults(fit_w, _default_windows(t))
    target_idc, _ = _idc_peak(t, windows)
    achieved_idc = process.idc(windows)
    reached = np.concatenate(([process.scv], process.idc(fit_w))) / np.exp(goal) - 1.0
    if np.max(np.abs(reached)) > GOOD:
        notes.append("not every target is reachable by an MMPP-2 (1 ≤ SCV ≤ IDC(∞), the IDC "
                     "grows with the window): the closest fit, relative errors SCV "
                     f"{reached[0]:+.2%}, IDC {reached[1]:+.2%} (short), "
                     f"{reached[2]:+.2%} (long)")
    return Mmpp2Fit(process=process, fit_windows=_frozen(fit_w), windows=_frozen(windows),
                    target_rate=lam, target_scv=scv, target_idc=_frozen(target_idc),
                    achieved_rate=process.rate, achieved_scv=process.scv,
                    achieved_idc=_frozen(achieved_idc), notes=tuple(notes))


def fit_mmpp2(arrival_times, window=None, name: str = "a trace") -> MMPP2:
    """The MMPP-2 of ``fit_mmpp2_report`` (which says what it matches and how well)."""
    return fit_mmpp2_report(arrival_times, window, name).process
