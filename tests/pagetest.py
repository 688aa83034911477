"""Shared helpers of the page tests (Streamlit AppTest, no browser)."""
import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def open_page(page: str, query: dict | None = None, via_app: bool = False) -> AppTest:
    """Run ``page`` (a path under the repository) with ``query`` as URL parameters.

    ``via_app`` runs app.py and switches to the page (routing included); otherwise
    the page file runs on its own.  Fails on any exception.
    """
    at = AppTest.from_file(str(ROOT / ("app.py" if via_app else page)), default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if via_app:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def charts(at) -> list[dict]:
    """Every Plotly chart on the page as its JSON spec."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def metric(at, label: str) -> str:
    """The value of the metric with this label (or, failing that, starting with it)."""
    exact = [m.value for m in at.metric if m.label == label]
    return exact[0] if exact else next(m.value for m in at.metric if m.label.startswith(label))


def trace(fig: dict, name: str) -> dict:
    """The trace with this name (or, failing that, whose name starts with it)."""
    exact = [t for t in fig["data"] if t.get("name") == name]
    return exact[0] if exact else next(t for t in fig["data"]
                                       if t.get("name", "").startswith(name))
