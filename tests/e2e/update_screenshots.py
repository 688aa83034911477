"""Copy the browser tests' screenshots to docs/, where the README shows them.

    python -m pytest tests/e2e                # saves artifacts/screenshots/<page>.png
    python -m tests.e2e.update_screenshots    # copies them to docs/<page>.png

``--run`` takes the screenshots first (only the screenshot tests).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

if not __package__:                      # run as a file: python tests/e2e/update_screenshots.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.e2e.helpers import ROOT, SCREENSHOTS  # noqa: E402
from tests.e2e.scenarios import PAGES  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true",
                        help="run the screenshot tests first (starts the app and Chromium)")
    args = parser.parse_args(argv)
    if args.run:
        done = subprocess.run([sys.executable, "-m", "pytest", "tests/e2e", "-q",
                               "-k", "test_screenshot_saved"], cwd=ROOT)
        if done.returncode:
            return done.returncode
    missing = [spec.name for spec in PAGES
               if not (SCREENSHOTS / f"{spec.name}.png").is_file()
               or not (SCREENSHOTS / f"{spec.name}.png").read_bytes().startswith(PNG_MAGIC)]
    if missing:
        print(f"No screenshot in {SCREENSHOTS} for: {', '.join(missing)}. "
              "Run the browser tests first (python -m pytest tests/e2e) or pass --run.",
              file=sys.stderr)
        return 1
    docs = ROOT / "docs"
    docs.mkdir(exist_ok=True)
    for spec in PAGES:
        shutil.copyfile(SCREENSHOTS / f"{spec.name}.png", docs / f"{spec.name}.png")
        print(f"docs/{spec.name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
