"""Inference Queueing Lab: the Streamlit entry point. It only routes."""
import streamlit as st


def run() -> None:
    st.set_page_config(page_title="Inference Queueing Lab", page_icon=":material/speed:",
                       layout="wide")
    home = st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)
    gpu = st.Page("pages/gpu_batching.py", title="GPU dynamic batching",
                  icon=":material/memory:", url_path="gpu-batching")
    st.navigation({"Inference Queueing Lab": [home], "Models": [gpu]}).run()


run()
