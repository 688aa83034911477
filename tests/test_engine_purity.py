"""The engine is a pure library: importing every module never imports Streamlit."""
import pkgutil
import subprocess
import sys
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parent.parent


def test_engine_never_imports_streamlit():
    modules = [m.name for m in pkgutil.iter_modules(engine.__path__)]
    assert set(engine.__all__) == set(modules), "every engine module is listed in engine.__all__"
    code = ("import sys\n" + "".join(f"import engine.{m}\n" for m in modules)
            + "bad = [m for m in sys.modules if m.split('.')[0] in ('streamlit', 'plotly')]\n"
            + "assert not bad, bad\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_no_streamlit_in_engine_sources():
    for path in (ROOT / "engine").glob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from streamlit" not in text, path


def test_lazy_submodules():
    assert engine.batching.mean_latency is not None
    try:
        engine.nonexistent
    except AttributeError as err:
        assert "nonexistent" in str(err)
    else:
        raise AssertionError("unknown attribute did not raise")
