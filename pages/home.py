"""Home page: what each page answers, with links."""
import streamlit as st

st.title("Inference Queueing Lab")
st.markdown(
    "What-if questions about GPU inference servers, answered with queueing theory: "
    "exact where theory allows, validated by simulation everywhere.")

st.page_link("pages/batching/page.py", label="GPU dynamic batching", icon=":material/memory:")
st.markdown(
    "If traffic doubles, what happens to mean and p99 latency? What does a request cost in "
    "energy and money? Which b_max, and which Triton max-queue-delay? Exact mean latency "
    "(Inoue 2021) with its closed-form bounds, simulation for the tails.")

st.page_link("pages/token_limit/page.py", label="LLM token limits", icon=":material/content_cut:")
st.markdown(
    "If answers are capped at N output tokens, how much shorter is the queue, how many "
    "answers are cut, and how many impatient users stop leaving? M/G/1 with clipping and "
    "exact impatience (Yang et al. §III), the optimal limit, and the paper's numbers beside "
    "the model's.")

st.page_link("pages/llm_batching/page.py", label="LLM batching strategies", icon=":material/stacks:")
st.markdown(
    "Dynamic, capped, fixed, elastic or continuous batching, and with which batch size? "
    "Mean and p99 latency per strategy over load, each strategy's capacity, the best one per "
    "load region, b* and the recommended b_max (Yang et al. §IV).")

st.page_link("pages/pipeline/page.py", label="CPU-GPU pipeline",
             icon=":material/account_tree:")
st.markdown(
    "Where does a CPU → GPU memory → compute-unit pipeline saturate, and why? The exact "
    "blocking tandem of May & Voigt's model (matrix-geometric) against the naive "
    "'independent stations' answer, rates from GPU specs, the bottleneck stage and what a "
    "bigger buffer or more units would buy.")

st.page_link("pages/sla/page.py", label="Autoscaling for a latency SLA",
             icon=":material/dns:")
st.markdown(
    "How many GPU replicas keep 99 % of requests under 100 ms? Random dispatch with retries "
    "by simulation, Swayam's approximation and M/M/n side by side; replicas over a day of "
    "traffic with provisioning delay, SLA misses and cost against static peak provisioning.")
