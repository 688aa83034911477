"""Browser tests: the real app (`streamlit run app.py`) driven by headless Chromium.

The server runs once per test session on 127.0.0.1 and a free port; Chromium is the
first found of: ``CHROMIUM_PATH``, the system Chromium (Debian packages ``chromium`` and
``chromium-driver``), or a Chromium installed by ``python -m playwright install chromium``;
launched with the flags that keep it off the network.  Every test here carries the
``browser`` marker.  Without a browser (or the ``playwright`` package) they are skipped
with one line saying how to enable them, unless ``CI`` is set: then they fail, so CI
always runs them (``.ci/run`` installs Chromium).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.e2e.helpers import ARTIFACTS, ROOT, new_context

SYSTEM_CHROMIUMS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
ENABLE = ("install Chromium (apt-get install chromium), set CHROMIUM_PATH, or run "
          "`python -m playwright install chromium`")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
START_TIMEOUT_S = 60
HOME_SETTLED = """() => document.querySelector('h1') !== null
    && document.querySelector('[data-testid="stStatusWidget"]') === null"""


def find_chromium() -> str | None:
    """The browser the tests drive: ``CHROMIUM_PATH``, a system Chromium on PATH, or
    Playwright's own download; None when there is none."""
    explicit = os.environ.get("CHROMIUM_PATH")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for name in SYSTEM_CHROMIUMS:
        found = shutil.which(name)
        if found:
            return found
    try:
        from playwright.sync_api import sync_playwright
        with sync_playwright() as pw:
            path = pw.chromium.executable_path
    except Exception:          # no playwright package, or no browser it installed
        return None
    return path if path and os.access(path, os.X_OK) else None


def _required() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def _missing() -> str:
    """Why the browser tests cannot run here ("" when they can)."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed (pip install -r requirements-dev.txt)"
    if CHROMIUM is None:
        where = os.environ.get("CHROMIUM_PATH")
        return (f"CHROMIUM_PATH={where} is not an executable" if where else
                "no Chromium found")
    return ""


CHROMIUM = find_chromium()


def _skip_reason() -> str:
    return f"browser tests skipped: {_missing()}; to run them, {ENABLE}"


def pytest_collection_modifyitems(config, items):
    """Mark every browser test; skip them all where no browser is found (fail instead
    when CI is set)."""
    mine = [i for i in items if "tests/e2e/" in i.nodeid.replace("\\", "/")]
    why = _missing() if mine else ""
    for item in mine:
        item.add_marker(pytest.mark.browser)
        if why and not _required():
            item.add_marker(pytest.mark.skip(reason=_skip_reason()))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Every browser test skipped for want of a browser reports this file as the place,
    so the summary (``-ra``) says it in one line, however many test files there are."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and isinstance(report.longrepr, tuple) \
            and report.longrepr[2].startswith("Skipped: browser tests skipped"):
        report.longrepr = (__file__, 1, report.longrepr[2])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:]


def _die_with_parent() -> None:
    """In the child, before it runs: on Linux ask the kernel to send it SIGTERM when the
    process that started it dies, however it dies (a test run killed by a time limit
    does not leave its server holding a port)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):                               # not Linux: _stop only
        pass


def spawn_dying_with_parent(cmd, log) -> subprocess.Popen:
    """``cmd`` started in a process group of its own (``_stop`` ends the group), its
    output to ``log``, ending when this process ends even if this one is killed."""
    return subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=_die_with_parent,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _stop(proc: subprocess.Popen) -> None:
    """Terminate the server and its children (the process group it leads)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def _serve(log_name: str):
    """Start `streamlit run app.py` on 127.0.0.1 and a free port; yield its base URL once
    it answers its health check (no page requested yet); stop it afterwards."""
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / log_name
    url = f"http://127.0.0.1:{_free_port()}"
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py",
           "--server.address", "127.0.0.1", "--server.port", url.rsplit(":", 1)[1],
           "--server.headless", "true", "--server.fileWatcherType", "none",
           "--browser.gatherUsageStats", "false"]
    with open(log_path, "wb") as log:
        proc = spawn_dying_with_parent(cmd, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"`streamlit run app.py` exited ({proc.returncode}) before answering:"
                            f"\n{_tail(log_path)}", pytrace=False)
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"`streamlit run app.py` did not answer {url}/_stcore/health in "
                            f"{START_TIMEOUT_S} s:\n{_tail(log_path)}", pytrace=False)
            time.sleep(0.2)
        yield url
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def app_url():
    """Base URL of `streamlit run app.py` on 127.0.0.1, once it answers its health check."""
    yield from _serve("streamlit-server.log")


@pytest.fixture
def fresh_app_url():
    """A server of its own, started for this test: its first request is the test's."""
    yield from _serve("streamlit-fresh-server.log")


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium (``find_chromium``); fails when CI is set and there is none."""
    why = _missing()
    if why:
        pytest.fail(f"CI is set, so the browser tests must run, but {why}; {ENABLE}.",
                    pytrace=False)
    from playwright.sync_api import sync_playwright
    pw = sync_playwright().start()
    try:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    except Exception as err:
        pw.stop()
        pytest.fail(f"Chromium at {CHROMIUM} did not start: {err}", pytrace=False)
    yield chromium
    chromium.close()
    pw.stop()


@pytest.fixture(scope="session")
def app(browser, app_url) -> str:
    """The base URL, once the entry script has run once (the app's modules loaded, so
    the first test's timings do not carry the imports).  A deep link as the very first
    request to a fresh server is tested on a server of its own (tests/e2e/test_links.py).
    """
    context = new_context(browser)
    try:
        page = context.new_page()
        page.goto(app_url + "/")
        page.wait_for_function(HOME_SETTLED)
    finally:
        context.close()
    return app_url
