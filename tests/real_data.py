"""Real measurements published by others, read where they lie: ``REAL_DATA_DIR``, else
``../shared/real-data`` beside the repository.  They are never copied into it.

``real_file(name)`` returns a file's text; a test needing a file that is absent skips
with the reason shown (a user's own clone has no such folder), but fails when ``CI`` is
set (the project's checks must read them).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REAL_DATA = Path(os.environ.get("REAL_DATA_DIR") or ROOT.parent / "shared" / "real-data")


def real_file(name: str) -> str:
    """The text of ``REAL_DATA / name`` (bytes decoded as UTF-8), or skip (fail under CI)
    when it is absent."""
    path = REAL_DATA / name
    if not path.is_file():
        reason = (f"real data file {path} not found (real measurements are read from "
                  f"../shared/real-data, not copied)")
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path.read_bytes().decode("utf-8")
