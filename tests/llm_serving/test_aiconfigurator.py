"""The AIConfigurator bridge (engine/llm_serving/aiconfigurator.py).

* the fit: noise-free step times of a known ``StepCost`` give it back (R² = 1);
  perturbed ones, within tolerance; a grid that cannot tell two terms apart holds one
  at 0; bad arrays are refused naming the group and the part;
* the sizing rule: worked by hand on a two-batch example; where AIConfigurator is
  installed, its per-point TTFT, TPOT and rate against AIConfigurator's own
  ``run_agg`` on its own step times (equal to rounding);
* the package is optional: without it the clear ``ImportError``; with it, the fit of
  Llama-3.1-8B on h100_sxm under vLLM at TP 1 gives sane step times.  The tests that
  need it skip, saying so, where it is not installed (also under CI: it is optional).

``FUZZED`` (registered in tests/test_fuzz_contract.py) maps the module's public names
to the fuzz tests at the end.
"""
from __future__ import annotations

import functools
import importlib.util
import math
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

from engine.core.domains import (KV_CACHE_TOKENS, MAX_BATCHED_TOKENS, MAX_NUM_SEQS, RATE_PER_S,
                                 SERVING_TOKENS, STEP_BATCH, STEP_CONTEXT_TOKENS, STEP_MS,
                                 STEP_TIME_MS, TARGET_MS)
from engine.llm_serving import StepCost
from engine.llm_serving import aic_sizing as sizing
from engine.llm_serving import aiconfigurator as bridge
from engine.llm_serving import step_times as fit_module
from engine.llm_serving.aiconfigurator import (MISSING_PACKAGE, AicSizing,
                                               aiconfigurator_replicas,
                                               fit_step_cost_from_step_times,
                                               step_cost_from_aiconfigurator)
from tests.fuzzing import assert_no_nan, corrupt, fuzz, raises_naming, tally
from tests.strategies import invalid, valid

HAVE_AIC = importlib.util.find_spec("aiconfigurator") is not None
needs_aic = pytest.mark.skipif(not HAVE_AIC, reason="AIConfigurator is not installed (optional: "
                                                    "pip install -r "
                                                    "requirements-aiconfigurator.txt)")
LLAMA = "meta-llama/Meta-Llama-3.1-8B"

FIELDS = ("base_ms", "prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq",
          "decode_ms_per_seq", "context_ms_per_token", "frontend_ms")
# about what AIConfigurator gives for Llama-3.1-8B on one H100 under vLLM
KNOWN = StepCost(base_ms=6.4, prefill_base_ms=4.1, prefill_ms_per_token=0.0173,
                 prefill_ms_per_token_sq=9.7e-7, decode_ms_per_seq=0.0116,
                 context_ms_per_token=4.1e-5)
PROMPTS = np.array([128, 256, 512, 1024, 2048, 4096, 8192])
BATCHES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256])
CONTEXTS = np.array([128, 512, 1024, 2048, 4096])


def step_times(cost: StepCost, prompts=PROMPTS, prefill_batches=(1, 2, 4), batches=BATCHES,
               contexts=CONTEXTS):
    """(prefill, decode) arrays of ``cost``'s prompt-only steps (b whole prompts of l
    tokens, b·l ≤ the longest prompt) and decode-only steps (b requests at c tokens)."""
    pb, pl = map(np.array, zip(*[(b, l) for l in prompts for b in prefill_batches
                                 if b * l <= max(prompts)]))
    db, dc = (g.ravel() for g in np.meshgrid(batches, contexts, indexing="ij"))
    return ((pb, pl, cost.step_ms(pb * pl, pb * pl * pl, 0, 0)),
            (db, dc, cost.step_ms(0, 0, db, db * dc)))


@functools.lru_cache(maxsize=None)
def llama_fit():
    """The fit of Llama-3.1-8B on h100_sxm under vLLM at TP 1 (once per session: the
    database takes a second or two to load)."""
    return step_cost_from_aiconfigurator("Llama-3.1-8B", "h100_sxm", "vllm", tensor_parallel=1)


# ------------------------------------------------------------------------------ the fit

