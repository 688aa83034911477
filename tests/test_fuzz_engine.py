"""Fuzz tests: every public engine function over its declared parameter domains.

Each test draws parameters from ``tests/strategies.py`` (built from the
``Domain`` declarations of engine/params.py), checks the engine's contract on
them (README, "The engine"), then replaces one parameter by an out-of-domain
value:

* inside the domain: no exception (other than a documented ``ValueError``),
  no NaN anywhere in the result;
* ``inf`` exactly where the model's own stability condition says the load is
  unstable (``batching.capacity``, ρ = λE[S] < 1, ``pipeline.capacity``,
  n·μ > λ, ...) and finite where it is stable;
* outside the domain: ``ValueError`` whose message names the parameter.

Cost.  Hypothesis spends a few ms per example on a busy 2-core machine before
the engine runs, so 2,000 examples for each of ~120 functions would take many
minutes.  An example therefore carries ``POINTS`` cases: ``POINTS`` loads (or
values of another parameter) passed as one array to a function that broadcasts
like a ufunc, or one call per point to a function that takes scalars.
``FUZZ_VECTOR`` (``FUZZ_CASES // POINTS`` examples) gives 2,000 cases per
function; a function too slow for that within the file's budget (150 s on the
shared 2-core machine) gets ``fuzz(cases, points)``, the reason beside it, and
``FUZZ_FULL=1 python -m pytest tests/test_fuzz_engine.py`` gives every function its
2,000 (hours: run it by hand after changing a model, not in CI).
Functions that share their parameters are fuzzed by one test.

``FUZZED`` maps every public name of the engine modules to the test that fuzzes
it; ``test_every_public_function_is_fuzzed`` fails when a new public function
appears without an entry, and ``test_fuzzed_functions_ran`` that each test ran
valid cases of the functions it claims.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import inspect
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings, strategies as st

from engine import (batch_chain, batching, batching_curves, dispatch_sim, fit, llm_batching,
                    llm_batching_sim, mg1_patience, operating_point, pipeline, pipeline_sim,
                    presets, sim, sla, token_laws, token_limit)
from engine.params import (A_S_PER_TOKEN, ALPHA, B_MAX, BETA, C0, C_S, COST, DELAY, HEADROOM,
                           INTERVAL, LAM, LAM_PER_S, LATENCY_TARGET_MS, LLM_BATCH, LLM_K1,
                           LLM_K2, LLM_K3, LLM_K4, LLM_KV_CAPACITY, LLM_MAX_TOKENS,
                           LLM_PROMPT_TOKENS, LOSS_COST, MU, N_BACKENDS, N_JOBS, N_MAX,
                           N_REQUESTS, NET_DELAY, PATIENCE_S, PERCENTILE, PIPE_C, PIPE_K,
                           PIPE_MU, PIPE_MU_CPU, PIPE_MU_CU, PIPE_MU_MEM, PREFERRED,
                           PROVISIONING_DELAY, RESPONSE_TARGET, TAU0, THETA, TOKEN_BOUND,
                           TOKEN_LOG_MEAN, TOKEN_LOG_SD, TOKEN_SD, WARMUP)
from tests.strategies import at_load, invalid, rho, service_laws, token_law_specs, valid

FUZZ_CASES = 2000          # cases per function
POINTS = 16                # parameter points per example in a vectorised test
FUZZ = settings(max_examples=FUZZ_CASES, deadline=None,             # the shared profile
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])  # _record_run
FUZZ_VECTOR = settings(FUZZ, max_examples=FUZZ_CASES // POINTS)

CASES = collections.Counter()     # function name -> valid cases run in this session


FULL = os.environ.get("FUZZ_FULL", "") not in ("", "0")


def fuzz(cases: int, points: int = 1):
    """``FUZZ`` reduced to ``cases`` cases (``points`` per example), for functions too
    slow for 2,000 within the time budget; ``FUZZ_FULL=1`` restores 2,000 (a run of
    hours, outside CI)."""
    return settings(FUZZ, max_examples=max(1, (FUZZ_CASES if FULL else cases) // points))


# ------------------------------------------------------------ checks shared by all tests

def nan_fields(value, path="result"):
    """Paths of every NaN inside ``value`` (numbers, arrays, dataclasses, tuples, dicts)."""
    if value is None or isinstance(value, (str, bool)):
        return []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [p for f in dataclasses.fields(value)
                for p in nan_fields(getattr(value, f.name), f"{path}.{f.name}")]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in nan_fields(v, f"{path}[{k!r}]")]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in nan_fields(v, f"{path}[{i}]")]
    arr = np.asarray(value)
    if arr.dtype.kind in "fc" and np.isnan(arr).any():
        return [path]
    return []


def assert_no_nan(value, allowed=()):
    """No NaN in ``value`` except in the fields named in ``allowed`` (documented NaNs)."""
    bad = [p for p in nan_fields(value) if p.split(".")[-1] not in allowed]
    assert not bad, f"NaN in {bad}"


def assert_inf_iff(value, unstable, what="value"):
    """``value`` is +inf exactly where ``unstable`` and finite elsewhere (elementwise)."""
    v = np.asarray(value, dtype=float)
    u = np.broadcast_to(np.asarray(unstable, dtype=bool), v.shape)
    assert not np.isnan(v).any(), f"{what} has NaN: {v}"
    assert np.all(v[u] == np.inf), f"{what} not inf where unstable: {v[u]}"
    assert np.all(np.isfinite(v[~u])), f"{what} not finite where stable: {v[~u]}"


def raises_naming(name, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` raises ``ValueError`` and its message names ``name``."""
    with pytest.raises(ValueError) as err:
        fn(*args, **kwargs)
    assert name in str(err.value), f"ValueError does not name {name!r}: {err.value}"


@functools.lru_cache(maxsize=None)
def _arguments(fn) -> frozenset:
    return frozenset(inspect.signature(fn).parameters)


def tally(fn, cases=1):
    """Count ``cases`` valid cases of ``fn`` (checked by ``test_fuzzed_functions_ran``)."""
    CASES[f"{fn.__module__}.{fn.__qualname__}"] += int(cases)


RAN = set()          # fuzz tests that ran in this session


@pytest.fixture(autouse=True)
def _record_run(request):
    yield
    RAN.add(request.node.originalname)


def call(fn, params: dict, **fixed):
    """``fn`` with the arguments it takes from ``params`` (by name) and ``fixed``."""
    names = _arguments(fn)
    return fn(**{k: v for k, v in {**params, **fixed}.items() if k in names})


def corrupt(data, params: dict, domains: dict):
    """One parameter replaced by a value outside its domain: (parameters, its name).

    An array argument gets the bad value in one cell (a non-number replaces it whole).
    """
    name = data.draw(_choice(tuple(sorted(k for k in domains if k in params))),
                     label="corrupted")
    bad = data.draw(invalid(domains[name]), label=f"bad {name}")
    arg = params[name]
    if isinstance(bad, str) or np.ndim(arg) == 0 and not isinstance(arg, list):
        new = bad
    else:
        cells = list(np.ravel(np.asarray(arg, dtype=object)))
        cells[data.draw(st.integers(0, len(cells) - 1), label="cell")] = bad
        new = cells if isinstance(arg, list) else np.array(cells, dtype=float)
    return {**params, name: new}, name


@functools.lru_cache(maxsize=None)
def _choice(names: tuple):
    return st.sampled_from(names)


def rejects(fns, params: dict, bad: str, **fixed):
    """Every function of ``fns`` that takes ``bad`` raises ``ValueError`` naming it."""
    for fn in fns:
        names = _arguments(fn)
        if bad in names:
            raises_naming(bad, fn, **{k: v for k, v in {**params, **fixed}.items()
                                      if k in names})


def close(a, b, rtol=1e-9):
    """Relative closeness that treats two infs of one sign as equal."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        return bool(np.all((a == b) | (np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)))))


@functools.lru_cache(maxsize=None)
def sweep(strategy):
    """``POINTS`` values of one parameter: the points of a vectorised example."""
    return st.lists(strategy, min_size=POINTS, max_size=POINTS)


@functools.lru_cache(maxsize=None)
def loads(stable_weight: int = 3):
    """``POINTS`` loads ρ (fractions of capacity), stable and unstable (strategies.rho)."""
    return st.lists(rho(stable_weight), min_size=POINTS, max_size=POINTS).map(
        lambda r: np.array(r, dtype=float))


def arr(values):
    return np.asarray(values, dtype=float)


@functools.lru_cache(maxsize=None)
def b_maxes(high=None):
    """b_max: None (unlimited) or a value of its domain (``inf`` included)."""
    return st.one_of(st.none(), valid(B_MAX, high=high))


def unlimited(b_max) -> np.ndarray:
    return np.array([b is None or math.isinf(b) for b in np.ravel(np.asarray(b_max, object))])


# ============================================================ engine.batching: closed forms

BATCHING_DOMAINS = {"lam": LAM, "alpha": ALPHA, "tau0": TAU0, "b_max": B_MAX, "beta": BETA,
                    "c0": C0}


@FUZZ_VECTOR
@given(valid(ALPHA), valid(TAU0), sweep(b_maxes()), st.data())
def test_batching_capacity(alpha, tau0, b_max, data):
    """capacity: finite, positive, 1/α without a cap and μ[b_max] = b/τ[b] with one."""
    params = dict(alpha=alpha, tau0=tau0, b_max=b_max)
    c = batching.capacity(alpha, tau0, b_max)
    free = unlimited(b_max)
    assert np.all(np.isfinite(c) & (c > 0) & (c <= (1 / alpha) * (1 + 1e-12)))
    assert np.all(c[free] == 1 / alpha)
    b = arr([np.inf if x is None else x for x in b_max])[~free]
    assert close(c[~free], b / (alpha * b + tau0), 1e-12)
    for b, cap in zip(b_max, c):
        assert batching.DynamicBatching(alpha, tau0, b).capacity == cap
    tally(batching.capacity, POINTS)
    tally(batching.DynamicBatching, POINTS)
    p, bad = corrupt(data, params, BATCHING_DOMAINS)
    rejects((batching.capacity, batching.DynamicBatching), p, bad)


@FUZZ_VECTOR
@given(valid(ALPHA), valid(TAU0), loads(), valid(BETA), valid(C0), st.data())
def test_batching_closed_forms(alpha, tau0, rho, beta, c0, data):
    """φ0, φ1, φ (eqs 41-43), the energy bound (eq 40), Yang's eq 16, over loads."""
    cap = float(batching.capacity(alpha, tau0))          # φ's capacity: 1/α (b_max = ∞)
    lam = at_load(rho, cap)
    unstable = lam >= cap
    params = dict(lam=lam, alpha=alpha, tau0=tau0, beta=beta, c0=c0)
    bounds = [call(f, params) for f in (batching.phi0, batching.phi1, batching.phi)]
    for f, v in zip((batching.phi0, batching.phi1, batching.phi), bounds):
        assert_inf_iff(v, unstable, f.__name__)
        assert np.all(v >= (alpha + tau0) * (1 - 1e-12)), f.__name__   # φ ≥ E[W] ≥ α + τ0
    assert np.array_equal(bounds[2], np.minimum(bounds[0], bounds[1]))
    eta = call(batching.energy_efficiency_bound, params)
    assert np.all(np.isfinite(eta) & (eta > 0) & (eta <= (1 / beta) * (1 + 1e-12)))
    assert np.all(eta[unstable] == 1 / beta)
    assert np.array_equal(batching.DynamicBatching(alpha, tau0).phi(lam), bounds[2])
    # Yang et al. eq 16 takes (λ, α, β) with β the batch overhead (τ0 here).
    yang = dict(lam=lam, alpha=alpha, beta=tau0)
    for f in (llm_batching.yang_phi0, llm_batching.yang_phi1, llm_batching.yang_phi):
        v = call(f, yang)
        assert_inf_iff(v, unstable, f.__name__)
        assert np.all(v >= 0)
    for f in (batching.phi0, batching.phi1, batching.phi, batching.energy_efficiency_bound,
              llm_batching.yang_phi0, llm_batching.yang_phi1, llm_batching.yang_phi):
        tally(f, POINTS)

    p, bad = corrupt(data, params, BATCHING_DOMAINS)
    rejects((batching.phi0, batching.phi1, batching.phi, batching.energy_efficiency_bound), p, bad)
    if bad in ("lam", "alpha", "tau0"):
        yang = dict(lam=p["lam"], alpha=p["alpha"], beta=p["tau0"])
        rejects((llm_batching.yang_phi0, llm_batching.yang_phi1, llm_batching.yang_phi), yang,
                "beta" if bad == "tau0" else bad)


# ============================================================ engine.batching: exact solution

def check_stationary(lam, alpha, tau0, b_max, beta, c0, unstable):
    """Exact E[W], E[B], utilisation and η against their bounds; inf exactly when unstable.

    All functions of ``engine.batching`` that solve the queue are called (each
    solves it anew, apart from the cached finite-b_max chain).
    """
    st_ = batching.stationary(lam, alpha, tau0, b_max)
    assert_no_nan(st_)
    assert_inf_iff(st_.mean_latency, unstable, "mean_latency")
    assert_inf_iff(st_.mean_wait, unstable, "mean_wait")
    w = batching.mean_latency(lam, alpha, tau0, b_max)
    assert np.array_equal(w, st_.mean_latency)
    assert np.all(w >= (alpha + tau0) * (1 - 1e-9))             # a job's own batch time
    wait = batching.mean_wait(lam, alpha, tau0, b_max)
    assert np.array_equal(wait, st_.mean_wait)
    assert np.all(wait >= -1e-9 * w)
    cap_b = np.inf if b_max is None else b_max
    eb = batching.mean_batch_size(lam, alpha, tau0, b_max)
    assert np.all((eb >= 1 - 1e-9) & (eb <= cap_b * (1 + 1e-9)))
    assert np.all(eb[unstable] == cap_b)
    util = batching.utilization(lam, alpha, tau0, b_max)
    assert np.all((util >= 0) & (util <= 1 + 1e-9)) and np.all(util[unstable] == 1)
    eta = batching.energy_efficiency(lam, alpha, tau0, beta, c0, b_max)
    assert np.all(np.isfinite(eta) & (eta > 0) & (eta <= (1 / beta) * (1 + 1e-9)))
    model = batching.DynamicBatching(alpha, tau0, b_max)
    assert np.array_equal(model.mean_latency(lam), w)
    assert np.array_equal(model.mean_batch_size(lam), eb)
    assert np.array_equal(model.utilization(lam), util)
    for f in (batching.stationary, batching.mean_latency, batching.mean_wait,
              batching.mean_batch_size, batching.utilization, batching.energy_efficiency):
        tally(f, np.size(lam))
    return w, eta


EXACT_DOMAINS = {"lam": LAM, "alpha": ALPHA, "tau0": TAU0, "beta": BETA, "c0": C0}


