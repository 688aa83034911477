"""The LLM batching simulator under other arrivals (``simulate(..., arrivals=...)``): the
default is unchanged, a Poisson process object agrees with it (and with the exact
dynamic-batching chain), bursty traffic raises the wait of every strategy, and a replayed
trace is deterministic, serves each of its times once, and equals an independent
recursion for fixed-size batches."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from engine import llm_batching
from engine.arrivals import MMPP2, Poisson, Renewal
from engine.core import token_laws

LAW = stats.uniform(0, 200)                  # output tokens
K = (0.05, 0.1, 0.0002, 0.01)                # eq 18 coefficients (s)
SETUPS = {"dynamic": dict(b_max=16), "fixed": dict(b=4), "elastic": dict(b_max=16),
          "continuous": dict(b_max=16)}
SEEDS = range(3)                             # 3 × 100,000 requests: ~0.02 s a run


def pooled(strategy, lam=None, arrivals=None, seeds=SEEDS):
    """(mean wait, its CI, mean sojourn, its CI) over independent runs (s)."""
    runs = [llm_batching.simulate(strategy, lam, LAW, K, n_jobs=100_000, seed=s,
                                  arrivals=arrivals, **SETUPS[strategy]) for s in seeds]
    k = len(runs)
    return (np.mean([r.mean_wait_s for r in runs]),
            np.sqrt(sum(r.ci95_wait_s ** 2 for r in runs)) / k,
            np.mean([r.mean_sojourn_s for r in runs]),
            np.sqrt(sum(r.ci95_sojourn_s ** 2 for r in runs)) / k)


def load(strategy, rho):
    return rho * llm_batching.stability_limit(strategy, LAW, K, **SETUPS[strategy])


# --------------------------------------------------------------- (a) the default path

# simulate(strategy, 0.3, uniform(0, 200), K, b=4, b_max=16, n_jobs=5000, seed=3) before
# ``arrivals`` existed: (mean_wait, mean_sojourn, p99_sojourn).  Continuous batching:
# stored again when it moved onto the LLM serving simulator (on purpose; the fluid model
# gave 0.003736728148352894, 1.2349985541725865, 2.460546221718687: the wait now includes
# the end of the decode step an arrival lands in, and replies take ⌈N⌉ − 1 decode steps).
BEFORE = {"dynamic": (0.26951513410897043, 1.501078223707283, 3.6397958599310734),
          "fixed": (4.999085933012057, 7.026092577140458, 24.865170487084836),
          "elastic": (0.26932325356734893, 1.4455216773930737, 3.4374012333533543),
          "continuous": (0.0051001791934415655, 1.2302940902868933, 2.4580180000098975)}


@pytest.mark.parametrize("strategy", sorted(BEFORE))
def test_default_is_unchanged(strategy):
    """``arrivals=None`` is the Poisson run of before (numbers stored before the keyword
    was added), and the same as leaving the keyword out."""
    kw = dict(b=4, b_max=16, n_jobs=5000, seed=3)
    plain = llm_batching.simulate(strategy, 0.3, LAW, K, **kw)
    keyword = llm_batching.simulate(strategy, 0.3, LAW, K, **kw, arrivals=None)
    assert plain == keyword
    got = (plain.mean_wait_s, plain.mean_sojourn_s, plain.p99_sojourn_s)
    assert got == pytest.approx(BEFORE[strategy], rel=1e-12)


# --------------------------------------------------------------- (b) a Poisson object

@pytest.mark.parametrize("strategy", sorted(SETUPS))
def test_poisson_process_matches_the_default(strategy):
    """A ``Poisson`` object at 60% of capacity (``lam`` None) gives the default's mean wait
    and sojourn within the CIs; dynamic batching also the exact chain's."""
    lam = load(strategy, 0.6)
    w, cw, s, cs = pooled(strategy, arrivals=Poisson(lam))
    w0, cw0, s0, cs0 = pooled(strategy, lam=lam, seeds=range(10, 13))
    assert abs(w - w0) <= 1.5 * np.hypot(cw, cw0)
    assert abs(s - s0) <= 1.5 * np.hypot(cs, cs0)
    if strategy == "dynamic":
        exact = float(llm_batching.dynamic_sojourn(lam, LAW, K, 16))
        assert abs(s - exact) <= 1.5 * cs


