"""The engine's public API of before the redesign (one package per model) still works:
every public function and class of every engine module then, by the same module path
(an old module name read as its new path, ``engine.OLD_NAMES``: tests/test_old_names.py
checks that the old name gives the same objects), with the same arguments in the same
order and the same result attributes (``tests/data/engine_api_before_redesign.json``,
read off the engine as it was then); and every simulator speaks one summary vocabulary."""
import dataclasses
import importlib
import inspect
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from engine import OLD_NAMES
from engine.core.renamed import renamed_attribute
from engine.batching.sim import BatchingSimResult
from engine.llm_batching.sim import LLMSimResult
from engine.pipeline.sim import TandemSimResult
from engine.sla.sim import DispatchSimResult
from engine.token_limit.sim import TokenQueueSimResult

BEFORE = json.loads((Path(__file__).parent / "data" / "engine_api_before_redesign.json")
                    .read_text())
# An old name now given to another object: the old path's object is read at its new name
# (engine.pipeline.Tandem is the model object, the measures it named are TandemMeasures).
NOW_CALLED = {"engine.pipeline.Tandem": "engine.pipeline.TandemMeasures"}
SUMMARY = ("mean_latency", "ci95", "p50", "p95", "p99", "mean_wait")


def _renamed(obj) -> dict:
    """{old name: new name} of the arguments and fields ``obj`` renamed to carry a unit
    (``engine.core.renamed``: the old keyword or attribute still works, with a warning)."""
    out = dict(getattr(obj, "renamed_keywords", {}))
    if isinstance(obj, type):
        out.update(getattr(obj.__init__, "renamed_keywords", {}))
        out.update({name: v.new for name, v in vars(obj).items()
                    if isinstance(v, renamed_attribute)})
    return out


