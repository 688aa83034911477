"""Inputs of the LLM serving page: the share-link fields, the sidebar, the frozen Scenario
and the latency target (``Slo``).

The step cost and the scheduler's settings are typed under vLLM's names (a preset fills
them in); the workload is the prompt and reply laws or a trace
(``workload_input``); the arrivals are the shared input (``ui.arrivals_input``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from engine import llm_serving as ls
from engine.core import domains as dom
from ui import arrivals_input as arr
from ui import share
from ui.arrivals_input import POISSON, ArrivalChoice

from . import cost_input, data
from . import workload_input as wl
from .views import LATENCY, VIEWS

PAGE = "llm_serving"
PRESETS = data.presets()
DEFAULT_PRESET = ("vllm_rtx4090_qwen2_5_7b" if "vllm_rtx4090_qwen2_5_7b" in PRESETS
                  else next(iter(PRESETS)))
_P = PRESETS[DEFAULT_PRESET]
_C = _P.cost

PRESET = share.Field("preset", DEFAULT_PRESET, str, choices=tuple(PRESETS))
BASE = share.Field("base_ms", _C.base_ms, float, 0.0, 10_000.0, domain=dom.STEP_MS)
PREFILL_BASE = share.Field("prefill_base_ms", _C.prefill_base_ms, float, 0.0, 10_000.0,
                           domain=dom.STEP_MS)
PER_TOKEN = share.Field("prefill_ms_per_token", _C.prefill_ms_per_token, float, 0.0, 100.0,
                        domain=dom.STEP_MS_PER_TOKEN)
PER_TOKEN_SQ = share.Field("prefill_ms_per_token_sq", _C.prefill_ms_per_token_sq, float, 0.0,
                           1.0, domain=dom.STEP_MS_PER_TOKEN_SQ)
PER_SEQ = share.Field("decode_ms_per_seq", _C.decode_ms_per_seq, float, 0.0, 1_000.0,
                      domain=dom.STEP_MS_PER_SEQ)
PER_CONTEXT = share.Field("context_ms_per_token", _C.context_ms_per_token, float, 0.0, 10.0,
                          domain=dom.STEP_MS_PER_CONTEXT)
FRONTEND = share.Field("frontend_ms", _C.frontend_ms, float, 0.0, 100_000.0, domain=dom.STEP_MS)
COST_FIELDS = (BASE, PREFILL_BASE, PER_TOKEN, PER_TOKEN_SQ, PER_SEQ, PER_CONTEXT, FRONTEND)
SEQS = share.Field("max_num_seqs", _P.max_num_seqs, int, 1, 65_536, domain=dom.MAX_NUM_SEQS)
BUDGET = share.Field("max_num_batched_tokens", _P.max_num_batched_tokens, int, 1, 1_000_000,
                     domain=dom.MAX_BATCHED_TOKENS)
KV_UNBOUNDED = share.Field("kv_unbounded", _P.kv_cache_tokens is None, bool)
KV = share.Field("kv_cache_tokens", _P.kv_cache_tokens or 100_000, int, 1, 1_000_000_000,
                 domain=dom.KV_CACHE_TOKENS)
BLOCK = share.Field("block_size", _P.block_size, int, 1, 4096, domain=dom.BLOCK_SIZE)
CHUNKED = share.Field("chunked_prefill", _P.chunked_prefill, bool)
PREFIX = share.Field("prefix_caching", _P.prefix_caching, bool)
SHARED = share.Field("shared_prefix", 0, int, 0, 1_000_000)
RATE = share.Field("rate", 2.0, float, 0.001, 1_000_000.0, domain=dom.RATE_PER_S)
TTFT_SLO = share.Field("ttft_slo_ms", 1000.0, float, 1.0, 10_000_000.0, domain=dom.TARGET_MS)
TPOT_SLO = share.Field("tpot_slo_ms", 100.0, float, 0.1, 1_000_000.0, domain=dom.TARGET_MS)
SLO_PCT = share.Field("slo_pct", 90, int, choices=(50, 90, 95, 99))
VIEW = share.Field("view", LATENCY, str, choices=VIEWS)
IMG = share.Field("img", "png", str, choices=("png", "svg"))
ARRIVALS_UPLOAD = "serving_arrivals_upload"
FIELDS = [PRESET, *COST_FIELDS, SEQS, BUDGET, KV_UNBOUNDED, KV, BLOCK, CHUNKED, PREFIX, SHARED,
          *wl.FIELDS, *arr.FIELDS, RATE, TTFT_SLO, TPOT_SLO, SLO_PCT, VIEW, IMG]


@dataclass(frozen=True)
class Slo:
    """The latency target: TTFT ≤ ``ttft_ms`` and TPOT ≤ ``tpot_ms`` for ``pct`` % of
    requests."""

    ttft_ms: float
    tpot_ms: float
    pct: int

    @property
    def words(self) -> str:
        return (f"first token within {self.ttft_ms:,.4g} ms and then a token every "
                f"{self.tpot_ms:,.4g} ms or faster, for {self.pct} % of requests")

    @property
    def short(self) -> str:
        return f"TTFT ≤ {self.ttft_ms:,.4g} ms, TPOT ≤ {self.tpot_ms:,.4g} ms at p{self.pct}"


@dataclass(frozen=True)
class Scenario:
    """The sidebar's server and traffic (a change re-runs the whole page); the memo key."""

    cost: ls.StepCost
    scheduler: ls.Scheduler
    workload: wl.Workload
    arrivals: ArrivalChoice = POISSON
    shared_prefix: int = 0                    # system-prompt tokens every request shares
    preset: str = field(default="", compare=False)

    @property
    def poisson(self) -> bool:
        return self.arrivals.is_poisson

    @property
    def label(self) -> str:
        sch = self.scheduler
        kv = "∞" if sch.kv_cache_tokens is None else f"{sch.kv_cache_tokens:,}"
        return (f"{self.preset_name}, seqs {sch.max_num_seqs}, budget "
                f"{sch.max_num_batched_tokens:,}, KV {kv}")

    @property
    def preset_name(self) -> str:
        p = PRESETS.get(self.preset)
        if p is None:
            return "typed step cost"
        return p.name if p.cost == self.cost else f"{p.name} (edited)"

    def parameters(self, rate: float, slo: Slo) -> dict:
        """The report's parameter table at load ``rate``: plain text with units."""
        sch = self.scheduler
        return {"Step cost": self.cost.formula(), "Preset": self.preset_name,
                "Scheduler": sch.describe(),
                "Shared system prompt": f"{self.shared_prefix:,} tokens",
                "Workload": self.workload.label, "Arrivals": self.arrivals_words,
                "Load": f"{rate:.4g} requests/s", "Latency target": slo.short}

    @property
    def arrivals_words(self) -> str:
        if self.poisson:
            return "Poisson arrivals"
        return (f"{self.arrivals.label} in the simulations; the approximation assumes "
                "Poisson arrivals")

    def sentence(self, rate: float, slo: Slo) -> str:
        """The scenario in one plain sentence."""
        return (f"{rate:.3g} requests per second arrive at one server ({self.preset_name}); "
                f"{self.workload.label}. Target: {slo.words}. Arrivals: "
                f"{self.arrivals_words}.")


