"""What a user takes away, in a real browser (issue 14): on every page the report
download holds the page's answer (the values its results table shows) and the scenario
sentence before the inputs, and a chart's CSV has one unit-named column per series,
the x column named after the chart's x-axis (not ``series,x,y``)."""
from __future__ import annotations

import csv
import html
import io
import re

import pytest

from tests.e2e import helpers as h
from tests.e2e.scenarios import PAGES
from tests.e2e.test_browser import download

# The values of the page's results table(s): markdown tables, values in bold.
RESULT_VALUES = '[data-testid="stMarkdownContainer"] td strong'
FIRST_CHART_AXES = """() => { const gd = document.querySelector('.js-plotly-plot');
    const t = a => (gd.layout[a] && gd.layout[a].title && gd.layout[a].title.text) || '';
    return {x: t('xaxis'), y: t('yaxis'), names: (gd.data || []).map(d => d.name || '')}; }"""


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


@pytest.fixture(scope="module", params=PAGES, ids=lambda spec: spec.name)
def shown(request, app, browser):
    """One page at its default inputs in its own browser context."""
    context = h.new_context(browser)
    try:
        yield request.param, h.open_page(context, f"{app}/{request.param.url_path}")
    finally:
        context.close()


def test_report_holds_the_answer_the_page_shows(shown):
    spec, page = shown
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


def test_chart_csv_has_unit_named_columns(shown):
    spec, page = shown
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