# ~0.3 s per example: ten solver calls, each iterating ~5,000 times when a point has
# ρ = 0.999 and λτ0 ≈ 0 (the series' slowest corner).
@fuzz(240, POINTS)
@given(valid(ALPHA), valid(TAU0), loads(), valid(BETA), valid(C0), st.data())
@example(1.0, 0.0, np.full(POINTS, 0.999), 1.0, 1.0, None).via("ρ = 0.999, τ0 = 0")
def test_batching_exact_unlimited(alpha, tau0, rho, beta, c0, data):
    """b_max = ∞: the generating-function series (``engine.batch_chain``), below φ
    (Theorem 2) and above the energy bound (eq 40)."""
    cap = float(batching.capacity(alpha, tau0))
    lam = at_load(rho, cap)
    unstable = lam >= cap
    w, eta = check_stationary(lam, alpha, tau0, None, beta, c0, unstable)
    ok = ~unstable
    assert np.all(w[ok] <= batching.phi(lam[ok], alpha, tau0) * (1 + 1e-9))     # Theorem 2
    assert np.all(eta[ok] >= batching.energy_efficiency_bound(lam[ok], alpha, tau0, beta, c0)
                  * (1 - 1e-9))                                                  # eq 40
    la = lam[ok]
    p0 = batch_chain.unlimited_idle_weight(la * alpha, la * tau0)
    assert np.all((p0 >= 0) & (p0 <= 1))          # underflows to 0 when λτ0 is huge
    p, eb, eb2 = batch_chain.unlimited_moments(la, alpha, tau0)
    assert_no_nan((p, eb, eb2))
    assert np.array_equal(p, p0) and np.all(eb >= 1 - 1e-12) and np.all(eb2 >= eb * eb * (1 - 1e-9))
    tally(batch_chain.unlimited_idle_weight, la.size)
    tally(batch_chain.unlimited_moments, la.size)
    if data is None:
        return
    params = dict(lam=lam, alpha=alpha, tau0=tau0, beta=beta, c0=c0)
    p, bad = corrupt(data, params, EXACT_DOMAINS)
    rejects((batching.stationary, batching.mean_latency, batching.mean_wait,
             batching.mean_batch_size, batching.utilization, batching.energy_efficiency), p, bad)


# Each stable point is one banded solve (cached for the other functions): 10-130 ms
# near ρ = 0.999.
@fuzz(320, POINTS)
@given(valid(ALPHA), valid(TAU0), st.integers(1, 8), loads(), valid(BETA), valid(C0), st.data())
@example(1.0, 0.0, 1, np.full(POINTS, 0.999), 1.0, 1.0, None).via("b_max = 1 (M/D/1), ρ = 0.999")
def test_batching_exact_capped(alpha, tau0, b_max, rho, beta, c0, data):
    """Finite b_max: the departure chain (``batch_chain.limited_solution``) for each point."""
    cap = float(batching.capacity(alpha, tau0, b_max))
    lam = at_load(rho, cap)
    unstable = lam >= cap
    w, _ = check_stationary(lam, alpha, tau0, b_max, beta, c0, unstable)
    if b_max == 1:                              # M/D/1: Pollaczek-Khinchine, sojourn
        s = alpha + tau0
        ok = ~unstable
        assert close(w[ok], s + lam[ok] * s * s / (2 * (1 - lam[ok] * s)), 1e-6)
    stable = np.flatnonzero(~unstable)
    if stable.size:
        tau = alpha * np.arange(1, b_max + 1) + tau0
        sol = batch_chain.limited_solution(float(lam[stable[0]]), tau)
        assert_no_nan(sol)
        assert close(sol.mean_latency, w[stable[0]], 1e-12)
        assert close(sol.batch_size_pmf.sum(), 1.0, 1e-9)
        tally(batch_chain.limited_solution)
    if data is None:
        return
    params = dict(lam=lam, alpha=alpha, tau0=tau0, b_max=b_max, beta=beta, c0=c0)
    p, bad = corrupt(data, params, BATCHING_DOMAINS)
    rejects((batching.stationary, batching.mean_latency, batching.mean_wait,
             batching.mean_batch_size, batching.utilization, batching.energy_efficiency), p, bad)


# ============================================================ engine.batching_curves

# One case solves 3·n_points loads (a banded solve each for a finite b_max): ~0.2 s.
@fuzz(60)
@given(valid(ALPHA), valid(TAU0), st.one_of(st.none(), st.integers(1, 8)),
       st.one_of(st.none(), st.tuples(valid(BETA), valid(C0))), st.integers(2, 8),
       st.one_of(st.floats(0.005, 0.999), st.just(0.999)), st.data())
def test_batching_curves(alpha, tau0, b_max, energy, n_points, max_fraction, data):
    """load_curves and b_max_family: every value finite below capacity, bounds ordered."""
    beta, c0 = energy if energy else (None, None)
    curves = batching_curves.load_curves(alpha, tau0, b_max, beta, c0, n_points, max_fraction)
    assert_no_nan(curves)
    cap = float(batching.capacity(alpha, tau0, b_max))
    assert curves.capacity == cap and np.all(curves.lam < cap) and curves.lam.size == n_points
    assert np.all(np.isfinite(curves.mean_latency))
    assert np.all(curves.mean_latency >= (alpha + tau0) * (1 - 1e-9))
    if b_max is None:
        assert np.all(curves.mean_latency <= curves.phi * (1 + 1e-9))
    assert (curves.energy_efficiency is None) == (beta is None)
    family = batching_curves.b_max_family(alpha, tau0, [1, b_max or 2], n_points, max_fraction)
    for b, lam, w in family:
        assert_no_nan(w)
        assert np.all(np.isfinite(w)) and np.all(lam < batching.capacity(alpha, tau0, b))
    tally(batching_curves.load_curves)
    tally(batching_curves.b_max_family)
    params = dict(alpha=alpha, tau0=tau0, b_max=b_max, beta=1.0 if beta is None else beta,
                  c0=1.0 if c0 is None else c0)
    p, bad = corrupt(data, params, BATCHING_DOMAINS)
    raises_naming(bad, batching_curves.load_curves, p["alpha"], p["tau0"], p["b_max"],
                  p["beta"], p["c0"], n_points, max_fraction)
    if bad in ("alpha", "tau0"):
        raises_naming(bad, batching_curves.b_max_family, p["alpha"], p["tau0"], [1], n_points)
    for name, domain in (("n_points", batching_curves.N_POINTS),
                         ("max_fraction", batching_curves.MAX_FRACTION)):
        value = data.draw(invalid(domain), label=f"bad {name}")
        raises_naming(name, batching_curves.load_curves, alpha, tau0, b_max, **{name: value})
        raises_naming(name, batching_curves.b_max_family, alpha, tau0, [1], **{name: value})


# ============================================================ engine.operating_point

PRICES = {"gpu_usd_per_hour": operating_point.PRICE, "usd_per_kwh": operating_point.PRICE,
          "lam_per_ms": LAM, "joules_per_request": operating_point.ENERGY}


def _sim_result(lat, rng):
    """A simulation summary with the given mean latency (other fields consistent)."""
    return sim.BatchingSimResult(lat, 0.1 * lat, lat, 1.5 * lat, 2 * lat, 0.5 * lat, 0.05 * lat,
                                 1 + rng, min(1.0, rng), 100, True)


@FUZZ_VECTOR
@given(sweep(valid(LAM)), valid(operating_point.ENERGY), valid(operating_point.PRICE),
       valid(operating_point.PRICE),
       sweep(st.one_of(st.none(), st.floats(0.1, 1e3))), valid(operating_point.TARGET),
       st.one_of(st.none(), st.integers(0, 2 ** 63)), st.data())
def test_operating_point_costs_and_sweeps(lam, joules, gpu, kwh, p99, target, seed, data):
    """cost_per_million, rate_seed, sweep_from_results, max_rate_for_p99, merge_delay_sweeps."""
    lam = arr(lam)
    cost = operating_point.cost_per_million(lam, joules, gpu, kwh)
    assert_no_nan(cost)
    assert np.all(cost >= 0)
    assert np.all(np.isfinite(cost[lam > 0]))              # a served request has a price
    tally(operating_point.cost_per_million, POINTS)
    seqs = [operating_point.rate_seed(seed, i) for i in range(POINTS)]
    assert len({s.generate_state(1)[0] for s in seqs}) > 1 or POINTS == 1
    tally(operating_point.rate_seed, POINTS)
    # A sweep over increasing rates; None marks a rate the sweep found unstable.
    grid = np.sort(np.abs(lam[np.isfinite(lam)])) if np.isfinite(lam).any() else np.ones(1)
    lat = np.sort([np.inf if x is None else x for x in p99])[:grid.size]
    results = [None if np.isinf(x) else _sim_result(x, float(i) / POINTS)
               for i, x in enumerate(lat)]
    sweep_ = operating_point.sweep_from_results(grid[:len(results)], results)
    assert_no_nan(sweep_)
    assert np.array_equal(np.isinf(sweep_.mean_latency), [r is None for r in results])
    best = operating_point.max_rate_for_p99(target, sweep_)
    assert np.isfinite(best) and 0 <= best <= sweep_.lam[-1]
    parts = [operating_point.DelaySweep(np.array([d]), np.array([x]), np.array([2 * x]),
                                        np.array([1.0]), d, 2 * lat[0])
             for d, x in zip(grid[:3], lat[:3])]
    merged = operating_point.merge_delay_sweeps(parts)
    assert_no_nan(merged)
    assert merged.best_delay_ms == merged.delay_ms[np.argmin(merged.p99)]
    for f in (operating_point.sweep_from_results, operating_point.max_rate_for_p99,
              operating_point.merge_delay_sweeps):
        tally(f, POINTS)
    params = dict(lam_per_ms=lam, joules_per_request=joules, gpu_usd_per_hour=gpu,
                  usd_per_kwh=kwh)
    p, bad = corrupt(data, params, PRICES)
    rejects((operating_point.cost_per_million,), p, bad)
    bad_target = data.draw(invalid(operating_point.TARGET), label="bad target_ms")
    raises_naming("target_ms", operating_point.max_rate_for_p99, bad_target, sweep_)


# Three short simulations a case (~2 ms each), POINTS loads an example.
@fuzz(1000, POINTS)
@given(valid(ALPHA, low=1e-4, high=100.0), valid(TAU0, high=100.0),
       st.one_of(st.none(), st.integers(1, 16)), loads(), st.integers(1, 200),
       st.integers(1, 16), st.lists(valid(DELAY, high=1e3), min_size=1, max_size=3),
       st.integers(0, 2 ** 32), st.data())
def test_operating_point_simulated(alpha, tau0, b_max, rho, n_jobs, preferred, delays, seed,
                                   data):
    """simulate_rate (None where unstable), simulate_rates (inf there), sweep_queue_delay."""
    cap = float(batching.capacity(alpha, tau0, b_max))
    lam = at_load(rho, cap)
    preferred = min(preferred, b_max or preferred)
    for x in lam:
        r = operating_point.simulate_rate(float(x), alpha, tau0, b_max, n_jobs, seed)
        assert (r is None) == (not 0 < x < cap)
        if r is not None:
            assert_no_nan(r)
        tally(operating_point.simulate_rate)
    grid = lam[:2]
    seen = []
    sweep_ = operating_point.simulate_rates(grid, alpha, tau0, b_max, n_jobs, seed,
                                            progress=seen.append)
    assert_no_nan(sweep_)
    assert_inf_iff(sweep_.mean_latency, ~((grid > 0) & (grid < cap)), "simulate_rates")
    assert seen[-1] == 1.0
    tally(operating_point.simulate_rates, grid.size)
    stable = lam[(lam > 0) & (lam < cap)]
    x = float(stable[0]) if stable.size else 0.5 * cap
    delay = operating_point.sweep_queue_delay(x, alpha, tau0, b_max, preferred, delays, n_jobs,
                                              seed)
    assert_no_nan(delay)
    assert delay.best_delay_ms in delay.delay_ms and delay.delay_ms.size == len(delays)
    tally(operating_point.sweep_queue_delay)
    bad = data.draw(invalid(DELAY), label="bad delay")
    with pytest.raises(ValueError) as err:
        operating_point.sweep_queue_delay(x, alpha, tau0, b_max, preferred, [bad], n_jobs, seed)
    assert "delay" in str(err.value)
    raises_naming("alpha", operating_point.simulate_rates, grid, -1.0, tau0)


SIM_DOMAINS = {"lam": LAM, "alpha": ALPHA, "tau0": TAU0, "b_max": B_MAX, "n_jobs": N_JOBS,
               "max_queue_delay": DELAY, "preferred_batch_size": PREFERRED,
               "warmup_jobs": WARMUP}


def check_sim_result(r, n_jobs, warmup, tau1, horizon):
    """A summary of a simulated run: no NaN, latencies at least one batch time τ[1]
    (up to the rounding of times as large as ``horizon``)."""
    assert_no_nan(r)
    assert r.n_jobs == n_jobs - min(warmup, n_jobs - 1)
    assert r.mean_latency >= tau1 * (1 - 1e-9) - 1e-12 * horizon and r.p50 <= r.p95 <= r.p99
    rounding = 1e-12 * horizon / tau1 if tau1 > 0 else np.inf
    assert r.mean_wait >= -1e-9 - 1e-12 * horizon and 1 <= r.mean_batch_size
    assert 0 <= r.utilization <= 1 + 1e-9 + rounding


# ============================================================ engine.sim

@FUZZ_VECTOR
@given(valid(ALPHA, low=1e-4, high=100.0), valid(TAU0, high=100.0),
       st.one_of(st.none(), st.integers(1, 32)), loads(), st.integers(1, 300),
       st.one_of(st.none(), st.integers(0, 400)), st.one_of(st.just(0.0), valid(DELAY)),
       st.one_of(st.none(), st.integers(1, 32)), st.sampled_from(["alpha", "table", "callable"]),
       st.integers(0, 2 ** 32), st.data())
