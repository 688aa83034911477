"""Examples in the README, the docs and the engine's docstrings run as tests; the docs
link to files that exist."""
import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_examples_run(path):
    result = doctest.testfile(str(path), module_relative=False)
    assert result.failed == 0


def test_the_engine_doc_has_examples():
    assert doctest.testfile(str(ROOT / "docs" / "engine.md"), module_relative=False).attempted > 0


def test_engine_docstring_examples_run():
    attempted = 0
    for info in pkgutil.walk_packages(engine.__path__, "engine."):
        result = doctest.testmod(importlib.import_module(info.name))
        assert result.failed == 0, info.name
        attempted += result.attempted
    assert attempted > 0


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_in_docs_point_to_files(path):
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", path.read_text()):
        assert (path.parent / target).exists(), f"{path.name} links to missing {target}"


def test_the_readme_says_where_a_vllm_bench_result_is_uploaded():
    """Issue 24: the README listed `vllm bench serve` results among the files read "in each
    page's existing upload" without naming one, and a newcomer found none.  The README now
    names the controls; each one it quotes is one the app draws (its label in a page)."""
    readme = (ROOT / "README.md").read_text()
    item = readme[readme.index("- **`vllm bench serve --save-result`**"):].split("\n- ")[0]
    quoted = re.findall(r'"([^"]+)"', " ".join(item.split()))
    sources = " ".join(" ".join(p.read_text().split())
                       for p in (ROOT / "app_pages").rglob("*.py"))
    assert len(quoted) >= 6
    missing = [label for label in quoted if f'"{label}' not in sources]
    assert not missing, missing


def test_the_engine_table_names_every_module():
    """docs/engine.md's package table names every module of every engine package, so a
    reader finds any file from there."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / "engine.md").read_text(encoding="utf-8")
    missing = []
    for package in sorted(p for p in (root / "engine").iterdir()
                          if p.is_dir() and (p / "__init__.py").is_file()):
        row = re.search(rf"^\| `engine\.{package.name}` \|.*$", text, re.M)
        assert row, f"docs/engine.md has no row for engine.{package.name}"
        missing += [f"engine.{package.name}.{m.stem}" for m in package.glob("*.py")
                    if not m.stem.startswith("_") and f"`{m.stem}`" not in row.group(0)]
    assert not missing, missing
