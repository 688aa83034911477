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

import pytest

from engine import OLD_NAMES
from engine.batching.sim import BatchingSimResult
from engine.llm_batching.sim import LLMSimResult
from engine.pipeline.sim import TandemSimResult
from engine.sla.sim import DispatchSimResult
from engine.token_limit.sim import TokenQueueSimResult

BEFORE = json.loads((Path(__file__).parent / "data" / "engine_api_before_redesign.json")
                    .read_text())
SUMMARY = ("mean_latency", "ci95", "p50", "p95", "p99", "mean_wait")


@pytest.mark.parametrize("path", sorted(BEFORE))
def test_public_name_keeps_its_path_arguments_and_attributes(path):
    module, name = path.rsplit(".", 1)
    obj = getattr(importlib.import_module(OLD_NAMES.get(module, module)), name)
    spec = BEFORE[path]
    if spec["params"] is not None:
        params = [p.name for p in inspect.signature(obj).parameters.values()
                  if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        assert params[:len(spec["params"])] == spec["params"], "argument order changed"
    for field in spec["fields"] or ():
        assert field in getattr(obj, "__dataclass_fields__", {}) or hasattr(obj, field), field


@pytest.mark.parametrize("result", [BatchingSimResult, TokenQueueSimResult, LLMSimResult,
                                    TandemSimResult, DispatchSimResult],
                         ids=lambda c: c.__name__)
def test_every_simulator_summary_uses_one_vocabulary(result):
    fields = set(getattr(result, "__dataclass_fields__", {}))
    assert [a for a in SUMMARY if a not in fields and not hasattr(result, a)] == []