@pytest.mark.parametrize("path", sorted(BEFORE))
def test_public_name_keeps_its_path_arguments_and_attributes(path):
    module, name = NOW_CALLED.get(path, path).rsplit(".", 1)
    obj = getattr(importlib.import_module(OLD_NAMES.get(module, module)), name)
    spec = BEFORE[path]
    if spec["params"] is not None:
        params = [p.name for p in inspect.signature(obj).parameters.values()
                  if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        renamed = _renamed(obj)          # a name given its unit: the old one still works
        before = [renamed.get(name, name) for name in spec["params"]]
        assert params[:len(before)] == before, "argument order changed"
    for field in spec["fields"] or ():
        assert field in getattr(obj, "__dataclass_fields__", {}) or hasattr(obj, field), field


@pytest.mark.parametrize("result", [BatchingSimResult, TokenQueueSimResult, LLMSimResult,
                                    TandemSimResult, DispatchSimResult],
                         ids=lambda c: c.__name__)
def test_every_simulator_summary_uses_one_vocabulary(result):
    fields = set(getattr(result, "__dataclass_fields__", {}))
    assert [a for a in SUMMARY if a not in fields and not hasattr(result, a)] == []


def test_the_pipeline_model_s_old_name_reads_as_tandem():
    """engine.pipeline.BlockingTandem (the model object's old name) is Tandem, with a
    warning naming the new name; its answers are Tandem's."""
    from engine import pipeline
    with pytest.warns(DeprecationWarning, match=r"engine\.pipeline\.BlockingTandem is "
                      r"deprecated; use engine\.pipeline\.Tandem \(the old name is removed"):
        old = pipeline.BlockingTandem
    assert old is pipeline.Tandem
    assert old(1.0, 2.0, 0.1, K=8, c=16).capacity_per_ms == float(
        pipeline.capacity(1.0, 2.0, 0.1, 8, 16))


def _pipeline_results():
    from engine import pipeline
    args = (1.0, 2.0, 0.1, 8, 16)
    return {"TandemMeasures": pipeline.tandem(np.array([0.2, 0.5]), *args),
            "TandemMeasures (naive)": pipeline.tandem_independent(np.array([0.2, 0.5]), *args),
            "TandemSimResult": pipeline.simulate_tandem(0.5, *args, n_jobs=2000, seed=1),
            "TandemRecords": pipeline.simulate_tandem_records(0.5, *args, n_jobs=2000, seed=1),
            "PipelineRates": pipeline.PipelineRates(*args, 1e9, 2e6)}


@pytest.mark.parametrize("result", ["TandemMeasures", "TandemMeasures (naive)",
                                    "TandemSimResult", "TandemRecords", "PipelineRates"])
def test_a_pipeline_result_s_old_field_names_answer_the_new(result):
    """Each old field name of a pipeline result (a time or rate given its unit) reads the
    same numbers as the new name, with a warning naming the new one."""
    obj = _pipeline_results()[result]
    renamed = _renamed(type(obj))
    assert renamed, "no renamed field"
    for old, new in renamed.items():
        with pytest.warns(DeprecationWarning, match=rf"\.{old} is deprecated; use \.{new} "):
            got = getattr(obj, old)
        assert np.array_equal(got, getattr(obj, new)), old


def test_pipeline_rates_built_with_the_old_keywords_are_the_same_rates():
    from engine import pipeline
    new = pipeline.PipelineRates(mu_cpu_per_ms=1.0, mu_mem_per_ms=2.0, mu_cu_per_ms=0.1, K=8,
                                 c=16, flops_per_job=1e9, mem_traffic_bytes_per_job=2e6)
    with pytest.warns(DeprecationWarning) as seen:
        old = pipeline.PipelineRates(mu_cpu=1.0, mu_mem=2.0, mu_cu=0.1, K=8, c=16,
                                     flops_per_job=1e9, mem_traffic_bytes_per_job=2e6)
    for name in ("mu_cpu", "mu_mem", "mu_cu"):
        assert any(f"({name}=...) is deprecated; use {name}_per_ms=" in str(w.message)
                   for w in seen), name
    assert old == new and old.tandem(0.5).w_total_ms == new.tandem(0.5).w_total_ms


def test_the_llm_batching_answers_old_keys_answer_the_new():
    """compare_strategies' answers and paper_comparison's rows were dicts keyed
    mean_wait, mean_sojourn (and lam): those keys and attributes read the numbers now named
    with their unit (s, per s), with a warning naming the new one."""
    from scipy import stats
    from engine import llm_batching as lb
    out = lb.compare_strategies(0.05, stats.uniform(0.0, 1000.0), (0.06, 0.126, 0.0003, 0.02269),
                                b=4, n_jobs=500, seed=1)
    v = out["fixed"]
    row = lb.ComparisonRow("uniform(0, 1000)", 0.05, 0.2, "fixed", 64, **v)
    for obj in (*out.values(), row):
        renamed = _renamed(type(obj))
        assert set(renamed) == ({"mean_wait", "mean_sojourn"} | (
            {"lam"} if obj is row else set()))
        for old, new in renamed.items():
            with pytest.warns(DeprecationWarning, match=rf"\['{old}'\] is deprecated; use "
                              rf"\['{new}'\]"):
                assert obj[old] == obj[new]
            with pytest.warns(DeprecationWarning, match=rf"\.{old} is deprecated"):
                assert getattr(obj, old) == getattr(obj, new)


# ------------------------------------------------------------ batching: names with units

ALPHA_MS, TAU0_MS = 0.1438, 1.8874           # the V100 profile
LAM_PER_MS = 0.5 / ALPHA_MS                    # ρ = 0.5
TABLE_MS = ALPHA_MS * np.arange(1, 17) + TAU0_MS
LOAD = dict(lam=LAM_PER_MS, alpha=ALPHA_MS, tau0=TAU0_MS)
RUN = dict(n_jobs=2_000, seed=1)
LOOP = dict(alpha=1.0, tau0=1.0, think_time=1.0)

# (function, positional arguments, keywords under their old names): one row per function
# whose keywords were renamed to carry a unit (lam → lam_per_ms, alpha → alpha_ms,
# tau0 → tau0_ms, think_time → think_time_ms, beta → beta_j, c0 → c0_j, ...)
BATCHING_OLD_KEYWORDS = [
    ("capacity", (), dict(alpha=ALPHA_MS, tau0=TAU0_MS, b_max=32)),
    ("below_capacity", (), dict(LOAD, b_max=32)),
    ("phi0", (), LOAD), ("phi1", (), LOAD), ("phi", (), LOAD),
    ("utilization_bound", (), LOAD),
    ("energy_efficiency_bound", (), dict(LOAD, beta=0.044, c0=0.155)),
    ("efficiency_from_batch_size", (8.0,), dict(beta=0.044, c0=0.155)),
    ("batch_energy", (8,), dict(beta=0.044, c0=0.155)),
    ("stationary", (), dict(LOAD, b_max=32)), ("mean_latency", (), LOAD),
    ("mean_wait", (), dict(LOAD, b_max=32)), ("mean_batch_size", (), LOAD),
    ("utilization", (), LOAD), ("energy_efficiency", (), dict(LOAD, beta=0.044, c0=0.155)),
    ("exact.unlimited_moments", (), dict(LOAD, lam=np.array([LAM_PER_MS]))),
    ("exact.limited_solution", (), dict(lam=1.0, tau=TABLE_MS[:8])),
    ("sweep_from_results", (), dict(lam=[LAM_PER_MS, 1e3], results=[None, None])),
    ("largest_rate_below", ([1.0, 2.0, 3.0],), dict(values=[10.0, 20.0, 40.0], target=15.0)),
    ("simulate_batching", (), dict(LOAD, b_max=16, max_queue_delay=1.0,
                                   preferred_batch_size=8, **RUN)),
    ("simulate_batching", (), dict(lam=LAM_PER_MS, batch_time=TABLE_MS, **RUN)),
    ("simulate_records", (), dict(LOAD, max_queue_delay=1.0, preferred_batch_size=8, **RUN)),
    ("closed_loop", (4,), LOOP),
    ("simulate_closed_loop", (4,), dict(LOOP, n_batches=200, rng=2)),
    ("simulate_closed_loop_records", (4,), dict(LOOP, n_batches=200, rng=2)),
    ("mean_latency_mmpp2", ("MMPP2",), dict(alpha=ALPHA_MS, tau0=TAU0_MS, b_max=16)),
]


def _same(a, b) -> bool:
    """Equal numbers all the way down (dataclasses, tuples, arrays; NaN equals NaN)."""
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(_same, a, b))
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc")


