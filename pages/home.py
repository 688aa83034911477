"""Home page: what each page answers, with links."""
import streamlit as st

st.title("Inference Queueing Lab")
st.markdown(
    "What-if questions about GPU inference servers, answered with queueing theory: "
    "exact where theory allows, validated by simulation everywhere.")
st.page_link("pages/gpu_batching.py", label="GPU dynamic batching", icon=":material/memory:")
st.markdown(
    "If traffic doubles, what happens to mean and p99 latency? What does a request cost in "
    "energy and money? Which b_max, and which Triton max-queue-delay? Exact mean latency "
    "(Inoue 2021) with its closed-form bounds, simulation for the tails.")
