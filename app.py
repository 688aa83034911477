"""Inference Queueing Lab: the Streamlit entry point. It only routes."""
from pathlib import Path

import streamlit as st

from app_pages import HOME, PAGES
from engine.pipeline import limit_blas_threads

# A local favicon: a Material icon name would make the browser fetch it from Google Fonts.
ICON = Path(__file__).resolve().parent / "assets" / "icon.png"


def run() -> None:
    limit_blas_threads()          # once per process, before any session solves (idempotent)
    st.set_page_config(page_title="Inference Queueing Lab", page_icon=str(ICON),
                       layout="wide")
    sections = {"Inference Queueing Lab": [st.Page(HOME, title="Home", icon=":material/home:",
                                                   default=True)]}
    for info in PAGES:
        sections.setdefault(info.group, []).append(
            st.Page(info.module, title=info.title, icon=info.icon, url_path=info.url_path))
    st.navigation(sections).run()


run()
