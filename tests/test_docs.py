"""README snippets and docstring examples run as tests."""
import doctest
from pathlib import Path

import engine.batching

ROOT = Path(__file__).resolve().parent.parent


def test_readme_examples_run():
    result = doctest.testfile(str(ROOT / "README.md"), module_relative=False)
    assert result.attempted > 0 and result.failed == 0


def test_engine_docstring_examples_run():
    result = doctest.testmod(engine.batching)
    assert result.attempted > 0 and result.failed == 0
