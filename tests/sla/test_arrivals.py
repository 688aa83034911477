"""The dispatch simulator under other arrivals (``simulate_dispatch(..., arrivals=...)``):
the default is unchanged, a Poisson process object agrees with it and with M/M/n, bursty
traffic raises the wait of every policy, the central queue matches the exact GI/M/1 mean
at one server and the Allen–Cunneen GI/G/n approximation within its measured band, and a
replayed trace is deterministic and serves each of its times once."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import optimize, stats

from engine import sla
from engine.arrivals import MMPP2, Poisson, Renewal
from engine.core.two_moment import mean_wait_ggn

ES = 0.01                                     # mean service time (s)
EXP = stats.expon(scale=ES)                   # cs² = 1
LOGN = sla.service_law("lognormal", ES, 1.0)  # cs² = e − 1 ≈ 1.72
N_REQ, SEEDS = 400_000, range(4)              # ~0.1 s a run


def pooled(policy, n, service, lam=None, arrivals=None, seeds=SEEDS, n_requests=N_REQ, **kw):
    """(mean wait, its 95% CI) in s over independent runs."""
    runs = [sla.simulate_dispatch(policy, lam, service, n, n_requests=n_requests, seed=s,
                                  arrivals=arrivals, **kw) for s in seeds]
    ci = np.sqrt(sum(r.ci95_waiting_s ** 2 for r in runs)) / len(runs)
    return float(np.mean([r.mean_waiting_s for r in runs])), float(ci)


def scv_of(service) -> float:
    return float(service.var() / service.mean() ** 2)


def same(a, b) -> bool:
    """Two results equal field by field, NaN equal to NaN (``p_busy_retry`` without
    retries), the sorted samples too."""
    return all(np.array_equal(getattr(a, f.name), getattr(b, f.name),
                              equal_nan=not isinstance(getattr(a, f.name), str))
               for f in dataclasses.fields(a))


# --------------------------------------------------------------- (a) the default path

# simulate_dispatch(policy, 600, expon(0.01), 8, 0.5 ms, 0.5 ms, 1 ms, n_requests=20_000,
# seed=4) before ``arrivals`` existed: (mean_response, mean_waiting, p99_response,
# mean_attempts); and simulate_records(policy, 600, 0.01, 8, ..., n_requests=5000, seed=5):
# (Σ start, Σ arrival, Σ attempts).
BEFORE = {
    "random_retry": ((0.019467731881975894, 0.009438222222219966, 0.07693628585939834,
                      5.469111111111111), (20268.27312021054, 20222.743120210544, 26515)),
    "jsq": ((0.013975666940558046, 0.003946157280802114, 0.058585517419921636, 1.0),
            (20235.784092826558, 20222.743120210544, 5000)),
    "central_queue": ((0.012278718965595462, 0.0022492093058395293, 0.048455501651909025, 1.0),
                      (20231.560345155354, 20222.743120210544, 5000))}


@pytest.mark.parametrize("policy", sla.POLICIES)
def test_default_is_unchanged(policy):
    """``arrivals=None`` is the Poisson run of before (numbers stored before the keyword
    was added), and the same as leaving the keyword out."""
    delays = (0.0005, 0.0005, 0.001)
    plain = sla.simulate_dispatch(policy, 600.0, EXP, 8, *delays, n_requests=20_000, seed=4)
    keyword = sla.simulate_dispatch(policy, 600.0, EXP, 8, *delays, n_requests=20_000, seed=4,
                                    arrivals=None)
    assert same(plain, keyword)
    got = (plain.mean_response_s, plain.mean_waiting_s, plain.p99_response_s, plain.mean_attempts)
    assert got == pytest.approx(BEFORE[policy][0], rel=1e-12)
    rec = sla.simulate_records(policy, 600.0, 0.01, 8, *delays, n_requests=5000, seed=5)
    got = (rec.start.sum(), rec.arrival.sum(), rec.attempts.sum())
    assert got == pytest.approx(BEFORE[policy][1], rel=1e-12)


# --------------------------------------------------------------- (b) a Poisson object

@pytest.mark.parametrize("policy", ["central_queue", "jsq"])
def test_poisson_process_matches_the_default_and_mmn(policy):
    """A ``Poisson`` object (``lam`` None) at ρ = 0.7 on 8 backends gives the default's
    mean wait within the CIs; the central queue also M/M/8's (Erlang C)."""
    lam = 0.7 * 8 / ES
    w, ci = pooled(policy, 8, EXP, arrivals=Poisson(lam))
    w0, ci0 = pooled(policy, 8, EXP, lam=lam, seeds=range(10, 14))
    assert abs(w - w0) <= 1.5 * np.hypot(ci, ci0)
    if policy == "central_queue":
        exact = float(sla.erlang_c(8, lam * ES)) * ES / (8 * (1 - 0.7))
        assert abs(w - exact) <= 1.5 * ci


