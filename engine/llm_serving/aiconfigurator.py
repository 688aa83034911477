"""A bridge from NVIDIA's AIConfigurator to the lab's step cost, and its sizing rule.

AIConfigurator (``pip install aiconfigurator``, Apache-2.0; optional here:
requirements-aiconfigurator.txt) estimates the time of a prompt (context) step and of a
decode step of a model on a system (h100_sxm, h200_sxm, b200_sxm, a100_sxm, l40s …)
under a backend (vllm, sglang, trtllm) and version, from a database of measured
per-operation times.

* ``fit_step_cost_from_step_times`` (``step_times``): a ``StepCost`` fitted to plain
  arrays of prompt-step and decode-step times (pure numpy; any source);
* ``step_cost_from_aiconfigurator``: asks AIConfigurator for those times over grids of
  prompt lengths, batches and contexts, and fits them;
* ``aiconfigurator_replicas`` (``aic_sizing``): AIConfigurator's own sizing rule
  (``cli recommend``, aggregated vLLM worker) written out on a lab ``StepCost``: ⌈rate / one replica's
  mean-value rate at its best batch⌉, means only, no queue.

Derivations and the numbers of the benchmark: docs/models/llm_serving.md
("AIConfigurator bridge").
"""
from __future__ import annotations

from contextlib import contextmanager
import functools
from importlib.metadata import version as package_version
import logging
import math
import os

import numpy as np

from ..core.domains import SERVING_TOKENS, STEP_BATCH
from .aic_sizing import AicSizing, aiconfigurator_replicas  # noqa: F401 (named here too)
from .cost import StepCost
from .step_fit import StepCostFit, _tp_key
from .step_times import _listed, fit_step_cost_from_step_times

__all__ = ["fit_step_cost_from_step_times", "step_cost_from_aiconfigurator",
           "aiconfigurator_replicas", "AicSizing", "MISSING_PACKAGE"]

MISSING_PACKAGE = "AIConfigurator is optional: pip install -r requirements-aiconfigurator.txt"

_VLLM_DISPATCH_MS_PER_LAYER = 0.8   # vllm_backend.py: _prefill_dispatch_overhead_ms


# ------------------------------------------------------------------- AIConfigurator

def _grid(values, domain, name: str) -> tuple:
    """A grid of whole numbers in ``domain`` (sorted, each once); ``ValueError`` naming
    ``name`` otherwise."""
    if isinstance(values, (str, bytes, bool, np.bool_)) or values is None:
        raise ValueError(f"{name} must be a list of {domain.describe()}, got {values!r}")
    flat = list(np.ravel(np.asarray(values, dtype=object)))
    if not flat:
        raise ValueError(f"{name} must hold at least one value, got an empty list")
    if any(isinstance(v, (bool, np.bool_, str, bytes)) or v is None for v in flat):
        raise ValueError(f"{name} must be a list of {domain.describe()}, got {values!r}"[:300])
    return tuple(sorted({int(v) for v in domain.check(flat, name)}))


@contextmanager
def _quiet():
    """AIConfigurator's loggers at ERROR while it is asked (it warns on every load
    of a fallback table)."""
    loggers = [logging.getLogger(n) for n in ("aiconfigurator", "aiconfigurator_core")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def _pick_model(model, known) -> str:
    """The model id AIConfigurator knows offline (its cached HuggingFace configs) that
    ``model`` names: exactly, ignoring case, without the ``owner/`` part, or as the
    unique id ending so (``Llama-3.1-8B`` → ``meta-llama/Meta-Llama-3.1-8B``); a local
    folder holding a config.json is passed as it is."""
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a model id such as 'meta-llama/Meta-Llama-3.1-8B', "
                         f"got {model!r}")
    if model in known or os.path.isfile(os.path.join(model, "config.json")):
        return model
    loose = model.strip().lower()
    tail = loose.rsplit("/", 1)[-1]
    for rule in (lambda k: k.lower() == loose, lambda k: k.lower().rsplit("/", 1)[-1] == tail,
                 lambda k: k.lower().rsplit("/", 1)[-1].endswith(tail)):
        hits = sorted(k for k in known if rule(k))
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise ValueError(f"model {model!r} names several of AIConfigurator's models: "
                             f"{', '.join(hits)}")
    raise ValueError(f"unknown model {model!r}: AIConfigurator holds offline "
                     f"{', '.join(sorted(known))} (other HuggingFace ids need a download, "
                     f"which this bridge does not make; a local folder with a config.json "
                     f"works)")


@functools.lru_cache(maxsize=1)
def _databases() -> dict:
    """AIConfigurator's {system: {backend: versions}} (a scan of its data: once)."""
    from aiconfigurator.sdk import perf_database
    return {s: dict(b) for s, b in perf_database.get_supported_databases().items()}


