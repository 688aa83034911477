"""The token-limit queue under other arrivals (``simulate_token_queue(arrivals=...)``): the
default is unchanged, a Poisson process object agrees with it and with
Pollaczek–Khinchine, bursty traffic raises the wait, Kingman's GI/G/1 approximation
lies within its measured band of the simulation, and a replayed trace is deterministic
and equal to an independent Lindley recursion over the same times."""
from __future__ import annotations

import numpy as np
import pytest

from engine import token_limit
from engine.arrivals import MMPP2, Poisson, Renewal, Replay
from engine.core import token_laws
from engine.core.two_moment import mean_wait_gg1

LAW = token_laws.lognormal(5.0, 0.8)
A, C, N_MAX = 0.01, 0.5, 2000
E1, E2 = (float(x) for x in token_limit.clipped_token_moments(LAW, N_MAX))
ES, ES2 = (float(x) for x in token_limit.service_moments(A, C, E1, E2))
CS2 = ES2 / ES ** 2 - 1.0            # ≈ 0.555: the clipped lognormal's service SCV
N_JOBS, SEEDS = 400_000, range(4)    # ~0.05 s a run


def pooled(arrivals=None, lam=None, seeds=SEEDS, n_jobs=N_JOBS):
    """(mean wait, 95% CI half-width) over independent runs (s), lost requests none."""
    runs = [token_limit.simulate_token_queue(lam, A, C, LAW, N_MAX, n_jobs=n_jobs, seed=s,
                                             arrivals=arrivals) for s in seeds]
    ci = np.sqrt(np.sum([r.ci95_wait_all_s ** 2 for r in runs])) / len(runs)
    return float(np.mean([r.mean_wait_s for r in runs])), float(ci)


# --------------------------------------------------------------- (a) the default path

# simulate_token_queue(0.05, 0.01, 0.5, lognormal(5, 0.8), 2000, patience, n_jobs=20_000,
# seed) before ``arrivals`` existed: (mean_wait_all, p99, utilization).
BEFORE = {1: (0.3072336561002458, 12.03754928166765, 0.12661702066071248),
          2: (0.28649953813816487, 11.800063652791339, 0.12822040378705632)}


@pytest.mark.parametrize("seed", sorted(BEFORE))
@pytest.mark.parametrize("patience", [None, 30.0])
def test_default_is_unchanged(seed, patience):
    """``arrivals=None`` is the Poisson run of before, bit for bit (numbers stored before
    the keyword was added), and the same as leaving the keyword out."""
    args = (0.05, 0.01, 0.5, LAW, 2000, patience)
    plain = token_limit.simulate_token_queue(*args, n_jobs=20_000, seed=seed)
    keyword = token_limit.simulate_token_queue(*args, n_jobs=20_000, seed=seed, arrivals=None)
    assert plain == keyword
    got = (plain.mean_wait_all_s, plain.p99_s, plain.utilization)
    assert got == pytest.approx(BEFORE[seed], rel=1e-12)


# --------------------------------------------------------------- (b) a Poisson object

def test_poisson_process_matches_the_default_and_pk():
    """A ``Poisson`` object at λ (``lam`` None: the process's rate is the load) gives the
    default's mean wait within the CIs, and both the exact M/G/1 mean (P-K)."""
    lam = 0.7 / ES
    exact = float(token_limit.mean_wait(lam, A, C, LAW, N_MAX))
    w_obj, ci_obj = pooled(Poisson(lam))
    w_def, ci_def = pooled(lam=lam, seeds=range(10, 14))
    assert abs(w_obj - w_def) <= 1.5 * np.hypot(ci_obj, ci_def)
    assert abs(w_obj - exact) <= 1.5 * ci_obj and abs(w_def - exact) <= 1.5 * ci_def
    assert float(mean_wait_gg1(lam, ES, 1.0, CS2)) == pytest.approx(exact, rel=1e-12)


# --------------------------------------------------------------- (c) bursty traffic

# Kingman's GI/G/1 approximation against the simulation, relative error (approx − sim)/sim,
# measured with 4 × 400,000 requests a point (two-phase hyperexponential renewal arrivals,
# this service law, cs² ≈ 0.55); the band asserted around each:
#   ρ     scv 1    scv 4    scv 9
#   0.5   −0.2%    +26%     +62%
#   0.7   +0.3%    +8%      +14%
#   0.9   −1.4%    −1.2%    −4%
# Kingman is exact at scv 1 (P-K) and overestimates bursty renewal traffic at moderate
# load (by up to ~2/3 at ρ = 0.5, scv 9), becoming accurate in heavy traffic (ρ → 1).
KINGMAN_BAND = {(0.5, 4): (0.15, 0.40), (0.5, 9): (0.45, 0.85),
                (0.7, 4): (0.0, 0.20), (0.7, 9): (0.0, 0.30),
                (0.9, 4): (-0.15, 0.12), (0.9, 9): (-0.20, 0.15)}


