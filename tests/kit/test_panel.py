"""The Formulas view shows the model's document; every page's model has one."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted(p.parent.name for p in (ROOT / "app_pages").glob("*/page.py"))


def test_every_page_package_has_its_model_document():
    assert MODELS == ["batching", "llm_batching", "llm_serving", "pipeline", "planner", "sla",
                      "token_limit"]
    for model in MODELS:
        assert (ROOT / "docs" / "models" / f"{model}.md").is_file(), model
        assert (ROOT / "engine" / model / "__init__.py").is_file(), model
        assert (ROOT / "tests" / model).is_dir(), model


def _formulas(model):
    from ui.panel import formulas_panel
    formulas_panel([("x^2", "a square")], ["an erratum"], model)


@pytest.mark.parametrize("model", MODELS)
def test_formulas_view_shows_the_model_document(model):
    at = AppTest.from_function(_formulas, args=(model,)).run()
    assert not at.exception
    assert at.expander[0].label == f"Derivations, errata and checks (docs/models/{model}.md)"
    first_line = (ROOT / "docs" / "models" / f"{model}.md").read_text().splitlines()[0]
    assert any(first_line.lstrip("# ") in m.value for m in at.expander[0].markdown)
