"""The largest rate meeting a TTFT and TPOT target: bracketing and bisection checked on
a run whose attainment falls at a known rate, and on the simulator."""
import math

import pytest

from engine.llm_serving import (Scheduler, StepCost, capacity_limit, largest_rate_meeting,
                                meets_target, simulate_serving)


class Attainment:
    """A stand-in run: every request meets the target below ``limit`` requests/s."""

    def __init__(self, rate, limit):
        self.share = 1.0 if rate <= limit else 0.5

    def goodput_fraction(self, *, ttft_ms, tpot_ms, percentile):
        return self.share if self.share * 100 >= percentile else 0.0


@pytest.mark.parametrize("limit", [0.05, 3.3, 7.9, 9.5, 20.0])
def test_the_bracket_halves_around_the_known_rate(limit):
    calls = []

    def simulate(rate):
        calls.append(rate)
        return Attainment(rate, limit)
    got = largest_rate_meeting(simulate, capacity_per_s=10.0, ttft_ms=100, tpot_ms=50,
                               percentile=90, refine=5)
    assert got.simulations == len(calls) == 6 + 5
    if limit < 2.0:                       # fails at the first rate of the sweep: 0 holds
        assert got.rate_per_s < 2.0 / 2 ** 4
    elif limit >= 10.0:                   # holds up to capacity
        assert got.fails_at_per_s == 10.0 and got.rate_per_s >= 9.5
    else:
        assert got.rate_per_s <= limit < got.fails_at_per_s
        assert got.fails_at_per_s - got.rate_per_s <= 2.0 / 2 ** 5 + 1e-12


def test_on_the_simulator_it_holds_at_the_rate_and_fails_past_it():
    cost = StepCost(base_ms=10.0, prefill_ms_per_token=0.05, decode_ms_per_seq=0.3)
    sched = Scheduler(max_num_seqs=16, max_num_batched_tokens=4096)
    cap = capacity_limit(cost, sched, 500, 100).rate_per_s

    def simulate(rate):
        return simulate_serving(cost, sched, input_tokens=500, output_tokens=100,
                                rate_per_s=rate, n_requests=3000, seed=7)
    target = dict(ttft_ms=150.0, tpot_ms=30.0, percentile=90)
    got = largest_rate_meeting(simulate, capacity_per_s=cap, **target)
    assert 0 < got.rate_per_s < got.fails_at_per_s <= cap
    assert meets_target(simulate(got.rate_per_s), **target)
    assert not meets_target(simulate(got.fails_at_per_s), **target)


@pytest.mark.parametrize("kwargs, match", [
    (dict(capacity_per_s=0.0), "capacity_per_s"),
    (dict(ttft_ms=-1.0), "ttft_ms"),
    (dict(tpot_ms=math.nan), "tpot_ms"),
    (dict(percentile=100.0), "percentile"),
])
def test_bad_input_is_a_clear_message(kwargs, match):
    args = dict(capacity_per_s=10.0, ttft_ms=100.0, tpot_ms=50.0, percentile=90)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        largest_rate_meeting(lambda r: Attainment(r, 5.0), **args)
