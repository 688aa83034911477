"""Inference Queueing Lab engine: pure, vectorised queueing models of inference servers.

One package per model (formulas, exact solvers, curves, answers, simulator), named
like its page, and the code they share (imported on first use, so ``import engine``
stays cheap):

* ``engine.core``         parameter domains, simulation statistics, the numba switch,
                          root finding, token and service laws
* ``engine.batching``     GPU dynamic batching (Inoue 2021)
* ``engine.token_limit``  LLM max-token limits and impatience, M/G/1+D (Yang et al. §III)
* ``engine.llm_batching`` LLM batching strategies (Yang et al. §IV)
* ``engine.llm_serving``  LLM serving as vLLM runs it: continuous batching, chunked prefill,
                          paged KV cache with preemption and prefix caching, TTFT and TPOT
* ``engine.pipeline``     CPU → GPU memory → compute units tandem with blocking (May & Voigt 2010)
* ``engine.sla``          replicas for percentile-latency SLAs (Swayam)
* ``engine.fit``          least-squares fits of measured profiles
* ``engine.measured``     readers of real tools' measurement files (Triton, vLLM, traces)
* ``engine.arrivals``     arrival processes (Poisson, renewal, MMPP-2, replay), trace statistics
* ``engine.presets``      hardware and workload presets, validated on load
* ``engine.sweep``        one function over a parameter grid: in-process, local processes, Dask
* ``engine.planner``      the cheapest configuration meeting an SLA, over every model above

Earlier module names still import and re-export the same public names:
``engine.sim``, ``engine.batch_chain``, ``engine.batching_curves``,
``engine.operating_point``, ``engine.mg1_patience``, ``engine.llm_batching_sim``,
``engine.pipeline_sim``, ``engine.dispatch_sim``, ``engine.token_laws``, ``engine.params``.

The engine never imports Streamlit.  Derivations and errata: ``docs/models/``.
"""
import importlib

__all__ = ["core", "batching", "token_limit", "llm_batching", "llm_serving", "pipeline", "sla", "fit", "measured",
           "presets", "arrivals", "sweep", "planner",
           "sim", "batch_chain", "batching_curves", "operating_point", "mg1_patience",
           "llm_batching_sim", "pipeline_sim", "dispatch_sim", "token_laws", "params"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
