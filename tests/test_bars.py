"""Checks of the layout any reader can run (``pytest tests/test_bars.py``).

* The app does no model arithmetic: no file in ``app_pages/`` or ``ui/`` calls a numpy,
  scipy or math function that reduces, transforms or solves (``np.mean``, ``np.percentile``,
  ``np.exp``, ``math.sqrt``, a ``.sum()`` of an array ...).  A chart is one hop from
  the engine function that computes its numbers.  What the pages may still do is listed
  in ``ALLOWED`` (file → why), a list that must stay short.
* Every engine module is at most ``MAX_ENGINE_LINES`` lines.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = ("app_pages", "ui")
MAX_ENGINE_LINES = 450
MAX_ALLOWED = 3

# numpy / math functions that compute (a model's arithmetic); array building
# (np.asarray, np.linspace, np.isfinite ...) and formatting stay allowed
MODEL_CALLS = {
    "mean", "sum", "nansum", "nanmean", "average", "median", "percentile", "quantile",
    "nanpercentile", "std", "var", "cumsum", "cumprod", "prod", "diff", "exp", "expm1",
    "log", "log1p", "log2", "log10", "sqrt", "power", "interp", "polyfit", "trapezoid",
    "argmin", "argmax", "searchsorted", "histogram", "bincount", "dot", "matmul",
    "ceil", "floor", "gamma", "erf", "lgamma", "factorial", "comb", "fsum", "hypot",
    "maximum", "minimum", "clip", "round", "gradient", "convolve"}
METHOD_CALLS = {"mean", "sum", "cumsum", "std", "var", "quantile", "median", "prod",
                "cumprod", "diff"}
MODULES = {"np", "numpy", "math", "scipy", "stats", "special"}

# file → why it may compute (keep this short: move the arithmetic to the engine instead)
ALLOWED: dict[str, str] = {
    "ui/plotting.py": "axis ranges and log-axis ticks (presentation, no model)",
    "ui/export.py": "rounding answers to significant figures for display",
}


def _calls(path: Path) -> list[str]:
    """'line: name' of each model call in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "scipy":
            found.append(f"{node.lineno}: from {node.module} import")
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        attr, owner = node.func.attr, node.func.value
        if isinstance(owner, ast.Name) and owner.id in MODULES:
            if attr in MODEL_CALLS:
                found.append(f"{node.lineno}: {owner.id}.{attr}")
        elif attr in METHOD_CALLS and not (isinstance(owner, ast.Name) and owner.id in {"st"}):
            found.append(f"{node.lineno}: .{attr}()")
    return found


APP_FILES = sorted(p for d in APP for p in (ROOT / d).rglob("*.py"))


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_model_arithmetic_in_the_app(path):
    """Pages and the kit read inputs and draw: the numbers come from the engine."""
    rel = str(path.relative_to(ROOT))
    calls = _calls(path)
    if rel in ALLOWED:
        assert calls, f"{rel} computes nothing any more: drop it from ALLOWED"
        return
    assert not calls, (f"{rel} does model arithmetic ({', '.join(calls)}): move it to the "
                       f"model's engine package")


def test_the_allow_list_stays_short():
    assert len(ALLOWED) <= MAX_ALLOWED, sorted(ALLOWED)
    assert all(why.strip() for why in ALLOWED.values())


ENGINE_FILES = sorted((ROOT / "engine").rglob("*.py"))


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_engine_modules_are_short(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_ENGINE_LINES, f"{path.relative_to(ROOT)}: {lines} lines"


def test_the_scan_sees_model_arithmetic(tmp_path):
    """The scanner itself: a reduction, a transform, a method reduction and a scipy
    import are found; building and checking arrays is not."""
    f = tmp_path / "page.py"
    f.write_text("import numpy as np\nfrom scipy import stats\nx = np.asarray([1.0])\n"
                 "ok = np.isfinite(x).all()\ny = np.percentile(x, 99)\nz = math.exp(1)\n"
                 "w = x.mean()\nst.sum()\n")
    assert [c.split(": ")[1] for c in _calls(f)] == [
        "from scipy import", "np.percentile", "math.exp", ".mean()"]


def _names_defined_twice(tree) -> list[str]:
    """Top-level functions and classes a module defines more than once (the last hides
    the others: a test defined twice runs once)."""
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    return sorted({n for n in names if names.count(n) > 1})


def test_no_module_defines_a_name_twice():
    twice = {str(p.relative_to(ROOT)): _names_defined_twice(ast.parse(p.read_text()))
             for folder in ("engine", "app_pages", "ui", "tests", "benchmarks")
             for p in sorted((ROOT / folder).rglob("*.py"))}
    assert {p: n for p, n in twice.items() if n} == {}
    assert _names_defined_twice(ast.parse("def test_a(): pass\ndef test_a(): pass\n")) == [
        "test_a"]
