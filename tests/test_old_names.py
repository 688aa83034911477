"""Old module names as deprecation stubs, scipy's way (``engine.OLD_NAMES``: old name →
new path): each still imports, warns at the importing line with its new path and the
version that removes it, and gives the new module's very objects.  This file is the one
place in the project that imports an old name: the last test reads every other file."""
import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from engine import OLD_NAMES, REMOVED_IN

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("app.py", "engine", "app_pages", "ui", "tests", "benchmarks", "docs", "README.md")


def _message(old: str) -> str:
    return (rf"^{re.escape(old)} is deprecated and will be removed in {re.escape(REMOVED_IN)}: "
            rf"import {re.escape(OLD_NAMES[old])} instead$")


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_old_name_imports_warns_and_gives_the_new_objects(old):
    new = importlib.import_module(OLD_NAMES[old])
    sys.modules.pop(old, None)                        # as if imported for the first time
    with pytest.warns(DeprecationWarning, match=_message(old)) as record:
        stub = importlib.import_module(old)
    assert [w.filename for w in record] == [__file__]          # the importing line
    public = [name for name in dir(new) if not name.startswith("_")]
    assert public and set(stub.__all__) <= set(public)
    for name in public:
        assert getattr(stub, name) is getattr(new, name), name
    assert OLD_NAMES[old] in stub.__doc__ and REMOVED_IN in stub.__doc__


@pytest.mark.parametrize("old,code", [
    ("engine.sim", "import engine.sim"), ("engine.sim", "from engine import sim"),
    ("engine.sim", "from engine.sim import simulate_batching"), ("engine.sim", "engine.sim"),
    ("engine.sim", "from engine.sim import *"),
    ("engine.batching.batch_chain", "engine.batching.batch_chain"),
    ("engine.batching.batch_chain", "from engine.batching import batch_chain")])
def test_every_way_of_naming_an_old_module_warns_at_that_line(old, code):
    import engine.batching                                  # noqa: F401 (the parent)
    parent, _, child = old.rpartition(".")
    sys.modules.pop(old, None)
    vars(sys.modules[parent]).pop(child, None)
    with pytest.warns(DeprecationWarning, match=_message(old)) as record:
        exec(compile(code, "<the importing line>", "exec"), {"engine": engine})
    assert [w.filename for w in record] == ["<the importing line>"]


def test_old_names_fail_under_warnings_as_errors_and_new_paths_import_clean():
    """The acceptance check as a reader would run it: ``python -W
    error::DeprecationWarning -c "import engine.sim"`` fails, every new path imports."""
    def run(code):
        return subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
    new = run("".join(f"import {name}\n" for name in sorted(set(OLD_NAMES.values()))))
    assert new.returncode == 0, new.stderr
    old = run("import engine.sim")
    assert old.returncode != 0 and "DeprecationWarning" in old.stderr
    assert "import engine.batching.sim instead" in old.stderr


def _project_files():
    for entry in PROJECT:
        path = ROOT / entry
        files = [path] if path.is_file() else sorted(
            p for p in path.rglob("*") if p.suffix in (".py", ".md"))
        yield from (p for p in files if p != Path(__file__) and "__pycache__" not in p.parts)


def _code(path: Path) -> str:
    """A file's Python: a module's source, or a document's example lines (``>>>``,
    ``...`` and the lines of ```python blocks)."""
    text = path.read_text()
    if path.suffix == ".py":
        return text
    lines, fenced = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = stripped == "```python"
            continue
        if stripped.startswith((">>> ", "... ")):
            lines.append(stripped[4:])
        elif fenced and not stripped.startswith(">>>"):
            lines.append(line)
    return "\n".join(line for line in lines if re.match(r"\s*(import|from)\s", line))


def _named_modules(path: Path, tree) -> list[tuple[int, str]]:
    """(line, dotted name) of every module an import or an ``engine.x.y`` attribute names
    (``from m import a`` names m and m.a, relative imports resolved)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    package = list(parts[:-1] if parts[-1] != "__init__" else parts[:-1])
    found, alias = [], {"engine": "engine"}
    for node in ast.walk(tree):                  # names bound to a module: `as` and from-imports
        if isinstance(node, ast.Import):
            alias.update({a.asname: a.name for a in node.names if a.asname})
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            alias.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{a.name}")
                                              for a in node.names]
        elif isinstance(node, ast.Attribute):
            chain, inner = [node.attr], node.value
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and alias.get(inner.id, "").startswith("engine"):
                found.append((node.lineno, ".".join([alias[inner.id]] + chain[::-1])))
    return found


def test_nothing_in_the_project_imports_an_old_name():
    uses = []
    for path in _project_files():
        try:
            tree = ast.parse(_code(path))
        except SyntaxError:              # a document's example that only parses in context
            tree = ast.parse("\n".join(line for line in _code(path).splitlines()
                                       if _parses(line)))
        uses += [f"{path.relative_to(ROOT)}:{line}: {name}"
                 for line, name in _named_modules(path, tree) if name in OLD_NAMES]
    assert uses == []


def _parses(line: str) -> bool:
    try:
        ast.parse(line)
    except SyntaxError:
        return False
    return True


def test_the_scan_finds_each_way_of_naming_an_old_module():
    """The check above is not blind: it finds every form in a file of the engine."""
    path = ROOT / "engine" / "batching" / "example.py"
    code = ("import engine.sim\nfrom engine import params\nfrom engine.token_laws import uniform\n"
            "from .. import dispatch_sim\nfrom . import batch_chain\nengine.pipeline_sim.x\n"
            "from engine import batching as bt\nbt.batch_chain.limited_solution\n")
    names = {name for _, name in _named_modules(path, ast.parse(code)) if name in OLD_NAMES}
    assert names == {"engine.sim", "engine.params", "engine.token_laws", "engine.dispatch_sim",
                     "engine.batching.batch_chain", "engine.pipeline_sim"}
    aliased = [line for line, name in _named_modules(path, ast.parse(code))
               if name == "engine.batching.batch_chain"]
    assert 8 in aliased                     # through the alias `bt` of engine.batching
