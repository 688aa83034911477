"""Home page: what each page answers, and one example per page to start from (a link
that opens the page on that scenario, like a share link)."""
import streamlit as st

st.title("Inference Queueing Lab")
st.markdown(
    "What-if questions about GPU inference servers, answered with queueing theory: "
    "exact where theory allows, checked by simulation everywhere. Each page answers one "
    "question; to start, open one of the examples below and move the sliders. The address "
    "bar always holds a link to what you see, to send on.")


def example(page: str, label: str, icon: str, question: str, link: str, query: dict) -> None:
    """A page's link, the question it answers, and one example scenario as a deep link."""
    st.page_link(page, label=label, icon=icon)
    st.markdown(question)
    st.page_link(page, label=link, icon=":material/play_arrow:", query_params=query)


example("app_pages/batching/page.py", "GPU dynamic batching", ":material/memory:",
        "If traffic doubles, what happens to the mean and the slowest 1 % of latencies? What "
        "does a request cost in energy and money, and which batch-size limit and queue delay "
        "should the server use?",
        "Example: ResNet-50 on a V100 at 80 % of its capacity: tail latency against a 10 ms "
        "target",
        {"preset": "v100_resnet50_mixed", "load_mode": "rho", "rho": "0.8", "sla_ms": "10",
         "view": "Tail latency & Triton"})

example("app_pages/token_limit/page.py", "LLM token limits", ":material/content_cut:",
        "If answers are cut at a number of output tokens, how much shorter is the wait, how "
        "many answers are cut, and how many impatient users stop leaving?",
        "Example: users who give up after 30 s: the answer limit that loses the fewest",
        {"patience_s": "30", "view": "Optimal limit"})

example("app_pages/llm_batching/page.py", "LLM batching strategies", ":material/stacks:",
        "Which way of batching requests (dynamic, capped, fixed, elastic or continuous) keeps "
        "latency lowest, with which batch size, and up to what load does each keep up?",
        "Example: Llama-2 7B on an A100: the best strategy as the load grows, and where each "
        "one stops keeping up",
        {"lam_max": "0.3", "lam": "0.08", "view": "Best strategy"})

example("app_pages/llm_serving/page.py", "LLM serving", ":material/dynamic_feed:",
        "How long until the first token, how fast the next ones follow, and up to what load "
        "does one vLLM-style server (continuous batching, chunked prefill, a paged KV cache) "
        "keep a latency target? Where does the KV cache run out?",
        "Example: Llama-2 70B on four H100s, Azure conversation traffic: the largest load "
        "at which 90 % of requests get their first token within 1 s and the next ones "
        "every 100 ms",
        {"preset": "splitwise_h100_llama2_70b_tp4", "rate": "2", "ttft_slo_ms": "1000",
         "tpot_slo_ms": "100", "slo_pct": "90"})

example("app_pages/pipeline/page.py", "CPU-GPU pipeline", ":material/account_tree:",
        "Where does a CPU → GPU memory → compute pipeline saturate, and why? How much do the "
        "stages hold each other up, and what would a bigger buffer or more units buy?",
        "Example: an A100 with room for one job in memory: the stages block each other and "
        "it handles about half of what its slowest stage could",
        {"gpu": "a100_40gb_sxm", "workload": "job_1mib_double_buffered", "K": "1",
         "units": "1", "load_mode": "frac", "frac": "0.9", "view": "Throughput & latency"})

example("app_pages/sla/page.py", "Autoscaling for a latency SLA", ":material/dns:",
        "How many GPU replicas keep 99 % of requests under 100 ms, and what does following "
        "a day of traffic cost against provisioning for the peak?",
        "Example: 1,800 requests/s, each replica serving 100 per second: 20 replicas and how "
        "fast they answer",
        {"lam": "1800", "mu": "100", "n": "20", "view": "Response time"})

example("app_pages/planner/page.py", "Capacity planner", ":material/savings:",
        "For this traffic and this latency target, which GPU, which batching settings (or "
        "token limit) and how many replicas cost least? Every combination priced, the "
        "cheapest confirmed by simulation, the whole cost-latency trade-off shown.",
        "Example: 5,000 images/s of ResNet-50, 99 % within 15 ms: T4, V100 or A100, and how "
        "many",
        {"plan_rate": "5000", "plan_pct": "99", "plan_target": "15"})
