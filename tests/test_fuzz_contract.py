"""The fuzz contract over the whole engine: every public function and class of every
engine module has a fuzz case in its model's ``tests/<model>/test_fuzz.py`` (the
``FUZZED`` table there), the case really calls it, and it ran valid cases."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from tests import fuzzing
from tests.arrivals import test_fuzz as arrivals_fuzz
from tests.batching import test_fuzz as batching_fuzz
from tests.core import test_fuzz as core_fuzz
from tests.llm_batching import test_fuzz as llm_batching_fuzz
from tests.llm_serving import test_aiconfigurator as aiconfigurator_fuzz
from tests.llm_serving import test_fuzz as llm_serving_fuzz
from tests.measured import test_fuzz as measured_fuzz
from tests.pipeline import test_fuzz as pipeline_fuzz
from tests.planner import test_families as planner_families_fuzz
from tests.planner import test_fuzz as planner_fuzz
from tests.sla import test_fuzz as sla_fuzz
from tests.sweep import test_fuzz as sweep_fuzz
from tests.token_limit import test_fuzz as token_limit_fuzz

TABLES = (batching_fuzz, core_fuzz, token_limit_fuzz, llm_batching_fuzz, pipeline_fuzz, sla_fuzz,
          measured_fuzz, arrivals_fuzz, sweep_fuzz, planner_fuzz, llm_serving_fuzz,
          aiconfigurator_fuzz, planner_families_fuzz)
FUZZED = {module: table for t in TABLES for module, table in t.FUZZED.items()}
ENGINE_MODULES = tuple(FUZZED)


def public_names(module) -> set:
    """Functions and classes defined in ``module`` whose names do not start with ``_``."""
    return {name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == module.__name__}


def test_each_module_has_one_table():
    """No engine module is claimed by two model folders."""
    assert sum(len(t.FUZZED) for t in TABLES) == len(FUZZED)


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


def engine_modules() -> list:
    """Every module of the engine (packages walked), imported."""
    import engine
    names = [m.name for m in pkgutil.walk_packages(engine.__path__, "engine.")]
    return [importlib.import_module(n) for n in names]


def test_engine_modules_are_all_listed():
    """Every engine module that defines a public function or class (the domain
    declarations of engine/core/domains/ aside) has a ``FUZZED`` table; a module that only re-exports
    names defined elsewhere needs none."""
    need = {m.__name__ for m in engine_modules() if public_names(m)
            and not m.__name__.startswith("engine.core.domains")}
    assert need == {m.__name__ for m in ENGINE_MODULES}


def test_fuzzed_functions_ran():
    """Every function ``FUZZED`` maps to a test that ran in this session got valid cases
    there (a table entry is a claim; this checks it).  tests/conftest.py runs this test
    last, after the fuzz tests."""
    for module, table in FUZZED.items():
        for name, entry in table.items():
            if isinstance(entry, tuple) or entry.__name__ not in fuzzing.RAN:
                continue                          # a result class, or its test did not run
            fn = getattr(module, name)
            assert fuzzing.CASES[f"{fn.__module__}.{fn.__qualname__}"] > 0, (module.__name__, name)
