"""The report names a pinned baseline and compares the metrics with it, on every model page
(issue 24: the report never named the baseline the page showed)."""
import html

import pytest

from tests import pagetest

PIN_KEYS = {"batching": "pin_gpu", "token_limit": "pin_tokens",
            "llm_batching": "pin_llm", "llm_serving": "pin_llm_serving",
            "pipeline": "pin_pipeline", "sla": "pin_sla"}


@pytest.mark.parametrize("page", PIN_KEYS)
def test_the_report_names_the_pinned_baseline(page, monkeypatch):
    import ui.export as export
    seen = {}

    def report_button(title, parameters, sections, formulas, notes, file_name, where=None,
                      **kw):
        seen["html"] = export.report_of(title, parameters, lambda: [], formulas, notes,
                                        answer=kw.get("answer", ()),
                                        scenario=kw.get("scenario", ""),
                                        compared=kw.get("compared"))

    monkeypatch.setattr(export, "report_button", report_button)
    at = pagetest.open_page(pagetest.script(page), {"simulate": "false"})
    assert "pinned baseline" not in seen["html"]
    at.button(key=PIN_KEYS[page]).click().run()
    assert not at.exception
    label = at.session_state[f"_baseline_{PIN_KEYS[page].removeprefix('pin_')}"]["label"]
    assert (f"<h2>Compared with the pinned baseline</h2><p>Baseline: {html.escape(label)}</p>"
            in seen["html"])
    assert "<th>metric</th><th>baseline</th><th>current</th>" in seen["html"]
