"""Typing into number inputs in a real browser (issue 24): what AppTest cannot see, because
it reruns the whole page where the browser reruns only a fragment, and it sends values the
browser itself would refuse."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from tests.e2e import helpers as h

RATE = 'input[aria-label="Arrival rate (jobs/s)"]'


def _query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def _errors(page) -> list[str]:
    return page.locator('[data-testid="stException"]').all_inner_texts()


def test_a_typed_rate_answers_and_a_rate_out_of_range_is_clamped_and_said_so(app, browser):
    context = h.new_context(browser)
    try:
        page = h.open_page(context, f"{app}/cpu-gpu-pipeline")
        h.rerun_after(page, lambda: page.get_by_text("jobs/s", exact=True).click())
        box = page.locator(RATE)

        def type_rate(text: str):
            box.fill(text)
            box.press("Enter")

        # The rate input lives in the what-if fragment, which reran alone and read the
        # fraction the full run had not drawn: KeyError "frac", and the answer was gone.
        h.rerun_after(page, lambda: type_rate("5000"))
        assert not _errors(page), _errors(page)
        assert _query(page)["rate_per_s"] == "5000" and _query(page)["frac"] == "0.8"
        assert page.get_by_text("Max sustainable rate").count()

        # Above the maximum: the browser used to keep showing it and never send it.
        h.rerun_after(page, lambda: type_rate("1e12"))
        assert not _errors(page), _errors(page)
        assert _query(page)["rate_per_s"] == "1000000000"
        assert float(box.input_value()) == 1e9
        said = page.get_by_text("Arrival rate (jobs/s) was 1e12, outside the range")
        assert said.count() == 1 and "set to 1e9" in said.inner_text()

        # Back to a fraction of capacity: the fraction not drawn meanwhile is still there.
        h.rerun_after(page, lambda: page.get_by_text("fraction of capacity", exact=True).click())
        assert not _errors(page), _errors(page)
        assert _query(page)["frac"] == "0.8" and _query(page)["rate_per_s"] == "1000000000"
    finally:
        context.close()
