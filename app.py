"""Inference Queueing Lab: the Streamlit entry point. It only routes."""
from pathlib import Path

import streamlit as st

# A local favicon: a Material icon name would make the browser fetch it from Google Fonts.
ICON = Path(__file__).resolve().parent / "assets" / "icon.png"


def run() -> None:
    st.set_page_config(page_title="Inference Queueing Lab", page_icon=str(ICON),
                       layout="wide")
    home = st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)
    models = [
        st.Page("pages/gpu_batching.py", title="GPU dynamic batching",
                icon=":material/memory:", url_path="gpu-batching"),
        st.Page("pages/llm_token_limits.py", title="LLM token limits",
                icon=":material/content_cut:", url_path="llm-token-limits"),
        st.Page("pages/llm_batching.py", title="LLM batching strategies",
                icon=":material/stacks:", url_path="llm-batching"),
        st.Page("pages/cpu_gpu_pipeline.py", title="CPU-GPU pipeline",
                icon=":material/account_tree:", url_path="cpu-gpu-pipeline"),
        st.Page("pages/autoscaling_sla.py", title="Autoscaling for a latency SLA",
                icon=":material/dns:", url_path="autoscaling-sla"),
    ]
    st.navigation({"Inference Queueing Lab": [home], "Models": models}).run()


run()
