"""Answers of the LLM batching model: the best batch sizes and strategies at a load.

The delay-optimal fixed b (the paper's b*), the recommended b_max of capped
dynamic batching, every strategy compared at one load (§V-C, recomputed), and
the best strategy per load.  Seconds, requests per second.

A strategy's answer is a ``StrategyLatency`` and a row of the §V-C table a
``ComparisonRow``: frozen results whose times say their unit (``mean_wait_s``,
``mean_sojourn_s``, ``lam_per_s``), read as attributes or, as the dicts they were
before, by key; an old key (``r["mean_sojourn"]``) or attribute still reads for one
release, with a ``DeprecationWarning``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import warnings

import numpy as np

from ..core.domains import LAM_PER_S, LLM_BATCH
from ..core.renamed import REMOVED_IN, renamed_attribute
from .batch_times import optimal_batch_size, throughput
from .dynamic import CHAIN_MAX_STATES, dynamic_solution
from .fixed import fixed_batch_sojourn, fixed_batch_wait
from .sim import simulate
from .stability import stability_limit

B_MAX_CANDIDATES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class _ByKey(Mapping):
    """A frozen result also read as a mapping of its fields (``r["mean_sojourn_s"]``,
    ``dict(r)``, ``**r``), the dict it was before; an old key (a ``renamed_attribute``
    of the class) reads its new field with a ``DeprecationWarning``."""

    def __getitem__(self, key):
        if key in self.__dataclass_fields__:
            return getattr(self, key)
        old = vars(type(self)).get(key) if isinstance(key, str) else None
        if isinstance(old, renamed_attribute):
            warnings.warn(f"{type(self).__name__}[{key!r}] is deprecated; use [{old.new!r}] "
                          f"(the old name is removed in {REMOVED_IN})", DeprecationWarning,
                          stacklevel=2)
            return getattr(self, old.new)
        raise KeyError(key)

    def __iter__(self):
        return iter(self.__dataclass_fields__)

    def __len__(self):
        return len(self.__dataclass_fields__)


@dataclass(frozen=True)
class StrategyLatency(_ByKey):
    """One strategy at one load (``compare_strategies``): mean wait and mean sojourn of a
    request, s (``inf`` where unstable); ``b`` the batch size (requests; the cap b_max
    for capped dynamic batching, ``inf`` uncapped, the mean batch size where simulated
    without a cap, 0 where no fixed b is stable); ``method`` "exact" or "simulation"."""

    mean_wait_s: float
    mean_sojourn_s: float
    b: float
    method: str

    mean_wait = renamed_attribute("mean_wait_s")
    mean_sojourn = renamed_attribute("mean_sojourn_s")


@dataclass(frozen=True)
class ComparisonRow(_ByKey):
    """One row of the §V-C comparison (``paper_comparison``): the token law's name, the
    arrival rate (requests per s) and the load it is (a fraction of μ[b_ref]), the
    strategy, the law's throughput-optimal batch size up to 1024 (requests), and the
    strategy's ``StrategyLatency`` fields (s)."""

    law: str
    lam_per_s: float
    load: float
    strategy: str
    b_throughput: int
    mean_wait_s: float
    mean_sojourn_s: float
    b: float
    method: str

    lam = renamed_attribute("lam_per_s")
    mean_wait = renamed_attribute("mean_wait_s")
    mean_sojourn = renamed_attribute("mean_sojourn_s")


def best_fixed_batch_size(lam: float, dist, k, b_search: int = 64) -> int:
    """argmin over b ≤ b_search of the exact fixed-batching sojourn at λ (the paper's b*, §IV-C).

    0 when no b ≤ b_search is stable at λ.
    """
    b = np.arange(1, int(LLM_BATCH.check(b_search, "b_search")) + 1)
    soj = fixed_batch_sojourn(float(LAM_PER_S.check(lam)), b, dist, k)
    return int(b[np.argmin(soj)]) if np.isfinite(soj).any() else 0


