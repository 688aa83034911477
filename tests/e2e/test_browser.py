"""Every page in a real browser (headless Chromium against `streamlit run app.py`).

Each page is opened once at its default inputs and the tests below run on it in
order: it renders without errors, a full-page screenshot is saved
(artifacts/screenshots/<page>.png), the first chart's CSV and the report download as
valid files, a slider move changes the drawn data, and the share link (page.url after
a slider move) restores the same scenario in a fresh browser context.
"""
from __future__ import annotations

import csv
import html
import io
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.e2e import helpers as h
from tests.e2e.scenarios import PAGES, PageSpec

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# The report builds every chart of the page when clicked, simulated views included (the
# GPU page's first report runs its p99 and delay simulations): 30 s was once too short on
# a 2-core machine busy with other work.
DOWNLOAD_TIMEOUT_MS = 90_000


@dataclass
class Opened:
    spec: PageSpec
    page: object                    # playwright Page
    watch: h.Watch
    moved_to: float | None = None   # the slider's value once a test has moved it

    def move_slider(self) -> float:
        """Show the spec's view and move its slider one step."""
        if self.spec.view:
            h.show_view(self.page, self.spec.view)
        self.moved_to = h.move_slider(self.page, self.spec.slider)
        return self.moved_to


@pytest.fixture(scope="module", params=PAGES, ids=lambda spec: spec.name)
def opened(request, app, browser) -> Opened:
    """One page at its default inputs, in its own browser context, shared by the tests
    of that page in the order they are written (one page load instead of one per test)."""
    spec = request.param
    context = h.new_context(browser)
    try:
        watch = h.Watch(context)
        yield Opened(spec, h.open_page(context, f"{app}/{spec.url_path}"), watch)
    finally:
        context.close()


def texts(page, selector: str) -> list[str]:
    return [t.strip()[:300] for t in page.locator(selector).all_inner_texts()]


def difference(a: list, b: list) -> str:
    """Which charts and traces differ between two chart_data() results, briefly."""
    if len(a) != len(b):
        return f"{len(a)} charts against {len(b)}"
    out = []
    for i, (ca, cb) in enumerate(zip(a, b)):
        if ca != cb:
            names = [t.get("name") for t in ca]
            bad = [t.get("name") for t, u in zip(ca, cb) if t != u]
            out.append(f"chart {i} (traces {names}): differs in {bad or 'trace count'}")
    return "; ".join(out) or "no difference"


def download(page, button_text: str):
    """Click the download button whose text contains ``button_text``; (file name, bytes)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    button = page.locator('[data-testid="stDownloadButton"]').filter(has_text=button_text).first
    try:
        with page.expect_download(timeout=DOWNLOAD_TIMEOUT_MS) as info:
            button.click()
    except PlaywrightTimeout:
        log = h.ARTIFACTS / "streamlit-server.log"
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
        pytest.fail(f"{button_text!r} gave no download in {DOWNLOAD_TIMEOUT_MS // 1000} s. "
                    f"End of the server log:\n{tail}", pytrace=False)
    got = info.value
    assert got.failure() is None, f"download failed: {got.failure()}"
    with open(got.path(), "rb") as f:
        return got.suggested_filename, f.read()


def test_renders_without_errors(opened):
    page, spec = opened.page, opened.spec
    assert texts(page, "h1")[:1] == [spec.title]
    assert not texts(page, '[data-testid="stException"]'), "exception shown on the page"
    errors = texts(page, '[data-testid="stAlertContentError"]')
    assert not errors, f"error shown at default inputs: {errors}"
    assert not texts(page, '[role="dialog"]'), "a modal dialog covers the page"
    charts = h.chart_data(page)
    assert charts and all(charts), "a chart with no traces"
    assert not opened.watch.page_errors, f"uncaught errors in the page: {opened.watch.page_errors}"


def test_no_request_leaves_the_machine(opened):
    """The app needs no network (README): no external fonts, icons, scripts or lookups."""
    assert not opened.watch.external_requests, \
        f"requests off this machine: {sorted(set(opened.watch.external_requests))[:5]}"


def test_screenshot_saved(opened):
    path = h.SCREENSHOTS / f"{opened.spec.name}.png"
    path.unlink(missing_ok=True)
    h.full_page_screenshot(opened.page, path)
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000, f"{path} is not a screenshot"


def test_first_chart_csv_download(opened):
    page = opened.page
    name, data = download(page, "CSV")
    assert name.endswith(".csv"), name
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    header, body = rows[0], rows[1:]
    # wide since issue 14: x, then one unit-named column per series (test_exports.py)
    assert header[:3] != ["series", "x", "y"] and len(header) >= 2, f"{name}: {header}"
    assert len(body) >= 1, f"{name}: {len(body)} row(s)"
    for row in body:
        assert len(row) == len(header), f"{name}: ragged row {row}"


def test_report_download(opened):
    page, spec = opened.page, opened.spec
    name, data = download(page, "Download report")
    text = data.decode("utf-8")
    assert name.endswith(".html"), name
    assert text.lstrip().lower().startswith("<!doctype html"), text[:100]
    assert f"<title>{html.escape(spec.title)}</title>" in text
    assert f"<h1>{html.escape(spec.title)}</h1>" in text
    graphs = text.count('class="plotly-graph-div"')
    assert graphs >= len(h.chart_data(page)), f"{graphs} charts in the report"
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=[\"']?(https?:)?//", text), \
        "the report loads something from the network"


def test_slider_changes_drawn_curve(opened):
    page, spec = opened.page, opened.spec
    if spec.view:
        h.show_view(page, spec.view)
    before = h.chart_data(page)
    value = opened.move_slider()
    after = h.wait_for_charts(page, before, same=False)
    assert after != before, f"{spec.slider} = {value} drew the same data as before"
    assert not texts(page, '[data-testid="stException"]')


def test_share_link_restores_scenario(opened, browser):
    page, spec = opened.page, opened.spec
    value = opened.moved_to if opened.moved_to is not None else opened.move_slider()
    link = page.url
    query = parse_qs(urlsplit(link).query)
    assert float(query[spec.param][0]) == pytest.approx(value), \
        f"the link carries {spec.param} = {query.get(spec.param)}, the slider shows {value}"
    drawn = h.chart_data(page)

    context = h.new_context(browser)
    try:
        fresh = h.open_page(context, link)
        assert h.slider_value(fresh, spec.slider) == pytest.approx(value)
        restored = h.wait_for_charts(fresh, drawn, same=True)
        assert restored == drawn, difference(drawn, restored)
        assert parse_qs(urlsplit(fresh.url).query) == query
        assert not [t for t in texts(fresh, '[data-testid="stAlert"]') if "Link parameter" in t]
    finally:
        context.close()
