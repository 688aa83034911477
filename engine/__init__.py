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

Old module names (``OLD_NAMES``: old name → new path) still import, as deprecation
stubs: importing one warns (``DeprecationWarning`` naming the new path and the version
that removes it, ``REMOVED_IN``) and gives a module whose every name is the new
module's object.  Nothing in the project imports them (tests/test_old_names.py).

The engine never imports Streamlit.  Derivations and errata: ``docs/models/``.
"""
import __future__
import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

__all__ = ["core", "batching", "token_limit", "llm_batching", "llm_serving", "pipeline", "sla", "fit", "measured",
           "presets", "arrivals", "sweep", "planner"]

REMOVED_IN = "0.6"
OLD_NAMES = {
    "engine.sim": "engine.batching.sim",
    "engine.batch_chain": "engine.batching.exact",
    "engine.batching.batch_chain": "engine.batching.exact",
    "engine.batching_curves": "engine.batching.curves",
    "engine.operating_point": "engine.batching.answers",
    "engine.mg1_patience": "engine.token_limit.patience",
    "engine.llm_batching_sim": "engine.llm_batching.sim",
    "engine.pipeline_sim": "engine.pipeline.sim",
    "engine.dispatch_sim": "engine.sla.sim",
    "engine.token_laws": "engine.core.token_laws",
    "engine.params": "engine.core.domains",
}


class _OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module name as a stub of its new module: a warning, then the new
    module's public names (the same objects); any other name is looked up there too."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in OLD_NAMES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return None                                   # a plain module

    def exec_module(self, module):
        new_name = OLD_NAMES[module.__name__]
        _warn_importer(f"{module.__name__} is deprecated and will be removed in {REMOVED_IN}: "
                       f"import {new_name} instead")
        new = importlib.import_module(new_name)
        public = getattr(new, "__all__", None) or [
            name for name, obj in vars(new).items() if not name.startswith("_")
            and not isinstance(obj, (types.ModuleType, __future__._Feature))
            and not (callable(obj) and getattr(obj, "__module__", new_name) != new_name)]
        module.__dict__.update({name: getattr(new, name) for name in public})
        module.__all__ = list(public)
        module.__doc__ = f"Deprecated: the old name of ``{new_name}`` (removed in {REMOVED_IN})."
        module.__getattr__ = lambda name: getattr(new, name)


def _warn_importer(message: str) -> None:
    """A ``DeprecationWarning`` at the line that named the old module: the first frame
    outside the import machinery, this file and the engine's package ``__getattr__``
    (``import x``, ``from engine import x``, ``engine.x``, ``importlib.import_module``)."""
    frame = sys._getframe(1)
    while frame is not None and (
            frame.f_code.co_filename.startswith("<frozen importlib")
            or frame.f_code.co_filename in (__file__, importlib.__file__)
            or (frame.f_code.co_name == "__getattr__"           # a package's old attribute
                and frame.f_globals.get("__name__", "").startswith(f"{__name__}."))):
        frame = frame.f_back
    if frame is None:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return
    where = frame.f_globals
    warnings.warn_explicit(message, DeprecationWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=where.get("__name__", "<string>"),
                           registry=where.setdefault("__warningregistry__", {}))


if not any(isinstance(f, _OldNames) for f in sys.meta_path):
    sys.meta_path.append(_OldNames())


def __getattr__(name):
    if name in __all__ or f"{__name__}.{name}" in OLD_NAMES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
