"""The engine is a pure library (importing any module never imports Streamlit), and no
module of the project uses another module's private names."""
import ast
import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for d in ("engine", "ui", "app_pages") for p in (ROOT / d).rglob("*.py"))


def test_engine_never_imports_streamlit():
    top = {m.name for m in pkgutil.iter_modules(engine.__path__)}
    assert set(engine.__all__) == top, "every engine module and package is listed in engine.__all__"
    modules = [m.name for m in pkgutil.walk_packages(engine.__path__, "engine.")]
    code = ("import sys\n" + "".join(f"import {m}\n" for m in modules)
            + "bad = [m for m in sys.modules if m.split('.')[0] in ('streamlit', 'plotly')]\n"
            + "assert not bad, bad\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_no_streamlit_in_engine_sources():
    for path in (ROOT / "engine").rglob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from streamlit" not in text, path


def _group(dotted: str) -> str:
    """The model package a module belongs to (``engine.batching``, ``app_pages.sla``), or the
    module itself where it is a top-level one (``engine.fit``, ``ui.share``)."""
    return ".".join(dotted.split(".")[:2])


def _private_uses(path: Path, root: Path = ROOT) -> list[str]:
    """``from x import _name`` and ``x._name`` where x is a project module of another
    package: a model package's modules share their private helpers, nothing else does."""
    tree = ast.parse(path.read_text())
    parts = list(path.relative_to(root).with_suffix("").parts)
    here = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    package = ".".join(parts[:-1])
    project = ("engine", "ui", "app_pages")
    foreign, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] not in project:
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                other = _group(target) != _group(here) and _group(full) != _group(here)
                if alias.name.startswith("_") and other:
                    found.append(f"line {node.lineno}: from {target} import {alias.name}")
                elif _group(full) != _group(here):
                    foreign.add(alias.asname or alias.name)      # may be a module: checked below
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in project and _group(alias.name) != _group(here):
                    foreign.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in foreign and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_private_names_of_another_module(path):
    assert not _private_uses(path)


def test_the_private_name_check_finds_both_forms(tmp_path):
    model = tmp_path / "engine" / "sla"
    model.mkdir(parents=True)
    src = model / "solvers.py"
    src.write_text("from engine.core.stats import _order_statistics\n"
                   "from engine.batching import sim\n"
                   "from ..pipeline import _check\nfrom .formulas import _ours\n"
                   "from . import formulas\nx = sim._CHUNK + formulas._fine\n")
    assert len(_private_uses(src, tmp_path)) == 3


def test_no_import_cycles_between_engine_modules(tmp_path):
    """Each engine module imports first in a fresh engine (a cycle fails for one of its
    members); one interpreter, the engine's modules dropped between imports.  Their
    bytecode is kept (under tmp_path, never beside the sources), so each source is
    compiled once, not at each of the ~100 fresh imports, even where
    PYTHONDONTWRITEBYTECODE is set."""
    code = """
import importlib, pkgutil, sys
import engine
names = [m.name for m in pkgutil.walk_packages(engine.__path__, "engine.")]
for name in names:
    for k in [k for k in sys.modules if k == "engine" or k.startswith("engine.")]:
        del sys.modules[k]
    try:
        importlib.import_module(name)
    except ImportError as err:
        sys.exit(f"{name}: {err}")
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-1000:]


def _engine_imports() -> dict:
    """Engine module -> the engine modules it imports anywhere in its source (function
    bodies included: an import deferred into a function is still a dependency)."""
    names = {m.name for m in pkgutil.walk_packages(engine.__path__, "engine.")} | {"engine"}
    graph = {}
    for name in names:
        path = ROOT / Path(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                base = package.split(".")
                base = base[:len(base) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    edges.add(full if full in names else target)
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names)
        graph[name] = {e for e in edges if e in names and e != name}
    return graph


def _cycle(graph: dict) -> list | None:
    """One import cycle of ``graph`` (a package's ``__init__`` importing its own
    submodules, and a submodule importing its package's siblings, are not cycles)."""
    def inside(a, b):
        return b.startswith(a + ".")
    state, stack = {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in graph[node]:
            if inside(node, nxt) or inside(nxt, node):
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_engine_modules_import_each_other_without_cycles():
    assert _cycle(_engine_imports()) is None, _cycle(_engine_imports())


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"engine.a": {"engine.b"}, "engine.b": {"engine.a"}}) == [
        "engine.a", "engine.b", "engine.a"]
    assert _cycle({"engine.p": {"engine.p.x"}, "engine.p.x": {"engine.p"}}) is None


def test_lazy_submodules():
    assert engine.batching.mean_latency is not None
    assert importlib.import_module("engine.batching.sim").simulate_batching is not None
    try:
        engine.nonexistent
    except AttributeError as err:
        assert "nonexistent" in str(err)
    else:
        raise AssertionError("unknown attribute did not raise")
