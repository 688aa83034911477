"""Inputs of the LLM batching page: the share-link fields, the sidebar, the frozen Scenario.

The token law is the shared input (``ui.token_law_input``); links made before it
used ln_mu, ln_sd, u_lo, u_hi, which still open the same law (aliases).
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from engine import llm_batching as lb
from engine.core import domains as dom
from ui import arrivals_input as arr
from ui import share
from ui import token_law_input as tli
from ui.arrivals_input import POISSON, ArrivalChoice

from . import data
from .views import LATENCY, VIEWS

PAGE = "llm"
DEFAULT_PRESET = "a100_llama2_7b"
_P = data.presets()[DEFAULT_PRESET]
LAW_ALIASES = {"log_mean": ("ln_mu",), "log_sd": ("ln_sd",), "uni_low": ("u_lo",),
               "uni_high": ("u_hi",)}

PRESET = share.Field("preset", DEFAULT_PRESET, str, choices=tuple(data.presets()))
K1 = share.Field("k1", _P.k[0], float, 1e-6, 10.0, domain=dom.LLM_K1)
K2 = share.Field("k2", _P.k[1], float, 0.0, 100.0, domain=dom.LLM_K2)
K3 = share.Field("k3", _P.k[2], float, 0.0, 1.0, domain=dom.LLM_K3)
K4 = share.Field("k4", _P.k[3], float, 0.0, 1.0, domain=dom.LLM_K4)
LAM_MAX = share.Field("lam_max", 0.3, float, 0.01, 20.0, domain=dom.LAM_PER_S)
LAM = share.Field("lam", 0.05, float, 0.001, 20.0, domain=dom.LAM_PER_S)
B = share.Field("b", 16, int, 1, 1024, domain=dom.LLM_BATCH)
B_MAX = share.Field("b_max", 64, int, 1, 1024, domain=dom.B_MAX)
KV = share.Field("kv", _P.kv_capacity_tokens or 62720.0, float, 100.0, 1e8,
                 domain=dom.LLM_KV_CAPACITY)
PROMPT = share.Field("prompt", _P.prompt_tokens, float, 0.0, 1e5, domain=dom.LLM_PROMPT_TOKENS)
SIMULATE = share.Field("simulate", False, bool)
N_JOBS = share.Field("n_jobs", 20000, int, 1000, 200_000, domain=dom.N_JOBS)
VIEW = share.Field("view", LATENCY, str, choices=VIEWS)
IMG = share.Field("img", "png", str, choices=("png", "svg"))
ARRIVALS_UPLOAD = "llm_arrivals_upload"
FIELDS = [PRESET, *tli.fields(LAW_ALIASES), K1, K2, K3, K4, LAM_MAX, LAM, *arr.FIELDS, B, B_MAX,
          KV, PROMPT, SIMULATE, N_JOBS, VIEW, IMG]


@dataclass(frozen=True)
class Scenario:
    """The sidebar's inputs (a change re-runs the whole page); the memo key of its views."""

    law: tli.TokenLawChoice                   # the output-token law chosen (labels)
    times: lb.BatchTimes                      # H(b, l) (eq 18) with that law: the model
    b: int                                    # fixed batch size
    b_max: int                                # cap of capped dynamic batching
    lam_max: float                            # end of the λ axis, requests/s
    kv: float                                 # KV cache, tokens (continuous batching)
    prompt: float                             # prompt tokens per request
    simulate: bool
    n_jobs: int                               # requests per simulated load
    arrivals: ArrivalChoice = POISSON         # the simulations' arrival process

    @property
    def poisson(self) -> bool:
        return self.arrivals.is_poisson

    @property
    def label(self) -> str:
        traffic = "" if self.poisson else f", {self.arrivals.label}"
        return f"{self.law.label}, b={self.b}, b_max={self.b_max}{traffic}"

    def parameters(self, lam: float) -> dict:
        """The report's parameter table at load ``lam``: plain text with units."""
        k1, k2, k3, k4 = self.times.k
        return {"Output length (tokens)": self.law.label,
                "Batch time H(b, l) = k1·b + k2 + k3·b·l + k4·l":
                    f"k1 = {k1:g} s per request, k2 = {k2:g} s, k3 = {k3:g} s per token per "
                    f"request, k4 = {k4:g} s per token",
                "Fixed batch size": f"{self.b} requests", "Batch-size cap":
                    f"{self.b_max} requests", "Load": f"{lam:.4g} requests/s",
                "Load axis up to": f"{self.lam_max:g} requests/s",
                "Arrivals": self.arrivals_words,
                "KV cache": f"{self.kv:,.0f} tokens",
                "Prompt": f"{self.prompt:,.0f} tokens per request",
                "Simulation": f"{self.n_jobs:,} requests per load" if self.simulate else "off"}

    @property
    def arrivals_words(self) -> str:
        """Which arrival model each result assumes, in words."""
        if self.poisson:
            return "Poisson arrivals"
        where = "the simulations" if self.simulate else "the simulations (now off)"
        return (f"{self.arrivals.label} in {where}; the exact results assume Poisson "
                "arrivals")

    def sentence(self, lam: float) -> str:
        """The scenario in one plain sentence."""
        return (f"{lam:.3g} requests per second arrive, output lengths {self.law.label} tokens; "
                f"fixed batches of {self.b}, dynamic batches capped at {self.b_max}. "
                f"Arrivals: {self.arrivals_words}.")


