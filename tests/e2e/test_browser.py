"""Every page in a real browser (headless Chromium against `streamlit run app.py`).

Each page is opened once at its default inputs and the tests below run on it in
order: it renders without errors, a full-page screenshot is saved
(artifacts/screenshots/<page>.png), the first chart's CSV and the report download as
valid files, what a user takes away (issue 14: the report holds the page's answer and
the scenario before the inputs, the CSV's columns are named with units), a slider move
changes the drawn data, and the share link (page.url after a slider move) restores the
same scenario in a fresh browser context.
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
    # wide since issue 14: x, then one unit-named column per series (test_chart_csv_...)
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
    report = page.context.new_page()          # its width as a reader's browser lays it out
    try:
        report.set_content(text)
        width = report.evaluate("document.documentElement.scrollWidth")
    finally:
        report.close()
    assert width <= h.VIEWPORT["width"], f"the report is {width} px wide (a long share link?)"


# ---------------------------------------------------------------- what a user takes away
# Issue 14, on the same page at its default inputs: the report download holds the page's
# answer (the values its results table shows) and the scenario sentence before the inputs,
# and a chart's CSV has one unit-named column per series, the x column named after the
# chart's x-axis (not ``series,x,y``).

# The values of the page's results table(s): markdown tables, values in bold.
RESULT_VALUES = '[data-testid="stMarkdownContainer"] td strong'
FIRST_CHART_AXES = """() => { const gd = document.querySelector('.js-plotly-plot');
    const t = a => (gd.layout[a] && gd.layout[a].title && gd.layout[a].title.text) || '';
    return {x: t('xaxis'), y: t('yaxis'), names: (gd.data || []).map(d => d.name || '')}; }"""


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


def test_report_holds_the_answer_the_page_shows(opened):
    spec, page = opened.spec, opened.page
    values = [_plain(v) for v in page.locator(RESULT_VALUES).all_inner_texts()]
    values = [v for v in dict.fromkeys(values) if v]
    assert values, f"{spec.name}: no results table found on the page"
    _, data = download(page, "Download report")
    raw = data.decode("utf-8")
    report = _plain(html.unescape(raw))
    missing = [v for v in values if v not in report]
    assert not missing, f"{spec.name}: the report lacks the page's answer values {missing[:6]}"
    head = report[:report.index("<h2>Inputs</h2>")]
    assert "<h2>Answer</h2>" in head and "class='scenario'" in head, \
        f"{spec.name}: the report does not open with the scenario and the answer"
    first = report.index("<h2>Answer</h2>")
    assert all(report.index(v, first) < report.index("<h2>Inputs</h2>") for v in values[:3]), \
        f"{spec.name}: the answer values are not in the answer table"
    assert not re.search(r"<td>[(\[].*?[)\]]</td>", report), \
        f"{spec.name}: an input printed as a Python tuple or list"
    link = re.search(r'<a href="([^"]+)">', raw)
    assert link and html.unescape(link.group(1)) == page.url, \
        f"{spec.name}: the report's share link {link and link.group(1)!r}, the page {page.url!r}"
    assert re.search(r"version\s+\S+", report) and re.search(r"\d{4}-\d\d-\d\d", report)


def test_chart_csv_has_unit_named_columns(opened):
    page = opened.page
    axes = page.evaluate(FIRST_CHART_AXES)
    name, data = download(page, "CSV")
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    header, body = rows[0], rows[1:]
    assert header[:3] != ["series", "x", "y"], f"{name}: still series,x,y"
    assert len(header) >= 2 and body, f"{name}: {header}, {len(body)} rows"
    for row in body:
        assert len(row) == len(header)
        assert any(cell != "" for cell in row[1:]), f"{name}: an empty row"
    if not axes["x"]:              # a diagram (the pipeline): its CSV is the page's table
        assert header[0] not in ("x", "series") and \
            sum(bool(re.search(r"\(.+\)$", c)) for c in header[1:]) * 2 >= len(header) - 1, \
            f"{name}: the table's columns carry no units: {header}"
        return
    assert header[0] == axes["x"], f"{name}: x column {header[0]!r}, axis {axes['x']!r}"
    for column in header[1:]:
        assert re.search(r"\(.+\)$|: .+", column), f"{name}: column {column!r} has no unit"
        assert any(column.lstrip("'").startswith(n) for n in axes["names"] if n) \
            or column == axes["y"], f"{name}: column {column!r} names no drawn series"


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
