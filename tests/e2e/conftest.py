"""Browser tests: the real app (`streamlit run app.py`) driven by headless Chromium.

The server runs once per test session on 127.0.0.1 and a free port; Chromium is the
system's (Debian packages ``chromium`` and ``chromium-driver``; Playwright's own browser
download is not used), launched with the flags that keep it off the network.  A missing
browser or Playwright fails the tests, never skips them: ``.ci/run`` installs both.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.e2e.helpers import ARTIFACTS, ROOT, new_context

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
START_TIMEOUT_S = 60
HOME_SETTLED = """() => document.querySelector('h1') !== null
    && document.querySelector('[data-testid="stStatusWidget"]') === null"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:]


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


@pytest.fixture(scope="session")
def app_url():
    """Base URL of `streamlit run app.py` on 127.0.0.1, once it answers its health check."""
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / "streamlit-server.log"
    url = f"http://127.0.0.1:{_free_port()}"
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py",
           "--server.address", "127.0.0.1", "--server.port", url.rsplit(":", 1)[1],
           "--server.headless", "true", "--server.fileWatcherType", "none",
           "--browser.gatherUsageStats", "false"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
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
def browser():
    """Headless system Chromium."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        missing = str(err)
    else:
        missing = ""
    if missing:
        pytest.fail(f"The browser tests need the Python package `playwright` ({missing}; "
                    "pip install -r requirements-dev.txt).", pytrace=False)
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"The browser tests need Chromium at {CHROMIUM} (Debian/Ubuntu: "
                    "apt-get install chromium chromium-driver, as `bash .ci/run` does; "
                    "another path: set CHROMIUM_PATH).", pytrace=False)
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
    """The base URL, once the entry script has run once.

    On a fresh server the first request for any page but the default one shows
    Streamlit's "Page not found" modal over the right page, and the modal makes the
    page inert (st.navigation has not registered the pages yet;
    streamlit/streamlit#9992).  Opening the home page first registers them.
    """
    context = new_context(browser)
    try:
        page = context.new_page()
        page.goto(app_url + "/")
        page.wait_for_function(HOME_SETTLED)
    finally:
        context.close()
    return app_url
