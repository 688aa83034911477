"""The ``arrivals=`` argument of the simulators (engine.core.arrival_input): traces are
checked and kept, processes are sampled from a child stream (same seed, same times; the
parent stream untouched), bad input raises ``ValueError`` naming ``arrivals``."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core.arrival_input import (arrival_rate, arrival_times, check_arrival_times,
                                       is_arrival_process)


class Steady:
    """A stand-in process: deterministic gaps 1/rate (no randomness), or ``bad`` output."""

    def __init__(self, rate, bad=None):
        self.rate, self.bad = rate, bad

    def sample(self, n, rng):
        if self.bad is not None:
            return self.bad
        return (np.arange(n) + rng.random()) / self.rate


def test_trace_is_replayed_whole():
    t = [0.0, 0.5, 0.5, 2.0]
    got = arrival_times(t, 99, np.random.default_rng(0))
    assert np.array_equal(got, t) and got.dtype == float
    assert arrival_rate(t) == pytest.approx(3 / 2.0)
    assert arrival_rate([4.0]) == math.inf and arrival_rate([1.0, 1.0]) == math.inf


def test_process_is_sampled_from_a_child_stream():
    """n times from the process; the same seed the same times; the parent generator's own
    draws unchanged (service times and tokens stay common to every process)."""
    p = Steady(4.0)
    rng = np.random.default_rng(7)
    t = arrival_times(p, 5, rng)
    assert t.size == 5 and np.allclose(np.diff(t), 0.25)
    assert np.array_equal(t, arrival_times(p, 5, np.random.default_rng(7)))
    assert rng.random() == np.random.default_rng(7).random()
    assert is_arrival_process(p) and not is_arrival_process(t)
    assert arrival_rate(p) == 4.0


@pytest.mark.parametrize("bad", [[], [[1.0, 2.0]], [1.0, math.nan], [-1.0, 2.0], [2.0, 1.0],
                                 "times", [1.0, math.inf]])
def test_bad_traces_name_arrivals(bad):
    with pytest.raises(ValueError, match="arrivals"):
        check_arrival_times(bad)
    with pytest.raises(ValueError, match="arrivals"):
        arrival_times(bad, 3, np.random.default_rng(0))


@pytest.mark.parametrize("process", [Steady(0.0), Steady(math.inf), Steady(math.nan),
                                     Steady("fast"), Steady(1.0, bad=[2.0, 1.0, 3.0]),
                                     Steady(1.0, bad=[1.0, 2.0]), Steady(1.0, bad=[-1.0, 0, 1])])
def test_bad_processes_name_arrivals(process):
    with pytest.raises(ValueError, match="arrivals"):
        arrival_times(process, 3, np.random.default_rng(0))
