"""Hypothesis profiles: ``HYPOTHESIS_PROFILE=ci`` (set by .ci/run) makes every property
and fuzz test draw the same examples on every run, so a merge is judged on a fixed
sample; the default profile draws new examples each run and keeps failures in the
local example database, which is how the fuzz tests go on finding new inputs."""
import functools
import os
import sys

import pytest
from hypothesis import settings


# No deadline: speed is measured in benchmarks, not in timed tests (a busy machine
# would otherwise fail a correct example).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True,
                          deadline=None)
settings.register_profile("explore", print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "explore"))


def pytest_collection_finish(session):
    """Streamlit's AppTest scans the metadata of every installed distribution for
    components at each new AppTest (0.1 s each, ~40 s over the suite's ~380 page runs).
    The installed packages do not change during a run: scan once, reuse the result."""
    if "streamlit" not in sys.modules:          # no page test collected (tests/e2e alone)
        return
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:                          # a Streamlit without v2 components
        return
    scan = getattr(manifest_scanner, "scan_component_manifests", None)
    if scan is not None and not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


def pytest_collection_modifyitems(items):
    """The check that every fuzzed function ran valid cases goes last, after the
    fuzz tests of every model folder (tests/test_fuzz_contract.py)."""
    last = [i for i in items if i.name == "test_fuzzed_functions_ran"]
    items[:] = [i for i in items if i.name != "test_fuzzed_functions_ran"] + last


@pytest.fixture(autouse=True)
def _record_run(request):
    """The tests that ran (tests/fuzzing.py: a fuzz table's claim is checked only
    for tests that ran).  The fuzz modules import tests/fuzzing.py (after the profile
    above is loaded: its settings derive from it) when they are collected, before any
    test runs; where none was collected (tests/e2e alone, as tests/kit/test_browser_gate.py
    runs it) there is no table to check, and the engine is not imported for nothing."""
    yield
    fuzzing = sys.modules.get("tests.fuzzing")
    if fuzzing is not None:
        fuzzing.record_run(request.node.originalname)