def compare_strategies(lam: float, dist, k, b=None, *, n_jobs: int = 20_000, seed=0,
                       kv_capacity_tokens=None, prompt_tokens=0.0,
                       b_search: int = 64) -> dict[str, StrategyLatency]:
    """Mean wait and sojourn (s) of every strategy at one arrival rate ``lam`` (requests
    per s), same law and k.

    Keys: ``dynamic`` (uncapped, exact chain), ``dynamic_capped`` (b_max = b),
    ``fixed`` (batch size b, exact M/D^b/1 with H(b, E[L_b])), ``fixed_realised``
    (the same server simulated with the batch's realised longest output), ``elastic``
    (uncapped, simulated) and ``continuous`` (simulated, KV cache as given).
    ``b`` defaults to ``best_fixed_batch_size``.  Values are ``StrategyLatency``
    (``mean_wait_s``, ``mean_sojourn_s``, ``b``, ``method``; also read by key, the old
    keys ``mean_wait``, ``mean_sojourn`` with a warning); ``inf`` where unstable.
    """
    lam = float(LAM_PER_S.check(lam))
    b = best_fixed_batch_size(lam, dist, k, b_search) if b is None else int(LLM_BATCH.check(b))
    out = {}
    for key, cap in (("dynamic", None), ("dynamic_capped", b or None)):
        sol = dynamic_solution(lam, dist, k, cap)
        out[key] = StrategyLatency(sol.mean_wait_s, sol.mean_sojourn_s,
                                   np.inf if cap is None else cap, "exact")
    if b:
        out["fixed"] = StrategyLatency(float(fixed_batch_wait(lam, b, dist, k)),
                                       float(fixed_batch_sojourn(lam, b, dist, k)), b, "exact")
    else:
        out["fixed"] = StrategyLatency(np.inf, np.inf, 0, "exact")
    if b and lam < float(throughput(b, dist, k)):
        r = simulate("fixed", lam, dist, k, b=b, n_jobs=n_jobs, seed=seed)
        out["fixed_realised"] = StrategyLatency(r.mean_wait_s, r.mean_sojourn_s, b,
                                                "simulation")
    else:
        out["fixed_realised"] = StrategyLatency(np.inf, np.inf, b, "simulation")
    for key in ("elastic", "continuous"):
        limit = stability_limit(key, dist, k, kv_capacity_tokens=kv_capacity_tokens,
                                prompt_tokens=prompt_tokens)
        if lam >= limit:
            out[key] = StrategyLatency(np.inf, np.inf, np.inf, "simulation")
            continue
        r = simulate(key, lam, dist, k, n_jobs=n_jobs, seed=seed,
                     kv_capacity_tokens=kv_capacity_tokens, prompt_tokens=prompt_tokens)
        out[key] = StrategyLatency(r.mean_wait_s, r.mean_sojourn_s, r.mean_batch_size,
                                   "simulation")
    return out


def paper_laws() -> dict:
    """The token laws of §V-C: uniform on [0, 1000] (Fig 5) and lognormal(7, 0.7) (Fig 6)."""
    from scipy import stats
    return {"uniform(0, 1000)": stats.uniform(0.0, 1000.0),
            "lognormal(7, 0.7)": stats.lognorm(0.7, scale=np.exp(7.0))}


def paper_comparison(k, loads=(0.2, 0.5, 0.8), *, n_jobs: int = 20_000, seed=0,
                     kv_capacity_tokens=None, prompt_tokens=0.0) -> list[ComparisonRow]:
    """The §V-C comparison recomputed for coefficients ``k``, one row per (law, load, strategy).

    λ = load × μ[b_ref], b_ref the throughput-optimal batch size up to 64, for
    each law of ``paper_laws``.  Each row a ``ComparisonRow``: law, lam_per_s, load,
    strategy, b, mean_wait_s, mean_sojourn_s, method; plus the law's throughput-optimal
    batch size up to 1024 (``b_throughput``); read by key too (the old keys ``lam``,
    ``mean_wait``, ``mean_sojourn`` with a warning).  The paper's claims, to set beside
    it: light tails: uncapped dynamic beats fixed; heavy tails: a finite b_max beats
    uncapped dynamic; elastic lowest always.
    """
    rows = []
    for name, dist in paper_laws().items():
        b_thr = optimal_batch_size(dist, k, 1024)
        lam_ref = float(throughput(min(b_thr, 64), dist, k))
        for load in loads:
            lam = load * lam_ref
            res = compare_strategies(lam, dist, k, n_jobs=n_jobs, seed=seed,
                                     kv_capacity_tokens=kv_capacity_tokens,
                                     prompt_tokens=prompt_tokens)
            for strategy, v in res.items():
                rows.append(ComparisonRow(law=name, lam_per_s=lam, load=load,
                                          strategy=strategy, b_throughput=b_thr, **v))
    return rows


