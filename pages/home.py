"""Home page: what the lab answers, and where."""
import streamlit as st

st.title("Inference Queueing Lab")
st.markdown(
    """
What-if questions about GPU inference servers, answered with queueing theory:
exact where theory allows, validated by simulation everywhere.

- **GPU dynamic batching** (Inoue 2021): how mean and tail latency, utilisation and
  energy per request move with traffic, batch-size limits and the batcher's delay.
  *The engine for this page is ready (`engine.batching`, `engine.sim`); the page is
  next.*
"""
)