# --------------------------------------------------------------- (c) bursty traffic

@pytest.mark.parametrize("strategy", sorted(SETUPS))
def test_bursty_arrivals_raise_the_wait(strategy):
    """At the same mean load (60% of capacity), renewal SCV 1 < 4 < 9 and an MMPP-2
    (rates 1.5λ, 0.5λ, phases lasting ~50 s) wait longer than Poisson (measured: dynamic
    1.23 → 1.37 → 1.77 s, continuous 0.035 → 0.14 → 0.46 s)."""
    lam = load(strategy, 0.6)
    waits = [pooled(strategy, arrivals=Renewal(lam, scv))[:2] for scv in (1.0, 4.0, 9.0)]
    for (w0, c0), (w1, c1) in zip(waits, waits[1:]):
        assert w1 - w0 > 2 * np.hypot(c0, c1)
    w, c = pooled(strategy, arrivals=MMPP2(1.5 * lam, 0.5 * lam, 0.02, 0.02))[:2]
    assert w - waits[0][0] > 2 * np.hypot(c, waits[0][1])


# --------------------------------------------------------------- (d) replay

def fixed_batch_finish(times, b, h):
    """Fixed batches of b with a constant batch time h: batch j starts when its last
    request has arrived and the previous batch is done (written independently)."""
    free, out = 0.0, []
    for j in range(times.size // b):
        start = max(free, times[(j + 1) * b - 1])
        free = start + h
        out += [free] * b
    return np.array(out)


@pytest.mark.parametrize("strategy", sorted(SETUPS))
def test_replay_is_deterministic(strategy):
    """A replayed trace: ``lam`` and ``n_jobs`` ignored, its times are the records'
    arrivals, the same seed the same run, and with a one-point token law (no other
    randomness) any seed the same run."""
    times = Renewal(2.0, 9.0).sample(4_000, np.random.default_rng(1))
    runs = [llm_batching.simulate(strategy, lam, LAW, K, n_jobs=n, seed=7, arrivals=times,
                                  return_records=True, warmup_jobs=0, **SETUPS[strategy])
            for lam, n in ((None, 1), (99.0, 10 ** 6))]
    assert runs[0].mean_wait_s == runs[1].mean_wait_s and runs[0].p99_s == runs[1].p99_s
    assert np.array_equal(runs[0].records.arrival_s, times)
    served = times.size - times.size % 4 if strategy == "fixed" else times.size
    assert runs[0].n_jobs == served
    one = token_laws.EmpiricalTokens.from_counts([120])
    fixed = [llm_batching.simulate(strategy, None, one, K, seed=seed, arrivals=times,
                                   **SETUPS[strategy]) for seed in (1, 2, None)]
    assert fixed[0] == fixed[1] == fixed[2]


def test_replayed_fixed_batches_equal_the_recursion():
    """Fixed batches of 4 with every request 120 tokens: the batch time is H(4, 120) and
    each request's departure is the recursion's (independent of the simulator)."""
    times = Renewal(1.5, 4.0).sample(2_001, np.random.default_rng(2))
    one = token_laws.EmpiricalTokens.from_counts([120])
    h = float(llm_batching.batch_time(4, 120, K))
    r = llm_batching.simulate("fixed", None, one, K, b=4, arrivals=times, return_records=True)
    want = fixed_batch_finish(times, 4, h)
    assert np.allclose(r.records.finish_s[:want.size], want, rtol=1e-12)
    assert np.all(np.isnan(r.records.finish_s[want.size:]))      # the incomplete last batch


def test_bad_arrivals_are_named():
    with pytest.raises(ValueError, match="arrivals"):
        llm_batching.simulate("dynamic", None, LAW, K, arrivals=np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="lam"):
        llm_batching.simulate("dynamic", None, LAW, K)