# --------------------------------------------------------------- (c) bursty traffic

def gim1_mean_wait(rate, scv, mu):
    """Exact mean wait of GI/M/1 (Kleinrock vol. 1, §6.4): E[W_q] = σ/(μ(1 − σ)), σ the
    root in (0, 1) of σ = A*(μ(1 − σ)), A* the Laplace transform of the gap law of
    ``engine.arrivals.Renewal``: balanced-means two-phase hyperexponential for scv > 1
    (branch p = (1 + √((scv−1)/(scv+1)))/2 at rate 2pλ, else rate 2(1−p)λ)."""
    p = 0.5 * (1 + np.sqrt((scv - 1) / (scv + 1)))
    r1, r2 = 2 * p * rate, 2 * (1 - p) * rate

    def lst(s):
        return p * r1 / (r1 + s) + (1 - p) * r2 / (r2 + s)

    sigma = optimize.brentq(lambda x: lst(mu * (1 - x)) - x, 1e-12, 1 - 1e-12, xtol=1e-15)
    return sigma / (mu * (1 - sigma))


@pytest.mark.parametrize("scv", [4.0, 9.0])
def test_central_queue_is_exact_gim1(scv):
    """One backend, exponential service, hyperexponential renewal arrivals: the simulated
    mean wait is the exact GI/M/1 value within the CI (ρ = 0.7)."""
    lam = 0.7 / ES
    exact = gim1_mean_wait(lam, scv, 1 / ES)
    w, ci = pooled("central_queue", 1, EXP, arrivals=Renewal(lam, scv))
    assert abs(w - exact) <= 1.5 * ci


# Allen–Cunneen against the simulation, relative error (approx − sim)/sim, measured with
# 4 × 400,000 requests a point, renewal arrivals (hyperexponential above SCV 1), 8
# backends, exponential service (lognormal σ = 1 in brackets):
#   ρ     scv 1             scv 4             scv 9
#   0.5   −3%  (+27%)       −54% (−47%)       −62% (−58%)
#   0.7   −1.5% (+16%)      −33% (−26%)       −43% (−39%)
#   0.9   −2%  (+1.5%)      −16% (−11%)       −21% (−18%)
# Exact for M/M/n (scv 1, exponential service); for bursty arrivals it UNDERestimates the
# wait on several servers (by up to ~60% at ρ = 0.5, ~20% at ρ = 0.9): Erlang C's
# probability of waiting is that of Poisson arrivals, and bursts make waiting likelier.
# At one server (Kingman) the error has the other sign (exact GI/M/1, ρ = 0.7, scv 9: +10%).
AC_BAND = {(0.5, 4): (-0.65, -0.35), (0.5, 9): (-0.75, -0.45),
           (0.7, 4): (-0.45, -0.15), (0.7, 9): (-0.55, -0.25),
           (0.9, 4): (-0.35, 0.0), (0.9, 9): (-0.40, 0.0)}


@pytest.mark.parametrize("rho", [0.5, 0.7, 0.9])
def test_allen_cunneen_against_simulation(rho):
    """Central queue on 8 backends, exponential service: the wait grows with the SCV;
    Allen–Cunneen within the CI at SCV 1 (2 CIs + 2%), within its measured band above."""
    lam = rho * 8 / ES
    waits = []
    for scv in (1.0, 4.0, 9.0):
        w, ci = pooled("central_queue", 8, EXP, arrivals=Renewal(lam, scv))
        err = (float(mean_wait_ggn(lam, ES, 8, scv, 1.0)) - w) / w
        if scv == 1.0:
            assert abs(err) <= 2 * ci / w + 0.02, (rho, scv, err)
        else:
            low, high = AC_BAND[(rho, scv)]
            assert low <= err <= high, (rho, scv, err)
        waits.append((w, ci))
    for (w0, c0), (w1, c1) in zip(waits, waits[1:]):
        assert w1 - w0 > 2 * np.hypot(c0, c1)