def _resolve(model, system, backend, version):
    """(model id, system, backend, literal version) AIConfigurator can answer for, or
    ``ValueError`` naming the argument and listing the choices."""
    from aiconfigurator.sdk import perf_database
    from aiconfigurator.sdk.common import DefaultHFModels

    model_id = _pick_model(model, set(DefaultHFModels))
    named = isinstance(system, str) and isinstance(backend, str)
    slots = (perf_database.get_version_slots(system, backend) if named else None) or {}
    if not slots:                       # not a pair it lists versions for: say which part
        databases = _databases()
        if not isinstance(system, str) or system not in databases:
            raise ValueError(f"unknown system {system!r}; AIConfigurator has: "
                             f"{', '.join(sorted(databases))}")
        if not isinstance(backend, str) or backend not in databases[system]:
            raise ValueError(f"unknown backend {backend!r} for system {system}; "
                             f"AIConfigurator has: {', '.join(sorted(databases[system]))}")
    if version is not None and not isinstance(version, str):
        raise ValueError(f"version must be None (AIConfigurator's current one) or text such "
                         f"as '0.24.0', got {version!r}")
    try:
        literal = perf_database.resolve_query_version(
            system, backend, "current" if version is None else version)
    except Exception:                                   # noqa: BLE001 (its errors vary)
        literal = None
    if not literal:
        raise ValueError(f"unknown version {version!r} of {backend} on {system}; "
                         f"AIConfigurator has: "
                         f"{', '.join(f'{k} = {v}' for k, v in slots.items()) or 'none'}")
    return model_id, system, backend, str(literal)


def step_cost_from_aiconfigurator(model, system, backend="vllm", *, tensor_parallel=1,
                                  version=None,
                                  batch_sizes=(1, 2, 4, 8, 16, 32, 64, 128, 256),
                                  prompt_tokens=(128, 256, 512, 1024, 2048, 4096, 8192),
                                  context_tokens=(128, 512, 1024, 2048, 4096),
                                  prefill_batch_sizes=(1, 2, 4)) -> StepCostFit:
    """The step cost of ``model`` on ``system`` under ``backend`` at ``tensor_parallel``,
    fitted to AIConfigurator's estimated step times (``fit_step_cost_from_step_times``).

    AIConfigurator is imported here; without it, ``ImportError`` (``MISSING_PACKAGE``).
    Through ``aiconfigurator.sdk.engine.EngineHandle.compile`` (its database for the
    system, backend and ``version``; None: its ``current`` slot):

    * prompt steps: ``predict_prefill_latency(b, l)``, b prompts of l tokens alone in a
      step, for every l of ``prompt_tokens`` and b of ``prefill_batch_sizes`` with b·l ≤
      the longest prompt of the grid;
    * decode steps: ``decode_step_latency(b, c − 1, 1)``, its decode-only step of b
      requests, whose context it puts at isl + ⌊osl/2⌋ + 1 = c tokens, for every b of
      ``batch_sizes`` and c of ``context_tokens``.

    ``model``: an id AIConfigurator holds offline (``"meta-llama/Meta-Llama-3.1-8B"``;
    case, the ``owner/`` part or a unique leading part may be left out:
    ``"Llama-3.1-8B"``), or a local folder with a HuggingFace config.json.  The notes
    say what was asked (package and database versions, grids), the held-out check on
    AIConfigurator's mixed steps (prompt tokens and decodes in one step, not fitted), and
    what its own TTFT adds outside the steps (vLLM: 0.8 ms of CPU dispatch per layer per
    request).  ``frontend_ms`` is held at 0: the database times GPU work, no API server.

    ``ValueError`` naming the argument: an unknown model, system, backend or version
    (with the choices), a degree it cannot build, a bad grid.
    """
    tp = int(_tp_key(tensor_parallel))
    grids = {"batch_sizes": _grid(batch_sizes, STEP_BATCH, "batch_sizes"),
             "prompt_tokens": _grid(prompt_tokens, SERVING_TOKENS, "prompt_tokens"),
             "context_tokens": _grid(context_tokens, SERVING_TOKENS, "context_tokens"),
             "prefill_batch_sizes": _grid(prefill_batch_sizes, STEP_BATCH,
                                          "prefill_batch_sizes")}
    if grids["context_tokens"][0] < 2:
        raise ValueError(f"context_tokens must be at least 2 (a prompt token and the one "
                         f"decoded), got {grids['context_tokens'][0]}")
    try:
        import aiconfigurator  # noqa: F401 (the optional package, present or not)
    except ImportError as err:
        raise ImportError(MISSING_PACKAGE) from err
    with _quiet():
        model_id, system, backend, literal = _resolve(model, system, backend, version)
        from aiconfigurator.sdk.engine import EngineHandle
        try:
            handle = EngineHandle.compile(model_id, system, backend, backend_version=literal,
                                          tp_size=tp)
        except Exception as err:                        # noqa: BLE001 (its errors vary)
            raise ValueError(f"AIConfigurator cannot build {model_id} at tensor_parallel "
                             f"{tp} on {system} under {backend} {literal}: "
                             f"{str(err)[:300]}") from None
        times = _ask(handle, grids)
        layers = _layers(model_id)
    (pb, pl, pms), (db, dc, dms), mixed = times
    for what, ms in (("prompt", pms), ("decode", dms)):
        if not np.all(np.isfinite(ms) & (ms > 0)):
            raise ValueError(f"AIConfigurator gave {what} step times that are not positive "
                             f"numbers for {model_id} at tensor_parallel {tp} on {system} "
                             f"under {backend} {literal}: {ms[~(np.isfinite(ms) & (ms > 0))][:4]}")
    label = f"AIConfigurator · {model_id} · {system} · {backend} {literal} · TP {tp}"
    where = (f"AIConfigurator {package_version('aiconfigurator')}: model {model_id}, system "
             f"{system}, backend {backend} {literal}, tensor_parallel {tp}")
    fit = fit_step_cost_from_step_times((pb, pl, pms), (db, dc, dms), label=label, source=where)
    notes = [f"asked {where} (EngineHandle.compile, its default database mode SILICON): prompt steps "
             f"predict_prefill_latency(b, l) at prompts {_listed(grids['prompt_tokens'])} "
             f"tokens × batches {_listed(grids['prefill_batch_sizes'])} with b·l ≤ "
             f"{grids['prompt_tokens'][-1]}; decode steps decode_step_latency(b, c − 1, 1) "
             f"(context c = isl + ⌊osl/2⌋ + 1) at batches {_listed(grids['batch_sizes'])} × "
             f"contexts {_listed(grids['context_tokens'])} tokens"]
    notes += [n for n in fit.notes if not n.startswith("frontend_ms held at 0")]
    notes.append(_mixed_note(fit.cost, mixed))
    if backend == "vllm" and layers:
        notes.append(f"frontend_ms held at 0: AIConfigurator's database times GPU work, no "
                     f"API server; its vLLM TTFT adds {_VLLM_DISPATCH_MS_PER_LAYER} ms of CPU "
                     f"dispatch per layer per request ({layers} layers: "
                     f"{_VLLM_DISPATCH_MS_PER_LAYER * layers:.4g} ms, "
                     f"vllm_backend._prefill_dispatch_overhead_ms) outside the steps, not in "
                     f"this cost (aiconfigurator_replicas: dispatch_overhead_ms)")
    else:
        notes.append("frontend_ms held at 0: AIConfigurator's database times GPU work, no "
                     "API server")
    return StepCostFit(cost=fit.cost, r2=fit.r2, residuals_ms=fit.residuals_ms,
                       held_at_zero=fit.held_at_zero, n_points=fit.n_points,
                       notes=tuple(notes), source=where)


