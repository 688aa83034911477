"""Inference Queueing Lab engine: pure, vectorised queueing models of inference servers.

Submodules (imported on first use, so ``import engine`` stays cheap):

* ``engine.batching``        dynamic batching on a GPU (Inoue 2021): exact E[W], bounds, energy
* ``engine.batch_chain``     exact solvers of the batch-size Markov chain behind it
* ``engine.batching_curves`` the model's curves over a load grid (plots, reports)
* ``engine.operating_point`` SLA answers, costs, simulated sweeps, Triton delay search
* ``engine.sim``             fast discrete-event simulation of batching servers
* ``engine.token_laws``      output-token-length laws (scipy-like, incl. empirical)
* ``engine.token_limit``     max-token clipping and impatience, M/G/1 (Yang et al. §III)
* ``engine.mg1_patience``    the M/G/1 queue with deterministic patience, exact (behind it)
* ``engine.llm_batching``    dynamic/fixed/elastic/continuous LLM batching (Yang et al. §IV)
* ``engine.llm_batching_sim`` their simulator
* ``engine.pipeline``        CPU → GPU memory → compute units tandem with blocking (May & Voigt)
* ``engine.pipeline_sim``    its simulator
* ``engine.sla``             replicas for percentile SLAs, random dispatch with retries (Swayam)
* ``engine.dispatch_sim``    its simulator
* ``engine.fit``             least-squares fits of measured profiles
* ``engine.presets``         hardware and workload presets, validated on load
* ``engine.params``          declared parameter domains (validation, slider bounds)

The engine never imports Streamlit.
"""
import importlib

__all__ = ["batching", "batch_chain", "batching_curves", "operating_point", "sim",
           "token_laws", "token_limit", "mg1_patience", "llm_batching", "llm_batching_sim", "pipeline",
           "pipeline_sim", "sla", "dispatch_sim", "fit", "presets", "params"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
