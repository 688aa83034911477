"""Driving the app in the browser: open a page, wait for it, read its charts, move a
slider.  Plain functions over Playwright objects (the fixtures are in conftest.py)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
VIEWPORT = {"width": 1400, "height": 900}
PAGE_TIMEOUT_MS = 120_000       # a page's first run on a fresh server computes everything
RERUN_TIMEOUT_MS = 60_000       # a rerun after a widget change (new inputs compute afresh)
CHANGE_TIMEOUT_MS = 30_000      # drawn data reaching its expected state after a run

# The script has finished: title and a chart drawn, the inputs written to the URL
# (the pages publish them last), no stale element left, Streamlit's "running" widget gone.
SETTLED = """() => document.querySelector('h1') !== null
    && document.querySelector('.js-plotly-plot') !== null
    && location.search.length > 1
    && document.querySelector('[data-stale="true"]') === null
    && document.querySelector('[data-testid="stStatusWidget"]') === null"""
CHARTS = "[...document.querySelectorAll('.js-plotly-plot')].map(g => g.data || [])"
CHART_DATA = f"() => JSON.parse(JSON.stringify({CHARTS}))"
CHARTS_MATCH = f"([ref, same]) => (JSON.stringify({CHARTS}) === JSON.stringify(ref)) === same"
NEXT_FRAME = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


class Watch:
    """What a browser context did that the app should never do: uncaught page errors
    and requests to anywhere but 127.0.0.1 (the app needs no network)."""

    def __init__(self, context):
        self.page_errors: list[str] = []
        self.external_requests: list[str] = []
        context.on("request", self._request)
        context.on("weberror", lambda e: self.page_errors.append(str(e.error)))

    def _request(self, request) -> None:
        scheme, _, rest = request.url.partition("://")
        if scheme in ("http", "https", "ws", "wss") and not rest.startswith("127.0.0.1"):
            self.external_requests.append(request.url)


def new_context(browser):
    """A fresh browser context: no cookies, storage or Streamlit session."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    return context


def open_page(context, url: str):
    """Open ``url`` (a page, with or without a query string) and wait until it has settled."""
    page = context.new_page()
    page.goto(url)
    settle(page)
    return page


def settle(page) -> None:
    page.wait_for_function(SETTLED)
    page.evaluate(NEXT_FRAME)


def chart_data(page) -> list:
    """The traces of every Plotly chart on the page, as the browser draws them."""
    return page.evaluate(CHART_DATA)


def wait_for_charts(page, reference: list, same: bool) -> list:
    """Wait until the drawn data equals ``reference`` (``same``) or differs from it;
    return the data drawn at the end either way (the caller asserts)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(CHARTS_MATCH, arg=[reference, same], timeout=CHANGE_TIMEOUT_MS)
    except PlaywrightTimeout:      # the caller's assertion says what differs
        pass
    return chart_data(page)


def slider(page, label: str):
    """The slider with this label, wherever the page puts it (sidebar or main area)."""
    esc = label.replace("\\", "\\\\").replace('"', '\\"')
    return page.locator(f'input[type="range"][aria-label="{esc}"], '
                        f'[role="slider"][aria-label="{esc}"]').first


def slider_value(page, label: str) -> float:
    thumb = slider(page, label)
    raw = thumb.get_attribute("aria-valuenow") or thumb.input_value()
    return float(raw)


def rerun_after(page, action) -> None:
    """Do ``action`` (a widget change) and wait for the rerun it starts to finish (the
    pages write their inputs to the URL at the end of a run, so the URL changes)."""
    before = page.url
    action()
    page.wait_for_function("u => location.href !== u", arg=before, timeout=RERUN_TIMEOUT_MS)
    settle(page)


def move_slider(page, label: str, key: str = "ArrowRight") -> float:
    """Move a slider one step with the keyboard; returns its new value once the page
    has rerun."""
    thumb = slider(page, label)
    old = slider_value(page, label)

    def press():
        thumb.focus()
        thumb.press(key)

    rerun_after(page, press)
    new = slider_value(page, label)
    assert new != old, f"{key} did not move the slider {label!r} (still {old})"
    return new


def show_view(page, view: str) -> None:
    """Pick a view of the page's "View" segmented control (no-op if already shown)."""
    option = page.get_by_role("radiogroup", name="View", exact=True) \
        .get_by_role("radio", name=view, exact=True)
    if option.get_attribute("aria-checked") != "true":
        rerun_after(page, option.click)


def full_page_screenshot(page, path: Path) -> None:
    """The whole page: Streamlit scrolls inside its main area, not the document, so the
    viewport is stretched to the content for the shot, then restored."""
    height = page.evaluate("""() => Math.max(window.innerHeight, ...['stMain', 'stSidebarContent']
        .map(id => document.querySelector(`[data-testid="${id}"]`))
        .filter(e => e !== null).map(e => e.scrollHeight))""")
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": int(height)})
    page.evaluate(NEXT_FRAME)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True, animations="disabled")
    page.set_viewport_size(size)
    page.evaluate(NEXT_FRAME)


def keyed_value(page, key: str) -> float:
    """The value of the slider or number input whose widget key (= URL key) is ``key``
    (Streamlit marks a keyed widget's container with the class ``st-key-<key>``), so a
    test does not depend on the label's wording."""
    widget = page.locator(f".st-key-{key} input").first           # a range or a number
    raw = widget.get_attribute("aria-valuenow") or widget.input_value()
    return float(raw)


def set_number(page, key: str, value) -> None:
    """Type ``value`` into the number input keyed ``key``; wait for the rerun it starts."""
    box = page.locator(f".st-key-{key} input").first

    def enter():
        box.fill(str(value))
        box.press("Enter")

    rerun_after(page, enter)


def move_keyed_slider(page, key: str, press: str = "ArrowRight") -> float:
    """Move the slider keyed ``key`` one step with the keyboard; its value after the rerun."""
    thumb = page.locator(f'.st-key-{key} input[type="range"], '
                         f'.st-key-{key} [role="slider"]').first

    def step():
        thumb.focus()
        thumb.press(press)

    rerun_after(page, step)
    return keyed_value(page, key)


def dialogs(page) -> list[str]:
    """The text of every modal dialog shown (Streamlit's "Page not found" is one)."""
    return page.locator('[role="dialog"]').all_inner_texts()
