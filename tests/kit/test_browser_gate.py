"""The browser tests skip in one line where no browser is found, and fail instead
when CI is set (run as a new user would: ``python -m pytest tests/e2e``)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run_without_browser(tmp_path, ci: bool) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"                       # a PATH holding Python and nothing else
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("CHROMIUM_PATH", "CI")}
    env.update(PATH=str(bin_dir), PLAYWRIGHT_BROWSERS_PATH=str(tmp_path / "none"))
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/e2e"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_no_browser_skips_with_one_line(tmp_path):
    run = _run_without_browser(tmp_path, ci=False)
    assert run.returncode == 0, run.stdout[-2000:]
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("SKIPPED")]
    assert len(lines) == 1 and "no Chromium found" in lines[0] and "CHROMIUM_PATH" in lines[0]
    assert " passed" not in run.stdout and "skipped" in run.stdout.splitlines()[-1]


@pytest.mark.parametrize("ci", [True])
def test_no_browser_fails_when_ci_is_set(tmp_path, ci):
    run = _run_without_browser(tmp_path, ci=ci)
    assert run.returncode != 0
    assert "CI is set, so the browser tests must run" in run.stdout