def test_the_fit_gives_a_known_cost_back():
    pre, dec = step_times(KNOWN)
    fit = fit_step_cost_from_step_times(pre, dec)
    for f in FIELDS:
        assert getattr(fit.cost, f) == pytest.approx(getattr(KNOWN, f), rel=1e-7, abs=1e-13), f
    assert fit.r2 == {"prefill": pytest.approx(1.0, abs=1e-12),
                      "decode": pytest.approx(1.0, abs=1e-12)}
    assert fit.held_at_zero == ("frontend_ms",)
    assert fit.n_points == pre[0].size + dec[0].size == 18 + 45
    assert np.abs(fit.residuals_ms["prefill"]).max() < 1e-9
    assert np.abs(fit.residuals_ms["decode"]).max() < 1e-9


def test_batch_one_prompts_may_leave_the_batch_out():
    pre, dec = step_times(KNOWN, prefill_batches=(1,))
    with_batch = fit_step_cost_from_step_times(pre, dec)
    without = fit_step_cost_from_step_times(pre[1:], dec)
    assert with_batch.cost == without.cost


def test_perturbed_step_times_fit_within_tolerance():
    """1 % noise on every step time: the fitted cost's step times within 3 % of the
    true ones over the grid, the large terms within 10 %, R² above 0.99."""
    pre, dec = step_times(KNOWN)
    rng = np.random.default_rng(23)
    noisy_pre = (*pre[:2], pre[2] * (1 + 0.01 * rng.standard_normal(pre[2].size)))
    noisy_dec = (*dec[:2], dec[2] * (1 + 0.01 * rng.standard_normal(dec[2].size)))
    fit = fit_step_cost_from_step_times(noisy_pre, noisy_dec)
    got = step_times(fit.cost)
    assert np.max(np.abs(got[0][2] / pre[2] - 1)) < 0.03
    assert np.max(np.abs(got[1][2] / dec[2] - 1)) < 0.03
    for f in ("prefill_ms_per_token", "base_ms", "context_ms_per_token", "decode_ms_per_seq"):
        assert getattr(fit.cost, f) == pytest.approx(getattr(KNOWN, f), rel=0.10), f
    assert min(fit.r2.values()) > 0.99


def test_a_grid_of_one_batch_holds_the_per_request_term():
    """All decode steps at batch 8: a per-request cost is a constant like the base, so
    decode_ms_per_seq is held at 0 and the base carries it; the step times still fit."""
    pre, _ = step_times(KNOWN)
    dec = (8, CONTEXTS, KNOWN.step_ms(0, 0, 8, 8 * CONTEXTS))
    fit = fit_step_cost_from_step_times(pre, dec)
    assert "decode_ms_per_seq" in fit.held_at_zero and fit.cost.decode_ms_per_seq == 0
    assert fit.cost.base_ms == pytest.approx(KNOWN.base_ms + 8 * KNOWN.decode_ms_per_seq)
    assert any("decode_ms_per_seq held at 0" in n for n in fit.notes)


@pytest.mark.parametrize("group, arrays, name", [
    ("prefill", ([0, 1], [100, 200], [5.0, 6.0]), "prefill batch"),
    ("prefill", ([1.5, 1], [100, 200], [5.0, 6.0]), "prefill batch"),
    ("prefill", ([100, 0.5], [5.0, 6.0]), "prefill prompt_tokens"),
    ("prefill", ([100, 200], [5.0, 0.0]), "prefill ms"),
    ("prefill", ([100, 200], [5.0, math.nan]), "prefill ms"),
    ("prefill", ([100, 200], [5.0, -1.0]), "prefill ms"),
    ("prefill", ([100, 200], ["5", 6.0]), "prefill ms"),
    ("prefill", ([100, 200, 300], [5.0, 6.0]), "prefill"),
    ("prefill", ([], []), "prefill"),
    ("prefill", "100,5.0", "prefill"),
    ("prefill", ([100],), "prefill"),
    ("decode", ([1, 2], [100, 200]), "decode"),
    ("decode", ([1, 2], [0.5, 200], [5.0, 6.0]), "decode context_tokens"),
    ("decode", ([True, 2], [100, 200], [5.0, 6.0]), "decode batch"),
    ("decode", ([1, 2], [100, 200], [5.0, math.inf]), "decode ms"),
])
def test_bad_step_times_are_refused_naming_them(group, arrays, name):
    pre, dec = step_times(KNOWN)
    args = {"prefill": pre, "decode": dec, group: arrays}
    raises_naming(name, fit_step_cost_from_step_times, args["prefill"], args["decode"])


# --------------------------------------------------------------------- the sizing rule

