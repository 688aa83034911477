"""Home page: what each page answers, and one example per page to start from (a link
that opens the page on that scenario, like a share link). The pages come from the one
registry, ``app_pages.PAGES``, that app.py routes."""
import streamlit as st

from app_pages import PAGES, PageInfo

st.title("Inference Queueing Lab")
st.markdown(
    "What-if questions about GPU inference servers, answered with queueing theory: "
    "exact where theory allows, checked by simulation everywhere. Each page answers one "
    "question; to start, open one of the examples below and move the sliders. The address "
    "bar always holds a link to what you see, to send on.")


def example(info: PageInfo) -> None:
    """A page's link, the question it answers, and one example scenario as a deep link."""
    st.page_link(info.module, label=info.title, icon=info.icon, help=info.description)
    st.markdown(info.question)
    st.page_link(info.module, label=info.example, icon=":material/play_arrow:",
                 query_params=info.query)


for info in PAGES:
    example(info)
