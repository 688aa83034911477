"""Shared settings and checks of the fuzz tests (one ``test_fuzz.py`` per model folder).

Fuzz tests: every public engine function over its declared parameter domains.

Each test draws parameters from ``tests/strategies.py`` (built from the
``Domain`` declarations of engine/core/domains.py), checks the engine's contract on
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
A function's design count is ``FULL_CASES`` (2,000) cases, or ``fuzz(cases,
points)`` of them where a case is too slow for that within the file's budget (the
reason beside it).  The suite (``python -m pytest``, CI) runs half of every count:
``FUZZ_CASES`` = 1,000 cases a function, ``FUZZ_VECTOR`` (``FUZZ_CASES // POINTS``
examples) for a vectorised test, ``fuzz(cases, points)`` ``cases // 2`` (at least one
example); with ``HYPOTHESIS_PROFILE=ci`` (derandomized) that is the same fixed sample on
every run.  ``FUZZ_FULL=1 python -m pytest tests/*/test_fuzz.py`` gives every function
its 2,000 (hours: run it by hand after changing a model, not in CI).
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

from engine import batching, fit, llm_batching, pipeline, presets, sla, token_limit
from engine.core import token_laws
from engine.core.domains import (A_S_PER_TOKEN, ALPHA, B_MAX, BETA, C0, C_S, COST, DELAY, HEADROOM,
                           INTERVAL, LAM, LAM_PER_S, LATENCY_TARGET_MS, LLM_BATCH, LLM_K1,
                           LLM_K2, LLM_K3, LLM_K4, LLM_KV_CAPACITY, LLM_MAX_TOKENS,
                           LLM_PROMPT_TOKENS, LOSS_COST, MU, N_BACKENDS, N_JOBS, N_MAX,
                           N_REQUESTS, NET_DELAY, PATIENCE_S, PERCENTILE, PIPE_C, PIPE_K,
                           PIPE_MU, PIPE_MU_CPU, PIPE_MU_CU, PIPE_MU_MEM, PREFERRED,
                           PROVISIONING_DELAY, RESPONSE_TARGET, TAU0, THETA, TOKEN_BOUND,
                           TOKEN_LOG_MEAN, TOKEN_LOG_SD, TOKEN_SD, WARMUP)
from tests.strategies import at_load, invalid, rho, service_laws, token_law_specs, valid

FULL = os.environ.get("FUZZ_FULL", "") not in ("", "0")
FULL_CASES = 2000          # cases per function by design (FUZZ_FULL=1 runs them all)
SUITE_SHARE = 2            # the suite runs 1/SUITE_SHARE of every design count
FUZZ_CASES = FULL_CASES if FULL else FULL_CASES // SUITE_SHARE   # cases per function here
POINTS = 16                # parameter points per example in a vectorised test
FUZZ = settings(max_examples=FUZZ_CASES, deadline=None,             # the shared profile
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])  # _record_run
FUZZ_VECTOR = settings(FUZZ, max_examples=FUZZ_CASES // POINTS)

CASES = collections.Counter()     # function name -> valid cases run in this session


def fuzz(cases: int, points: int = 1):
    """``FUZZ`` reduced to a design count of ``cases`` cases (``points`` per example), for
    functions too slow for 2,000 within the time budget: the suite runs
    ``cases // SUITE_SHARE`` of them (at least one example); ``FUZZ_FULL=1`` restores
    2,000 (a run of hours, outside CI)."""
    return settings(FUZZ, max_examples=max(
        1, (FULL_CASES if FULL else cases // SUITE_SHARE) // points))


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


def record_run(name: str) -> None:
    """Called after every test (tests/conftest.py): the tests that ran."""
    RAN.add(name)


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