def _batching(name):
    from engine import batching
    module, _, name = name.rpartition(".")
    return getattr(importlib.import_module(f"engine.batching.{module}") if module
                   else batching, name)


@pytest.mark.parametrize("name, args, old", BATCHING_OLD_KEYWORDS,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(BATCHING_OLD_KEYWORDS)])
def test_a_batching_function_s_old_keywords_answer_the_new(name, args, old):
    """Each batching keyword of before (λ per ms, times in ms, energies in J without the
    unit in the name) still works: the same numbers as the new name, with a
    DeprecationWarning naming the new keyword."""
    from engine.arrivals import MMPP2
    fn = _batching(name)
    args = tuple(MMPP2(2.0, 0.5, 0.01, 0.01) if a == "MMPP2" else a for a in args)
    new = {fn.renamed_keywords.get(k, k): v for k, v in old.items()}
    renamed = [k for k in old if k not in new]
    assert renamed, "the row uses no old keyword"
    with pytest.warns(DeprecationWarning) as seen:
        before = fn(*args, **old)
    for k in renamed:
        assert any(f"({k}=...) is deprecated; use {fn.renamed_keywords[k]}="
                   in str(w.message) for w in seen), k
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        now = fn(*args, **new)
    assert _same(before, now)


@pytest.mark.parametrize("name, kwargs", [
    ("simulate_records", dict(lam_per_ms=LAM_PER_MS, alpha_ms=ALPHA_MS, tau0_ms=TAU0_MS,
                              **RUN)),
    ("exact.limited_solution", dict(lam_per_ms=1.0, tau_ms=TABLE_MS[:8]))])
def test_a_batching_result_s_old_field_names_answer_the_new(name, kwargs):
    """SimRecords (arrival, start, finish, batch_time, latency, wait → …_ms) and
    LimitedSolution (mean_latency, mean_processing → …_ms): each old name reads the new
    one's numbers, with a DeprecationWarning naming it."""
    obj = _batching(name)(**kwargs)
    renamed = _renamed(type(obj))
    assert renamed, "no renamed field"
    for old, new in renamed.items():
        with pytest.warns(DeprecationWarning, match=rf"\.{old} is deprecated; use \.{new} "):
            got = getattr(obj, old)
        assert _same(got, getattr(obj, new)), old