def _ask(handle, grids):
    """AIConfigurator's prompt-step, decode-step and (held-out) mixed-step times."""
    longest = grids["prompt_tokens"][-1]
    pre = [(b, l, handle.predict_prefill_latency(b, l)) for l in grids["prompt_tokens"]
           for b in grids["prefill_batch_sizes"] if b * l <= longest]
    if not pre:                     # every prefill batch above 1 prompt of the longest
        pre = [(1, l, handle.predict_prefill_latency(1, l)) for l in grids["prompt_tokens"]]
    dec = [(b, c, handle.decode_step_latency(b, c - 1, 1)) for b in grids["batch_sizes"]
           for c in grids["context_tokens"]]
    mixed = []
    for l in sorted({grids["prompt_tokens"][len(grids["prompt_tokens"]) // 2],
                     grids["prompt_tokens"][-1]}):
        for g in sorted({grids["batch_sizes"][0], grids["batch_sizes"][-1]}):
            # one whole prompt of l tokens and g decodes at context l + ⌊2/2⌋ + 1
            mixed.append((l, g, l + 2, handle.mixed_step_latency(l, g, l, 2)))
    return (tuple(np.array(col, dtype=float) for col in zip(*pre)),
            tuple(np.array(col, dtype=float) for col in zip(*dec)), mixed)


def _mixed_note(cost: StepCost, mixed) -> str:
    worst, text = -1.0, ""
    for l, g, c, ms in mixed:
        got = float(cost.step_ms(l, l * l, g, g * c))
        err = abs(got - ms) / ms if ms > 0 else math.inf
        if err > worst:
            worst, text = err, (f"prompt {l} + {g} decodes at context {c}: {ms:.4g} ms "
                                f"estimated, {got:.4g} ms by the fitted cost")
    return (f"held-out check, mixed steps (one whole prompt and decodes in one step, "
            f"mixed_step_latency, not fitted): largest error {100 * worst:.3g} % ({text})")


def _layers(model_id) -> int | None:
    try:
        from aiconfigurator.sdk.utils import get_model_config_from_model_path
        return int(get_model_config_from_model_path(model_id)["layers"])
    except Exception:                                   # noqa: BLE001 (best effort: a note)
        return None