def test_simulate_batching(alpha, tau0, b_max, rho, n_jobs, warmup, delay, preferred, law,
                           seed, data):
    """simulate_batching, simulate_records, summarize, at stable and unstable loads.

    Loads beyond capacity are simulated too (a finite run is well defined); λ = 0
    and λ = inf raise ``ValueError`` naming lam (nothing to simulate).
    """
    if preferred is not None and b_max is not None:
        preferred = min(preferred, b_max)
    cap = float(batching.capacity(alpha, tau0, b_max))
    tau = alpha * np.arange(1, (b_max or 64) + 1) + tau0
    kw = dict(alpha=alpha, tau0=tau0) if law == "alpha" else dict(
        batch_time=tau if law == "table" else (lambda b: alpha * np.asarray(b) + tau0))
    for lam in at_load(rho, cap):
        args = dict(lam=lam, b_max=b_max, n_jobs=n_jobs, seed=seed, max_queue_delay=delay,
                    preferred_batch_size=preferred, **kw)
        if not 0 < lam < np.inf:
            raises_naming("lam", sim.simulate_batching, **args)
            raises_naming("lam", sim.simulate_records, **args)
            continue
        r = sim.simulate_batching(**args, warmup_jobs=warmup)
        horizon = n_jobs * (1 / lam + tau[-1] + delay)
        check_sim_result(r, n_jobs, n_jobs // 10 if warmup is None else warmup, tau[0], horizon)
        rec = sim.simulate_records(**args)
        assert_no_nan(rec)
        assert np.all(rec.finish >= rec.start) and np.all(rec.start >= rec.arrival)
        summary = sim.summarize(rec, warmup or 0)
        check_sim_result(summary, n_jobs, warmup or 0, tau[0], horizon)
        for f in (sim.simulate_batching, sim.simulate_records, sim.summarize):
            tally(f)
    params = dict(lam=max(float(at_load(rho[0], cap)), 1e-3) if np.isfinite(rho[0]) else 1.0,
                  alpha=alpha, tau0=tau0, b_max=b_max, n_jobs=n_jobs, seed=seed,
                  max_queue_delay=delay, preferred_batch_size=preferred or 1,
                  warmup_jobs=warmup or 0)
    p, bad = corrupt(data, params, SIM_DOMAINS)
    rejects((sim.simulate_batching, sim.simulate_records), p, bad)


# ============================================================ engine.fit

POSITIVE = st.floats(1e-6, 1e9, allow_subnormal=False)
NOT_POSITIVE = st.sampled_from([0.0, -1.0, math.nan, math.inf, -math.inf])


@FUZZ_VECTOR
@given(st.lists(st.integers(1, 4096), min_size=POINTS + 1, max_size=POINTS + 1),
       st.lists(st.tuples(POSITIVE, POSITIVE, POSITIVE), min_size=POINTS + 1,
                max_size=POINTS + 1), st.data())
def test_fits(sizes, columns, data):
    """linear_fit and the three profile fits, on every prefix (2..17 rows) of a drawn table.

    Fewer than 2 distinct sizes (or collinear token counts) is the documented
    ``ValueError`` naming the column.
    """
    b = np.array(sizes, dtype=float)
    thr, power, secs = (np.array(c) for c in zip(*columns))
    for n in range(2, POINTS + 2):
        bb, tt, pp, ss = b[:n], thr[:n], power[:n], secs[:n]
        line = fit.linear_fit(bb, 1000 * bb / tt)
        assert_no_nan(line)
        assert line.r2 <= 1 + 1e-9
        if np.unique(bb).size < 2:
            raises_naming("batch_size", fit.fit_batch_profile, bb, tt, pp)
            raises_naming("output_tokens", fit.fit_token_latency, bb, ss)
            continue
        prof = fit.fit_batch_profile(bb, tt, pp)
        assert_no_nan(prof)
        assert np.all(np.isfinite(prof.batch_time(bb)))
        tok = fit.fit_token_latency(bb, ss)
        assert_no_nan(tok)
        assert np.all(np.isfinite(tok.latency_s(bb)))
        inputs = tt.round() + 1
        try:
            both = fit.fit_token_latency_with_input(bb, inputs, ss)
        except ValueError as err:       # documented: too few distinct values, or collinear
            assert "output_tokens" in str(err) or "input_tokens" in str(err)
        else:
            assert_no_nan(both)
            assert np.all(np.isfinite(both.latency_s(bb, inputs)))
            tally(fit.fit_token_latency_with_input)
        for f in (fit.linear_fit, fit.fit_batch_profile, fit.fit_token_latency):
            tally(f)
    column = data.draw(st.sampled_from(["batch_size", "throughput_per_s", "power_w"]))
    cols = dict(batch_size=b, throughput_per_s=thr, power_w=power)
    bad = cols[column].copy()
    bad[data.draw(st.integers(0, bad.size - 1))] = data.draw(NOT_POSITIVE)
    raises_naming(column, fit.fit_batch_profile, **{**cols, column: bad})
    raises_naming(column, fit.fit_batch_profile, **{**cols, column: bad[:-1]})  # short column
    distinct = np.arange(1.0, b.size + 1)
    raises_naming("seconds", fit.fit_token_latency, distinct,
                  np.where(np.isfinite(bad), -1.0, bad))
    raises_naming("input_tokens", fit.fit_token_latency_with_input, distinct, -thr, secs)
    bad_x = data.draw(st.sampled_from([math.nan, math.inf, "x"]))
    raises_naming("x", fit.linear_fit, [1.0, bad_x, 3.0], [1.0, 2.0, 3.0])
    raises_naming("y", fit.linear_fit, [1.0, 2.0, 3.0], [1.0, bad_x, 3.0])


# ============================================================ engine.presets

def _toml_value(v):
    if isinstance(v, str):
        return '"' + v.replace('"', "'") + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v == math.inf else "-inf" if v == -math.inf
                                           else repr(v))
    return repr(v)


def _toml(top: dict, columns: dict | None = None) -> str:
    lines = [f"{k} = {_toml_value(v)}" for k, v in top.items()]
    if columns is not None:
        lines.append("[columns]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in columns.items()]
    return "\n".join(lines) + "\n"


def _preset_texts(scale, base):
    """One valid file of each preset kind, scaled by ``scale`` (> 0)."""
    n = len(base)
    sizes = sorted({int(x) for x in np.cumsum(np.ceil(np.array(base) * scale)) + 1})
    sizes = sizes if len(sizes) >= 2 else [1, 2]
    meta = dict(name="fuzz", source="generated")
    return {
        "batch": _toml(dict(id="p", **meta), dict(
            batch_size=sizes, throughput_images_per_s=[100.0 * scale * (1 + i) for i in
                                                       range(len(sizes))],
            board_power_w=[50.0 + scale] * len(sizes))),
        "token": _toml(dict(id="t", **meta), dict(
            input_tokens=[128] * n, output_tokens=list(range(1, n + 1)),
            latency_s=[0.5 + scale * (i + 1) for i in range(n)])),
        "llm": _toml(dict(id="l", **meta, k1_s_per_request=0.06 * scale, k2_s=0.1,
                          k3_s_per_token_per_request=0.0003 * scale, k4_s_per_token=0.02,
                          kv_capacity_tokens=1000.0 * scale, prompt_tokens=256.0,
                          estimated=["k2_s"])),
        "gpu": _toml(dict(id="g", **meta, host_link_bandwidth_GB_per_s=16.0 * scale,
                          memory_bandwidth_GB_per_s=320.0, memory_GB=16.0 * scale, sm_count=40,
                          boost_clock_MHz=1590.0, fp32_peak_TFLOP_per_s=8.1 * scale,
                          fp16_peak_TFLOP_per_s=65.0)),
        "work": _toml(dict(id="w", **meta, precision="fp32", job_size_bytes=1048576,
                           flops_per_byte=scale, parallel_fraction=min(1.0, scale),
                           reuse_factor=1.0 + scale, host_GFLOP_per_s=50.0, memory_slots=4)),
    }


PRESET_LOADERS = {"batch": (presets.load_batch_profile, presets.batch_profiles),
                  "token": (presets.load_token_latency_profile, presets.token_latency_profiles),
                  "llm": (presets.load_llm_batch_time, presets.llm_batch_time_presets),
                  "gpu": (presets.load_gpu_spec, presets.gpu_specs),
                  "work": (presets.load_pipeline_workload, presets.pipeline_workloads)}
PRESET_FIELDS = {"batch": ["batch_size", "throughput_images_per_s", "board_power_w"],
                 "token": ["input_tokens", "output_tokens", "latency_s"],
                 "llm": ["k1_s_per_request", "k2_s", "kv_capacity_tokens", "prompt_tokens"],
                 "gpu": ["sm_count", "memory_GB", "fp32_peak_TFLOP_per_s"],
                 "work": ["job_size_bytes", "parallel_fraction", "reuse_factor", "memory_slots"]}


PRESET_FILES = 4     # files of each kind per example (~1 ms each): 500 cases per loader


@FUZZ_VECTOR
@given(sweep(st.floats(1e-3, 1e3)), st.lists(st.floats(0.0, 100.0), min_size=2, max_size=8),
       st.sampled_from(sorted(PRESET_LOADERS)),
       st.sampled_from([-1.0, 0.0, math.nan, math.inf, "text", True, 1.5, None]), st.data())
def test_presets(tmp_path_factory, scales, base, kind, bad_value, data):
    """Every loader: ``POINTS`` valid files of each kind load (directories too), and a
    file with one bad field raises ``ValueError`` naming the file and the field."""
    root = tmp_path_factory.mktemp("presets")
    for k, (load_one, load_dir) in PRESET_LOADERS.items():
        folder = root / k
        folder.mkdir()
        for i, scale in enumerate(scales[:PRESET_FILES]):
            path = folder / f"{k}{i}.toml"
            path.write_text(_preset_texts(scale, base)[k].replace('id = "', f'id = "{i}'))
            preset = load_one(path)
            assert_no_nan(preset)
            if k in ("batch", "token"):
                assert_no_nan(preset.fit())
            if k == "token":
                try:
                    assert_no_nan(preset.fit_with_input())
                except ValueError as err:           # every row has 128 input tokens
                    assert "input_tokens" in str(err)
        assert len(load_dir(folder)) == PRESET_FILES
        tally(load_one, PRESET_FILES)
        tally(load_dir)
    field = data.draw(st.sampled_from(PRESET_FIELDS[kind]), label="field")
    text = _preset_texts(1.0, base)[kind]
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"{field} =")]
    column = kind in ("batch", "token")
    rows = len(next(ln for ln in text.splitlines() if ln.startswith(PRESET_FIELDS[kind][0]))
               .split(","))
    if bad_value is not None:
        value = [bad_value] * rows if column else bad_value
        lines.append(f"{field} = {_toml_value(value)}")
    path = root / "bad.toml"
    path.write_text("\n".join(lines) + "\n")
    load_one = PRESET_LOADERS[kind][0]
    if preset_accepts(kind, field, bad_value):
        assert_no_nan(load_one(path))
    else:
        raises_naming(field, load_one, path)
        raises_naming("bad.toml", load_one, path)


OPTIONAL_FIELDS = {"board_power_w", "kv_capacity_tokens", "prompt_tokens"}
WHOLE_FIELDS = {"batch_size", "input_tokens", "output_tokens", "sm_count", "memory_slots",
                "job_size_bytes"}
ZERO_ALLOWED = {"k2_s", "prompt_tokens"}


def preset_accepts(kind, field, value) -> bool:
    """Whether a preset file with ``field`` set to ``value`` (None: missing) is valid."""
    if value is None:
        return field in OPTIONAL_FIELDS
    if isinstance(value, (str, bool)) or not math.isfinite(value) or value < 0:
        return False
    if value == 0:
        return field in ZERO_ALLOWED
    if value == 1.5:
        return field not in WHOLE_FIELDS and field != "parallel_fraction"     # at most 1
    return True


# ============================================================ engine.token_laws

TOKEN_K = st.one_of(st.integers(-5, 10 ** 6), st.floats(-10.0, 1e7, allow_nan=False),
                    st.sampled_from([0, 1, math.inf, -math.inf]))


@FUZZ_VECTOR
@given(valid(TOKEN_LOG_MEAN, low=-5.0, high=12.0), sweep(valid(TOKEN_LOG_SD, high=3.0)),
       valid(TOKEN_BOUND, high=5000.0), sweep(st.floats(1e-3, 5000.0)),
       valid(TOKEN_BOUND, high=5000.0), sweep(valid(TOKEN_SD, high=5000.0)),
       sweep(TOKEN_K), sweep(st.floats(0.0, 1.0)), st.data())
def test_token_laws(log_mean, log_sds, low, widths, mean, sds, k, q, data):
    """lognormal, uniform, truncated_normal; token_cdf/pmf/quantile on each law; sampling,
    grid_top and binned_pmf on one of each kind."""
    # scipy freezes each law (~1 ms): half the points build one (1,000 cases a constructor)
    half = POINTS // 2
    laws = ([token_laws.lognormal(log_mean, s) for s in log_sds[:half]]
            + [token_laws.uniform(low, low + w) for w in widths[:half]]
            + [token_laws.truncated_normal(mean, s, low) for s in sds[:half]])
    laws = laws[::4]                    # the discretisation on 2 laws of each kind (cost)
    for f in (token_laws.lognormal, token_laws.uniform, token_laws.truncated_normal):
        tally(f, half)
    k = np.array(k, dtype=float)
    q = np.array(q)
    rng = np.random.default_rng(0)
    for i, law in enumerate(laws):
        cdf, pmf = token_laws.token_cdf(law, k), token_laws.token_pmf(law, k)
        assert_no_nan((cdf, pmf))
        assert np.all((cdf >= 0) & (cdf <= 1) & (pmf >= 0) & (pmf <= 1))
        assert np.all(cdf[k < 1] == 0)
        n = token_laws.token_quantile(law, q)
        assert_no_nan(n)
        assert np.all(n >= 1)
        if i % 2 == 0:
            x = token_laws.sample_tokens(law, 50, rng)
            assert np.all((x >= 1) & (x == np.round(x)))
            for n_max in (1, 4000, None):
                try:
                    top = token_laws.grid_top(law, np.inf if n_max is None else n_max)
                except ValueError as err:        # documented: an unbounded law needs n_max
                    assert n_max is None and "n_max" in str(err)
                else:
                    assert 1 <= top <= token_laws.MAX_TOKEN_GRID
            edges, mass = token_laws.binned_pmf(law, 20)
            assert_no_nan((edges, mass))
            assert np.all(mass >= -1e-15) and mass.sum() <= 1 + 1e-12
            for f in (token_laws.sample_tokens, token_laws.grid_top, token_laws.binned_pmf):
                tally(f)
        for f in (token_laws.token_cdf, token_laws.token_pmf, token_laws.token_quantile):
            tally(f, POINTS)
    which = data.draw(st.sampled_from(["lognormal", "uniform", "truncated_normal"]))
    if which == "lognormal":
        name = data.draw(st.sampled_from(["log_mean", "log_sd"]))
        domain = TOKEN_LOG_MEAN if name == "log_mean" else TOKEN_LOG_SD
        raises_naming(name, token_laws.lognormal, **{"log_mean": log_mean, "log_sd": 1.0,
                                                      name: data.draw(invalid(domain))})
    elif which == "uniform":
        name = data.draw(st.sampled_from(["low", "high"]))
        raises_naming(name, token_laws.uniform, **{"low": low, "high": low + 1.0,
                                                    name: data.draw(invalid(TOKEN_BOUND))})
        raises_naming("high", token_laws.uniform, low + 1.0, low)     # high must exceed low
    else:
        name = data.draw(st.sampled_from(["mean", "sd", "low", "high"]))
        domain = TOKEN_SD if name == "sd" else TOKEN_BOUND
        bad = data.draw(invalid(domain))
        if name == "high" and bad == math.inf:
            return                                   # high = inf means untruncated
        raises_naming(name, token_laws.truncated_normal,
                      **{"mean": mean, "sd": 1.0, "low": low, name: bad})