def recommended_b_max(lam: float, dist, k, candidates=B_MAX_CANDIDATES, max_load: float = 0.9,
                      max_states: int = CHAIN_MAX_STATES) -> tuple[int, float]:
    """(b_max, mean sojourn in s) minimising the exact capped dynamic-batching sojourn at λ.

    Only candidates with λ ≤ ``max_load``·μ[b_max] are solved (closer to
    saturation the chain needs thousands of states and the latency is large
    anyway); a chain needing more than ``max_states`` states counts as ``inf``.
    (0, inf) when no candidate qualifies.
    """
    lam = float(LAM_PER_S.check(lam))
    cands = np.asarray([int(c) for c in candidates])
    LLM_BATCH.check(cands, "candidates")
    if not 0.0 < max_load <= 1.0:
        raise ValueError(f"max_load must be in (0, 1], got {max_load!r}")
    mu = np.atleast_1d(throughput(cands, dist, k))
    best, best_soj = 0, np.inf
    for c in cands[lam <= max_load * mu]:
        soj = dynamic_solution(lam, dist, k, int(c), max_states).mean_sojourn_s
        if soj < best_soj:
            best, best_soj = int(c), float(soj)
    return best, best_soj


def best_strategy(values: dict) -> list[str]:
    """Per load, the name whose mean latency is smallest; "" where none is finite.

    ``values`` maps a strategy name to an array of mean latencies over the same
    loads (``inf`` or NaN: unstable or not computed there).
    """
    if not values:
        return []
    names = list(values)
    table = np.vstack([np.asarray(values[n], dtype=float).ravel() for n in names])
    table = np.where(np.isfinite(table), table, np.inf)
    idx = np.argmin(table, axis=0)
    ok = np.isfinite(table.min(axis=0))
    return [names[i] if good else "" for i, good in zip(idx, ok)]


def strategy_limits(dist, k, b, b_max, kv_capacity_tokens=None, prompt_tokens=0.0) -> dict:
    """Stability limit (requests/s) of each strategy of a comparison, by key:
    ``dynamic`` (uncapped), ``capped`` (b_max), ``fixed`` (b), ``elastic`` (uncapped),
    ``continuous`` (the KV cache and prompt tokens given)."""
    return {"dynamic": stability_limit("dynamic", dist, k),
            "capped": stability_limit("dynamic", dist, k, b_max=b_max),
            "fixed": stability_limit("fixed", dist, k, b=b),
            "elastic": stability_limit("elastic", dist, k),
            "continuous": stability_limit("continuous", dist, k,
                                          kv_capacity_tokens=kv_capacity_tokens,
                                          prompt_tokens=prompt_tokens)}


def prefer_simulated(exact: dict, simulated: dict | None) -> dict:
    """Per strategy, the simulated mean latency where it is finite, else the exact one.

    ``exact`` and ``simulated`` map a strategy to latencies (s) over the same loads;
    a strategy in either one is in the result.
    """
    out = {}
    for name in list(exact) + [s for s in (simulated or {}) if s not in exact]:
        v = exact.get(name)
        sim = None if simulated is None else simulated.get(name)
        if sim is not None:
            sim = np.asarray(sim, dtype=float)
            v = sim if v is None else np.where(np.isfinite(sim), sim, np.asarray(v, dtype=float))
        out[name] = v
    return out