HAND = StepCost(base_ms=10.0, prefill_base_ms=5.0, prefill_ms_per_token=0.1,
                decode_ms_per_seq=1.0)


def test_the_sizing_rule_by_hand():
    """Prompts of 100 tokens, replies of 3, batches up to 2.  AIConfigurator's budgets
    for a 100-token prompt without chunked prefill are 100, 200, 512 … tokens; only 100
    leaves a decode in a step of 2, so two points:

    * batch 1: one prompt-only step 5 + 0.1·100 = 15 ms (TTFT 15), then 2 decode steps
      of 10 + 1 = 11 ms (TPOT 11): 1 request per 37 ms = 27.03 per s;
    * batch 2: S = ⌈100·2/100⌉ = 2 mixed steps of 100 prompt tokens and 1 decode,
      10 + 10 + 1 = 21 ms, then G = 3 − 2 = 1 decode step of 2: 10 + 2 = 12 ms;
      TTFT = 21 × (1 + log2(2)/8) = 23.625, TPOT = (2·21 + 12)/3 = 18; the steps give
      2 per 54 ms, Little's law 2 per (23.625 + 2·18) ms = 33.54 per s (the smaller).
    """
    kw = dict(cost=HAND, input_tokens=100, output_tokens=3, max_batch=2)
    got = aiconfigurator_replicas(100.0, **kw)
    assert (got.batch_size, got.max_num_batched_tokens, got.points) == (2, 100, 2)
    assert got.ttft_ms == pytest.approx(23.625) and got.tpot_ms == pytest.approx(18.0)
    assert got.request_latency_ms == pytest.approx(59.625)
    assert got.replica_rate_per_s == pytest.approx(2000 / 59.625)
    assert got.replicas == 3                                 # ⌈100 / 33.54⌉
    one = aiconfigurator_replicas(100.0, tpot_ms=15.0, **kw)  # batch 2's 18 ms fails
    assert (one.batch_size, one.ttft_ms, one.tpot_ms) == (1, 15.0, 11.0)
    assert one.replica_rate_per_s == pytest.approx(1000 / 37) and one.replicas == 4
    assert aiconfigurator_replicas(100.0, ttft_ms=20.0, **kw).batch_size == 1
    none = aiconfigurator_replicas(100.0, tpot_ms=10.0, **kw)
    assert none.replicas is None and none.feasible_points == 0
    # the KV cache holds one request of 103 tokens but not two: batch 2 left out
    assert aiconfigurator_replicas(100.0, kv_cache_tokens=205, **kw).batch_size == 1
    # vLLM's dispatch overhead inside the TTFT factor: (21 + 10) × 1.125
    slow = aiconfigurator_replicas(100.0, dispatch_overhead_ms=10.0, **kw)
    assert slow.ttft_ms == pytest.approx(34.875)
    assert slow.replica_rate_per_s == pytest.approx(2000 / (34.875 + 36)) and slow.replicas == 4
    assert aiconfigurator_replicas(1.0, **kw).replicas == 1


def test_the_prompt_budgets_are_aiconfigurators():
    """_agg_ctx_tokens_list of aiconfigurator/sdk/sweep.py with ctx_stride 512."""
    assert sizing._ctx_budgets(1024, False) == [1024 * k for k in range(1, 9)]
    assert sizing._ctx_budgets(100, False) == [100, 200, *range(512, 8193, 512)]
    assert sizing._ctx_budgets(4096, True) == [*range(512, 8193, 512)]
    assert sizing._ctx_budgets(10_000, True) == [*range(512, 8193, 512), 10_000, 10_692,
                                                 13_192, 15_692, 18_192, 20_000]


@pytest.mark.parametrize("name, value", [
    ("rate_per_s", math.inf), ("rate_per_s", 0.0), ("rate_per_s", "20"),
    ("output_tokens", 1), ("output_tokens", 2.5), ("input_tokens", 0),
    ("max_batch", 0), ("max_batch", [4]), ("ttft_ms", 0.0), ("tpot_ms", -1.0),
    ("kv_cache_tokens", 0), ("max_num_batched_tokens", 0), ("dispatch_overhead_ms", -1.0),
    ("chunked_prefill", "yes"), ("cost", None)])
def test_bad_sizing_arguments_are_refused_naming_them(name, value):
    kw = dict(rate_per_s=10.0, cost=HAND, input_tokens=100, output_tokens=3, max_batch=2)
    kw[name] = value
    raises_naming(name, aiconfigurator_replicas, **kw)