def test_allen_cunneen_with_lognormal_service():
    """Lognormal service (cs² ≈ 1.72) at ρ = 0.7: +16% at SCV 1 (not exact: M/G/n),
    −39% at SCV 9 (measured; bands ±12%)."""
    lam = 0.7 * 8 / ES
    for scv, (low, high) in ((1.0, (0.04, 0.28)), (9.0, (-0.51, -0.27))):
        w, _ = pooled("central_queue", 8, LOGN, arrivals=Renewal(lam, scv))
        err = (float(mean_wait_ggn(lam, ES, 8, scv, scv_of(LOGN))) - w) / w
        assert low <= err <= high, (scv, err)


@pytest.mark.parametrize("policy", sla.POLICIES)
def test_bursty_arrivals_raise_every_policy_wait(policy):
    """At ρ = 0.6 on 4 backends, renewal SCV 9 and an MMPP-2 (rates 1.5λ, 0.5λ, phases of
    ~5 s) wait longer than Poisson under every policy."""
    lam = 0.6 * 4 / ES
    kw = dict(d1=0.0005, d2=0.0005, delta=0.001, seeds=range(2), n_requests=100_000)
    w1, c1 = pooled(policy, 4, EXP, arrivals=Poisson(lam), **kw)
    for process in (Renewal(lam, 9.0), MMPP2(1.5 * lam, 0.5 * lam, 0.2, 0.2)):
        w, c = pooled(policy, 4, EXP, arrivals=process, **kw)
        assert w - w1 > 2 * np.hypot(c, c1), process


# --------------------------------------------------------------- (d) replay

@pytest.mark.parametrize("policy", sla.POLICIES)
def test_replay_is_deterministic(policy):
    """A replayed trace: ``lam`` and ``n_requests`` ignored, its times are the records'
    arrivals, the same seed the same path; the central queue with a deterministic service
    time has no other randomness: any seed, the same path."""
    times = Renewal(0.6 * 4 / ES, 9.0).sample(20_000, np.random.default_rng(4))
    kw = dict(d1=0.0005, d2=0.0005, delta=0.001, arrivals=times)
    a = sla.simulate_records(policy, None, EXP, 4, n_requests=1, seed=3, **kw)
    b = sla.simulate_records(policy, 5.0, EXP, 4, n_requests=10 ** 6, seed=3, **kw)
    assert np.array_equal(a.arrival, times) and np.array_equal(a.start, b.start)
    assert np.array_equal(a.attempts, b.attempts)
    r = sla.simulate_dispatch(policy, None, EXP, 4, warmup_requests=0, **kw)
    assert r.n_requests == times.size
    if policy == "central_queue":
        det = [sla.simulate_dispatch(policy, None, ES, 4, seed=s, **kw) for s in (1, 2, None)]
        assert same(det[0], det[1]) and same(det[0], det[2])


def test_replayed_central_queue_equals_the_recursion():
    """n FIFO servers, deterministic service: request i starts at max(t_i, the earliest
    time a server frees), an independent recursion over the same times (Kiefer–Wolfowitz
    workload vector, sorted)."""
    times = Renewal(0.8 * 3 / ES, 4.0).sample(3_000, np.random.default_rng(6))
    free = np.zeros(3)
    want = np.empty(times.size)
    for i, t in enumerate(times):
        k = int(np.argmin(free))
        want[i] = max(t, free[k])
        free[k] = want[i] + ES
    rec = sla.simulate_records("central_queue", None, ES, 3, arrivals=times)
    assert np.allclose(rec.start, want, rtol=0, atol=1e-12)


def test_replay_load_check_and_bad_arrivals():
    """A trace whose mean rate reaches n/E[S] has no steady state: ``ValueError`` naming the
    arrivals (a process's rate is checked the same way); bad times name ``arrivals``."""
    over = np.arange(1, 2001) * ES / 2.5                     # 2.5 per E[S] on 2 backends
    with pytest.raises(ValueError, match="arrivals"):
        sla.simulate_dispatch("jsq", None, ES, 2, arrivals=over)
    with pytest.raises(ValueError, match="arrivals"):
        sla.simulate_dispatch("jsq", None, ES, 2, arrivals=Poisson(2.5 / ES))
    assert sla.simulate_dispatch("jsq", None, ES, 2, arrivals=[0.5]).n_requests == 1
    with pytest.raises(ValueError, match="arrivals"):
        sla.simulate_dispatch("jsq", None, ES, 2, arrivals=[[0.1, 0.2]])
    with pytest.raises(ValueError, match="lam"):
        sla.simulate_dispatch("jsq", None, ES, 2)
