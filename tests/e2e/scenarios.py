"""The pages the browser tests visit, and what each test does on them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    name: str              # page id (its package, app_pages.PAGES); names the screenshot
    url_path: str          # st.Page url_path
    title: str             # the page's st.title, also the report's title
    slider: str            # label of the slider the tests move (wherever the page puts it)
    param: str             # the slider's query parameter in the share link
    view: str | None = None  # view shown before moving the slider, where the default
    #                          view's charts do not depend on that slider


PAGES = [
    PageSpec("batching", "gpu-batching", "GPU dynamic batching",
             "Normalised load ρ = λα", "rho", view="Utilization & energy"),
    PageSpec("token_limit", "llm-token-limits", "LLM token limits", "log-mean μ (log tokens)",
             "log_mean"),
    PageSpec("llm_batching", "llm-batching", "LLM batching strategies",
             "log-mean μ (log tokens)", "log_mean"),
    PageSpec("llm_serving", "llm-serving", "LLM serving", "Load (requests/s)", "rate"),
    PageSpec("pipeline", "cpu-gpu-pipeline", "CPU-GPU pipeline",
             "K: jobs the GPU memory holds", "K", view="Throughput & latency"),
    PageSpec("sla", "autoscaling-sla", "Autoscaling for a latency SLA",
             "SLA percentile p (%)", "pct"),
    PageSpec("planner", "capacity-planner", "Capacity planner",
             "Percentile of requests (%)", "plan_pct"),
]