@needs_aic
def test_the_sweep_grid_is_the_installed_aiconfigurators():
    """The batch schedule and the prompt budgets written out here are the installed
    AIConfigurator's (sweep.py), so a release that changes them shows here."""
    from aiconfigurator.sdk import sweep

    assert sizing._AIC_BATCHES == tuple(sweep._DEFAULT_AGG_BATCH_SCHEDULE)
    for isl in (100, 1024, 3000, 10_000, 70_000):
        for chunked in (False, True):
            assert sizing._ctx_budgets(isl, chunked) == sweep._agg_ctx_tokens_list(
                isl, 512, chunked), (isl, chunked)


@needs_aic
def test_each_point_is_aiconfigurators_run_agg():
    """_agg_point on AIConfigurator's own mixed and decode step times gives its
    run_agg's TTFT, TPOT and requests per s (vLLM, Llama-3.1-8B, h100_sxm, TP 1) at
    batch 1, batches with and without decode-only steps, and chunks below a prompt."""
    from aiconfigurator.sdk import config
    from aiconfigurator.sdk.backends.factory import get_backend
    from aiconfigurator.sdk.engine import EngineHandle
    from aiconfigurator.sdk.models import get_model
    from aiconfigurator.sdk.perf_database import get_database, resolve_query_version

    with bridge._quiet():
        version = resolve_query_version("h100_sxm", "vllm", "current")
        model = get_model(LLAMA, config.ModelConfig(tp_size=1), "vllm")
        database = get_database("h100_sxm", "vllm", version)
        backend = get_backend("vllm")
        handle = EngineHandle.compile(LLAMA, "h100_sxm", "vllm", backend_version=version,
                                      tp_size=1)
        for b, c, l, o in [(1, 1024, 1024, 256), (8, 2048, 1024, 256), (176, 1024, 1024, 256),
                           (64, 4096, 1024, 16), (300, 512, 2048, 128)]:
            want = backend.run_agg(model, database, config.RuntimeConfig(
                batch_size=b, isl=l, osl=o, ttft=1e9, tpot=1e9), ctx_tokens=c).get_result_dict()
            g = sizing._agg_decodes(b, c, l)
            ttft, tpot, _, per_ms = sizing._agg_point(
                handle.mixed_step_latency(c, g, l, o), handle.decode_step_latency(b, l, o),
                b, c, l, o, 0.8 * 32)
            assert ttft == pytest.approx(float(want["ttft"]), rel=1e-9), (b, c)
            assert tpot == pytest.approx(float(want["tpot"]), rel=1e-9), (b, c)
            assert per_ms * 1e3 == pytest.approx(float(want["seq/s"]), rel=1e-9), (b, c)


# ------------------------------------------------------------------ the optional package

def test_without_the_package_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "aiconfigurator", None)
    with pytest.raises(ImportError) as err:
        step_cost_from_aiconfigurator(LLAMA, "h100_sxm", "vllm")
    assert str(err.value) == MISSING_PACKAGE == (
        "AIConfigurator is optional: pip install -r requirements-aiconfigurator.txt")
    # the rest of the module needs no package
    assert aiconfigurator_replicas(1.0, cost=HAND, input_tokens=100, output_tokens=3,
                                   max_batch=2).replicas == 1


@needs_aic
def test_llama_on_h100_under_vllm_is_sane():
    """A prompt of 1,024 tokens alone in 10–500 ms; a decode step of one request at
    1,024 tokens of context in 2–100 ms; both groups fitted with R² above 0.95."""
    fit = llama_fit()
    assert 10 <= fit.cost.prompt_ms(1024) <= 500
    assert 2 <= fit.cost.decode_ms(1, 1024) <= 100
    assert min(fit.r2.values()) > 0.95
    assert fit.held_at_zero[0] == "frontend_ms" and fit.cost.frontend_ms == 0
    assert LLAMA in fit.source and "h100_sxm" in fit.cost.label
    assert any("0.8 ms of CPU dispatch per layer" in n for n in fit.notes)


@needs_aic
@pytest.mark.parametrize("name, value", [("model", "no-such-model-7b"), ("system", "h999"),
                                         ("backend", "tgi"), ("version", "0.0.1"),
                                         ("model", "llama")])
