"""A process a test starts ends with the test run, even when the run is killed (the
browser tests' Streamlit server: tests/e2e/conftest.py).  The check kills a stand-in
test run with SIGKILL (no cleanup code of its own runs) and looks for its child."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RUN = """
import subprocess, sys
sys.path.insert(0, {root!r})
from tests.e2e.conftest import spawn_dying_with_parent
child = spawn_dying_with_parent([sys.executable, "-c", "import time; time.sleep(120)"],
                                subprocess.DEVNULL)
print(child.pid, flush=True)
import time; time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:                                       # a zombie waiting for its reaper is gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_started_server_dies_with_a_killed_test_run():
    """A stand-in test run starts a child the way the browser tests start Streamlit and is
    then killed with SIGKILL: the child is gone soon after (polled: no time limit in the
    assertion, only in how long the poll waits before giving up)."""
    run = subprocess.Popen([sys.executable, "-c", RUN.format(root=str(ROOT))],
                           stdout=subprocess.PIPE, text=True)
    child = int(run.stdout.readline())
    assert _alive(child)
    run.send_signal(signal.SIGKILL)
    run.wait()
    for _ in range(600):                       # up to a minute on a busy machine
        if not _alive(child):
            break
        time.sleep(0.1)
    alive = _alive(child)
    if alive:
        os.kill(child, signal.SIGKILL)
    assert not alive
