"""A bridge from NVIDIA's AIConfigurator to the lab's step cost, and its sizing rule.

AIConfigurator (``pip install aiconfigurator``, Apache-2.0; optional here:
requirements-aiconfigurator.txt) estimates the time of a prompt (context) step and of a
decode step of a model on a system (h100_sxm, h200_sxm, b200_sxm, a100_sxm, l40s …)
under a backend (vllm, sglang, trtllm) and version, from a database of measured
per-operation times.

* ``fit_step_cost_from_step_times``: a ``StepCost`` fitted to plain arrays of prompt-step
  and decode-step times (pure numpy; any source);
* ``step_cost_from_aiconfigurator``: asks AIConfigurator for those times over grids of
  prompt lengths, batches and contexts, and fits them;
* ``aiconfigurator_replicas``: AIConfigurator's own sizing rule (``cli recommend``,
  aggregated vLLM worker) written out on a lab ``StepCost``: ⌈rate / one replica's
  mean-value rate at its best batch⌉, means only, no queue.

Derivations and the numbers of the benchmark: docs/models/llm_serving.md
("AIConfigurator bridge").
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
import functools
from importlib.metadata import version as package_version
import logging
import math
import os

import numpy as np

from ..core.domains import (KV_CACHE_TOKENS, MAX_BATCHED_TOKENS, MAX_NUM_SEQS, RATE_PER_S,
                            SERVING_TOKENS, STEP_BATCH, STEP_CONTEXT_TOKENS, STEP_MS,
                            STEP_TIME_MS, TARGET_MS)
from .cost import StepCost
from .sources import StepCostFit, _bound_notes, _nnls_fit, _r2, _tp_key

__all__ = ["fit_step_cost_from_step_times", "step_cost_from_aiconfigurator",
           "aiconfigurator_replicas", "AicSizing", "MISSING_PACKAGE"]

MISSING_PACKAGE = "AIConfigurator is optional: pip install -r requirements-aiconfigurator.txt"

_PREFILL_NAMES = ["prefill_base_ms", "prefill_ms_per_token", "prefill_ms_per_token_sq"]
_DECODE_NAMES = ["base_ms", "decode_ms_per_seq", "context_ms_per_token"]

# AIConfigurator 0.12.0, aiconfigurator/sdk/sweep.py: _DEFAULT_AGG_BATCH_SCHEDULE (the
# batch sizes its aggregated sweep tries) and _agg_ctx_tokens_list's constants.
_AIC_BATCHES = (tuple(range(1, 16)) + tuple(range(16, 32, 4)) + tuple(range(32, 64, 8))
                + tuple(range(64, 256, 16)) + tuple(range(256, 512, 32))
                + tuple(range(512, 1024, 256)) + (1024,))
_AIC_CTX_STRIDE = 512               # sweep_agg's default ctx_stride
_VLLM_DISPATCH_MS_PER_LAYER = 0.8   # vllm_backend.py: _prefill_dispatch_overhead_ms


# ------------------------------------------------------------------------------ the fit

def _group(name: str, arrays, parts, optional_first: bool):
    """The arrays of one group (``prefill`` or ``decode``) as equal-length float arrays,
    each checked against its domain; ``ValueError`` naming the group and the part."""
    if isinstance(arrays, (str, bytes)) or not isinstance(arrays, (tuple, list)):
        want = " or ".join(f"({', '.join(p for p, _ in parts[k:])})"
                           for k in ((0, 1) if optional_first else (0,)))
        raise ValueError(f"{name} must be a tuple of arrays {want}, got "
                         f"{type(arrays).__name__}")
    if optional_first and len(arrays) == len(parts) - 1:
        arrays = (1, *arrays)
    if len(arrays) != len(parts):
        raise ValueError(f"{name} must hold {len(parts)} arrays "
                         f"({', '.join(p for p, _ in parts)}), got {len(arrays)}")
    out = []
    for (part, domain), values in zip(parts, arrays):
        label = f"{name} {part}"
        if isinstance(values, (bool, np.bool_, str, bytes)) or (
                isinstance(values, (list, tuple, np.ndarray))
                and any(isinstance(v, (bool, np.bool_, str, bytes))
                        for v in np.ravel(np.asarray(values, dtype=object)))):
            raise ValueError(f"{label} must be {domain.describe()} (or an array of them), "
                             f"got {values!r}"[:300])
        out.append(np.ravel(domain.check(values, label)).astype(float))
    try:
        out = np.broadcast_arrays(*out)
    except ValueError:
        raise ValueError(f"{name}: the arrays ({', '.join(p for p, _ in parts)}) have "
                         f"lengths {', '.join(str(a.size) for a in out)}, which do not "
                         f"match") from None
    if out[0].size == 0:
        raise ValueError(f"{name}: no step times given (empty arrays)")
    return [np.array(a, dtype=float) for a in out]


def _error_note(group: str, meas, fit, where) -> str:
    rel = np.abs(meas - fit) / meas
    i = int(np.argmax(rel))
    rms = 100 * np.sqrt(np.mean(rel ** 2))
    return (f"{group}: largest error {100 * rel[i]:.3g} % (rms {rms:.2g} %), at {where(i)}: "
            f"{meas[i]:.4g} ms given, {fit[i]:.4g} ms fitted")


def fit_step_cost_from_step_times(prefill, decode, *, label: str = "step times",
                                  source: str = "step times given as arrays") -> StepCostFit:
    """The ``StepCost`` fitted to prompt-step and decode-step times (pure numpy).

    ``prefill = (batch, prompt_tokens, ms)`` (or ``(prompt_tokens, ms)``: batch 1): steps
    computing ``batch`` b whole prompts of l tokens each and nothing else, so P = b·l and
    Q = b·l²::

        ms = prefill_base_ms + prefill_ms_per_token·(b·l) + prefill_ms_per_token_sq·(b·l²)

    ``decode = (batch, context_tokens, ms)``: steps of b decoding requests with c context
    tokens each (prompt + tokens so far), D = b and K = b·c::

        ms = base_ms + decode_ms_per_seq·b + context_ms_per_token·(b·c)

    Arrays broadcast (a scalar batch serves all steps).  Each group is fitted by
    non-negative least squares of the relative error (a 7 ms step and a 200 ms one weigh
    alike); ``r2`` and ``residuals_ms`` (given − fitted, ms, in the order given) per
    group.  A term the grid does not identify is held at 0 and named in
    ``held_at_zero``; ``frontend_ms`` is not a step's time (held at 0).  Noise-free
    times of a ``StepCost`` give it back, with R² = 1.

    ``ValueError`` naming the group and the part: a batch not a whole number ≥ 1, a
    token count below 1, a time not > 0, arrays of lengths that do not match, no steps.
    """
    if not isinstance(label, str) or not isinstance(source, str):
        raise ValueError(f"label and source must be text, got {label!r} and {source!r}")
    pb, pl, pms = _group("prefill", prefill, (("batch", STEP_BATCH),
                                              ("prompt_tokens", SERVING_TOKENS),
                                              ("ms", STEP_TIME_MS)), True)
    db, dc, dms = _group("decode", decode, (("batch", STEP_BATCH),
                                            ("context_tokens", STEP_CONTEXT_TOKENS),
                                            ("ms", STEP_TIME_MS)), False)
    x_pre = np.column_stack([np.ones_like(pb), pb * pl, pb * pl * pl])
    pre, pre_fit, pre_held, pre_bound = _nnls_fit(
        x_pre, pms, _PREFILL_NAMES,
        ["prefill_ms_per_token_sq", "prefill_base_ms", "prefill_ms_per_token"],
        weights=1.0 / pms)
    x_dec = np.column_stack([np.ones_like(db), db, db * dc])
    dec, dec_fit, dec_held, dec_bound = _nnls_fit(
        x_dec, dms, _DECODE_NAMES, ["context_ms_per_token", "decode_ms_per_seq", "base_ms"],
        weights=1.0 / dms)
    notes = [f"prefill: {pms.size} prompt-only steps of b whole prompts of l tokens (P = "
             f"b·l, Q = b·l²), batches {_listed(pb)}, prompts {_listed(pl)} tokens; "
             f"non-negative least squares of the relative error",
             f"decode: {dms.size} decode-only steps of b requests at c context tokens each "
             f"(D = b, K = b·c), batches {_listed(db)}, contexts {_listed(dc)} tokens; "
             f"non-negative least squares of the relative error"]
    for name in (*pre_held, *dec_held):
        notes.append(f"{name} held at 0: the grid does not identify it (its column is zero "
                     f"or within 0.1 % of a combination of the others)")
    notes += _bound_notes(pre_bound, "prefill") + _bound_notes(dec_bound, "decode")
    notes.append(_error_note("prefill", pms, pre_fit,
                             lambda i: f"batch {pb[i]:g}, prompt {pl[i]:g}"))
    notes.append(_error_note("decode", dms, dec_fit,
                             lambda i: f"batch {db[i]:g}, context {dc[i]:g}"))
    for group, n, k in (("prefill", pms.size, 3 - len(pre_held)),
                        ("decode", dms.size, 3 - len(dec_held))):
        if n <= k:
            notes.append(f"{group}: {n} steps for {k} coefficients: the fit passes through "
                         f"every step, R² = 1 says nothing")
    notes.append("frontend_ms held at 0: a step's time holds no client path (HTTP, "
                 "tokenizer)")
    cost = StepCost(**pre, **dec, frontend_ms=0.0, label=label)
    return StepCostFit(cost=cost, r2={"prefill": _r2(pms, pre_fit), "decode": _r2(dms, dec_fit)},
                       residuals_ms={"prefill": pms - pre_fit, "decode": dms - dec_fit},
                       held_at_zero=("frontend_ms", *pre_held, *dec_held),
                       n_points=pms.size + dms.size, notes=tuple(notes), source=source)


def _listed(values) -> str:
    vals = sorted({float(v) for v in np.ravel(values)})
    text = ", ".join(f"{v:g}" for v in vals[:12])
    return text + (f" … ({len(vals)} values)" if len(vals) > 12 else "")


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


# --------------------------------------------------------------------- the sizing rule

@dataclass(frozen=True)
class AicSizing:
    """AIConfigurator's answer on a ``StepCost`` (``aiconfigurator_replicas``).

    ``replicas``: ⌈rate / replica_rate_per_s⌉ (None when no batch meets the limits);
    ``batch_size`` and ``max_num_batched_tokens``: the point chosen (the requests a
    replica holds and the prompt tokens per step); ``ttft_ms``, ``tpot_ms``,
    ``request_latency_ms``: its mean-value estimates there (no queue);
    ``replica_rate_per_s``: the requests per s one replica is taken to carry;
    ``points``: (batch, budget) points tried, ``feasible_points``: those meeting the
    limits; ``notes``: what bound the answer.
    """

    replicas: int | None
    batch_size: int | None
    max_num_batched_tokens: int | None
    ttft_ms: float | None
    tpot_ms: float | None
    request_latency_ms: float | None
    replica_rate_per_s: float | None
    points: int
    feasible_points: int
    notes: tuple


def _scalar(value, domain, name, *, whole=False):
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None or np.ndim(value) != 0:
        raise ValueError(f"{name} must be {domain.describe()}, got {value!r}")
    v = float(domain.check(value, name))
    return int(v) if whole else v


def _ctx_budgets(isl: int, chunked: bool) -> list:
    """AIConfigurator's per-step prompt-token budgets (aiconfigurator/sdk/sweep.py:
    _agg_ctx_tokens_list, ctx_stride 512): strides of 512 (≥ 8192/16) up to 8,192, then
    of ≥ 1,024, up to max(8192, 2·isl); without chunked prefill whole multiples of isl;
    isl and 2·isl always."""
    normal, top = 8192, max(8192, 2 * isl)
    stride = max(_AIC_CTX_STRIDE, normal // 16)
    large = max(1024, stride, top // 8)
    if not chunked:
        stride, large = max(isl, stride), int(math.ceil(large / isl) * isl)
    out, c = [], 0
    while True:
        c += stride if c < normal else large
        if c > top:
            break
        out.append(c)
    return sorted(set(out) | {isl, 2 * isl})


def _vllm_ttft_factor(b: int) -> float:
    """vllm_backend._ttft_queuing_factor: 1 + log2(b)/8, at most 2 (1 at b = 1)."""
    return 1.0 if b <= 1 else float(min(1.0 + math.log2(b) / 8.0, 2.0))


def aiconfigurator_replicas(rate_per_s, *, cost, input_tokens, output_tokens, max_batch,
                            ttft_ms=math.inf, tpot_ms=math.inf, max_num_batched_tokens=None,
                            chunked_prefill=False, kv_cache_tokens=None,
                            dispatch_overhead_ms=0.0) -> AicSizing:
    """Replicas for ``rate_per_s`` by AIConfigurator's rule (``cli recommend``, an
    aggregated vLLM worker), on ``cost``: requests of ``input_tokens`` l and
    ``output_tokens`` o ≥ 2 tokens, TTFT ≤ ``ttft_ms`` and TPOT ≤ ``tpot_ms`` (inf: no
    limit), batches up to ``max_batch``.  Means only, no queue.

    Read from AIConfigurator 0.12.0: ``aiconfigurator/sdk/sweep.py``
    (``_sweep_one_parallel_agg``), ``aiconfigurator_core/sdk/backends/base_backend.py``
    (``BaseBackend.run_agg``) with ``vllm_backend.py`` (``VLLMBackend``'s overrides) and
    ``aiconfigurator/sdk/pareto_analysis.py`` (``get_best_configs_for_target_load``, via
    ``picking.pick_load_match`` from ``cli/api.py: cli_recommend``).  For each batch b
    of its schedule (1…15, 16…28 by 4, 32…56 by 8, 64…240 by 16, 256…480 by 32, 512,
    768, 1024) up to ``max_batch`` and each prompt budget C of its sweep
    (``max_num_batched_tokens``: that one only; else 512-token strides up to
    max(8192, 2l), whole multiples of l without ``chunked_prefill``), skipping the points
    it skips (b < ⌈C/l⌉; b > 1 with no decode left; its repeated-point filter), and
    stopping a batch whose b·(l + o) tokens exceed ``kv_cache_tokens`` (its KV check):

    * S = ⌈l·b/C⌉ mixed steps, each of C prompt tokens (Q = C·l) and g = max(1, b −
      ⌈C/l⌉) decodes (vLLM's one partial prefill at a time); G = o − S decode-only steps
      of b requests when S < o (else 0); contexts l + ⌊o/2⌋ + 1.  b = 1: one prompt-only
      step, then o − 1 decode steps of 1;
    * TTFT = frontend_ms + (mixed step × ⌈l/C⌉ + ``dispatch_overhead_ms``) × (1 +
      log2(b)/8, at most 2; 1 at b = 1): a fixed factor for a batch arriving at once,
      not a queue (vLLM adds 0.8 ms per layer of dispatch: 25.6 for Llama-3.1-8B);
    * TPOT = (S·mixed + G·decode) / (S + G) (b = 1: the decode step), the mean over the
      steps of one batch's life;
    * a replica's rate = min(b / (S·mixed + G·decode), b / (TTFT + TPOT·(o − 1))) in
      requests per ms: the full batch's step throughput, capped by Little's law at b in
      flight.

    The points with TTFT ≤ ``ttft_ms`` and TPOT ≤ ``tpot_ms`` (mean values against the
    limits, whatever percentile they are meant as) are kept; the one with the largest
    rate is the answer, replicas = max(1, ⌈rate_per_s / rate⌉).  The arrival rate enters
    only there: what it does to queues, and to the percentiles, is not asked.  (Left
    out: the choice among tensor-parallel degrees and disaggregated workers, a cost
    being one worker's; AIConfigurator's 3-decimal rounding of the rate; with no
    feasible point it reports none: ``replicas`` None.)  A free step (0 ms) gives an
    unbounded rate: one replica.
    """
    rate = _scalar(rate_per_s, RATE_PER_S, "rate_per_s")
    if not math.isfinite(rate):
        raise ValueError(f"rate_per_s must be a finite rate to size for, got {rate_per_s!r}")
    if not isinstance(cost, StepCost):
        raise ValueError(f"cost must be a StepCost, got {type(cost).__name__}")
    l = _scalar(input_tokens, SERVING_TOKENS, "input_tokens", whole=True)
    o = _scalar(output_tokens, SERVING_TOKENS, "output_tokens", whole=True)
    if o < 2:
        raise ValueError(f"output_tokens must be at least 2: AIConfigurator's rate is output "
                         f"tokens per s over the o − 1 decoded ones, got {o}")
    b_max = _scalar(max_batch, MAX_NUM_SEQS, "max_batch", whole=True)
    ttft_limit = _scalar(ttft_ms, TARGET_MS, "ttft_ms")
    tpot_limit = _scalar(tpot_ms, TARGET_MS, "tpot_ms")
    if not isinstance(chunked_prefill, (bool, np.bool_)):
        raise ValueError(f"chunked_prefill must be True or False, got {chunked_prefill!r}")
    kv = None if kv_cache_tokens is None else _scalar(kv_cache_tokens, KV_CACHE_TOKENS,
                                                      "kv_cache_tokens", whole=True)
    overhead = _scalar(dispatch_overhead_ms, STEP_MS, "dispatch_overhead_ms")
    budgets = (_ctx_budgets(l, bool(chunked_prefill)) if max_num_batched_tokens is None
               else [_scalar(max_num_batched_tokens, MAX_BATCHED_TOKENS,
                             "max_num_batched_tokens", whole=True)])
    points, kv_stops = _agg_sweep(l, o, b_max, budgets, kv)
    s_ctx = l + o // 2 + 1
    best, feasible = None, 0
    if points:
        b_arr, c_arr = (np.array(x, dtype=float) for x in zip(*points))
        g_arr = np.array([_agg_decodes(b, c, l) for b, c in points], dtype=float)
        mixed = np.broadcast_to(cost.step_ms(c_arr, c_arr * l, g_arr, g_arr * s_ctx),
                                b_arr.shape)
        decode = np.broadcast_to(cost.step_ms(0, 0, b_arr, b_arr * s_ctx), b_arr.shape)
        for (b, c), m_ms, d_ms in zip(points, mixed.tolist(), decode.tolist()):
            point = _agg_point(m_ms, d_ms, b, c, l, o, overhead, cost.frontend_ms)
            if point[0] <= ttft_limit and point[1] <= tpot_limit:
                feasible += 1
                if best is None or point[3] > best[2][3]:
                    best = (b, c, point)
    tried = len(points)
    notes = [f"(batch, prompt budget) points tried: {tried}; meeting TTFT ≤ {ttft_limit:g} ms "
             f"and TPOT ≤ {tpot_limit:g} ms as means: {feasible}"]
    if kv_stops:
        notes.append(f"batches left out, b·(l + o) above the KV cache's {kv:,} tokens: "
                     f"{kv_stops}")
    if best is None:
        notes.append("no point meets the limits: AIConfigurator reports no configuration")
        return AicSizing(None, None, None, None, None, None, None, tried, feasible,
                         tuple(notes))
    b, c, (ttft, tpot, latency, per_ms) = best
    per_s = per_ms * 1e3
    replicas = 1 if math.isinf(per_s) else max(1, math.ceil(rate / per_s))
    notes.append(f"batch {b}, {c} prompt tokens per step: {per_s:.4g} requests per s per "
                 f"replica (TTFT {ttft:.4g} ms, TPOT {tpot:.4g} ms as means): "
                 f"⌈{rate:g} / {per_s:.4g}⌉ = {replicas}")
    return AicSizing(replicas, b, c, ttft, tpot, latency, per_s, tried, feasible, tuple(notes))


def _agg_sweep(l: int, o: int, b_max: int, budgets, kv):
    """The (batch, prompt budget) points AIConfigurator's aggregated sweep evaluates
    (sweep.py: _sweep_one_parallel_agg), and how many batches the KV cache left out."""
    points, seen, kv_stops = [], [], 0
    for b in (b for b in _AIC_BATCHES if b <= b_max):
        if kv is not None and b * (l + o) > kv:
            kv_stops += 1
            continue
        for c in budgets:
            per_step = math.ceil(c / l)
            if b - per_step < 0 or (b > 1 and b - per_step < 1):
                break
            balance = l * b / c / o
            if balance > 1:                     # its filter of repeated points
                gen = b // balance
                if gen > 1 and gen in seen:
                    continue
                seen.append(gen)
            points.append((b, c))
    return points, kv_stops


def _agg_decodes(b: int, c: int, l: int) -> int:
    """Decodes in a mixed step (vllm_backend._mix_step_gen_tokens; 0 at b = 1)."""
    return max(1, b - math.ceil(c / l)) if b > 1 else 0


def _agg_point(mixed_ms, decode_ms, b, c, l, o, overhead_ms=0.0, frontend_ms=0.0):
    """(TTFT, TPOT, request latency in ms, requests per ms) of one (batch, budget) point
    from its mixed step's and decode step's times: BaseBackend.run_agg with
    VLLMBackend's hooks."""
    steps_ctx = math.ceil(l * b / c)
    if b > 1:
        mix_steps, tpot_mix = steps_ctx, steps_ctx
        gen_steps = o - steps_ctx if steps_ctx < o else 0
    else:
        mix_steps, gen_steps, tpot_mix = 1, o - 1, 0
    decode_ms = decode_ms if gen_steps else 0.0
    ttft = frontend_ms + (mixed_ms * math.ceil(l / c) + overhead_ms) * _vllm_ttft_factor(b)
    n = tpot_mix + gen_steps
    tpot = (mixed_ms * tpot_mix + decode_ms * gen_steps) / n if n else 0.0
    total = mix_steps * mixed_ms + gen_steps * decode_ms
    latency = ttft + tpot * (o - 1)
    step_rate = b / total if total > 0 else math.inf
    little = b / latency if latency > 0 else math.inf
    return ttft, tpot, latency, min(step_rate, little)
