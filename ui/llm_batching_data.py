"""Cached engine calls of the LLM batching-strategy page (hashable arguments only).

A token law is passed around as a ``spec`` tuple, ("lognormal", μ, σ),
("uniform", low, high), ("truncnorm", mean, sd) or ("empirical", values,
probabilities, n), and built here.  Exact dynamic-batching chains and
simulations run point by point, each point cached, with a progress bar.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
import io

import numpy as np
import streamlit as st

from engine import llm_batching as lb
from engine import token_laws as tl
from engine.presets import llm_batch_time_presets
from ui.uploads import decode_text
from ui.memo import memo

CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
SEED = 2024
N_FINE = 80                                                    # analytic λ grid
COARSE = (0.1, 0.2, 0.325, 0.45, 0.575, 0.7, 0.85, 1.0)        # × λ max: chains, simulations
CHAIN_LOAD = {"dynamic": 0.8, "capped": 0.9}   # exact chains only below this share of capacity
SIM_LOAD = 0.95
B_TOP = 512                                                    # batch sizes of the Fig 3 chart
STRATEGIES = ("dynamic", "capped", "fixed", "elastic", "continuous")
LABELS = {"dynamic": "dynamic", "capped": "capped dynamic (b_max)", "fixed": "fixed b",
          "elastic": "elastic", "continuous": "continuous (KV cache)"}


@memo(CACHE_SIZE)
def presets() -> dict:
    return llm_batch_time_presets()


@memo(16)
def law(spec: tuple):
    kind = spec[0]
    if kind == "lognormal":
        return tl.lognormal(spec[1], spec[2])
    if kind == "uniform":
        return tl.uniform(spec[1], spec[2])
    if kind == "truncnorm":
        return tl.truncated_normal(spec[1], spec[2])
    if kind == "empirical":
        return tl.EmpiricalTokens(np.asarray(spec[1], float), np.asarray(spec[2], float),
                                  int(spec[3]))
    raise ValueError(f"unknown token law {kind!r}")


def empirical_spec(data: bytes | str) -> tuple:
    """Spec of the empirical law of pasted/uploaded CSV token counts (``ValueError`` if bad).

    The text is always read as CSV content (a file object), never as a path: a
    pasted "/etc/passwd" must not open a file on the server.
    """
    text = decode_text(data)                        # size cap, UTF-8, not empty
    try:
        e = tl.empirical_from_csv(io.StringIO(text, newline=None))   # any line ending
    except csv.Error as err:
        raise ValueError(f"not a readable CSV table ({err})") from None
    return ("empirical", tuple(e.values.tolist()), tuple(e.probs.tolist()), e.n_samples)


@dataclass(frozen=True)
class BatchCurve:
    b: np.ndarray
    expected_max: np.ndarray       # E[L_b], tokens
    throughput: np.ndarray         # μ[b], requests/s
    b_opt: int                     # argmax μ[b] for b ≤ B_TOP
    mean_tokens: float


@memo(CACHE_SIZE)
def batch_curve(spec, k) -> BatchCurve:
    dist = law(spec)
    b = np.arange(1, B_TOP + 1)
    mu = lb.throughput(b, dist, k)
    return BatchCurve(b, lb.expected_max_tokens(dist, b), mu, int(b[np.argmax(mu)]),
                      float(dist.mean()))


@memo(CACHE_SIZE)
def limits(spec, k, b, b_max, kv, prompt) -> dict:
    """Stability limit (requests/s) of every strategy."""
    dist = law(spec)
    return {"dynamic": lb.stability_limit("dynamic", dist, k),
            "capped": lb.stability_limit("dynamic", dist, k, b_max=b_max),
            "fixed": lb.stability_limit("fixed", dist, k, b=b),
            "elastic": lb.stability_limit("elastic", dist, k),
            "continuous": lb.stability_limit("continuous", dist, k, kv_capacity_tokens=kv,
                                             prompt_tokens=prompt)}


def fine_grid(lam_max) -> np.ndarray:
    return np.linspace(lam_max / N_FINE, lam_max, N_FINE)


def coarse_grid(lam_max) -> np.ndarray:
    return np.asarray(COARSE) * lam_max


@memo(CACHE_SIZE)
def fixed_curves(spec, k, b, lam_max) -> dict:
    """On the fine λ grid (s): exact fixed-batching sojourn, eq 25 as printed, and the
    dynamic-batching bound φ(λ, α1, β1) (eq 20; ``inf`` for unbounded laws)."""
    dist = law(spec)
    lam = fine_grid(lam_max)
    return {"lam": lam, "exact": lb.fixed_batch_sojourn(lam, b, dist, k),
            "eq25": lb.fixed_batch_wait_eq25(lam, b, dist, k),
            "bound": lb.dynamic_wait_bound(lam, dist, k),
            "coarse": lb.fixed_batch_sojourn(coarse_grid(lam_max), b, dist, k)}


def chain_states(b_max) -> int:
    """State ceiling of an exact chain: its cost grows like states² × min(b_max, states),
    so uncapped and large-b_max chains get fewer states (about a second at most)."""
    return 512 if b_max is not None and b_max <= 128 else 256


@memo(512)
def _chain_point(lam, spec, k, b_max) -> lb.DynamicSolution:
    return lb.dynamic_solution(lam, law(spec), k, b_max, chain_states(b_max))


@memo(CACHE_SIZE)
def dynamic_curve(spec, k, b_max, lam_max, limit, bar=None, share=0.8) -> np.ndarray:
    """Exact mean sojourn (s) on the coarse grid; NaN above ``share`` of the limit and
    from the first load whose chain needs more than ``chain_states`` states on (the
    queue only grows with the load)."""
    lam = coarse_grid(lam_max)
    out = np.full(lam.size, np.nan)
    todo = np.flatnonzero(lam < share * limit)
    for n, i in enumerate(todo):
        sol = _chain_point(float(lam[i]), spec, k, b_max)
        if not sol.converged:
            break
        out[i] = sol.mean_sojourn
        if bar is not None:
            bar.progress((n + 1) / todo.size, "Solving the exact dynamic-batching chain…")
    return out


@memo(1024)
def _sim_point(strategy, lam, spec, k, b, b_max, kv, prompt, n_jobs, i):
    dist = law(spec)
    name = "dynamic" if strategy == "capped" else strategy
    options = dict(kv_capacity_tokens=kv, prompt_tokens=prompt) if strategy == "continuous" else {}
    return lb.simulate(name, lam, dist, k, b=b if strategy == "fixed" else None,
                       b_max=b_max if strategy == "capped" else None, n_jobs=n_jobs,
                       seed=[SEED, i], **options)


@dataclass(frozen=True)
class SimSweep:
    lam: np.ndarray            # the coarse grid
    mean: dict                 # strategy -> mean sojourn per λ (NaN: not simulated)
    ci95: dict
    p99: dict


@memo(CACHE_SIZE)
def sim_sweep(spec, k, b, b_max, kv, prompt, lam_max, lims: dict, n_jobs, bar=None) -> SimSweep:
    """Every strategy simulated at the coarse loads below ``SIM_LOAD`` of its limit."""
    lam = coarse_grid(lam_max)
    jobs = [(s, i) for s in STRATEGIES for i in range(lam.size) if lam[i] < SIM_LOAD * lims[s]]
    mean, ci, p99 = ({s: np.full(lam.size, np.nan) for s in STRATEGIES} for _ in range(3))
    for n, (s, i) in enumerate(jobs):
        r = _sim_point(s, float(lam[i]), spec, k, b, b_max, kv, prompt, n_jobs, i)
        mean[s][i], ci[s][i], p99[s][i] = r.mean_sojourn, r.ci95_sojourn, r.p99_sojourn
        if bar is not None:
            bar.progress((n + 1) / len(jobs), f"Simulating {LABELS[s]}…")
    return SimSweep(lam, mean, ci, p99)


@memo(256)
def best_fixed(lam, spec, k) -> tuple[int, float]:
    dist = law(spec)
    b = lb.best_fixed_batch_size(lam, dist, k)
    return b, (float(lb.fixed_batch_sojourn(lam, b, dist, k)) if b else float("inf"))


@memo(256)
def recommended_b_max(lam, spec, k) -> tuple[int, float]:
    return lb.recommended_b_max(lam, law(spec), k, max_states=256)


def best_per_load(exact: dict, sweep: SimSweep | None) -> list[str]:
    """Best strategy per coarse load: simulated means where run, else exact ones."""
    values = {}
    for s in STRATEGIES:
        v = exact.get(s)
        if sweep is not None:
            sim = sweep.mean[s]
            v = sim if v is None else np.where(np.isfinite(sim), sim, v)
        if v is not None:
            values[LABELS[s]] = v
    return lb.best_strategy(values)