def test_unknown_names_list_the_choices(name, value):
    kw = dict(model=LLAMA, system="h100_sxm", backend="vllm", version=None)
    kw[name] = value
    raises_naming(name, step_cost_from_aiconfigurator, kw.pop("model"), kw.pop("system"), **kw)


# ============================================================ fuzz (tests/test_fuzz_contract.py)

def costs(floor: float = 0.0):
    """StepCosts with every term from 0 up to a large step (the two bases from
    ``floor``: every step takes time)."""
    term = lambda hi: st.one_of(st.just(0.0), st.floats(0.0, hi))      # noqa: E731
    base = st.floats(floor, 50.0) if floor else term(50.0)
    return st.builds(lambda b, pb, a, a2, d, k, f: StepCost(
        base_ms=b, prefill_base_ms=pb, prefill_ms_per_token=a, prefill_ms_per_token_sq=a2,
        decode_ms_per_seq=d, context_ms_per_token=k, frontend_ms=f),
        base, base, term(0.2), term(1e-5), term(1.0), term(1e-3), term(20.0))


GRID = st.lists(st.integers(1, 4096), min_size=1, max_size=6, unique=True)
FIT_PARTS = [("prefill", 0, "batch", STEP_BATCH), ("prefill", 1, "prompt_tokens", SERVING_TOKENS),
             ("prefill", 2, "ms", STEP_TIME_MS), ("decode", 0, "batch", STEP_BATCH),
             ("decode", 1, "context_tokens", STEP_CONTEXT_TOKENS),
             ("decode", 2, "ms", STEP_TIME_MS)]


@fuzz(80)
@given(costs(floor=1e-3), st.lists(st.integers(2, 16), max_size=2, unique=True), GRID,
       st.lists(st.integers(1, 512), min_size=1, max_size=5, unique=True), GRID,
       st.sampled_from(FIT_PARTS), st.data())
def test_fit_fuzz(cost, pre_batches, prompts, batches, contexts, part, data):
    """fit_step_cost_from_step_times on drawn grids of a drawn cost's exact step times:
    a StepCostFit without NaN, R² ≤ 1, finite residuals, the held fields at 0; where
    the grid identifies every term, the drawn times back (a held term may leave the
    rest unable to carry it without going negative); one cell out of its domain:
    ValueError naming the group and the part."""
    grids = (np.array(prompts), (1, *pre_batches), np.array(batches), np.array(contexts))
    pre, dec = step_times(cost, *grids)
    fit = fit_step_cost_from_step_times(pre, dec)
    tally(fit_step_cost_from_step_times)
    assert_no_nan(fit)
    if fit.held_at_zero == ("frontend_ms",):
        again = step_times(fit.cost, *grids)
        np.testing.assert_allclose(again[0][2], pre[2], rtol=1e-6)
        np.testing.assert_allclose(again[1][2], dec[2], rtol=1e-6)
    assert all(r <= 1 + 1e-12 for r in fit.r2.values())
    assert all(np.all(np.isfinite(r)) for r in fit.residuals_ms.values())
    assert all(getattr(fit.cost, f) == 0 for f in fit.held_at_zero)
    assert fit.n_points == pre[0].size + dec[0].size
    group, i, name, domain = part
    arrays = {"prefill": list(pre), "decode": list(dec)}
    cells = np.array(arrays[group][i], dtype=object)
    cells[data.draw(st.integers(0, cells.size - 1), label="cell")] = data.draw(
        invalid(domain), label="bad")
    arrays[group][i] = list(cells)
    raises_naming(f"{group} {name}", fit_step_cost_from_step_times, tuple(arrays["prefill"]),
                  tuple(arrays["decode"]))


SIZING_DOMAINS = {"rate_per_s": RATE_PER_S, "input_tokens": SERVING_TOKENS,
                  "output_tokens": SERVING_TOKENS, "max_batch": MAX_NUM_SEQS,
                  "ttft_ms": TARGET_MS, "tpot_ms": TARGET_MS, "kv_cache_tokens": KV_CACHE_TOKENS,
                  "max_num_batched_tokens": MAX_BATCHED_TOKENS,
                  "dispatch_overhead_ms": STEP_MS}


