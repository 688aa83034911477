"""Inference Queueing Lab: the Streamlit entry point. It only routes."""
from pathlib import Path

import streamlit as st

from engine.pipeline import limit_blas_threads

# A local favicon: a Material icon name would make the browser fetch it from Google Fonts.
ICON = Path(__file__).resolve().parent / "assets" / "icon.png"


def run() -> None:
    limit_blas_threads()          # once per process, before any session solves (idempotent)
    st.set_page_config(page_title="Inference Queueing Lab", page_icon=str(ICON),
                       layout="wide")
    home = st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True)
    models = [
        st.Page("app_pages/batching/page.py", title="GPU dynamic batching",
                icon=":material/memory:", url_path="gpu-batching"),
        st.Page("app_pages/token_limit/page.py", title="LLM token limits",
                icon=":material/content_cut:", url_path="llm-token-limits"),
        st.Page("app_pages/llm_batching/page.py", title="LLM batching strategies",
                icon=":material/stacks:", url_path="llm-batching"),
        st.Page("app_pages/llm_serving/page.py", title="LLM serving",
                icon=":material/dynamic_feed:", url_path="llm-serving"),
        st.Page("app_pages/pipeline/page.py", title="CPU-GPU pipeline",
                icon=":material/account_tree:", url_path="cpu-gpu-pipeline"),
        st.Page("app_pages/sla/page.py", title="Autoscaling for a latency SLA",
                icon=":material/dns:", url_path="autoscaling-sla"),
    ]
    planning = [st.Page("app_pages/planner/page.py", title="Capacity planner",
                        icon=":material/savings:", url_path="capacity-planner")]
    st.navigation({"Inference Queueing Lab": [home], "Models": models,
                   "Planning": planning}).run()


run()
