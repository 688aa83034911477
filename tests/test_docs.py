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


def _renamed_names():
    """The old names engine code keeps for one release: each class's renamed fields
    (``renamed_attribute``) and each function's renamed keywords (``renamed_keywords``;
    a class's constructor under the class's name)."""
    import inspect
    from engine.core.renamed import renamed_attribute
    fields, keywords = {}, {}
    for info in pkgutil.walk_packages(engine.__path__, "engine."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if getattr(obj, "__module__", None) != module.__name__:
                continue
            keywords.setdefault(name, {}).update(getattr(obj, "renamed_keywords", {}))
            if inspect.isclass(obj):
                for attribute, value in vars(obj).items():
                    if isinstance(value, renamed_attribute):
                        fields.setdefault(name, {})[attribute] = value.new
                    method = "__init__" if attribute == "__init__" else attribute
                    keywords.setdefault(name if method == "__init__" else method, {}).update(
                        getattr(value, "renamed_keywords", {}))
    return fields, {name: olds for name, olds in keywords.items() if olds}


def _passages(text):
    """Paragraphs of a doc (a table row on its own), each with its first line's number."""
    line = 1
    for paragraph in text.split("\n\n"):
        rows = paragraph.split("\n")
        if all(row.lstrip().startswith("|") for row in rows if row.strip()):
            for offset, row in enumerate(rows):
                yield line + offset, row
        else:
            yield line, paragraph
        line += paragraph.count("\n") + 2


def test_docs_name_the_fields_and_keywords_of_today():
    """A doc that names a result's field or a function's keyword names today's name, not
    the old one kept for one release (`mean_latency` of a `BatchingSimResult` is
    `mean_latency_ms`; `closed_loop(..., think_time=...)` is `think_time_ms=`).  A passage
    that speaks of the deprecation may name the old names."""
    fields, keywords = _renamed_names()
    stale = []
    for path in DOCS:
        for line, passage in _passages(path.read_text(encoding="utf-8")):
            if re.search(r"[Dd]eprecat", passage):
                continue
            spans = re.findall(r"`([^`]+)`", passage)
            words = {word for span in spans for word in re.findall(r"\w+", span)}
            olds = {old: f"{name}.{new}" for name in words & fields.keys()
                    for old, new in fields[name].items()}
            for span in spans:
                if re.fullmatch(r"[\w/, ]+", span):
                    stale += [f"{path.name}:{line}: `{word}` is {olds[word]}"
                              for word in re.split(r"[/, ]+", span) if word in olds]
                for call, arguments in re.findall(r"([\w.]+)\(([^()]*)\)", span):
                    renamed = keywords.get(call.rsplit(".", 1)[-1], {})
                    for argument in arguments.split(","):
                        word = argument.split("=")[0].strip(" *")
                        if word in renamed:
                            stale += [f"{path.name}:{line}: {call}({word}) is {renamed[word]}"]
    assert not stale, stale
