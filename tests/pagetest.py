"""Shared helpers of the page tests (Streamlit AppTest, no browser)."""
import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_pages import PAGES

ROOT = Path(__file__).resolve().parent.parent

SCRIPTS = {p.id: p.module for p in PAGES}     # page id (its package) -> its script


def script(page: str) -> str:
    """The script path (under the repository) of the page called ``page``."""
    return SCRIPTS[page]


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


def results(at) -> dict[str, str]:
    """Every labelled value on the page: st.metric elements and the cells of the
    results tables (``ui.panel.results_table``: labels as headers, values below)."""
    out = {m.label: m.value for m in at.metric}
    for md in at.markdown:
        lines = [ln for ln in md.value.splitlines() if ln.startswith("|")]
        for head, rule, body in zip(lines[0::3], lines[1::3], lines[2::3]):
            if not set(rule) <= set("|-: "):
                continue
            labels = [c.strip() for c in head.strip("|").split(" | ")]
            values = [c.strip().strip("*") for c in body.strip("|").split(" | ")]
            out.update({k.replace("\\|", "|"): v.replace("\\|", "|")
                        for k, v in zip(labels, values)})
    return out


def link(at) -> dict:
    """The page's share link as {key: value} (its query parameters)."""
    return {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}


def metric(at, label: str) -> str:
    """The value labelled ``label`` (or, failing that, whose label starts with it)."""
    found = results(at)
    if label in found:
        return found[label]
    return next(v for k, v in found.items() if k.startswith(label))


def trace(fig: dict, name: str) -> dict:
    """The trace with this name (or, failing that, whose name starts with it)."""
    exact = [t for t in fig["data"] if t.get("name") == name]
    return exact[0] if exact else next(t for t in fig["data"]
                                       if t.get("name", "").startswith(name))


def record_marked(monkeypatch) -> list:
    """A list that collects every (figure, marker) ``ui.export.show_chart`` draws from now
    on: the figure is the page's memoised one, before the operating point is added."""
    import ui.export as export
    drawn, real = [], export.marked

    def marked(fig, marker):
        drawn.append((fig, marker))
        return real(fig, marker)

    monkeypatch.setattr(export, "marked", marked)
    return drawn


def marked_figure(drawn: list):
    """The (last) figure drawn with an operating point, of those ``record_marked`` kept."""
    found = [fig for fig, marker in drawn if marker is not None]
    assert found, "no chart drawn with an operating point"
    return found[-1]