@pytest.mark.parametrize("rho", [0.5, 0.7, 0.9])
def test_kingman_against_simulation(rho):
    """Renewal arrivals of SCV 1, 4, 9 at the same mean load: the wait grows with the SCV;
    Kingman is within the CI at SCV 1 (2 CIs + 1%) and within its measured band above."""
    lam = rho / ES
    waits = []
    for scv in (1.0, 4.0, 9.0):
        w, ci = pooled(Renewal(lam, scv))
        approx = float(mean_wait_gg1(lam, ES, scv, CS2))
        err = (approx - w) / w
        if scv == 1.0:
            assert abs(err) <= 2 * ci / w + 0.01, (rho, scv, err)
        else:
            low, high = KINGMAN_BAND[(rho, scv)]
            assert low <= err <= high, (rho, scv, err)
        waits.append((w, ci))
    for (w0, c0), (w1, c1) in zip(waits, waits[1:]):
        assert w1 - w0 > 2 * np.hypot(c0, c1)            # burstier: longer waits


# MMPP-2 arrivals (rate 1.5λ and 0.5λ, mean sojourn 50·E[S] in each phase): the
# inter-arrival SCV is only ≈ 1.6, but the rate swings last many services, so the wait is
# several times Kingman's value from that SCV (measured: −65% at ρ = 0.7): a renewal
# two-moment formula ignores the correlation of the gaps.
def test_mmpp2_is_burstier_than_its_scv_says():
    lam = 0.7 / ES
    switch = 1.0 / (50.0 * ES)
    mmpp = MMPP2(1.5 * lam, 0.5 * lam, switch, switch)
    assert mmpp.rate == pytest.approx(lam, rel=1e-12)
    w, ci = pooled(mmpp)
    w_poisson = float(token_limit.mean_wait(lam, A, C, LAW, N_MAX))
    approx = float(mean_wait_gg1(lam, ES, mmpp.scv, CS2))
    assert 1.0 < mmpp.scv < 2.0
    assert w > 3 * w_poisson
    assert -0.8 <= (approx - w) / w <= -0.45


# --------------------------------------------------------------- (d) replay

def lindley_waits(times, service):
    """W_1 = 0, W_{k+1} = max(0, W_k + S_k − (t_{k+1} − t_k)) (Lindley 1952): the FIFO
    single-server waits, written independently of the simulator."""
    w = np.zeros(times.size)
    for k in range(times.size - 1):
        w[k + 1] = max(0.0, w[k] + service[k] - (times[k + 1] - times[k]))
    return w


def test_replay_is_deterministic_and_equals_lindley():
    """A replayed trace: ``n_jobs`` and ``lam`` ignored, every time served once, the same
    result for any seed when the tokens are fixed (one-point law: S = 100a + c), and the
    per-request waits of Lindley's recursion."""
    times = Renewal(0.7 / (100 * A + C), 9.0).sample(5_000, np.random.default_rng(3))
    one = token_laws.EmpiricalTokens.from_counts([100])
    runs = [token_limit.simulate_token_queue(lam, A, C, one, N_MAX, n_jobs=n, seed=seed,
                                             warmup_jobs=0, arrivals=times)
            for lam, n, seed in ((None, 10, 1), (123.0, 1, 2), (None, 200_000, None))]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0].n_jobs == times.size
    w = lindley_waits(times, np.full(times.size, 100 * A + C))
    assert runs[0].mean_wait_s == pytest.approx(w.mean(), rel=1e-12)
    assert runs[0].p99_s == pytest.approx(np.percentile(w + 100 * A + C, 99), rel=1e-12)


def test_replay_object_is_the_trace():
    """``Replay(times)`` as a process (its first n_jobs times, shifted to start at 0) gives
    the trace's waits: the queue starts empty, only the gaps matter."""
    times = 50.0 + Renewal(0.1, 4.0).sample(2_000, np.random.default_rng(8))
    kw = dict(seed=4, warmup_jobs=0)
    trace = token_limit.simulate_token_queue(None, A, C, LAW, N_MAX, arrivals=times, **kw)
    replay = token_limit.simulate_token_queue(None, A, C, LAW, N_MAX, n_jobs=times.size,
                                              arrivals=Replay(times), **kw)
    assert replay.n_jobs == trace.n_jobs == times.size
    assert replay.mean_wait_s == pytest.approx(trace.mean_wait_s, rel=1e-9)
    assert replay.p99_s == pytest.approx(trace.p99_s, rel=1e-9)


def test_replay_with_random_tokens():
    """With a random token law the tokens follow the seed: the same seed the same run, the
    default warm-up (n // 10) left out of the count."""
    times = np.cumsum(np.random.default_rng(5).exponential(3.0, 3_001))
    r1, r2 = (token_limit.simulate_token_queue(None, A, C, LAW, N_MAX, patience=20.0, seed=9,
                                               arrivals=times) for _ in range(2))
    assert r1 == r2 and r1.n_jobs == times.size - times.size // 10


def test_bad_arrivals_are_named():
    with pytest.raises(ValueError, match="arrivals"):
        token_limit.simulate_token_queue(None, A, C, LAW, arrivals=[3.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="lam"):
        token_limit.simulate_token_queue(None, A, C, LAW)