@FUZZ_VECTOR
@given(sweep(st.lists(st.integers(1, token_laws.MAX_TOKEN_GRID), min_size=1, max_size=12)),
       sweep(st.floats(-2.0, 1e7, allow_nan=False)), st.sampled_from([None, 0, "count"]),
       st.sampled_from([0.0, -3.0, 1.5, math.nan, math.inf, "x", token_laws.MAX_TOKEN_GRID + 1]),
       st.data())
def test_empirical_tokens(samples, k, column, bad, data):
    """EmpiricalTokens (from_counts and its scipy-like methods) and empirical_from_csv."""
    k = np.array(k)
    for counts in samples:
        law = token_laws.EmpiricalTokens.from_counts(counts)
        values = (law.pmf(k), law.cdf(k), law.sf(k), law.ppf(np.clip(k / 1e7, 0, 1)),
                  law.rvs(5, random_state=0), law.moment(2), law.mean(), law.var(), law.std(),
                  law.support())
        assert_no_nan(values)
        assert law.mean() == pytest.approx(np.mean(counts), rel=1e-12)
        assert law.var() >= 0 and law.support() == (min(counts), max(counts))
        header = "" if column != "count" else "count\n"
        text = header + "\n".join(str(c) for c in counts)
        again = token_laws.empirical_from_csv(text, column=column)
        assert np.array_equal(again.values, law.values) and np.allclose(again.probs, law.probs)
    tally(token_laws.EmpiricalTokens, POINTS)
    tally(token_laws.empirical_from_csv, POINTS)
    counts = list(samples[0])
    counts[data.draw(st.integers(0, len(counts) - 1))] = bad
    raises_naming("counts", token_laws.EmpiricalTokens.from_counts, counts)
    raises_naming("csv", token_laws.empirical_from_csv,
                  "count\n" + "\n".join(str(c) for c in counts))       # a bad row, not a header
    raises_naming("counts", token_laws.EmpiricalTokens.from_counts, [])


# ============================================================ engine.token_limit

TOKEN_DOMAINS = {"lam": LAM_PER_S, "a": A_S_PER_TOKEN, "c": C_S, "n_max": N_MAX,
                 "patience": PATIENCE_S, "theta": THETA, "loss_cost": LOSS_COST}
FINITE_N_MAX = valid(N_MAX, high=5000, allow_inf=False)
SUMMABLE = 200_000      # law tops up to this are summed without n_max (above: cost)


def law_top(law) -> float:
    """Top of the token grid without a limit, inf when beyond ``MAX_TOKEN_GRID``."""
    try:
        return token_laws.grid_top(law)
    except ValueError:
        return math.inf


def service_mean(a, c, law, n_max):
    return a * np.asarray(token_limit.clipped_token_moments(law, n_max)[0]) + c


@FUZZ_VECTOR
@given(token_law_specs(), valid(A_S_PER_TOKEN), valid(C_S), sweep(FINITE_N_MAX), loads(),
       valid(THETA), valid(LOSS_COST), st.data())
def test_token_limit_moments(law, a, c, n_max, rho, theta, loss_cost, data):
    """clipped_token_moments, mean_utility, mean_wait, utilization, largest_stable_limit,
    objective_v1/v2: ρ = λE[S] < 1 is the stability condition of the M/G/1 queue."""
    name, law = law
    n_max = np.array(n_max, dtype=float)
    e1, e2 = token_limit.clipped_token_moments(law, n_max)
    assert_no_nan((e1, e2))
    assert np.all((e1 >= 1) & (e1 <= n_max * (1 + 1e-12)) & (e2 >= e1 * e1 * (1 - 1e-9)))
    es = a * e1 + c
    lam = at_load(rho, 1 / es)
    load = token_limit.utilization(lam, a, c, law, n_max)
    assert close(load, lam * es, 1e-12)
    unstable = lam >= 1 / es                     # capacity 1/E[S]: ρ = λE[S] ≥ 1
    w = token_limit.mean_wait(lam, a, c, law, n_max)
    assert_inf_iff(w, unstable, "mean_wait")
    assert np.all(w >= 0)
    u = token_limit.mean_utility(law, n_max)
    assert_no_nan(u)
    assert np.all((u > 0) & (u <= 1 + 1e-12))
    v1 = token_limit.objective_v1(u, w, theta)
    assert_no_nan(v1)
    assert np.all((v1 == -np.inf) == unstable)
    v2 = token_limit.objective_v2(u, np.where(unstable, 10.0, w), np.zeros_like(u), theta,
                                  loss_cost)
    assert_no_nan(v2)
    for f in (token_limit.clipped_token_moments, token_limit.utilization, token_limit.mean_wait,
              token_limit.mean_utility, token_limit.objective_v1, token_limit.objective_v2):
        tally(f, POINTS)
    top = law_top(law)
    if top <= SUMMABLE:                          # no limit: the sums stop at the law's top
        assert np.all(token_limit.mean_utility(law, None) == 1.0)
        assert_no_nan(token_limit.clipped_token_moments(law, None))
    elif math.isinf(top):                        # documented: an unbounded law needs n_max
        raises_naming("n_max", token_limit.clipped_token_moments, law, None)
    if rho[0] >= 0.01 or top <= SUMMABLE:        # below, a heavy tail sums up to 8.4 M terms
        lam0 = float(lam[0])
        m = token_limit.largest_stable_limit(lam0, a, c, law)
        assert not math.isnan(m) and m >= 0
        if 1 <= m < math.inf:
            assert token_limit.utilization(lam0, a, c, law, m) < 1
            assert token_limit.utilization(lam0, a, c, law, m + 1) >= 1
        tally(token_limit.largest_stable_limit)
    params = dict(lam=lam, a=a, c=c, n_max=n_max, theta=theta, loss_cost=loss_cost)
    p, bad = corrupt(data, params, TOKEN_DOMAINS)
    rejects((token_limit.utilization, token_limit.mean_wait), p, bad, dist=law)
    rejects((token_limit.clipped_token_moments, token_limit.mean_utility), p, bad, dist=law)
    if bad in ("theta", "loss_cost"):
        rejects((token_limit.objective_v1,), dict(mean_utility=u, mean_wait=w, **p), bad)
        rejects((token_limit.objective_v2,), dict(mean_utility=u, mean_wait_all=w,
                                                  loss_fraction=0 * u, **p), bad)


@FUZZ_VECTOR
@given(loads(), valid(A_S_PER_TOKEN, low=1e-4, high=100.0), valid(PATIENCE_S), st.data())
@example(np.full(POINTS, 0.001), 0.05, 300.0, None).via("λτ = 6, τ/d = 6000: Erlang's series")
def test_patience_closed_forms(rho, service, patience, data):
    """M/M/1+D and M/D/1+D exactly (π, E[W_q], E[W_qs]): no stability condition with a
    finite patience, inf means at ρ ≥ 1 without one."""
    lam = at_load(rho, 1 / service)
    unstable = ~(lam * service < 1) & (patience == math.inf)
    with np.errstate(invalid="ignore"):        # λτ: M/D/1+D solves a grid of ≥ λτ points
        arrivals = np.where(lam > 0, lam * patience, 0.0)
    beyond = np.isfinite(arrivals) & (arrivals > token_limit.EXACT_LAM_TAU)
    if beyond.any():                            # documented: beyond the exact solver
        raises_naming("patience", token_limit.md1_deterministic_patience, lam[beyond], service,
                      patience)
    # 12 < λτ: one Volterra solve a point (5-50 ms): the first two only (cost)
    volterra = np.isfinite(arrivals) & (arrivals > 12) & ~beyond
    costly = volterra & ((arrivals > 256) | (np.cumsum(volterra) > 2))
    for f in (token_limit.mm1_deterministic_patience, token_limit.md1_deterministic_patience):
        keep = ~(beyond | costly) if f is token_limit.md1_deterministic_patience else \
            np.ones(POINTS, dtype=bool)
        loss, w_all, w_served = (np.asarray(x) for x in f(lam[keep], service, patience))
        assert_no_nan((loss, w_all, w_served))
        assert np.all((loss >= 0) & (loss <= 1))
        assert_inf_iff(w_all, unstable[keep], f"{f.__name__} E[W_q]")
        if patience < math.inf:
            assert np.all((w_all >= -1e-9 * patience) & (w_all <= patience * (1 + 1e-9)))
        tally(f, int(keep.sum()))
    if data is None:
        return
    params = dict(lam=lam, mean_service=service, patience=patience)
    p, bad = corrupt(data, params, {"lam": LAM_PER_S, "mean_service": A_S_PER_TOKEN,
                                    "patience": PATIENCE_S})
    rejects((token_limit.mm1_deterministic_patience,), p, bad)
    p["service"] = p.pop("mean_service")
    rejects((token_limit.md1_deterministic_patience,), p,
            "service" if bad == "mean_service" else bad)


def check_impatience(r, lam, tau, unstable_without_patience):
    """π in [0, 1], 0 ≤ E[W_q] ≤ τ (inf only for τ = inf at ρ ≥ 1), no NaN."""
    assert_no_nan(r)
    loss, w_all = np.asarray(r.loss_fraction), np.asarray(r.mean_wait_all)
    assert np.all((loss >= 0) & (loss <= 1))
    finite_tau = np.isfinite(tau)
    assert_inf_iff(w_all, ~finite_tau & unstable_without_patience, "mean_wait_all")
    assert np.all(w_all[finite_tau] <= np.broadcast_to(tau, w_all.shape)[finite_tau]
                  * (1 + 1e-9))


LIGHT_LAWS = token_law_specs(heavy=False, max_log_mean=6.0)
SOLVABLE_LAM_TAU = 1024     # the exact solver's grid has ≥ λτ points, O(n²): ≤ 15 ms a point


def arrivals_within(lam, patience):
    """(beyond, keep): points with λτ above ``EXACT_LAM_TAU`` (a documented ``ValueError``),
    and those solved here: λτ ≤ ``SOLVABLE_LAM_TAU``, no patience, or λ = inf (no grid).
    Points in between (seconds each) are left to the unit tests."""
    lam = np.asarray(lam, dtype=float)
    with np.errstate(invalid="ignore"):
        arrivals = np.where(lam > 0, lam * patience, 0.0)
    finite = np.isfinite(arrivals)
    beyond = finite & (arrivals > token_limit.EXACT_LAM_TAU)
    keep = (finite & (arrivals <= SOLVABLE_LAM_TAU)) | (patience == np.inf) | np.isinf(lam)
    return beyond, keep


# One exact solve per point (a Volterra equation on 1024-4096 grid points, 5-50 ms each);
# the interpolation is vectorised.
@fuzz(96, POINTS)
@given(LIGHT_LAWS, valid(A_S_PER_TOKEN), valid(C_S, high=5.0),
       st.one_of(st.none(), st.integers(1, 2000)), loads(), valid(PATIENCE_S, high=1e4),
       st.data())
def test_impatience(law, a, c, n_max, rho, patience, data):
    """impatience (exact and interpolation), ServiceLaw, over loads beyond capacity too:
    with a finite patience every load has a steady state."""
    name, law = law
    if n_max is None and law_top(law) > SUMMABLE:
        n_max = 2000
    es = float(service_mean(a, c, law, n_max))
    lam = at_load(rho, 1 / es)
    unstable = lam >= 1 / es
    beyond, keep = arrivals_within(lam, patience)
    for method in ("exact", "interpolation"):
        if beyond.any():               # documented: λτ beyond the exact solver's grid
            raises_naming("patience", token_limit.impatience, lam[beyond], a, c, law, n_max,
                          patience, method)
        r = token_limit.impatience(lam[keep], a, c, law, n_max, patience, method)
        check_impatience(r, lam[keep], patience, unstable[keep])
        tally(token_limit.impatience, int(keep.sum()))
    law_s = token_limit.ServiceLaw.clipped(a, c, law, np.inf if n_max is None else n_max)
    assert close(law_s.mean, es, 1e-9) and close(law_s.probs.sum(), 1.0, 1e-12)
    i1, i2 = law_s.integrated_tails(np.array([0.0, es, 10 * es]))
    assert_no_nan((i1, i2))
    det = token_limit.ServiceLaw.deterministic(es)
    assert det.mean == es
    tally(token_limit.ServiceLaw, 2)
    tally(mg1_patience.ServiceLaw, 2)          # its base class, whose methods these run
    params = dict(lam=lam, a=a, c=c, n_max=n_max, patience=patience)
    p, bad = corrupt(data, params, TOKEN_DOMAINS)
    for method in ("exact", "interpolation"):
        rejects((token_limit.impatience,), p, bad, dist=law, method=method)
    raises_naming("method", token_limit.impatience, lam, a, c, law, n_max, patience, "other")


# limit_point and limit_curves solve the exact impatience model at each limit (5-50 ms a
# point), optimal_limit up to every integer limit: ~0.2 s a case.
@fuzz(60)
@given(LIGHT_LAWS, valid(A_S_PER_TOKEN), valid(C_S, high=5.0), rho(), st.integers(1, 2000),
       valid(PATIENCE_S, high=1e3), valid(THETA), valid(LOSS_COST),
       st.sampled_from(["exact", "interpolation"]), st.data())
