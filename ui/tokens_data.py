"""Cached engine calls of the LLM token-limit page (hashable arguments only).

A token law travels as a hashable ``law_key`` (its family and parameters, or a
digest of an uploaded sample) beside the law object itself (``_dist``, not
hashed): the key names the law, the object computes with it.
"""
from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

from engine import token_laws, token_limit
from engine.fit import fit_token_latency, fit_token_latency_with_input
from engine.presets import token_latency_profiles
from ui.budget import heavy, long_running
from ui.memo import memo

CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
SEED = 2024
N_POINTS = 33               # n_max grid of the curves
N_SIM_POINTS = 7            # simulated limits per curve
SIM_JOBS = 100_000
SIM_MAX_LOAD = 0.95         # no simulation without impatience closer to saturation
MAX_NO_LIMIT_TOKENS = 2_000_000   # a law reaching further is not compared with "no limit"


def n_max_grid(lo: int, hi: int) -> tuple:
    return tuple(float(x) for x in np.unique(np.round(np.linspace(lo, hi, N_POINTS))))


def sim_limits(lo: int, hi: int) -> tuple:
    return tuple(float(x) for x in np.unique(np.round(np.linspace(lo, hi, N_SIM_POINTS))))


@memo(CACHE_SIZE)
def preset_table() -> dict:
    return {pid: (p.name, p.source, tuple(p.input_tokens), tuple(p.output_tokens),
                  tuple(p.latency_s)) for pid, p in token_latency_profiles().items()}


@memo(CACHE_SIZE)
def latency_fit(output_tokens: tuple, latency_s: tuple):
    return fit_token_latency(output_tokens, latency_s)


@memo(CACHE_SIZE)
def latency_fit_with_input(output_tokens: tuple, input_tokens: tuple, latency_s: tuple):
    return fit_token_latency_with_input(output_tokens, input_tokens, latency_s)


@memo(CACHE_SIZE)
def parametric_law(key: tuple):
    """A parametric law from its key: ("lognormal", μ, σ), ("uniform", lo, hi), ("truncnorm", m, s)."""
    family, *args = key
    return {"lognormal": token_laws.lognormal, "uniform": token_laws.uniform,
            "truncnorm": token_laws.truncated_normal}[family](*args)


def empirical_key(law: token_laws.EmpiricalTokens) -> tuple:
    digest = hashlib.sha1(law.values.tobytes() + law.probs.tobytes()).hexdigest()
    return ("empirical", digest, law.n_samples)


@memo(CACHE_SIZE)
def law_summary(law_key: tuple, _dist) -> dict:
    """Mean tokens (no limit), a histogram and the CDF on its bins."""
    try:
        summable = token_laws.grid_top(_dist) <= MAX_NO_LIMIT_TOKENS
    except ValueError:
        summable = False
    # beyond that range "no limit" is left out (the sums would be slow or impossible)
    mean = (float(token_limit.clipped_token_moments(_dist, None)[0]) if summable
            else float(_dist.mean()) + 0.5)
    edges, probs = token_laws.binned_pmf(_dist)
    k = np.unique(np.round(np.linspace(1.0, edges[-1], 200)))
    return {"mean_tokens": mean, "summable": summable, "edges": edges, "probs": probs, "k": k,
            "cdf": np.asarray(token_laws.token_cdf(_dist, k))}


@memo(CACHE_SIZE)
@long_running
def curves(law_key: tuple, _dist, lam, a, c, patience, grid: tuple) -> token_limit.LimitCurves:
    return token_limit.limit_curves(lam, a, c, _dist, np.array(grid), patience)


@memo(256)
def point(law_key: tuple, _dist, lam, a, c, n_max, patience, method) -> token_limit.LimitPoint:
    return token_limit.limit_point(lam, a, c, _dist, n_max, patience, method)


@memo(CACHE_SIZE)
def best_v1(law_key: tuple, _dist, lam, a, c, theta) -> token_limit.OptimalLimit:
    return token_limit.optimal_limit(lam, a, c, _dist, theta)


@memo(CACHE_SIZE)
def best_v2(law_key: tuple, _dist, lam, a, c, theta, ell, patience, method,
            printed) -> token_limit.OptimalLimit:
    """The V2 search (coarse to fine, about a second): cached."""
    return token_limit.optimal_limit(lam, a, c, _dist, theta, ell, patience, method=method,
                                     printed_sign=printed)


@memo(CACHE_SIZE)
def paper(a, c) -> tuple:
    return token_limit.paper_comparison(a, c)


@memo(512)
def _sim_point(law_key: tuple, _dist, lam, a, c, n_max, patience, i):
    return token_limit.simulate_token_queue(lam, a, c, _dist, n_max, patience, n_jobs=SIM_JOBS,
                                            seed=[SEED, i])


@memo(CACHE_SIZE)
def sim_sweep(law_key: tuple, _dist, lam, a, c, patience, limits: tuple, loads, bar=None) -> dict:
    """Simulated points at ``limits``, without impatience (where the load ``loads`` is
    below ``SIM_MAX_LOAD``) and with patience τ; one cached run per point, so a
    progress bar moves between them."""
    jobs = [(n, None, i) for i, (n, r) in enumerate(zip(limits, loads)) if r < SIM_MAX_LOAD]
    jobs += [(n, patience, i) for i, n in enumerate(limits)]
    out = {"plain": [], "patient": []}
    for j, (n, tau, i) in enumerate(jobs):
        r = _sim_point(law_key, _dist, lam, a, c, n, tau, i)
        out["plain" if tau is None else "patient"].append((n, r))
        if bar is not None:
            bar.progress((j + 1) / len(jobs), "Simulating…")
    plain, patient = out["plain"], out["patient"]
    return {"plain_n": np.array([n for n, _ in plain]),
            "plain_wait": np.array([r.mean_wait_all for _, r in plain]),
            "plain_ci": np.array([r.ci95_wait_all for _, r in plain]),
            "n": np.array([n for n, _ in patient]),
            "served_wait": np.array([r.mean_wait_served for _, r in patient]),
            "served_ci": np.array([r.ci95_wait_served for _, r in patient]),
            "loss": np.array([r.loss_fraction for _, r in patient]),
            "loss_ci": np.array([r.ci95_loss for _, r in patient])}