def preset_values(p) -> dict:
    """The inputs a preset sets: its step cost and scheduler settings (KV cache size kept
    where it gives none)."""
    out = {f.key: float(getattr(p.cost, f.key)) for f in COST_FIELDS}
    out.update({SEQS.key: p.max_num_seqs, BUDGET.key: p.max_num_batched_tokens,
                KV_UNBOUNDED.key: p.kv_cache_tokens is None, BLOCK.key: p.block_size,
                CHUNKED.key: p.chunked_prefill, PREFIX.key: p.prefix_caching})
    if p.kv_cache_tokens is not None:
        out[KV.key] = p.kv_cache_tokens
    return out


def load_preset() -> None:
    """The chosen preset's step cost and scheduler settings into the inputs."""
    st.session_state.update(preset_values(PRESETS[st.session_state[PRESET.key]]))


def prefill_from_link() -> None:
    """Before ``share.restore`` on a session's first run: a link naming a preset gets that
    preset's numbers for the inputs it does not give (a link from the home page)."""
    ss, pid = st.session_state, st.query_params.get(PRESET.key)
    if PRESET.key in ss or pid not in PRESETS or pid == DEFAULT_PRESET:
        return
    for key, value in preset_values(PRESETS[pid]).items():
        if key not in st.query_params:
            ss[key] = value


def preset_caption(p) -> None:
    r2 = ", ".join(f"{k} {v:.3f}" for k, v in p.r2.items())
    kv = (f"KV cache {p.kv_cache_tokens:,} tokens" if p.kv_cache_tokens is not None
          else "KV cache size not known (unbounded)")
    st.caption(share.inert(f"{p.model} on {p.hardware} (TP {p.tensor_parallel}); {kv}. "
                           f"Fit R²: {r2}."), help=share.inert(f"Source: {p.source}"))


