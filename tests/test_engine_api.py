"""The engine's public API of before the redesign (one package per model) still works:
every public function and class of every engine module then, by the same module path
(an old module name read as its new path, ``engine.OLD_NAMES``: tests/test_old_names.py
checks that the old name gives the same objects), with the same arguments in the same
order and the same result attributes (``tests/data/engine_api_before_redesign.json``,
read off the engine as it was then); and every simulator speaks one summary vocabulary."""
import importlib
import inspect
import json
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
            "TandemRecords": pipeline.simulate_tandem_records(0.5, *args, n_jobs=2000, seed=1)}


@pytest.mark.parametrize("result", ["TandemMeasures", "TandemMeasures (naive)",
                                    "TandemSimResult", "TandemRecords"])
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