def load_preset():
    p = data.presets()[st.session_state["preset"]]
    for key, v in zip(("k1", "k2", "k3", "k4"), p.k):
        st.session_state[key] = v
    if p.kv_capacity_tokens:
        st.session_state["kv"] = p.kv_capacity_tokens
    st.session_state["prompt"] = p.prompt_tokens


def preset_caption(p) -> None:
    """The chosen preset's source, the prompt it assumes, and (where it gives none) that
    the KV-cache value is kept."""
    kv = ("" if p.kv_capacity_tokens else
          f" It gives no KV-cache size: the KV cache below keeps its value "
          f"({st.session_state['kv']:,.0f} tokens).")
    st.caption(share.inert(f"Source: {p.source}. Assumes {p.prompt_tokens:,.0f} prompt tokens "
                           f"per request.{kv}"))


def _set_prompt(tokens: float) -> None:
    st.session_state["prompt"] = tokens


def prompt_buttons() -> None:
    """One button per measured prompt-token law: its mean as the prompt length."""
    with st.expander("Measured prompt lengths"):
        for pid, p in tli.PROMPT_PRESETS.items():
            mean = float(round(tli.prompt_mean_tokens(pid)))
            st.button(f"{p.name}: mean {mean:,.0f} tokens", key=f"prompt_{pid}",
                      on_click=_set_prompt, args=(mean,), width="stretch",
                      help=f"Source: {p.source}")


def sidebar() -> Scenario:
    """Draw the sidebar's widgets and return the scenario they hold."""
    ss = st.session_state
    with st.sidebar:
        law = tli.draw(upload_key="tokens_file", paste_key="tokens_paste")
        st.divider()
        names = {pid: p.name for pid, p in data.presets().items()}
        if ss["preset"] not in names:
            ss["preset"] = PRESET.default
        st.selectbox("Batch-time preset", list(names), key="preset", format_func=names.get,
                     on_change=load_preset)
        preset_caption(data.presets()[ss["preset"]])
        with st.expander("Batch time H(b, l) = k1·b + k2 + k3·b·l + k4·l"):
            share.number_input(K1, "k1 (s per request)", format="%.5f", step=0.01)
            share.number_input(K2, "k2 (s)", format="%.5f", step=0.01)
            share.number_input(K3, "k3 (s per token per request)", format="%.6f", step=0.0001)
            share.number_input(K4, "k4 (s per token)", format="%.5f", step=0.001)
        share.number_input(LAM_MAX, "λ axis up to (requests/s)", step=0.05, format="%.3f")
        arrivals = arr.draw(ARRIVALS_UPLOAD)
        st.divider()
        share.number_input(B, "Fixed batch size b")
        share.number_input(B_MAX, "Batch-size cap b_max (capped dynamic)")
        share.number_input(KV, "KV cache (tokens, continuous)", step=1000.0,
                           help="The KV cache of continuous batching, which runs on the LLM "
                                "serving simulator (vLLM's scheduler without chunked prefill, "
                                "whole prompts, no token budget): a request is admitted when "
                                "its prompt fits; the newest is preempted and recomputed when "
                                "the replies outgrow the cache.")
        share.number_input(PROMPT, "Prompt tokens per request", step=64.0,
                           help="Tokens each request holds in the KV cache before its reply "
                                "(continuous batching; 0 counts as 1). The prompt step's time "
                                "is k1 per request whatever its length.")
        prompt_buttons()
        with st.expander("Simulation"):
            st.toggle("Simulate every strategy", key="simulate",
                      help="Discrete-event simulation at 8 loads per strategy (cached).")
            share.number_input(N_JOBS, "Requests per simulated load", step=5000)
        st.radio("Chart image format", IMG.choices, key="img", horizontal=True)
    times = lb.BatchTimes(float(ss["k1"]), float(ss["k2"]), float(ss["k3"]), float(ss["k4"]),
                          law.law)
    return Scenario(law, times,
                    int(ss["b"]), int(ss["b_max"]), float(ss["lam_max"]), float(ss["kv"]),
                    float(ss["prompt"]), bool(ss["simulate"]), int(ss["n_jobs"]), arrivals)


def lam_slider(lam_max: float) -> float:
    """The what-if load λ (requests/s), up to the axis end."""
    share.slider(LAM, "Current load λ (requests/s)", max_value=float(lam_max), step=0.001,
                 format="%.3f")
    return float(st.session_state["lam"])