@fuzz(100)
@given(costs(), st.fixed_dictionaries({
    "rate_per_s": valid(RATE_PER_S, high=1e6, allow_inf=False),
    "input_tokens": valid(SERVING_TOKENS, high=65_536),
    "output_tokens": valid(SERVING_TOKENS, low=2, high=8192),
    "max_batch": valid(MAX_NUM_SEQS, high=2048),
    "ttft_ms": valid(TARGET_MS), "tpot_ms": valid(TARGET_MS),
    "dispatch_overhead_ms": valid(STEP_MS, high=100.0),
    "chunked_prefill": st.booleans()}),
    st.one_of(st.none(), valid(KV_CACHE_TOKENS)), st.one_of(st.none(), valid(MAX_BATCHED_TOKENS,
                                                                          high=65_536)),
    st.data())
def test_replicas_fuzz(cost, params, kv, budget, data):
    """aiconfigurator_replicas over the domains: an AicSizing (no NaN) whose answer is
    ⌈rate / replica rate⌉ at a point meeting both limits, within max_batch, or none at
    all (no feasible point); twice the rate never needs fewer replicas; one argument
    out of its domain: ValueError naming it."""
    if kv is not None:
        params["kv_cache_tokens"] = kv
    if budget is not None:
        params["max_num_batched_tokens"] = budget
    got = aiconfigurator_replicas(cost=cost, **params)
    tally(aiconfigurator_replicas)
    tally(AicSizing)
    assert isinstance(got, AicSizing)
    assert_no_nan(got)
    assert 0 <= got.feasible_points <= got.points
    if got.replicas is None:
        assert got.feasible_points == 0 and got.batch_size is None
    else:
        assert got.ttft_ms <= params["ttft_ms"] and got.tpot_ms <= params["tpot_ms"]
        assert 1 <= got.batch_size <= params["max_batch"]
        want = (1 if math.isinf(got.replica_rate_per_s)
                else max(1, math.ceil(params["rate_per_s"] / got.replica_rate_per_s)))
        assert got.replicas == want
        more = aiconfigurator_replicas(cost=cost, **{**params,
                                                      "rate_per_s": 2 * params["rate_per_s"]})
        assert more.replicas >= got.replicas
    bad, name = corrupt(data, params, SIZING_DOMAINS)
    raises_naming(name, aiconfigurator_replicas, cost=cost, **bad)
    raises_naming("output_tokens", aiconfigurator_replicas, cost=cost,
                  **{**params, "output_tokens": 1})


AIC_GRIDS = {"batch_sizes": STEP_BATCH, "prompt_tokens": SERVING_TOKENS,
             "context_tokens": SERVING_TOKENS, "prefill_batch_sizes": STEP_BATCH}


@fuzz(40)
@given(st.sampled_from(sorted(AIC_GRIDS) + ["tensor_parallel"]), st.data())
def test_step_cost_from_aiconfigurator_fuzz(name, data):
    """step_cost_from_aiconfigurator: a valid call gives a fit without NaN whose cost
    reproduces no step worse than its notes say (with the package: the Llama-3.1-8B
    fit, made once), or, without the package, the clear ImportError; a grid or degree
    out of its domain: ValueError naming it, with or without the package."""
    if HAVE_AIC:
        fit = llama_fit()
        assert_no_nan(fit)
        assert all(0 < r <= 1 for r in fit.r2.values())
    else:
        with pytest.raises(ImportError, match="requirements-aiconfigurator.txt"):
            step_cost_from_aiconfigurator(LLAMA, "h100_sxm", "vllm")
    tally(step_cost_from_aiconfigurator)
    if name == "tensor_parallel":
        bad = data.draw(st.sampled_from([0, -1, 1.5, "x", None, True, math.nan]), label="bad")
        raises_naming(name, step_cost_from_aiconfigurator, LLAMA, "h100_sxm",
                      tensor_parallel=bad)
        return
    bad = data.draw(st.one_of(st.lists(invalid(AIC_GRIDS[name]), min_size=1, max_size=3),
                              st.sampled_from([[], "1, 2", None, [True]])), label="bad")
    raises_naming(name, step_cost_from_aiconfigurator, LLAMA, "h100_sxm", **{name: bad})


FUZZED = {
    fit_module: {"fit_step_cost_from_step_times": test_fit_fuzz},
    bridge: {"step_cost_from_aiconfigurator": test_step_cost_from_aiconfigurator_fuzz},
    sizing: {"aiconfigurator_replicas": test_replicas_fuzz,
             "AicSizing": (test_replicas_fuzz, "aiconfigurator_replicas")},
}
