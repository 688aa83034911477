"""Inference Queueing Lab engine: pure, vectorised queueing models of inference servers.

Submodules (imported on first use, so ``import engine`` stays cheap):

* ``engine.batching``    dynamic batching on a GPU (Inoue 2021): exact E[W], bounds, energy
* ``engine.batch_chain`` exact solvers of the batch-size Markov chain behind it
* ``engine.fit``         least-squares fits of measured profiles
* ``engine.sim``         fast discrete-event simulation of batching servers
* ``engine.presets``     hardware and workload presets, validated on load
* ``engine.params``      declared parameter domains (validation, slider bounds)

The engine never imports Streamlit.
"""
import importlib

__all__ = ["batching", "batch_chain", "fit", "sim", "presets", "params"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
