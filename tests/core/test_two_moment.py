"""Two-moment mean-wait approximations (engine.core.two_moment) where they are exact:
M/M/1, M/D/1 and M/G/1 (Pollaczek–Khinchine, computed independently by the token-limit
model), M/M/n (Erlang C from the textbook sum and from engine.sla), D/D/1; and their
contract (broadcasting, inf when unstable, errors naming the parameter).  Their error
for bursty arrivals is measured against the simulators in tests/token_limit and
tests/sla (test_arrivals.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine import sla, token_limit
from engine.core import token_laws
from engine.core.two_moment import mean_wait_gg1, mean_wait_ggn


def erlang_c_textbook(n: int, a: float) -> float:
    """Erlang C from its defining sum (Kleinrock vol. 1, eq 3.40), in exact rationals
    where a is one: P(wait) = (aⁿ/n!)·n/(n − a) / (Σ_{k<n} a^k/k! + (aⁿ/n!)·n/(n − a))."""
    top = a ** n / math.factorial(n) * n / (n - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(n)) + top)


def test_mm1_md1_closed_forms():
    """M/M/1: E[W_q] = ρ/(1 − ρ)·E[S]; M/D/1: half of it (P-K with cs² = 0)."""
    rho = np.array([0.0, 0.1, 0.5, 0.9, 0.99])
    es = 2.5
    assert np.allclose(mean_wait_gg1(rho / es, es, 1.0, 1.0), rho / (1 - rho) * es, rtol=1e-14)
    assert np.allclose(mean_wait_gg1(rho / es, es, 1.0, 0.0), rho / (1 - rho) * es / 2,
                       rtol=1e-14)


def test_dd1_never_waits():
    """ca² = cs² = 0 below capacity: a D/D/1 queue never waits (exact, 0)."""
    assert np.all(mean_wait_gg1([0.1, 0.5, 0.99], 1.0, 0.0, 0.0) == 0.0)


def test_mg1_is_pollaczek_khinchine():
    """ca² = 1: equal to the token-limit model's M/G/1 mean wait λE[S²]/(2(1 − ρ)), computed
    there from the clipped token moments (an independent formula)."""
    law = token_laws.lognormal(5.0, 0.9)
    a, c, n_max = 0.02, 0.3, np.array([1, 50, 500, 4000])
    e1, e2 = token_limit.clipped_token_moments(law, n_max)
    es, es2 = token_limit.service_moments(a, c, np.asarray(e1), np.asarray(e2))
    lam = 0.8 / es[-1]
    expected = token_limit.mean_wait(lam, a, c, law, n_max)
    got = mean_wait_gg1(lam, es, 1.0, es2 / es ** 2 - 1.0)
    assert np.all(np.isfinite(expected))
    assert np.allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 20, 50])
def test_mmn_is_erlang_c(n):
    """ca² = cs² = 1: E[W_q] = C(n, a)·E[S]/(n(1 − ρ)) with C from the textbook sum and
    from engine.sla.erlang_c (log-space Erlang B), to 1e-12."""
    es = 0.01
    for rho in (0.05, 0.3, 0.7, 0.95, 0.999):
        lam = rho * n / es
        want = erlang_c_textbook(n, rho * n) * es / (n * (1 - rho))
        got = float(mean_wait_ggn(lam, es, n, 1.0, 1.0))
        assert got == pytest.approx(want, rel=1e-12)
        assert got == pytest.approx(float(sla.erlang_c(n, rho * n)) * es / (n * (1 - rho)),
                                    rel=1e-12)


def test_ggn_at_one_server_is_gg1():
    rho, ca2, cs2 = np.meshgrid([0.0, 0.2, 0.6, 0.95], [0.0, 1.0, 9.0], [0.0, 0.5, 2.0])
    assert np.allclose(mean_wait_ggn(rho, 1.0, 1, ca2, cs2), mean_wait_gg1(rho, 1.0, ca2, cs2),
                       rtol=1e-12, atol=0)


def test_large_server_pools():
    """Erlang C from log-space Erlang B stays finite and matches the textbook sum (rationals)
    at 150 servers; ρ = 0.999 at 10⁴ servers still waits a finite, positive time."""
    from fractions import Fraction
    n, a = 150, Fraction(1425, 10)                       # ρ = 0.95
    exact = float(erlang_c_textbook(n, a))
    got = float(mean_wait_ggn(float(a), 1.0, n, 1.0, 1.0)) * n * (1 - float(a) / n)
    assert got == pytest.approx(exact, rel=1e-10)
    w = float(mean_wait_ggn(0.999 * 1e4, 1.0, 10_000, 1.0, 1.0))
    assert 0 < w < np.inf


def test_unstable_is_inf_and_no_load_is_zero():
    rho = np.array([0.0, 0.5, 1.0, 1.5, np.inf])
    for w in (mean_wait_gg1(rho, 1.0, 4.0, 0.5), mean_wait_ggn(rho * 4, 1.0, 4, 4.0, 0.5)):
        assert w[0] == 0.0 and 0 < w[1] < np.inf and np.all(w[2:] == np.inf)
    assert mean_wait_gg1(1e300, 1e300, 1.0, 1.0) == np.inf       # λE[S] overflows: unstable


def test_broadcasting_and_scalars():
    """ufunc-like: the broadcast shape of the inputs; Python scalars give a 0-d result."""
    w = mean_wait_ggn(np.linspace(0.1, 0.9, 5)[:, None], 1.0, np.array([1, 2, 4]), 2.0, 1.0)
    assert w.shape == (5, 3)
    assert np.ndim(mean_wait_gg1(0.5, 1.0, 2.0, 1.0)) == 0
    assert mean_wait_gg1([0.5], 1.0, 2.0, 1.0).shape == (1,)


@pytest.mark.parametrize("name, kwargs", [
    ("rate", dict(rate=-1.0)), ("rate", dict(rate=math.nan)),
    ("mean_service", dict(mean_service=0.0)), ("mean_service", dict(mean_service=math.inf)),
    ("scv_arrival", dict(scv_arrival=-0.5)), ("scv_service", dict(scv_service=math.nan)),
    ("n_servers", dict(n_servers=0)), ("n_servers", dict(n_servers=2.5)),
    ("rate", dict(rate=[0.5, -1.0]))])
def test_invalid_parameters_are_named(name, kwargs):
    base = dict(rate=0.5, mean_service=1.0, n_servers=2, scv_arrival=1.0, scv_service=1.0)
    args = {**base, **kwargs}
    for fn in (mean_wait_gg1, mean_wait_ggn):
        if name == "n_servers" and fn is mean_wait_gg1:
            continue
        call = {k: v for k, v in args.items() if fn is mean_wait_ggn or k != "n_servers"}
        with pytest.raises(ValueError, match=name):
            fn(**call)


@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 0.999), st.floats(1e-6, 1e6), st.integers(1, 64),
       st.floats(0.0, 50.0), st.floats(0.0, 50.0), st.floats(0.0, 50.0))
def test_linear_in_the_scv_sum(rho, es, n, ca2, cs2, more):
    """Both approximations are the M/M/· wait times (ca² + cs²)/2: linear, increasing in
    either SCV, and equal for equal sums."""
    lam = rho * n / es
    mm = float(mean_wait_ggn(lam, es, n, 1.0, 1.0))
    w = float(mean_wait_ggn(lam, es, n, ca2, cs2))
    assert w == pytest.approx(mm * (ca2 + cs2) / 2, rel=1e-12, abs=1e-300)
    assert float(mean_wait_ggn(lam, es, n, ca2 + more, cs2)) >= w
    assert float(mean_wait_ggn(lam, es, n, cs2, ca2)) == pytest.approx(w, rel=1e-12, abs=1e-300)
    g1 = float(mean_wait_gg1(rho / es, es, ca2, cs2))
    assert g1 == pytest.approx(rho / (1 - rho) * es * (ca2 + cs2) / 2, rel=1e-12, abs=1e-300)
