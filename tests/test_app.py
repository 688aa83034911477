"""The Streamlit app starts, routes to every page, and the home page links to each."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_pages import PAGES, page

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
SCRIPTS = sorted(p.relative_to(ROOT).as_posix()
                 for p in [*(ROOT / "app_pages").glob("*.py"),
                           *(ROOT / "app_pages").glob("*/page.py")]
                 if p.name not in ("home.py", "__init__.py"))


def test_app_runs_and_shows_home():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert any("Inference Queueing Lab" in t.value for t in at.title)


def test_the_registry_lists_every_page_once_by_its_package_name():
    """Page ids equal the package names under app_pages/: every package with a page.py is
    registered, once, and nothing else is."""
    packages = sorted(p.parent.name for p in (ROOT / "app_pages").glob("*/page.py"))
    ids = [info.id for info in PAGES]
    assert sorted(ids) == packages
    assert len(set(ids)) == len(ids)
    assert len({info.url_path for info in PAGES}) == len(PAGES)
    assert sorted(info.module for info in PAGES) == SCRIPTS
    for info in PAGES:
        assert page(info.id) is info
        assert info.icon.startswith(":material/") and info.icon.endswith(":")
        assert info.description and "\n" not in info.description
    with pytest.raises(KeyError, match="no page 'nope'"):
        page("nope")


def test_the_old_share_addresses_are_kept():
    """Share links carry the url path: the registry keeps the addresses pages had."""
    assert {info.id: info.url_path for info in PAGES} == {
        "batching": "gpu-batching", "token_limit": "llm-token-limits",
        "llm_batching": "llm-batching", "llm_serving": "llm-serving",
        "pipeline": "cpu-gpu-pipeline", "sla": "autoscaling-sla",
        "planner": "capacity-planner"}


def test_home_links_every_registered_page_with_its_example():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    links = [e.proto for e in at.get("page_link")]
    for info in PAGES:
        mine = [link for link in links if link.page == info.url_path
                or link.page.endswith(info.module)]
        assert len(mine) == 2, info.id           # the page, and its example
        assert any(link.query_string for link in mine)
        assert any(link.help == info.description for link in mine)   # its one line


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_page_is_routed(script):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(script).run()
    assert not at.exception


def test_no_pages_folder_beside_the_entry_script():
    """A `pages/` folder beside app.py makes Streamlit's first run on a fresh server take
    its legacy multipage path, and a share link opened first shows "Page not found"
    (the browser test tests/e2e/test_links.py opens one); the pages live in app_pages/."""
    assert not (ROOT / "pages").exists()


def test_test_helpers_name_pages_as_the_registry_does():
    """The page tests' and browser tests' page names are the registry's ids (the packages
    under app_pages/), with the registry's url paths."""
    from app_pages import PAGES
    from tests import pagetest
    from tests.e2e import scenarios
    assert set(pagetest.SCRIPTS) == {p.id for p in PAGES}
    assert {(s.name, s.url_path) for s in scenarios.PAGES} == {(p.id, p.url_path) for p in PAGES}
    assert all((pagetest.ROOT / p.module).is_file() for p in PAGES)
