"""The Streamlit app starts, routes to every page, and the home page links to each."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGES = sorted(p.relative_to(ROOT).as_posix()
               for p in [*(ROOT / "app_pages").glob("*.py"),
                         *(ROOT / "app_pages").glob("*/page.py")]
               if p.name not in ("home.py", "__init__.py"))


def test_app_runs_and_shows_home():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert any("Inference Queueing Lab" in t.value for t in at.title)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_is_routed_and_linked_from_home(page):
    assert f'"{page}"' in (ROOT / "app.py").read_text(), f"{page} missing from app.py"
    assert f'"{page}"' in (ROOT / "app_pages" / "home.py").read_text(), f"{page} not on home"
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(page).run()
    assert not at.exception


def test_no_pages_folder_beside_the_entry_script():
    """A `pages/` folder beside app.py makes Streamlit's first run on a fresh server take
    its legacy multipage path, and a share link opened first shows "Page not found"
    (the browser test tests/e2e/test_links.py opens one); the pages live in app_pages/."""
    assert not (ROOT / "pages").exists()