def _step_cost() -> None:
    with st.expander("Step cost (ms per scheduler step)"):
        st.caption("A step computes P prompt tokens and one token of each of D decoding "
                   "requests: step = base + per token·P + per token²·Q + per request·D + "
                   "per context token·K (Formulas view).")
        share.number_input(BASE, "Base (ms per step)", format="%.6g", step=1.0)
        share.number_input(PREFILL_BASE, "Base of a prompt-only step (ms)", format="%.6g",
                           step=1.0)
        share.number_input(PER_TOKEN, "Per prompt token (ms)", format="%.6g", step=0.001)
        share.number_input(PER_TOKEN_SQ, "Per prompt token² (ms, attention)", format="%.6g",
                           step=1e-7)
        share.number_input(PER_SEQ, "Per decoding request (ms)", format="%.6g", step=0.01)
        share.number_input(PER_CONTEXT, "Per context token of the decoding requests (ms)",
                           format="%.6g", step=1e-5)
        share.number_input(FRONTEND, "Front end: send to scheduler (ms, HTTP, tokenizer)",
                           format="%.6g", step=1.0)
        cost_input.draw(st.session_state[BUDGET.key])


def _scheduler() -> None:
    st.markdown("**Scheduler** (vLLM's settings)")
    share.number_input(SEQS, "max_num_seqs (requests running at once)", step=8)
    share.number_input(BUDGET, "max_num_batched_tokens (token budget of a step)", step=256)
    st.toggle("Unbounded KV cache", key=KV_UNBOUNDED.key,
              help="The KV cache never runs out (no preemption): the best case.")
    share.number_input(KV, "KV cache (tokens)", step=4096,
                       disabled=bool(st.session_state[KV_UNBOUNDED.key]))
    share.number_input(BLOCK, "block_size (tokens per KV block)", step=16)
    st.toggle("Chunked prefill (vLLM V1)", key=CHUNKED.key,
              help="On: every step decodes the running requests and fills the rest of the "
                   "token budget with prompt chunks (vLLM V1, SGLang). Off: a step holds "
                   "either whole prompts or one decode of every running request (vLLM's "
                   "earlier scheduler).")
    st.toggle("Prefix caching", key=PREFIX.key,
              help="Full KV blocks of finished and preempted requests stay cached; a prompt "
                   "starting with cached tokens (the shared system prompt below, or a "
                   "preempted request's own) skips them.")
    share.number_input(SHARED, "System prompt shared by every request (tokens)", step=64,
                       help="The first this many prompt tokens of every request are the same "
                            "(found in the prefix cache when it is on). The capacity and the "
                            "approximation leave the prefix cache out.")


def sidebar() -> tuple[Scenario | None, Slo, str]:
    """Draw the sidebar's widgets; (the scenario, or None with why not, the target)."""
    ss = st.session_state
    with st.sidebar:
        names = {pid: p.name for pid, p in PRESETS.items()}
        st.selectbox("Server preset (hardware, model)", list(names), key=PRESET.key,
                     format_func=names.get, on_change=load_preset)
        preset_caption(PRESETS[ss[PRESET.key]])
        _step_cost()
        _scheduler()
        st.divider()
        workload = wl.draw()
        st.divider()
        arrivals = arr.draw(ARRIVALS_UPLOAD)
        st.divider()
        st.markdown("**Latency target (SLO)**")
        share.number_input(TTFT_SLO, "Time to first token TTFT ≤ (ms)", step=100.0,
                           format="%.6g")
        share.number_input(TPOT_SLO, "Time per output token TPOT ≤ (ms)", step=5.0,
                           format="%.6g")
        st.selectbox("for this share of requests (%)", SLO_PCT.choices, key=SLO_PCT.key,
                     help="The target holds when at least this share of requests meets "
                          "both limits (DistServe's SLO attainment).")
        st.radio("Chart image format", IMG.choices, key=IMG.key, horizontal=True)
    slo = Slo(float(ss[TTFT_SLO.key]), float(ss[TPOT_SLO.key]), int(ss[SLO_PCT.key]))
    try:
        cost = ls.StepCost(**{f.key: float(ss[f.key]) for f in COST_FIELDS},
                           label=PRESETS[ss[PRESET.key]].name)
        scheduler = ls.Scheduler(
            max_num_seqs=int(ss[SEQS.key]), max_num_batched_tokens=int(ss[BUDGET.key]),
            kv_cache_tokens=None if ss[KV_UNBOUNDED.key] else int(ss[KV.key]),
            block_size=int(ss[BLOCK.key]), chunked_prefill=bool(ss[CHUNKED.key]),
            prefix_caching=bool(ss[PREFIX.key]))
    except ValueError as err:
        return None, slo, str(err)
    return Scenario(cost, scheduler, workload, arrivals, int(ss[SHARED.key]),
                    ss[PRESET.key]), slo, ""


def rate_slider(top: float) -> float:
    """The what-if load (requests/s), up to ``top``."""
    step = data.slider_step(top)
    digits = max(0, -int(f"{step:e}".split("e")[1]))
    share.slider(RATE, "Load (requests/s)", min_value=step, max_value=top, step=step,
                 format=f"%.{digits}f",
                 help="Requests arriving per second, on average. Past the server's capacity "
                      "(the shaded band on the charts) the queue grows without bound.")
    return float(st.session_state[RATE.key])
