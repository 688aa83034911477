"""The Streamlit app starts and routes (AppTest, no browser)."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_app_runs_and_shows_home():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert any("Inference Queueing Lab" in t.value for t in at.title)
