"""Page rerun after a slider move, against a bare Streamlit page with one chart.

Both pages run headless under ``streamlit.testing.v1.AppTest`` in this process;
the baseline is a page with one slider and one ``go.Figure`` of 200 points.
The goal is a rerun within 2x the baseline's.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from benchmarks.harness import Row

ROOT = Path(__file__).resolve().parent.parent
BARE = '''
import numpy as np
import plotly.graph_objects as go
import streamlit as st
rho = st.slider("rho", 0.01, 0.99, 0.5, key="rho")
x = np.linspace(0.01, 0.99, 200)
st.plotly_chart(go.Figure(go.Scatter(x=x, y=1 / (1 - rho * x))))
'''


def _rerun_times(at: AppTest, key: str, values, repeat: int = 3) -> float:
    """Median wall time of one rerun after moving slider ``key``."""
    times = []
    for _ in range(repeat):
        for v in values:
            slider = at.slider(key=key)
            t0 = time.perf_counter()
            slider.set_value(v).run()
            times.append(time.perf_counter() - t0)
            assert not at.exception, at.exception
    return statistics.median(times)


def page_rerun(page: str, key: str = "rho", values=(0.3, 0.6, 0.9, 0.45)) -> float:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page(page).run()
    at.slider(key=key).set_value(values[-1]).run()      # warm the caches
    return _rerun_times(at, key, values)


def bare_rerun(values=(0.3, 0.6, 0.9, 0.45)) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bare.py"
        path.write_text(BARE)
        at = AppTest.from_file(str(path), default_timeout=60)
        at.run()
        return _rerun_times(at, "rho", values)


# (page, slider key, values cycled; medians over three cycles, so cached results count)
PAGES = [
    ("GPU batching", "pages/gpu_batching.py", "rho", (0.3, 0.6, 0.9, 0.45)),
    ("LLM token limits", "pages/llm_token_limits.py", "log_sd", (0.5, 0.7, 0.9, 0.6)),
    ("LLM batching", "pages/llm_batching.py", "ln_sd", (0.6, 0.7, 0.8, 0.65)),
    ("CPU-GPU pipeline", "pages/cpu_gpu_pipeline.py", "frac", (0.3, 0.6, 0.9, 0.45)),
    ("Autoscaling SLA", "pages/autoscaling_sla.py", "amplitude", (0.2, 0.5, 0.8, 0.4)),
]


def run() -> list[Row]:
    bare = bare_rerun()
    rows = []
    for title, page, key, values in PAGES:
        t = page_rerun(page, key, values)
        rows.append(Row(f"{title} page rerun ({key} slider)", t * 1e3, "ms", "bare page ms",
                        bare * 1e3, bare / t, "<= 2x bare", t <= 2 * bare))
    return rows
