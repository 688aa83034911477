"""describe and rate_over_time: hand-made traces with counts worked out by hand, and a
Poisson sample against Poisson's SCV 1 and IDC 1 within their sampling errors."""
import math

import numpy as np
import pytest

from engine.arrivals import Poisson, describe, rate_over_time
from tests.arrivals.helpers import Z

# gaps 1,1,13,10,1,1,1,12 (mean 5); counts in windows of 10 from 0: 3, 1, 4, 0 (40 is
# the start of a fifth window, left out)
HAND = [0.0, 1.0, 2.0, 15.0, 25.0, 26.0, 27.0, 28.0, 40.0]


def test_describe_hand_made_trace():
    s = describe(HAND, windows=[10.0, 20.0])
    assert s.n == 9 and s.mean_rate == 8 / 40
    gaps = np.diff(HAND)
    assert s.scv == pytest.approx(np.mean((gaps - 5) ** 2) / 25, rel=1e-15)   # 218/8/25
    assert s.scv == pytest.approx(1.09, rel=1e-15)
    # windows of 10: counts 3, 1, 4, 0: mean 2, variance (1+1+4+4)/3; of 20: 4, 4
    assert s.idc.tolist() == pytest.approx([10 / 3 / 2, 0.0], abs=1e-15)
    assert s.peak_to_mean.tolist() == pytest.approx([2.0, 1.0], abs=1e-15)
    assert s.windows.tolist() == [10.0, 20.0]


def test_describe_periodic_and_offset_traces():
    """A periodic trace: SCV 0, IDC 0, peak-to-mean 1; shifting every time changes
    nothing (windows start at the first arrival)."""
    t = np.arange(0.0, 101.0)
    s = describe(t, windows=[10.0, 25.0])
    assert s.scv == 0 and s.idc.tolist() == [0.0, 0.0] and s.peak_to_mean.tolist() == [1, 1]
    shifted = describe(t + 1e3, windows=[10.0, 25.0])
    assert shifted.idc.tolist() == s.idc.tolist() and shifted.mean_rate == s.mean_rate


def test_default_windows():
    """1, 10, 100, 1000 mean gaps where the trace holds 10 of them; span/10 for a trace
    of fewer than 11 arrivals."""
    t = np.arange(10_001.0)
    assert describe(t).windows.tolist() == [1.0, 10.0, 100.0, 1000.0]
    assert describe(t[:2_001]).windows.tolist() == [1.0, 10.0, 100.0]
    assert describe([0.0, 4.0, 5.0]).windows.tolist() == [0.5]


def test_describe_poisson_sample():
    """A Poisson sample of 200,000: SCV within 5 standard errors (2/√n, the delta
    method for exponential gaps) of 1; IDC within 5·√((2 + 1/μ)/k) of 1 (k windows of
    mean count μ, Poisson's fourth moment); peak-to-mean at one mean gap at least 1."""
    n, rate = 200_000, 4.0
    t = Poisson(rate).sample(n, np.random.default_rng(8))
    s = describe(t)
    assert s.mean_rate == pytest.approx(rate, rel=Z / math.sqrt(n))
    assert abs(s.scv - 1) <= Z * 2 / math.sqrt(n)
    for w, idc in zip(s.windows, s.idc):
        mu, k = rate * w, math.floor((t[-1] - t[0]) / w)
        assert abs(idc - 1) <= Z * math.sqrt((2 + 1 / mu) / k), (w, idc)
    assert np.all(s.peak_to_mean >= 1)


def test_rate_over_time():
    r = rate_over_time(HAND, 10.0)
    assert r.edges.tolist() == [0.0, 10.0, 20.0, 30.0, 40.0]
    assert r.rate.tolist() == pytest.approx([0.3, 0.1, 0.4, 0.0], abs=1e-15)
    default = rate_over_time(HAND)
    assert default.window == 0.4 and default.rate.size == 100
    assert default.rate.sum() * 0.4 == pytest.approx(8)     # all but the last arrival


@pytest.mark.parametrize("windows", [[0.0], [-1.0], [np.nan], [25.0], [], [1e-320]])
def test_describe_rejects_bad_windows(windows):
    with pytest.raises(ValueError, match="windows"):
        describe(HAND, windows=windows)


@pytest.mark.parametrize("window", [0.0, 41.0, 1e-6, [1.0, 2.0]])
def test_rate_over_time_rejects_bad_window(window):
    with pytest.raises(ValueError, match="window"):
        rate_over_time(HAND, window)
