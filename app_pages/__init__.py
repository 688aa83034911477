"""The app's pages: one package per page (``app_pages/<id>/page.py``), listed once here.

``PAGES`` is the one registry that ``app.py`` routes and the home page lists: each page's
id (the name of its package), title, icon, url path, the question it answers, and one example
scenario (a deep link, like a share link)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageInfo:
    """One page of the app, as the router and the home page show it."""
    id: str                   # the package under app_pages/ holding page.py
    title: str
    icon: str                 # a Material icon name, ":material/...:"
    url_path: str             # the address share links use; never change it
    group: str                # the navigation section
    description: str          # one line: what the page answers
    question: str             # the home page's longer question
    example: str              # the example link's label
    query: dict = field(default_factory=dict)   # the example's URL parameters

    @property
    def module(self) -> str:
        """The page's script, relative to the repository root."""
        return f"app_pages/{self.id}/page.py"


PAGES: tuple[PageInfo, ...] = (
    PageInfo(
        "batching", "GPU dynamic batching", ":material/memory:", "gpu-batching", "Models",
        "Latency, energy and cost of a GPU server that batches requests dynamically.",
        "If traffic doubles, what happens to the mean and the slowest 1 % of latencies? What "
        "does a request cost in energy and money, and which batch-size limit and queue delay "
        "should the server use?",
        "Example: ResNet-50 on a V100 at 80 % of its capacity: tail latency against a 10 ms "
        "target",
        {"preset": "v100_resnet50_mixed", "load_mode": "rho", "rho": "0.8", "sla_ms": "10",
         "view": "Tail latency & Triton"}),
    PageInfo(
        "token_limit", "LLM token limits", ":material/content_cut:", "llm-token-limits",
        "Models",
        "What a cap on output tokens buys in waiting time, cut answers and lost users.",
        "If answers are cut at a number of output tokens, how much shorter is the wait, how "
        "many answers are cut, and how many impatient users stop leaving?",
        "Example: users who give up after 30 s: the answer limit that loses the fewest",
        {"patience_s": "30", "view": "Optimal limit"}),
    PageInfo(
        "llm_batching", "LLM batching strategies", ":material/stacks:", "llm-batching",
        "Models",
        "Which way of batching LLM requests keeps latency lowest, load by load.",
        "Which way of batching requests (dynamic, capped, fixed, elastic or continuous) keeps "
        "latency lowest, with which batch size, and up to what load does each keep up?",
        "Example: Llama-2 7B on an A100: the best strategy as the load grows, and where each "
        "one stops keeping up",
        {"lam_max": "0.3", "lam": "0.08", "view": "Best strategy"}),
    PageInfo(
        "llm_serving", "LLM serving", ":material/dynamic_feed:", "llm-serving", "Models",
        "First-token and next-token latency of a vLLM-style server, and its largest load.",
        "How long until the first token, how fast the next ones follow, and up to what load "
        "does one vLLM-style server (continuous batching, chunked prefill, a paged KV cache) "
        "keep a latency target? Where does the KV cache run out?",
        "Example: Llama-2 70B on four H100s, Azure conversation traffic: the largest load "
        "at which 90 % of requests get their first token within 1 s and the next ones "
        "every 100 ms",
        {"preset": "splitwise_h100_llama2_70b_tp4", "rate": "2", "ttft_slo_ms": "1000",
         "tpot_slo_ms": "100", "slo_pct": "90"}),
    PageInfo(
        "pipeline", "CPU-GPU pipeline", ":material/account_tree:", "cpu-gpu-pipeline",
        "Models",
        "Where a CPU → GPU memory → compute pipeline saturates, and why.",
        "Where does a CPU → GPU memory → compute pipeline saturate, and why? How much do the "
        "stages hold each other up, and what would a bigger buffer or more units buy?",
        "Example: an A100 with room for one job in memory: the stages block each other and "
        "it handles about half of what its slowest stage could",
        {"gpu": "a100_40gb_sxm", "workload": "job_1mib_double_buffered", "K": "1",
         "units": "1", "load_mode": "frac", "frac": "0.9", "view": "Throughput & latency"}),
    PageInfo(
        "sla", "Autoscaling for a latency SLA", ":material/dns:", "autoscaling-sla", "Models",
        "How many replicas keep a latency percentile, and what autoscaling saves.",
        "How many GPU replicas keep 99 % of requests under 100 ms, and what does following "
        "a day of traffic cost against provisioning for the peak?",
        "Example: 1,800 requests/s, each replica serving 100 per second: 20 replicas and how "
        "fast they answer",
        {"lam": "1800", "mu": "100", "n": "20", "view": "Response time"}),
    PageInfo(
        "planner", "Capacity planner", ":material/savings:", "capacity-planner", "Planning",
        "The cheapest GPU, settings and replica count for a traffic and a latency target.",
        "For this traffic and this latency target, which GPU, which batching settings (or "
        "token limit) and how many replicas cost least? Every combination priced, the "
        "cheapest confirmed by simulation, the whole cost-latency trade-off shown.",
        "Example: 5,000 images/s of ResNet-50, 99 % within 15 ms: T4, V100 or A100, and how "
        "many",
        {"plan_rate": "5000", "plan_pct": "99", "plan_target": "15"}),
)

HOME = "app_pages/home.py"


def page(page_id: str) -> PageInfo:
    """The page whose id (package name) is ``page_id``."""
    for info in PAGES:
        if info.id == page_id:
            return info
    raise KeyError(f"no page {page_id!r}; pages: {', '.join(p.id for p in PAGES)}")