def test_token_limit_answers(law, a, c, rho, n_max, patience, theta, loss_cost, method, data):
    """limit_point, limit_curves, optimal_limit (V1 and V2)."""
    name, law = law
    es = float(service_mean(a, c, law, n_max))
    lam = float(at_load(rho, 1 / es))
    unstable = not lam < 1 / es
    beyond, keep = arrivals_within(lam, patience)
    if beyond:                          # documented: λτ beyond the exact solver's grid
        raises_naming("patience", token_limit.limit_point, lam, a, c, law, n_max, patience,
                      method)
    if keep:
        pt = token_limit.limit_point(lam, a, c, law, n_max, patience, method)
        assert_no_nan(pt)
        assert_inf_iff(pt.mean_wait, unstable, "limit_point.mean_wait")
        assert close(pt.capacity_per_s, 1 / es, 1e-12) and 0 <= pt.loss_fraction <= 1
        tally(token_limit.limit_point)
    grid = np.unique([1, n_max, max(1, n_max // 2)])
    if keep:
        curves = token_limit.limit_curves(lam, a, c, law, grid, patience)
        assert_no_nan(curves)
        assert_inf_iff(curves.mean_wait, lam >= 1 / service_mean(a, c, law, grid),
                       "limit_curves.mean_wait")
        tally(token_limit.limit_curves)
    cand = np.unique([1, n_max, 2 * n_max])
    v1 = token_limit.optimal_limit(lam, a, c, law, theta, candidates=None if rho < 1 else cand)
    assert_no_nan(v1, allowed=("objectives",))
    assert v1.n_max in v1.candidates and v1.objective == np.max(v1.objectives)
    if keep:
        v2 = token_limit.optimal_limit(lam, a, c, law, theta, loss_cost, patience, method=method,
                                       candidates=cand, printed_sign=data.draw(st.booleans()))
        assert_no_nan(v2)
        assert 0 <= v2.loss_fraction <= 1
    tally(token_limit.optimal_limit)
    params = dict(lam=lam, a=a, c=c, n_max=n_max, patience=patience, theta=theta,
                  loss_cost=loss_cost)
    p, bad = corrupt(data, params, TOKEN_DOMAINS)
    rejects((token_limit.limit_point,), p, bad, dist=law, method=method)
    if bad != "n_max":
        rejects((token_limit.optimal_limit,), p, bad, dist=law, candidates=cand)


# The exact model behind §V-B's numbers: ~0.2 s (interpolation) to ~2 s (exact) a case.
@fuzz(4)
@given(valid(A_S_PER_TOKEN, low=0.01, high=0.05), valid(C_S, high=2.0),
       st.sampled_from(["interpolation", "interpolation", "exact"]),
       st.sampled_from([0.0, -1.0, math.nan]))
def test_token_paper_comparison(a, c, method, bad):
    """paper_comparison: no NaN (E[W] and its change are inf where §V-B's load is unstable
    for these a, c), each row with its note."""
    rows = token_limit.paper_comparison(a, c, method=method)
    assert_no_nan(rows)
    assert all(r.note for r in rows)
    tally(token_limit.paper_comparison)
    raises_naming("a", token_limit.paper_comparison, bad, c)


# ~2 ms a case (numba loop of n_jobs requests), POINTS loads an example.
@fuzz(1000, POINTS)
@given(token_law_specs(), valid(A_S_PER_TOKEN), valid(C_S), valid(N_MAX, high=10 ** 6),
       st.one_of(st.none(), valid(PATIENCE_S)), loads(), st.integers(1, 300),
       st.one_of(st.none(), st.integers(0, 400)), st.integers(0, 2 ** 32), st.data())
def test_simulate_token_queue(law, a, c, n_max, patience, rho, n_jobs, warmup, seed, data):
    """simulate_token_queue at stable and unstable loads, with and without patience."""
    name, law = law
    es = float(service_mean(a, c, law, min(n_max, 2000)))
    for lam in at_load(rho, 1 / es):
        args = dict(lam=lam, a=a, c=c, dist=law, n_max=n_max, patience=patience, n_jobs=n_jobs,
                    seed=seed, warmup_jobs=warmup)
        if not 0 < lam < np.inf:
            raises_naming("lam", token_limit.simulate_token_queue, **args)
            continue
        r = token_limit.simulate_token_queue(**args)
        assert_no_nan(r)
        assert 0 <= r.loss_fraction <= 1 and r.mean_wait_all >= 0 and r.mean_service > 0
        if patience is not None:
            assert r.mean_wait_all <= patience * (1 + 1e-9)
        tally(token_limit.simulate_token_queue)
    params = dict(lam=max(float(at_load(rho[0], 1 / es)), 1e-6) if np.isfinite(rho[0])
                  else 1.0, a=a, c=c, n_max=n_max, patience=patience or 10.0, n_jobs=n_jobs,
                  warmup_jobs=warmup or 0)
    p, bad = corrupt(data, params, {**TOKEN_DOMAINS, "n_jobs": N_JOBS, "warmup_jobs": WARMUP})
    rejects((token_limit.simulate_token_queue,), p, bad, dist=law)


# ============================================================ engine.llm_batching

K_COEFFICIENTS = st.tuples(valid(LLM_K1, high=10.0), valid(LLM_K2, high=100.0),
                           valid(LLM_K3, high=0.1), valid(LLM_K4, high=1.0))
LLM_DOMAINS = {"lam": LAM_PER_S, "b": LLM_BATCH, "l": LLM_MAX_TOKENS, "b_max": B_MAX,
               "kv_capacity_tokens": LLM_KV_CAPACITY, "prompt_tokens": LLM_PROMPT_TOKENS}
LLM_LAWS = token_law_specs(max_log_mean=7.0)


def bad_k(data, k):
    """k with one coefficient out of its domain, and that coefficient's name."""
    i = data.draw(st.integers(0, 3), label="bad coefficient")
    domain = (LLM_K1, LLM_K2, LLM_K3, LLM_K4)[i]
    value = data.draw(invalid(domain), label=domain.name)
    return tuple(value if j == i else x for j, x in enumerate(k)), domain.name


@FUZZ_VECTOR
@given(LLM_LAWS, K_COEFFICIENTS, sweep(valid(LLM_BATCH, high=10 ** 4)),
       sweep(valid(LLM_MAX_TOKENS)), loads(), st.integers(1, 64), b_maxes(high=10 ** 4),
       st.one_of(st.none(), valid(LLM_KV_CAPACITY)), valid(LLM_PROMPT_TOKENS), st.data())
def test_llm_batch_times(law, k, b, l, rho, b_fixed, b_max, kv, prompt, data):
    """check_k, batch_time, E[L_b], μ[b], the linear bound (eq 20), fixed batching
    (M/D^b/1 and eq 25 as printed), stability limits, the throughput-optimal b."""
    name, law = law
    assert llm_batching.check_k(k) == tuple(float(x) for x in k)
    b, l = np.array(b), np.array(l)
    h = llm_batching.batch_time(b, l, k)
    assert np.all(np.isfinite(h) & (h > 0))
    eml = llm_batching.expected_max_tokens(law, b)
    assert_no_nan(eml)
    order = np.argsort(b)
    assert np.all(np.diff(eml[order]) >= -1e-9 * eml[order][1:])          # E[L_b] grows with b
    # E[L_b] ≥ E[L_1] = E[N]; the quadrature assumes a continuous law (an empirical one's
    # step quantile costs accuracy, up to 0.4 % measured with 3 values, not finiteness)
    rtol = 1e-2 if isinstance(law, token_laws.EmpiricalTokens) else 1e-6
    assert np.all(eml >= float(law.mean()) * (1 - rtol))
    mbt, mu = llm_batching.mean_batch_time(b, law, k), llm_batching.throughput(b, law, k)
    assert np.all(np.isfinite(mbt) & (mbt > 0) & np.isfinite(mu) & (mu > 0))
    a1, b1 = llm_batching.linear_bound_coefficients(law, k)
    assert_no_nan((a1, b1))
    lam_bound = at_load(rho, 1 / a1) if np.isfinite(a1) else at_load(rho, 1.0)
    bound = llm_batching.dynamic_wait_bound(lam_bound, law, k)      # φ(λ, α1, β1): capacity 1/α1
    assert_inf_iff(bound, ~np.isfinite(b1) | (lam_bound >= 1 / a1), "dynamic_wait_bound")
    cap = float(llm_batching.throughput(b_fixed, law, k))
    lam = at_load(rho, cap)
    unstable = (lam >= cap) | ((lam == 0) & (b_fixed > 1))        # b > 1 never fills at λ = 0
    for f in (llm_batching.fixed_batch_wait, llm_batching.fixed_batch_sojourn):
        assert_inf_iff(f(lam, b_fixed, law, k), unstable, f.__name__)
    eq25 = llm_batching.fixed_batch_wait_eq25(lam, b_fixed, law, k)
    assert_inf_iff(eq25, (lam >= cap) | (lam == 0), "fixed_batch_wait_eq25")
    for x in lam[(lam > 0) & (lam < cap)][:2]:
        roots = llm_batching.fixed_batch_roots_eq25(x, b_fixed, law, k)
        assert_no_nan(roots)
        assert roots.shape == (2, b_fixed - 1)
        tally(llm_batching.fixed_batch_roots_eq25)
    assert np.isclose(llm_batching.stability_limit("fixed", law, k, b=b_fixed), cap, rtol=1e-12)
    for strategy in ("elastic", "continuous"):
        limit = llm_batching.stability_limit(strategy, law, k, b_max=b_max,
                                             kv_capacity_tokens=kv, prompt_tokens=prompt)
        assert np.isfinite(limit) and limit > 0
    if b_max is not None and math.isfinite(b_max):
        assert llm_batching.stability_limit("dynamic", law, k, b_max=b_max) == \
            pytest.approx(float(llm_batching.throughput(b_max, law, k)), rel=1e-12)
    b_limit = min(b_fixed, 16)                   # (E[L_b] for every b up to it: cost)
    best = llm_batching.optimal_batch_size(law, k, b_limit)
    assert 1 <= best <= b_limit
    values = {"a": lam, "b": np.where(unstable, np.nan, lam), "c": np.full(POINTS, np.inf)}
    names = llm_batching.best_strategy(values)
    assert len(names) == POINTS and set(names) <= {"a", "b", ""}
    assert set(llm_batching.paper_laws()) == {"uniform(0, 1000)", "lognormal(7, 0.7)"}
    for f in (llm_batching.check_k, llm_batching.batch_time, llm_batching.expected_max_tokens,
              llm_batching.mean_batch_time, llm_batching.throughput,
              llm_batching.fixed_batch_wait, llm_batching.fixed_batch_sojourn,
              llm_batching.fixed_batch_wait_eq25, llm_batching.best_strategy):
        tally(f, POINTS)
    tally(llm_batching.dynamic_wait_bound, POINTS)
    for f in (llm_batching.linear_bound_coefficients, llm_batching.stability_limit,
              llm_batching.optimal_batch_size, llm_batching.paper_laws):
        tally(f)
    params = dict(lam=lam, b=b, l=l, b_max=b_max, kv_capacity_tokens=kv or 1e4,
                  prompt_tokens=prompt)
    p, bad = corrupt(data, params, LLM_DOMAINS)
    rejects((llm_batching.batch_time, llm_batching.expected_max_tokens,
             llm_batching.mean_batch_time, llm_batching.throughput), p, bad, k=k, dist=law)
    rejects((llm_batching.fixed_batch_wait, llm_batching.fixed_batch_sojourn,
             llm_batching.fixed_batch_wait_eq25, llm_batching.dynamic_wait_bound),
            p if bad == "b" else {**p, "b": b_fixed}, bad, dist=law, k=k)
    if bad in ("b_max", "kv_capacity_tokens", "prompt_tokens"):
        raises_naming(bad, llm_batching.stability_limit, "continuous", law, k,
                      b_max=p["b_max"], kv_capacity_tokens=p["kv_capacity_tokens"],
                      prompt_tokens=p["prompt_tokens"])
    kk, coefficient = bad_k(data, k)
    for f in (llm_batching.check_k,):
        raises_naming(coefficient, f, kk)
    raises_naming(coefficient, llm_batching.batch_time, b, l, kk)
    raises_naming(coefficient, llm_batching.throughput, b, law, kk)
    raises_naming("k", llm_batching.check_k, k[:3])
    raises_naming("strategy", llm_batching.stability_limit, "other", law, k)
    raises_naming("b_limit", llm_batching.optimal_batch_size, law, k, 0)


# One departure chain per point (64-128 states here, ~10-50 ms) and, without a cap (one
# case in four), a stability scan over 400 batch sizes up to 10^6 in every call (~0.1 s).
@fuzz(40, 4)
@given(LLM_LAWS, K_COEFFICIENTS, st.one_of(*[st.integers(1, 16)] * 3, st.none()),
       st.lists(rho(), min_size=4, max_size=4), st.data())
def test_llm_dynamic(law, k, b_max, rho, data):
    """dynamic_solution, dynamic_wait, dynamic_sojourn, the uncapped stability limit,
    recommended_b_max, best_fixed_batch_size."""
    name, law = law
    limit = llm_batching.stability_limit("dynamic", law, k, b_max=b_max)
    assert not math.isnan(limit) and limit >= 0
    lam = at_load(np.array(rho), limit)
    unstable = lam >= limit
    sols = [llm_batching.dynamic_solution(float(x), law, k, b_max, max_states=128) for x in lam]
    for sol, bad_load in zip(sols, unstable):
        assert_no_nan(sol)
        assert sol.stable == (not bad_load)
        assert (sol.mean_wait == np.inf) == (bad_load or not sol.converged)
        assert np.isfinite(sol.mean_sojourn) == np.isfinite(sol.mean_wait)
    tally(llm_batching.dynamic_solution, lam.size)
    solved = np.array([s.converged and s.stable for s in sols])
    few = lam[solved | unstable][:2]            # converged chains are cached by nothing: cost
    for f in (llm_batching.dynamic_wait, llm_batching.dynamic_sojourn):
        v = f(few, law, k, b_max)
        assert_inf_iff(v, few >= limit, f.__name__)
        tally(f, few.size)
    x = float(lam[0]) if np.isfinite(lam[0]) else 0.0
    best, soj = llm_batching.recommended_b_max(x, law, k, (1, 2, 4), max_states=128)
    assert best in (0, 1, 2, 4) and (best == 0) == (soj == np.inf)
    b = llm_batching.best_fixed_batch_size(x, law, k, 8)
    assert 0 <= b <= 8
    if b:
        assert x < llm_batching.throughput(b, law, k)
    tally(llm_batching.recommended_b_max)
    tally(llm_batching.best_fixed_batch_size)
    kk, coefficient = bad_k(data, k)
    raises_naming(coefficient, llm_batching.dynamic_solution, x, law, kk, b_max)
    bad_lam = data.draw(invalid(LAM_PER_S), label="bad lam")
    for f in (llm_batching.dynamic_wait, llm_batching.dynamic_sojourn,
              llm_batching.dynamic_solution, llm_batching.recommended_b_max,
              llm_batching.best_fixed_batch_size):
        raises_naming("lam", f, bad_lam, law, k)
    raises_naming("b_max", llm_batching.dynamic_solution, x, law, k,
                  data.draw(invalid(B_MAX), label="bad b_max"))
    raises_naming("max_states", llm_batching.dynamic_solution, x + 1e-9, law, k, 4, 1)
    raises_naming("candidates", llm_batching.recommended_b_max, x, law, k, (0, 2))
    raises_naming("max_load", llm_batching.recommended_b_max, x, law, k, (1,), 1.5)
    raises_naming("b_search", llm_batching.best_fixed_batch_size, x, law, k, 0)


# ~5 ms a case (numba loops over n_jobs requests), POINTS loads an example.
@fuzz(1000, POINTS)
@given(LLM_LAWS, K_COEFFICIENTS, st.sampled_from(llm_batching_sim.STRATEGIES),
       st.integers(1, 32), b_maxes(high=64), loads(), st.integers(1, 300),
       st.one_of(st.none(), valid(LLM_KV_CAPACITY)), valid(LLM_PROMPT_TOKENS, high=1e4),
       st.sampled_from(["realised", "mean"]), st.one_of(st.none(), st.integers(0, 400)),
       st.integers(0, 2 ** 32), st.data())
def test_llm_simulate(law, k, strategy, b, b_max, rho, n_jobs, kv, prompt, batch_time, warmup,
                      seed, data):
    """llm_batching.simulate (and llm_batching_sim.simulate behind it), every strategy."""
    name, law = law
    if batch_time == "mean" and (strategy in ("elastic", "continuous")
                                 or strategy == "dynamic" and (b_max is None or b_max == np.inf)):
        batch_time = "realised"
    cap = llm_batching.stability_limit(strategy, law, k, b=b, b_max=b_max if strategy != "dynamic"
                                       else (b_max or 64), kv_capacity_tokens=kv,
                                       prompt_tokens=prompt)
    kw = dict(dist=law, k=k, b=b, b_max=b_max, n_jobs=n_jobs, seed=seed, kv_capacity_tokens=kv,
              prompt_tokens=prompt, batch_time=batch_time, warmup_jobs=warmup)
    for lam in at_load(rho, cap):
        if not 0 < lam < np.inf:
            raises_naming("lam", llm_batching.simulate, strategy, lam, **kw)
            continue
        r = llm_batching.simulate(strategy, lam, **kw, return_records=True)
        assert_no_nan(r, allowed=("start", "finish"))   # documented: requests never served
        assert r.mean_sojourn >= r.mean_wait >= -1e-9 * max(1.0, r.mean_sojourn)
        # (times as large as 1e11 s at λ = 1e-9·capacity round the busy fraction)
        done = r.records.finish[np.isfinite(r.records.finish)]
        rounding = 1e-12 * done.max() / r.mean_sojourn if done.size else 0.0
        assert 0 <= r.utilization <= 1 + 1e-9 + rounding
        tally(llm_batching.simulate)
        tally(llm_batching_sim.simulate)
    params = dict(lam=1.0, b=b, b_max=b_max, n_jobs=n_jobs, kv_capacity_tokens=kv or 1e4,
                  prompt_tokens=prompt, warmup_jobs=warmup or 0)
    p, bad = corrupt(data, params, {**LLM_DOMAINS, "n_jobs": N_JOBS, "warmup_jobs": WARMUP})
    p.pop("l", None)
    rejects((llm_batching_sim.simulate,), p, bad, strategy="fixed" if bad == "b" else strategy,
            dist=law, k=k, seed=seed)
    raises_naming("strategy", llm_batching.simulate, "other", 1.0, law, k)
    raises_naming("batch_time", llm_batching.simulate, strategy, 1.0, law, k, b=b,
                  batch_time="other")


# compare_strategies solves two chains (up to 2048 states: 15 s near saturation, so the
# stable loads stay at most half the reference throughput) and simulates four strategies.
@fuzz(4)
@given(LLM_LAWS, K_COEFFICIENTS, st.one_of(st.floats(0.01, 0.5), st.sampled_from([1.0, 1.5])),
       st.one_of(st.none(), st.integers(1, 16)),
       st.one_of(st.none(), valid(LLM_KV_CAPACITY)))
def test_llm_compare(law, k, rho, b, kv):
    """compare_strategies: every strategy at one load, no NaN (inf where unstable)."""
    name, law = law
    ref = float(llm_batching.throughput(b or 4, law, k))
    lam = float(at_load(rho, ref)) if np.isfinite(rho) else 10 * ref
    out = llm_batching.compare_strategies(lam, law, k, b, n_jobs=500, b_search=8,
                                          kv_capacity_tokens=kv)
    assert_no_nan(out)
    assert set(out) == {"dynamic", "dynamic_capped", "fixed", "fixed_realised", "elastic",
                        "continuous"}
    tally(llm_batching.compare_strategies)
    raises_naming("lam", llm_batching.compare_strategies, -1.0, law, k, b)


# paper_comparison runs compare_strategies for both laws of §V-C with the throughput-
# optimal b up to 1024 and b* up to 64 (E[L_b] for each): ~1-3 s a case, but 15-30 s where
# a drawn k puts the load just below the uncapped dynamic limit (a 2048-state chain).  So
# only explicit cases: the preset's k, and extreme coefficients beyond and below capacity.
@settings(FUZZ, phases=[Phase.explicit])
@given(K_COEFFICIENTS, st.floats(0.01, 1.5), st.one_of(st.none(), valid(LLM_KV_CAPACITY)))
@example((0.06, 0.126, 0.0003, 0.02269), 0.3, 62720.0)      # presets/llm_batching
@example((10.0, 0.0, 0.1, 1.0), 1.5, None)
@example((1e-9, 100.0, 0.0, 0.0), 0.05, 1.0)
def test_llm_paper_comparison(k, rho, kv):
    """paper_comparison (§V-C): a row per law and strategy, no NaN (inf where unstable)."""
    rows = llm_batching.paper_comparison(k, loads=(rho,), n_jobs=100, kv_capacity_tokens=kv)
    assert_no_nan(rows)
    assert {r["law"] for r in rows} == set(llm_batching.paper_laws())
    tally(llm_batching.paper_comparison)


# ============================================================ engine.pipeline

PIPE_DOMAINS = {"lam": LAM, "mu": PIPE_MU, "mu_cpu": PIPE_MU_CPU, "mu_mem": PIPE_MU_MEM,
                "mu_cu": PIPE_MU_CU, "K": PIPE_K, "c": PIPE_C}


def check_station(st_, lam, unstable=None):
    """Station measures: no NaN, probabilities in [0, 1]; M/M/1 inf exactly when λ ≥ μ."""
    assert_no_nan(st_)
    if unstable is None:                          # a finite station is always stable
        unstable = np.zeros(np.shape(lam), dtype=bool)
    for field in ("L", "Lq", "W", "Wq"):
        assert_inf_iff(getattr(st_, field), unstable, field)
    assert np.all((st_.p_block >= 0) & (st_.p_block <= 1))
    assert np.all(np.isfinite(st_.throughput) & (st_.throughput >= 0))


@FUZZ_VECTOR
@given(valid(PIPE_MU), valid(PIPE_MU_CPU), valid(PIPE_MU_MEM), valid(PIPE_MU_CU),
       valid(PIPE_C, high=256), st.integers(0, 256), loads(), st.data())
def test_pipeline_stations(mu, mu_cpu, mu_mem, mu_cu, c, extra, rho, data):
    """mm1, mm1k, mmcc, mmck and the naive decomposition (tandem_independent)."""
    K = c + extra
    lam = at_load(rho, mu)
    check_station(pipeline.mm1(lam, mu), lam, lam >= mu)
    for st_ in (pipeline.mm1k(lam, mu, K), pipeline.mmcc(lam, mu, c), pipeline.mmck(lam, mu, c, K)):
        check_station(st_, lam)
    lam_t = at_load(rho, mu_cpu)
    naive = pipeline.tandem_independent(lam_t, mu_cpu, mu_mem, mu_cu, K, c)
    assert_no_nan(naive)
    unstable = lam_t >= mu_cpu
    assert np.array_equal(naive.stable, ~unstable)
    for field in ("l_cpu", "w_cpu"):
        assert_inf_iff(getattr(naive, field), unstable, field)
    for f in (pipeline.mm1, pipeline.mm1k, pipeline.mmcc, pipeline.mmck,
              pipeline.tandem_independent):
        tally(f, POINTS)
    params = dict(lam=lam, mu=mu, mu_cpu=mu_cpu, mu_mem=mu_mem, mu_cu=mu_cu, K=K, c=c)
    p, bad = corrupt(data, params, PIPE_DOMAINS)
    rejects((pipeline.mm1, pipeline.mm1k, pipeline.mmcc, pipeline.mmck,
             pipeline.tandem_independent), p, bad)
    raises_naming("K", pipeline.mmck, lam, mu, c + 1, c)          # K < c


# One phase space per (K, c) and one dense QBD solve per call (N ≤ 25 + 14 phases here:
# ~10 ms for all POINTS loads).
@FUZZ_VECTOR
@given(valid(PIPE_MU_CPU), valid(PIPE_MU_MEM), valid(PIPE_MU_CU), st.integers(1, 4),
       st.integers(1, 4), st.sampled_from(pipeline.BLOCKING), loads(), st.data())
@example(1.0, 1.0, 0.5, 1, 1, "before", np.full(POINTS, 0.999), None).via("K = c = 1")
def test_pipeline_tandem(mu_cpu, mu_mem, mu_cu, K, c, blocking, rho, data):
    """tandem (matrix-geometric) and capacity: stable exactly below capacity, CPU queue and
    totals inf beyond it, every other measure finite."""
    cap = pipeline.capacity(mu_cpu, mu_mem, mu_cu, K, c, blocking)
    assert np.isfinite(cap) and cap > 0
    # capacity broadcasts over the rates; solve_phases takes one point
    scaled = mu_cu * np.geomspace(1e-3, 1e3, POINTS)
    caps = pipeline.capacity(mu_cpu, mu_mem, scaled, K, c, blocking)
    assert np.all(np.isfinite(caps) & (caps > 0))
    # never above a stage's own rate, where the rates are within 1e6 of each other
    # (test_pipeline_capacity_never_exceeds_a_stage: beyond)
    rates = np.stack(np.broadcast_arrays(mu_cpu, mu_mem, scaled))
    near = rates.max(axis=0) <= 1e6 * rates.min(axis=0)
    bound = np.minimum(min(mu_cpu, mu_mem), c * scaled)
    assert np.all(caps[near] <= bound[near] * (1 + 1e-9))
    for m in scaled:
        n = pipeline.solve_phases(mu_cpu, mu_mem, m, K, c, blocking)
        assert isinstance(n, int) and K + 1 <= n <= (K + 1) * (c + 1) + K + c + 2
    lam = at_load(rho, cap)
    t = pipeline.tandem(lam, mu_cpu, mu_mem, mu_cu, K, c, blocking)
    assert_no_nan(t)
    unstable = lam >= cap
    assert np.array_equal(t.stable, ~unstable)
    for field in ("l_cpu", "w_cpu", "l_total", "w_total"):
        assert_inf_iff(getattr(t, field), unstable, field)
    for field in ("l_mem", "l_cu", "w_mem", "w_cu", "throughput", "p_cpu_blocked",
                  "p_mem_blocked"):
        assert np.all(np.isfinite(getattr(t, field))), field
    tally(pipeline.tandem, POINTS)
    tally(pipeline.capacity, POINTS + 1)
    tally(pipeline.solve_phases, POINTS)
    if data is None:
        return
    params = dict(lam=lam, mu_cpu=mu_cpu, mu_mem=mu_mem, mu_cu=mu_cu, K=K, c=c)
    p, bad = corrupt(data, params, PIPE_DOMAINS)
    rejects((pipeline.tandem, pipeline.capacity, pipeline.solve_phases), p, bad,
            blocking=blocking)
    raises_naming("blocking", pipeline.tandem, lam, mu_cpu, mu_mem, mu_cu, K, c, "never")


# One N×N solve a point (~3 ms for POINTS points).
@FUZZ_VECTOR
@given(valid(PIPE_MU_CPU), valid(PIPE_MU_MEM), valid(PIPE_MU_CU), st.integers(1, 4),
       st.integers(1, 4), st.sampled_from(pipeline.BLOCKING))
@example(1.0, 1.0, 1e-8, 1, 1, "after")
def test_pipeline_capacity_never_exceeds_a_stage(mu_cpu, mu_mem, mu_cu, K, c, blocking):
    """capacity ≤ min(μ_cpu, μ_mem, c·μ_cu) (its docstring) at any spread of the rates,
    and the saturated flow is the same through the three stages to 1e-9 relative: each
    is a sum over the stationary vector, so this checks that vector's relative accuracy
    in its tiny entries (a linear solve overshot c·μ_cu by 3e-6 at rates 1e10 apart)."""
    scaled = mu_cu * np.geomspace(1e-3, 1e3, POINTS)
    caps = pipeline.capacity(mu_cpu, mu_mem, scaled, K, c, blocking)
    assert np.all(caps <= np.minimum(min(mu_cpu, mu_mem), c * scaled) * (1 + 1e-9))
    ph = pipeline._phases(K, c, blocking)
    rates = np.stack(np.broadcast_arrays(mu_cpu, mu_mem, scaled), axis=1)
    theta, _ = pipeline._saturation(ph, rates)
    flow = theta[:, ph.src] * rates[:, ph.kind] * ph.mult        # (points, events)
    # every job has one service completion at each stage (held or passed on)
    through = [flow[:, ph.kind == k].sum(axis=1) for k in (0, 1, 2)]
    for other in through[1:]:
        assert close(through[0], other, rtol=1e-9), (through[0], other)


SPEC_SCALE = st.floats(0.01, 100.0)


@FUZZ_VECTOR
@given(st.sampled_from(sorted(presets.gpu_specs())),
       st.sampled_from(sorted(presets.pipeline_workloads())), sweep(SPEC_SCALE),
       st.floats(0.01, 1.0), st.floats(1.0, 1e3), st.integers(1, 8),
       st.sampled_from(pipeline.BLOCKING), st.data())
def test_pipeline_rates(spec_id, work_id, scales, fraction, reuse, units, blocking, data):
    """rates_from_specs on scaled datasheets and workloads, group_compute_units, and the
    frozen rates' own tandem (grouped to ``units`` servers so the solve stays small)."""
    spec0, work0 = presets.gpu_specs()[spec_id], presets.pipeline_workloads()[work_id]
    for s_ in scales:
        spec = dataclasses.replace(spec0, memory_bandwidth_GB_per_s=spec0.memory_bandwidth_GB_per_s
                                   * s_, host_link_bandwidth_GB_per_s=
                                   spec0.host_link_bandwidth_GB_per_s / s_)
        work = dataclasses.replace(work0, flops_per_byte=work0.flops_per_byte * s_,
                                   parallel_fraction=fraction, reuse_factor=reuse)
        try:
            rates = pipeline.rates_from_specs(spec, work)
        except ValueError as err:              # documented: the jobs must fit in memory
            assert "memory_slots" in str(err)
            continue
        assert_no_nan(rates)
        assert min(rates.mu_cpu, rates.mu_mem, rates.mu_cu) > 0
        grouped = pipeline.group_compute_units(rates, units)
        assert close(grouped.c * grouped.mu_cu, rates.c * rates.mu_cu, 1e-12)
        tally(pipeline.rates_from_specs)
        tally(pipeline.group_compute_units)
    cap = float(pipeline.capacity(grouped.mu_cpu, grouped.mu_mem, grouped.mu_cu,
                                  min(grouped.K, 4), grouped.c, blocking))
    small = dataclasses.replace(grouped, K=min(grouped.K, 4))
    t = small.tandem(cap * np.array([0.5, 1.0, 2.0]), blocking)
    assert_no_nan(t)
    assert list(t.stable) == [True, False, False]
    tally(pipeline.PipelineRates)
    field = data.draw(st.sampled_from(["parallel_fraction", "reuse_factor", "flops_per_byte",
                                       "job_size_bytes", "precision"]))
    bad = {"parallel_fraction": 1.5, "reuse_factor": 0.5, "flops_per_byte": -1.0,
           "job_size_bytes": 0, "precision": "fp8"}[field]
    raises_naming(field, pipeline.rates_from_specs, spec0,
                  dataclasses.replace(work0, **{field: bad}))
    raises_naming("c", pipeline.group_compute_units, grouped, 0)


# ~4 ms a case (numba loop over n_jobs jobs), POINTS loads an example.
@fuzz(1000, POINTS)
@given(valid(PIPE_MU_CPU, high=1e3), valid(PIPE_MU_MEM, high=1e3), valid(PIPE_MU_CU, high=1e3),
       st.integers(1, 16), st.integers(1, 16), st.sampled_from(pipeline.BLOCKING), loads(),
       st.integers(2, 300), st.one_of(st.none(), st.integers(0, 400)), st.integers(0, 2 ** 32),
       st.data())
def test_simulate_tandem(mu_cpu, mu_mem, mu_cu, K, c, blocking, rho, n_jobs, warmup, seed,
                         data):
    """simulate_tandem at stable and unstable loads (a finite run is well defined)."""
    cap = min(mu_cpu, mu_mem, c * mu_cu)
    for lam in at_load(rho, cap):
        kw = dict(lam=lam, mu_cpu=mu_cpu, mu_mem=mu_mem, mu_cu=mu_cu, K=K, c=c,
                  blocking=blocking, n_jobs=n_jobs, seed=seed, warmup_jobs=warmup)
        if not 0 < lam < np.inf:
            raises_naming("lam", pipeline_sim.simulate_tandem, **kw)
            continue
        r = pipeline_sim.simulate_tandem(**kw)
        assert_no_nan(r)
        assert r.w_total >= 0 and r.throughput >= 0
        assert 0 <= r.p_cpu_blocked <= 1 + 1e-9 and 0 <= r.p_mem_blocked <= 1 + 1e-9
        tally(pipeline_sim.simulate_tandem)
    params = dict(lam=1.0, mu_cpu=mu_cpu, mu_mem=mu_mem, mu_cu=mu_cu, K=K, c=c, n_jobs=n_jobs,
                  warmup_jobs=warmup or 0)
    p, bad = corrupt(data, params, {**PIPE_DOMAINS, "n_jobs": N_JOBS, "warmup_jobs": WARMUP})
    rejects((pipeline_sim.simulate_tandem,), p, bad, blocking=blocking)


# ============================================================ engine.sla

SLA_DOMAINS = {"lam": LAM, "mu": MU, "n": N_BACKENDS, "d1": NET_DELAY, "d2": NET_DELAY,
               "delta": NET_DELAY, "p": PERCENTILE, "rt": RESPONSE_TARGET, "t": RESPONSE_TARGET,
               "percentile": PERCENTILE}
DELAYS = valid(NET_DELAY, high=1.0)
# (a retry probability within 1e-3 of 1 with RT/c ~ 1e10 needs ~1e10 terms of eq 7: hours)
PROBABILITY = st.one_of(st.floats(0.0, 0.999), st.sampled_from([0.0, 0.999, 1.0]))


@FUZZ_VECTOR
@given(valid(MU), valid(N_BACKENDS, high=10 ** 4), loads(), DELAYS, DELAYS, DELAYS,
       valid(PERCENTILE), valid(RESPONSE_TARGET, high=1e3), service_laws(),
       st.one_of(st.none(), PROBABILITY), st.data())
def test_sla_closed_forms(mu, n, rho, d1, d2, delta, p, rt, service, q, data):
    """Swayam's eqs 1 and 7 (quantile and printed), Erlang C and the M/M/n closed forms:
    inf percentiles and 0 probabilities exactly at λ ≥ nμ."""
    name, service, mean_s = service
    lam = at_load(rho, n * mu)
    unstable = lam >= n * mu
    c = d1 + d2 + delta
    args = dict(lam=lam, mu=mu, n=n, d1=d1, d2=d2, delta=delta)
    w = sla.waiting_percentile(p, **args, p_retry_busy=q)
    assert_inf_iff(w, unstable | ((q == 1) & ~unstable & (lam > 0)
                                  & (np.log1p(-p / 100) < np.log(np.where(lam > 0, lam / (n * mu),
                                                                         1.0)))), "waiting")
    printed = sla.waiting_percentile(p, **args, printed=True)
    assert_no_nan(printed)
    assert_inf_iff(printed, unstable, "waiting_percentile(printed=True)")
    cdf = sla.response_cdf(rt, **args, service=service, p_retry_busy=q)
    assert_no_nan(cdf)
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all(cdf[unstable] == 0)
    tally(sla.response_cdf, POINTS)
    offered = lam / mu
    erl = sla.erlang_c(n, offered)
    assert_no_nan(erl)
    assert np.all((erl >= 0) & (erl <= 1)) and np.all(erl[offered >= n] == 1)
    for f in (sla.mmn_response_cdf, sla.mmn_waiting_cdf):
        v = f(rt, lam, mu, n)
        assert_no_nan(v)
        assert np.all((v >= 0) & (v <= 1)) and np.all(v[unstable] == 0)
    wq = sla.mmn_waiting_percentile(p, lam, mu, n)
    assert_inf_iff(wq, unstable, "mmn_waiting_percentile")
    assert np.all(wq >= 0)
    grid = np.arange(1, POINTS + 1)
    within = np.sort(np.where(np.isfinite(lam), lam, 0) / np.max(np.where(np.isfinite(lam),
                                                                         lam, 1)))
    best = sla.fewest_meeting(grid, within, p)
    assert best == np.inf or best in grid
    for f in (sla.waiting_percentile, sla.erlang_c, sla.mmn_response_cdf, sla.mmn_waiting_cdf,
              sla.mmn_waiting_percentile, sla.fewest_meeting):
        tally(f, POINTS)
    kinds = {kind: sla.service_law(kind, mean_s) for kind in sla.SERVICE_LAWS}
    assert close(kinds["exponential"].mean(), mean_s) and kinds["deterministic"] == mean_s
    assert close(kinds["lognormal"].mean(), mean_s, 1e-9)
    hist = sla.empirical_service(np.abs(lam[np.isfinite(lam)]) / max(n * mu, 1e-300) + 1e-3)
    assert_no_nan(hist.mean())
    for f in (sla.service_law, sla.empirical_service):
        tally(f)
    params = dict(**args, p=p, rt=rt, t=rt, percentile=p)
    pp, bad = corrupt(data, params, SLA_DOMAINS)
    rejects((sla.waiting_percentile,), pp, bad)
    rejects((sla.response_cdf,), pp, bad, service=service)
    rejects((sla.mmn_response_cdf, sla.mmn_waiting_cdf, sla.mmn_waiting_percentile), pp, bad)
    raises_naming("kind", sla.service_law, "weibull", mean_s)
    raises_naming("mean_s", sla.service_law, "exponential", 0.0)
    raises_naming("sigma", sla.service_law, "lognormal", mean_s, 0.0)
    raises_naming("samples_s", sla.empirical_service, [1.0, math.nan])
    raises_naming("p_retry_busy", sla.response_cdf, rt, lam, mu, n, d1, d2, delta, service,
                  p_retry_busy=1.5)


# Each solver searches (doubling and bisection) over calls of its closed form: ~5 ms
# (min_backends) to ~0.2 s (response_percentile: ~60 evaluations of eq 7) a call;
# retry_busy_probability is a sparse matrix exponential over ~n + 37/ln(1/ρ) states.
@fuzz(60, 4)
@given(valid(MU, high=1e4), valid(N_BACKENDS, high=200), st.lists(rho(), min_size=4, max_size=4),
       valid(NET_DELAY, high=0.01), valid(NET_DELAY, high=0.01), valid(NET_DELAY, high=0.01),
       valid(PERCENTILE), service_laws(), st.data())
def test_sla_solvers(mu, n, rho, d1, d2, delta, p, service, data):
    """response_percentile, mmn_response_percentile, min_backends, erlang_c_min_servers and
    retry_busy_probability: inf exactly at λ ≥ nμ (percentiles) or when infeasible."""
    name, service, mean_s = service
    mu = max(mu, 1e-3)
    lam = at_load(np.array(rho), n * mu)
    unstable = lam >= n * mu
    rt = 10 * (mean_s + d1) + 1.0 / mu
    args = dict(lam=lam, mu=mu, n=n, d1=d1, d2=d2, delta=delta)
    r = sla.response_percentile(p, **args, service=service)
    assert_no_nan(r)
    assert np.all(r[unstable] == np.inf) and np.all(r >= 0)
    r_mmn = sla.mmn_response_percentile(p, lam, mu, n)
    assert_inf_iff(r_mmn, unstable, "mmn_response_percentile")
    need = sla.min_backends(lam, mu, rt, p, d1, d2, delta, service)
    assert_no_nan(need)
    assert np.all((need >= 1) & (need >= np.floor(np.where(np.isfinite(lam), lam, 0) / mu)))
    need_c = sla.erlang_c_min_servers(lam, mu, rt, p)
    assert_no_nan(need_c)
    assert np.all(need_c[np.isinf(lam)] == np.inf)
    # its cost grows with c·nμ (matrix-exponential steps) and 1/(1 − ρ) (states): the
    # delays are scaled to c·nμ ≤ 100 and ρ kept below 0.99
    shrink = min(1.0, 100.0 / ((d1 + d2 + delta) * n * mu)) if d1 + d2 + delta > 0 else 1.0
    x = float(lam[0]) if rho[0] < 0.99 else 0.5 * n * mu
    q = sla.retry_busy_probability(x, mu, n, d1 * shrink, d2 * shrink, delta * shrink)
    assert_no_nan(q)
    assert 0 <= q <= 1
    tally(sla.retry_busy_probability)
    for f in (sla.response_percentile, sla.mmn_response_percentile, sla.min_backends,
              sla.erlang_c_min_servers):
        tally(f, lam.size)
    params = dict(**args, p=p, rt=rt, percentile=p)
    pp, bad = corrupt(data, params, SLA_DOMAINS)
    rejects((sla.response_percentile, sla.min_backends), pp, bad, service=service)
    rejects((sla.mmn_response_percentile, sla.erlang_c_min_servers,
             sla.retry_busy_probability), pp, bad)


# gpu_service_rate bisects up to 200 exact E[W] solves (a banded solve each with a finite
# b_max: 0.2-1 s a call), max_rate_for_mean_latency ~20 plus a root search.  Targets stay
# within 100 lone-job latencies: a target 5000 α away puts the root within 1e-4 of
# capacity, where each of the 200 solves iterates the series 20,000 times (12 s a call).
@fuzz(50)
@given(valid(ALPHA, low=1e-3, high=10.0), valid(TAU0, high=10.0),
       st.one_of(st.none(), st.integers(1, 4)), st.floats(0.5, 100.0), st.data())
def test_gpu_operating_point(alpha, tau0, b_max, factor, data):
    """gpu_service_rate (requests/s) and max_rate_for_mean_latency (per ms): the largest load
    whose exact E[W] meets the target, 0 when even a lone job misses it or just meets it."""
    target = factor * (alpha + tau0)
    rate = sla.gpu_service_rate(alpha, tau0, target, b_max)
    assert_no_nan(rate)
    assert 0 <= rate <= 1000 * batching.capacity(alpha, tau0, b_max) * (1 + 1e-9)
    # E[W] rises from α + τ0 at λ = 0: a target at α + τ0 exactly is met only with no load
    # (FUZZ_FULL found factor = 1 asserted the other way)
    if alpha + tau0 >= target:
        assert rate == 0
    elif alpha + tau0 < target * (1 - 1e-9):
        assert rate > 0
    best = operating_point.max_rate_for_mean_latency(target, alpha, tau0, b_max)
    assert 0 <= best < batching.capacity(alpha, tau0, b_max)
    if best > 0:      # (brentq's rtol 1e-10 in λ leaves ~1e-5 in E[W] right at capacity)
        assert batching.mean_latency(best, alpha, tau0, b_max) <= target * (1 + 1e-4)
    tally(sla.gpu_service_rate)
    tally(operating_point.max_rate_for_mean_latency)
    name = data.draw(st.sampled_from(["alpha", "tau0", "target"]))
    domain = {"alpha": ALPHA, "tau0": TAU0, "target": LATENCY_TARGET_MS}[name]
    bad = data.draw(invalid(domain))
    args = {"alpha": alpha, "tau0": tau0, "target": target, name: bad}
    raises_naming({"alpha": "alpha_ms", "tau0": "tau0_ms"}.get(name, "latency_target_ms"),
                  sla.gpu_service_rate, args["alpha"], args["tau0"], args["target"], b_max)
    raises_naming({"target": "target_ms"}.get(name, name),
                  operating_point.max_rate_for_mean_latency, args["target"], args["alpha"],
                  args["tau0"], b_max)


@FUZZ_VECTOR
@given(valid(LAM, high=1e4, allow_inf=False), sweep(valid(INTERVAL, high=1e4)),
       st.floats(1.0, 48.0), PROBABILITY, st.integers(0, 5), valid(HEADROOM, high=10.0),
       st.integers(0, 2 ** 32), valid(MU, low=1.0, high=1e4), valid(PERCENTILE, high=99.9),
       valid(PROVISIONING_DELAY, high=1e4), valid(COST), st.data())
def test_sla_traces(mean_rate, intervals, hours, amplitude, spikes, headroom, seed, mu, p, delay,
                    cost, data):
    """diurnal_trace, trace_rates (rates and timestamps) and plan_replicas."""
    # traces of up to 10^4 intervals (cost); beyond MAX_TRACE_INTERVALS a ValueError
    intervals = [i for i in intervals if hours * 3600 / i <= 1e4] or [60.0]
    raises_naming("interval_s", sla.diurnal_trace, mean_rate, 24.0, 1e-4)   # 8.6e8 intervals
    for interval in intervals:
        trace = sla.diurnal_trace(mean_rate, hours, interval, amplitude, spikes, seed=seed)
        assert_no_nan(trace)
        assert np.all((trace >= 0) & np.isfinite(trace))
        rates = sla.trace_rates(trace, interval)
        assert np.array_equal(rates, trace)
        tally(sla.diurnal_trace)
        tally(sla.trace_rates)
    stamps = np.sort(np.random.default_rng(seed).uniform(0, 10 * intervals[0], 50))
    binned = sla.trace_rates(stamps, intervals[0], "timestamps")
    assert np.isclose(binned.sum() * intervals[0], stamps.size)
    rt = 20.0 / mu
    plan = sla.plan_replicas(trace[:48], mu, rt, p, interval_s=intervals[-1],
                             provisioning_delay=delay, headroom=headroom, cost_per_gpu_hour=cost)
    assert_no_nan(plan)
    assert np.all(plan.serving <= plan.needed.max()) and plan.cost >= 0
    tally(sla.plan_replicas)
    domains = {"mean_rate": LAM, "interval_s": INTERVAL, "n_spikes": WARMUP,
               "spike_factor": HEADROOM, "noise": HEADROOM}
    name = data.draw(st.sampled_from(sorted(domains)))
    bad = data.draw(invalid(domains[name]))
    if name == "mean_rate" and bad == math.inf:
        bad = -1.0
    raises_naming(name, sla.diurnal_trace, **{"mean_rate": mean_rate, name: bad})
    raises_naming("trace", sla.trace_rates, [1.0, math.nan], 60.0)
    raises_naming("trace", sla.trace_rates, [1.0, -1.0], 60.0)
    raises_naming("trace", sla.trace_rates, [2.0, 1.0], 60.0, "timestamps")
    raises_naming("kind", sla.trace_rates, [1.0], 60.0, "other")
    for name, value in (("mu", 0.0), ("headroom", -1.0), ("provisioning_delay", math.nan),
                        ("cost_per_gpu_hour", -1.0), ("min_replicas", 0),
                        ("interval_s", 0.0)):
        raises_naming(name, sla.plan_replicas, trace[:4], **{"mu": mu, "rt": rt, "percentile": p,
                                                           name: value})


# ============================================================ engine.dispatch_sim

# ~5 ms a case (numba loops over n_requests), POINTS loads an example.
@fuzz(1000, POINTS)
@given(st.sampled_from(dispatch_sim.POLICIES), service_laws(), valid(N_BACKENDS, high=64),
       DELAYS, DELAYS, DELAYS, loads(), st.integers(1, 300),
       st.one_of(st.none(), st.integers(0, 400)), st.integers(0, 2 ** 32), st.data())
def test_dispatch_sim(policy, service, n, d1, d2, delta, rho, n_requests, warmup, seed, data):
    """simulate_dispatch and simulate_records for every policy: a load at or beyond n/E[S]
    and retries without a delay are the documented ``ValueError``."""
    name, service, mean_s = service
    cap = n / (float(service.mean()) if hasattr(service, "mean") else service)   # n/E[S]
    c = d1 + d2 + delta
    for lam in at_load(rho, cap):
        kw = dict(policy=policy, lam=lam, service=service, n=n, d1=d1, d2=d2, delta=delta,
                  n_requests=n_requests, seed=seed)
        if not 0 < lam < cap or policy == "random_retry" and c == 0:
            with pytest.raises(ValueError):
                dispatch_sim.simulate_dispatch(**kw)
            continue
        if policy == "random_retry" and c < 1e-3 * n / cap:
            continue        # ~E[S]/c retries a request (~1e7 at c = 1e-8 s): minutes (cost)
        r = dispatch_sim.simulate_dispatch(**kw, warmup_requests=warmup)
        assert_no_nan(r, allowed=("p_busy_retry",))     # documented: NaN when no retries
        assert r.mean_response >= r.mean_waiting >= -1e-12 and r.mean_attempts >= 1
        assert 0 <= r.fraction_within(r.p50_response) <= 1
        assert r.response_percentile(50) >= 0 and r.waiting_percentile(99) >= 0
        assert 0 <= r.waiting_fraction_within(0.0) <= 1
        rec = dispatch_sim.simulate_records(**kw)
        assert_no_nan(rec)
        tally(dispatch_sim.simulate_dispatch)
        tally(dispatch_sim.simulate_records)
    params = dict(lam=0.5 * cap, n=n, d1=d1, d2=d2, delta=delta + 1e-3, n_requests=n_requests,
                  warmup_requests=warmup or 0)
    p, bad = corrupt(data, params, {"lam": LAM, "n": N_BACKENDS, "d1": NET_DELAY,
                                    "d2": NET_DELAY, "delta": NET_DELAY,
                                    "n_requests": N_REQUESTS, "warmup_requests": WARMUP})
    rejects((dispatch_sim.simulate_dispatch, dispatch_sim.simulate_records), p, bad,
            policy=policy, service=service, seed=seed)
    raises_naming("policy", dispatch_sim.simulate_dispatch, "round_robin", 1.0, service, n)


# ============================================================ every public function has a case

ENGINE_MODULES = (batching, batch_chain, batching_curves, operating_point, sim, fit, presets,
                  token_laws, token_limit, mg1_patience, llm_batching, llm_batching_sim, pipeline,
                  pipeline_sim, sla, dispatch_sim)

# Public name -> the test that fuzzes it.  A result or data class (no arguments of its
# own to fuzz) names the test that builds and checks it and the function it comes from.
FUZZED = {
    batching: {
        "capacity": test_batching_capacity, "DynamicBatching": test_batching_capacity,
        "phi0": test_batching_closed_forms, "phi1": test_batching_closed_forms,
        "phi": test_batching_closed_forms,
        "energy_efficiency_bound": test_batching_closed_forms,
        "stationary": test_batching_exact_unlimited,
        "Stationary": (test_batching_exact_unlimited, "stationary"),
        "mean_latency": test_batching_exact_unlimited, "mean_wait": test_batching_exact_unlimited,
        "mean_batch_size": test_batching_exact_unlimited,
        "utilization": test_batching_exact_unlimited,
        "energy_efficiency": test_batching_exact_unlimited},
    batch_chain: {
        "unlimited_idle_weight": test_batching_exact_unlimited,
        "unlimited_moments": test_batching_exact_unlimited,
        "limited_solution": test_batching_exact_capped,
        "LimitedSolution": (test_batching_exact_capped, "limited_solution")},
    batching_curves: {
        "load_curves": test_batching_curves, "b_max_family": test_batching_curves,
        "LoadCurves": (test_batching_curves, "load_curves")},
    operating_point: {
        "cost_per_million": test_operating_point_costs_and_sweeps,
        "rate_seed": test_operating_point_costs_and_sweeps,
        "sweep_from_results": test_operating_point_costs_and_sweeps,
        "max_rate_for_p99": test_operating_point_costs_and_sweeps,
        "merge_delay_sweeps": test_operating_point_costs_and_sweeps,
        "RateSweep": (test_operating_point_costs_and_sweeps, "sweep_from_results"),
        "DelaySweep": (test_operating_point_costs_and_sweeps, "merge_delay_sweeps"),
        "simulate_rate": test_operating_point_simulated,
        "simulate_rates": test_operating_point_simulated,
        "sweep_queue_delay": test_operating_point_simulated,
        "max_rate_for_mean_latency": test_gpu_operating_point},
    sim: {
        "simulate_batching": test_simulate_batching, "simulate_records": test_simulate_batching,
        "summarize": test_simulate_batching,
        "SimRecords": (test_simulate_batching, "simulate_records"),
        "BatchingSimResult": (test_simulate_batching, "simulate_batching")},
    fit: {
        "linear_fit": test_fits, "fit_batch_profile": test_fits, "fit_token_latency": test_fits,
        "fit_token_latency_with_input": test_fits,
        "LinearFit": (test_fits, "linear_fit"), "BatchProfileFit": (test_fits, "fit_batch_profile"),
        "TokenLatencyFit": (test_fits, "fit_token_latency")},
    presets: {
        **{name: (test_presets, PRESET_LOADERS) for name in (
            "load_batch_profile", "batch_profiles", "load_token_latency_profile",
            "token_latency_profiles", "load_llm_batch_time", "llm_batch_time_presets",
            "load_gpu_spec", "gpu_specs", "load_pipeline_workload", "pipeline_workloads")},
        "BatchProfile": (test_presets, "load_one(path)"),
        "TokenLatencyProfile": (test_presets, "load_one(path)"),
        "LLMBatchTimePreset": (test_presets, "load_one(path)"),
        "GpuSpec": (test_presets, "load_one(path)"),
        "PipelineWorkload": (test_presets, "load_one(path)")},
    token_laws: {
        "lognormal": test_token_laws, "uniform": test_token_laws,
        "truncated_normal": test_token_laws, "token_cdf": test_token_laws,
        "token_pmf": test_token_laws, "token_quantile": test_token_laws,
        "sample_tokens": test_token_laws, "grid_top": test_token_laws,
        "binned_pmf": test_token_laws, "EmpiricalTokens": test_empirical_tokens,
        "empirical_from_csv": test_empirical_tokens},
    token_limit: {
        "clipped_token_moments": test_token_limit_moments,
        "mean_utility": test_token_limit_moments, "mean_wait": test_token_limit_moments,
        "utilization": test_token_limit_moments, "largest_stable_limit": test_token_limit_moments,
        "objective_v1": test_token_limit_moments, "objective_v2": test_token_limit_moments,
        "impatience": test_impatience, "ServiceLaw": test_impatience,
        "Impatience": (test_impatience, "impatience"),
        "limit_point": test_token_limit_answers, "limit_curves": test_token_limit_answers,
        "optimal_limit": test_token_limit_answers,
        "LimitPoint": (test_token_limit_answers, "limit_point"),
        "LimitCurves": (test_token_limit_answers, "limit_curves"),
        "OptimalLimit": (test_token_limit_answers, "optimal_limit"),
        "paper_comparison": test_token_paper_comparison,
        "PaperValue": (test_token_paper_comparison, "paper_comparison"),
        "simulate_token_queue": test_simulate_token_queue,
        "TokenQueueSimResult": (test_simulate_token_queue, "simulate_token_queue")},
    mg1_patience: {
        "mm1_deterministic_patience": test_patience_closed_forms,
        "md1_deterministic_patience": test_patience_closed_forms,
        "ServiceLaw": test_impatience},
    llm_batching: {
        "check_k": test_llm_batch_times, "expected_max_tokens": test_llm_batch_times,
        "batch_time": test_llm_batch_times, "mean_batch_time": test_llm_batch_times,
        "throughput": test_llm_batch_times, "optimal_batch_size": test_llm_batch_times,
        "stability_limit": test_llm_batch_times, "fixed_batch_wait": test_llm_batch_times,
        "fixed_batch_sojourn": test_llm_batch_times,
        "fixed_batch_wait_eq25": test_llm_batch_times,
        "fixed_batch_roots_eq25": test_llm_batch_times,
        "linear_bound_coefficients": test_llm_batch_times,
        "dynamic_wait_bound": test_llm_batch_times, "best_strategy": test_llm_batch_times,
        "paper_laws": test_llm_batch_times,
        "yang_phi0": test_batching_closed_forms, "yang_phi1": test_batching_closed_forms,
        "yang_phi": test_batching_closed_forms,
        "dynamic_solution": test_llm_dynamic, "dynamic_wait": test_llm_dynamic,
        "dynamic_sojourn": test_llm_dynamic, "recommended_b_max": test_llm_dynamic,
        "best_fixed_batch_size": test_llm_dynamic,
        "DynamicSolution": (test_llm_dynamic, "dynamic_solution"),
        "simulate": test_llm_simulate,
        "compare_strategies": test_llm_compare, "paper_comparison": test_llm_paper_comparison},
    llm_batching_sim: {
        "simulate": test_llm_simulate,
        "LLMSimResult": (test_llm_simulate, "simulate"),
        "LLMSimRecords": (test_llm_simulate, "return_records")},
    pipeline: {
        "mm1": test_pipeline_stations, "mm1k": test_pipeline_stations,
        "mmcc": test_pipeline_stations, "mmck": test_pipeline_stations,
        "tandem_independent": test_pipeline_stations,
        "Station": (test_pipeline_stations, "mmck"),
        "tandem": test_pipeline_tandem, "capacity": test_pipeline_tandem,  # and the xfail below
        "solve_phases": test_pipeline_tandem,
        "Tandem": (test_pipeline_tandem, "tandem"),
        "rates_from_specs": test_pipeline_rates, "group_compute_units": test_pipeline_rates,
        "PipelineRates": (test_pipeline_rates, "tandem")},
    pipeline_sim: {
        "simulate_tandem": test_simulate_tandem,
        "TandemSimResult": (test_simulate_tandem, "simulate_tandem")},
    sla: {
        "waiting_percentile": test_sla_closed_forms, "response_cdf": test_sla_closed_forms,
        "erlang_c": test_sla_closed_forms, "mmn_response_cdf": test_sla_closed_forms,
        "mmn_waiting_cdf": test_sla_closed_forms,
        "mmn_waiting_percentile": test_sla_closed_forms,
        "fewest_meeting": test_sla_closed_forms, "service_law": test_sla_closed_forms,
        "empirical_service": test_sla_closed_forms,
        "response_percentile": test_sla_solvers, "mmn_response_percentile": test_sla_solvers,
        "min_backends": test_sla_solvers, "erlang_c_min_servers": test_sla_solvers,
        "retry_busy_probability": test_sla_solvers,
        "gpu_service_rate": test_gpu_operating_point,
        "diurnal_trace": test_sla_traces, "trace_rates": test_sla_traces,
        "plan_replicas": test_sla_traces, "ReplicaPlan": (test_sla_traces, "plan_replicas")},
    dispatch_sim: {
        "simulate_records": test_dispatch_sim, "simulate_dispatch": test_dispatch_sim,
        "DispatchRecords": (test_dispatch_sim, "simulate_records"),
        "DispatchSimResult": (test_dispatch_sim, "simulate_dispatch")},
}


def public_names(module) -> set:
    """Functions and classes defined in ``module`` whose names do not start with ``_``."""
    return {name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == module.__name__}


@pytest.mark.parametrize("module", ENGINE_MODULES, ids=lambda m: m.__name__)
def test_every_public_function_is_fuzzed(module):
    """Each public function and class of each engine module has a fuzz test (``FUZZED``),
    and that test calls it (or, for a result class, the function that returns it)."""
    table, public = FUZZED[module], public_names(module)
    assert set(table) == public, (f"add a fuzz case to FUZZED[{module.__name__}] for "
                                  f"{sorted(public - set(table))}; "
                                  f"drop {sorted(set(table) - public)}")
    for name, entry in table.items():
        test, via = entry if isinstance(entry, tuple) else (entry, name)
        if isinstance(via, dict):           # called through a table of the test's module
            assert getattr(module, name) in [f for fs in via.values() for f in fs], name
            continue
        assert via in inspect.getsource(test), f"{test.__name__} does not call {via} ({name})"


def test_engine_modules_are_all_listed():
    """``ENGINE_MODULES`` covers every engine submodule but the domain declarations."""
    import engine
    assert {m.__name__.split(".")[-1] for m in ENGINE_MODULES} == set(engine.__all__) - {"params"}


def test_fuzzed_functions_ran():
    """Every function ``FUZZED`` maps to a test that ran in this session got valid cases
    there (a table entry is a claim; this checks it)."""
    for module, table in FUZZED.items():
        for name, entry in table.items():
            if isinstance(entry, tuple) or entry.__name__ not in RAN:
                continue                          # a result class, or its test did not run
            fn = getattr(module, name)
            assert CASES[f"{fn.__module__}.{fn.__qualname__}"] > 0, (module.__name__, name)
