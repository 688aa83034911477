"""Family "llm_serving": LLM servers as vLLM runs them (continuous batching, chunked
prefill within a token budget, a paged KV cache), colocated: every replica runs
prompts and replies; searched: hardware × tensor-parallel preset, ``max_num_seqs``,
``max_num_batched_tokens``, replicas; held to TTFT, TPOT and e2e percentiles.

Screening (every configuration): ``engine.llm_serving.approximate_percentiles`` at the
replica's share of the traffic, rate/R (Poisson; a bursty stream is only seen in the
confirmation); capacity ``engine.llm_serving.max_rate_per_s``.  Confirmation (the
cheapest): the whole fleet simulated (``engine.llm_serving.simulate_fleet``, the plan's
dispatch policy and arrival process), ``CONFIRM_RUNS`` runs, the mean percentile ± a
95 % t interval; the confirmed best is simulated again with one replica fewer.
Energy per request: (P_busy·u + P_idle·(1 − u))/λ_replica with u = λ_replica/capacity
(the share of its capacity a replica uses, an approximation of its busy time).
"""
from __future__ import annotations

from functools import lru_cache
import hashlib
import math

import numpy as np
import pandas as pd
from scipy import stats

from ...core.domains import MAX_BATCHED_TOKENS, MAX_NUM_SEQS, PLAN_REPLICAS, Choice
from ...llm_serving import (Scheduler, approximate_percentiles, approximate_serving,
                            kv_bytes_per_token, serving_presets, simulate_fleet)
from ...presets import token_law_presets
from ..hardware import ServingHardware
from ..words import duration_text
from .base import METRICS, Family, Knob, ratio_text, sla_column, usd_per_million_requests
from .workload import ServingWorkload, workload_from_laws, workload_from_pairs, workload_of  # noqa: F401,E501

CONFIRM_RUNS = 4
CONFIRM_REQUESTS = 20_000          # requests per confirmation run (at least)
CONFIRM_TAIL = 400                 # ... and enough for this many beyond the percentile
MAX_CONFIRM_REQUESTS = 200_000
DEFAULT_PROFILES = ("splitwise_a100_llama2_70b_tp8", "splitwise_h100_llama2_70b_tp8")
#: The KV shape of a preset model without [kv_capacity] in its file: layers, KV heads,
#: head dim, bytes per element.  Qwen2.5-7B: its config.json (num_hidden_layers 28,
#: num_key_value_heads 4, hidden 3584 / 28 heads = head dim 128), BF16.
MODEL_SHAPES = {"vllm_rtx4090_qwen2_5_7b": (28, 4, 128, 2)}
DISPATCH_WORDS = {"random": "random", "round_robin": "round-robin",
                  "least_outstanding": "least-outstanding-requests"}


def _scheduler_of(hw: ServingHardware, max_num_seqs, max_num_batched_tokens) -> Scheduler:
    """One server's scheduler: vLLM V1 (chunked prefill), the hardware's KV cache, no
    prefix caching (requests share no prompts here)."""
    return Scheduler(max_num_seqs=int(max_num_seqs),
                     max_num_batched_tokens=int(max_num_batched_tokens),
                     kv_cache_tokens=hw.kv_cache_tokens, block_size=hw.block_size,
                     chunked_prefill=True, prefix_caching=False)


def _confirm_requests(spec) -> int:
    """Requests one confirmation run simulates: ``CONFIRM_REQUESTS``, more for a far
    percentile (``CONFIRM_TAIL`` beyond the farthest), at most ``MAX_CONFIRM_REQUESTS``."""
    q = max(q for _, q, _ in spec.sla)
    return int(min(MAX_CONFIRM_REQUESTS, max(CONFIRM_REQUESTS,
                                             math.ceil(CONFIRM_TAIL / (1 - q / 100)))))


def _metric_percentile(result, metric: str, q: float) -> float:
    """A simulated run's ``metric`` ("ttft", "tpot", "e2e") at percentile ``q``, ms."""
    return float(getattr(result, f"{metric}_ms").percentile(q))


class ServingFamily(Family):
    """What both serving families share: the workload, the SLA metrics, the table's
    columns and the reasons; subclasses price and simulate their servers."""

    load_unit = "requests/s"
    time_unit = "ms"
    hardware_type = ServingHardware
    hardware_fields = ("name", "price_usd_per_hour", "step_cost", "kv_cache_tokens",
                       "kv_bytes_per_token", "block_size", "gpus", "busy_power_w",
                       "idle_power_w", "model", "profile", "source")
    metrics = ("ttft", "tpot", "e2e")
    default_metric = "ttft"
    default_profiles = DEFAULT_PROFILES

    def presets(self) -> dict:
        return dict(_presets())

    def accepts(self, hw) -> bool:
        return isinstance(hw, ServingHardware)

    def check(self, spec) -> None:
        if not spec.token_trace:
            laws = Choice("token law", tuple(sorted(token_law_presets())))
            for key in ("prompt_law", "token_law"):
                laws.check(getattr(spec, key), f"{key} (without a token_trace)")

    # what the two serving families share, as methods (one piece of code each)
    def scheduler_of(self, hw, max_num_seqs, max_num_batched_tokens) -> Scheduler:
        return _scheduler_of(hw, max_num_seqs, max_num_batched_tokens)

    def confirm_requests(self, spec) -> int:
        return _confirm_requests(spec)

    def estimates(self, spec, runs) -> dict:
        return _estimates(spec, self.sla_columns(spec), runs)

    def workload_for(self, spec) -> ServingWorkload:
        return _workload_for(spec)

    def workload(self, spec, base_dir=None) -> ServingWorkload:
        return workload_of(spec, base_dir)

    def prepare(self, spec, workload=None) -> dict:
        """The plan's workload (``workload``, else the one ``spec`` names), kept for this
        process's later calls and passed to every pricing call."""
        if workload is not None and not isinstance(workload, ServingWorkload):
            raise ValueError(f"workload must be a ServingWorkload, got "
                             f"{type(workload).__name__}")
        wl = workload if workload is not None else workload_of(spec)
        _WORKLOADS[_workload_key(spec)] = wl
        return {"workload": wl}

    def screened_words(self, spec) -> str:
        return "by the approximation"

    def confirmed_words(self, spec) -> str:
        return (f"confirmed by simulating the whole fleet ({CONFIRM_RUNS} runs of "
                f"{_confirm_requests(spec):,} requests, {DISPATCH_WORDS[spec.dispatch]} "
                f"dispatch)")

    def result_columns(self, spec) -> list[str]:
        return ["hardware", "stable", "method", *self.sla_columns(spec), "sla_ratio",
                "binding", "mean_ttft_ms", "mean_tpot_ms", "mean_e2e_ms", "utilization",
                "energy_j_per_request", "cost_usd_per_hour", "cost_usd_per_million", "gpus",
                "capacity_per_s", "meets_sla", "reason"]

    def columns(self, spec) -> list[str]:
        knobs = [k.name for k in self.knobs]
        cols = [c for c in self.result_columns(spec) if c != "hardware"]
        return ["hardware", *self.point_columns(), *knobs, *cols]

    def point_columns(self) -> list[str]:
        return []

    def csv_columns(self, spec) -> list[str]:
        conf = [c for pair in self.confirm_columns(spec).values() for c in pair]
        return ["hardware", *self.point_columns(), *(k.name for k in self.knobs), "gpus",
                "cost_usd_per_hour", "cost_usd_per_million", "capacity_per_s", "method",
                *self.sla_columns(spec), "sla_ratio", "binding", "confirmed", *conf,
                "mean_ttft_ms", "mean_tpot_ms", "mean_e2e_ms", "utilization",
                "energy_j_per_request"]

    def settings_text(self, spec, row) -> str:
        try:
            seqs = int(row["max_num_seqs"])
            budget = int(row["max_num_batched_tokens"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"row must hold max_num_seqs and max_num_batched_tokens "
                             f"({exc})") from None
        return f"max_num_seqs {seqs}, token budget {budget:,} per step"

    def judged(self, spec, *, values: dict, cap: float, rate: float, power: tuple,
               fits: bool, cost_h: float) -> dict:
        """The columns every serving configuration has, from its SLA percentiles
        ``values`` ({column: ms}), its capacity and the load on it (requests/s per
        server), its (busy, idle) power and whether its requests fit its KV cache."""
        cols = self.sla_columns(spec)
        ratios = [values[c] / t for c, (_, _, t) in zip(cols, spec.sla)]
        worst = int(np.argmax(ratios))
        util = min(rate / cap, 1.0) if cap > 0 else 1.0
        energy = (power[0] * util + power[1] * (1 - util)) / rate
        stable = fits and rate < cap * (1 - 1e-9) and all(math.isfinite(v) for v in ratios)
        reason = ("kv" if not fits else "unstable" if not stable
                  else spec.sla[worst][0] if ratios[worst] > 1
                  else "energy" if energy > spec.energy_cap_j else "")
        return dict(stable=stable, **{c: values[c] for c in cols},
                    sla_ratio=float(ratios[worst]),
                    binding=f"p{spec.sla[worst][1]:g} {METRICS[spec.sla[worst][0]][1]}",
                    utilization=util, energy_j_per_request=energy, cost_usd_per_hour=cost_h,
                    cost_usd_per_million=usd_per_million_requests(cost_h, spec.rate_per_s),
                    meets_sla=reason == "", reason=reason)

    def rejection(self, spec, rows: pd.DataFrame) -> tuple[str, str]:
        if rows.empty:
            return "not searched", "no configuration of it in the ranges"
        if (rows["reason"] == "kv").all():
            return "kv", self.kv_detail(spec, rows.iloc[0])
        ok = rows[rows["reason"] != "kv"]
        if not ok["stable"].any():
            most = ok["capacity_per_s"].max()
            return ("unstable", f"at most {most:,.4g} requests/s with the most servers "
                                f"searched, below the {spec.rate_per_s:,.4g} requests/s offered")
        stable = ok[ok["stable"]]
        fast = stable[stable["sla_ratio"] <= 1]
        if fast.empty:
            low = stable.loc[stable["sla_ratio"].idxmin()]
            metric, q, target = spec.sla[[f"p{q:g} {METRICS[m][1]}" for m, q, _ in
                                          spec.sla].index(low["binding"])]
            value = low[sla_column(metric, q)]
            floor = self.floor_text(spec, low, metric)
            return (metric, f"best p{q:g} {METRICS[metric][1]} {duration_text(value)} "
                            f"({self.fleet_text(low)}, {self.settings_text(spec, low)}) > "
                            f"{duration_text(target)}, {ratio_text(value, target)}" + floor)
        low = fast["energy_j_per_request"].min()
        return "energy", f"least {low:,.4g} J per request > {spec.energy_cap_j:,.4g} J cap"

    def floor_text(self, spec, row, metric) -> str:
        """Why no load can meet a TPOT target: below one decode step."""
        return ""


class LlmServingColocated(ServingFamily):
    name = "llm_serving"
    title = "LLM serving, colocated (vLLM-style replicas)"
    title = "LLM serving, colocated (vLLM-style replicas)"
    cost_weight = 2           # an approximation over the replica counts
    request_weight = 0.05     # a whole fleet simulated: ~20 µs per request
    knobs = (Knob("max_num_seqs", "Most requests running at once (max_num_seqs)", "requests",
                  MAX_NUM_SEQS, (64, 128, 256),
                  "vLLM's max_num_seqs: the requests one step may hold."),
             Knob("max_num_batched_tokens", "Token budget per step (max_num_batched_tokens)",
                  "tokens", MAX_BATCHED_TOKENS, (2048, 8192),
                  "vLLM's max_num_batched_tokens: prompt chunks and decodes one step may "
                  "compute."),
             Knob("replicas", "Replicas", "servers",
                  PLAN_REPLICAS,
                  tuple(range(1, 17)), "Copies of the server sharing the traffic."))
    pricing = ("approximate: the serving model's birth-death chain at the replica's share "
               "of the traffic (Poisson), percentiles from its tails; the cheapest "
               "confirmed by simulating the whole fleet")

    def default_fields(self) -> dict:
        """The LLM batch family's default question asked of the serving model: 1
        request/s of Llama-2-70B on 8×A100 or 8×H100 (and TP 2, 4), prompts and replies
        of the Azure conversation trace, 99 % within 60 s end to end, 1-8 replicas."""
        presets = _presets()
        ids = [p for p in ("splitwise_a100_llama2_70b_tp2", "splitwise_a100_llama2_70b_tp4",
                           "splitwise_a100_llama2_70b_tp8", "splitwise_h100_llama2_70b_tp2",
                           "splitwise_h100_llama2_70b_tp4", "splitwise_h100_llama2_70b_tp8")
               if p in presets]
        return dict(workload=self.name, rate_per_s=1.0, sla=(("e2e", 99.0, 60_000.0),),
                        hardware=tuple(presets[p] for p in ids),
                        prompt_law="azure_2023_conv_prompt",
                        token_law="azure_2023_conv_output", max_num_seqs=(64, 128, 256),
                        max_num_batched_tokens=(2048, 8192), replicas=tuple(range(1, 9)))

    def fleet_text(self, row) -> str:
        n = int(row["replicas"])
        return f"{n} colocated replica{'s' if n != 1 else ''} of {row['hardware']}"

    def price(self, spec, *, arrivals=None, workload=None, hardware, max_num_seqs,
              max_num_batched_tokens, replicas) -> dict:
        wl = workload if workload is not None else _workload_for(spec)
        group = _colocated_group(spec, wl, hardware, int(max_num_seqs),
                                 int(max_num_batched_tokens))
        i = spec.replicas.index(int(replicas))
        return {**group[i],
                "method": "approximate" + ("" if arrivals is None else " (as Poisson)")}

    def kv_detail(self, spec, row) -> str:
        hw = spec.hardware_named(row["hardware"])
        wl = _workload_for(spec)
        return (f"its KV cache holds {hw.kv_cache_tokens:,} tokens, less than the longest "
                f"request's prompt and reply ({wl.longest():,} tokens)")

    def floor_text(self, spec, row, metric) -> str:
        if metric != "tpot":
            return ""
        hw = spec.hardware_named(row["hardware"])
        one = hw.step_cost.base_ms + hw.step_cost.decode_ms_per_seq
        target = next(t for m, _, t in spec.sla if m == "tpot")
        return (f"; one decode step alone takes {one:.3g} ms, above the "
                f"{target:g} ms target: no load meets it" if one > target else "")

    def simulate(self, spec, row, arrivals, *, workload=None, replicas=None, n_requests,
                 seed):
        """The whole fleet of ``row`` simulated once: a ``ServingResult``."""
        wl = workload if workload is not None else _workload_for(spec)
        hw = spec.hardware_named(row["hardware"])
        sched = _scheduler_of(hw, row["max_num_seqs"], row["max_num_batched_tokens"])
        inputs, outputs = wl.draw(n_requests, seed)
        load = dict(rate_per_s=spec.rate_per_s) if arrivals is None else dict(arrivals=arrivals)
        return simulate_fleet(hw.step_cost, sched, replicas=int(replicas or row["replicas"]),
                              dispatch=spec.dispatch, input_tokens=inputs,
                              output_tokens=outputs, n_requests=n_requests, seed=seed, **load)

    def confirm(self, spec, row, arrivals, *, workload=None, **change) -> dict:
        n = _confirm_requests(spec)
        key = [spec.seed, 1729, *(int(row[k]) for k in ("max_num_seqs",
                                                         "max_num_batched_tokens"))]
        key += [int(change.get(k, row[k])) for k in self.scale_knobs]
        key.append(int(hashlib.sha256(str(row["hardware"]).encode()).hexdigest()[:8], 16))
        runs = []
        for s in np.random.SeedSequence(key).spawn(CONFIRM_RUNS):
            seed = int(s.generate_state(1)[0])
            runs.append(self.simulate(spec, {**dict(row), **change}, arrivals,
                                      workload=workload, n_requests=n, seed=seed))
        return self.estimates(spec, runs)

    def neighbours(self, spec, best) -> list[dict]:
        """The configuration with one replica fewer (if any)."""
        r = int(best["replicas"])
        return [{"replicas": r - 1}] if r > 1 else []


def _estimates(spec, cols, runs) -> dict:
    """{column: (mean over runs, 95 % t half-width)} of each SLA row."""
    out = {}
    t = stats.t.ppf(0.975, len(runs) - 1)
    for c, (metric, q, _) in zip(cols, spec.sla):
        values = [_metric_percentile(r, metric, q) for r in runs]
        out[c] = (float(np.mean(values)),
                  float(t * np.std(values, ddof=1) / math.sqrt(len(values))))
    return out


_WORKLOADS: dict = {}


def _workload_key(spec) -> tuple:
    return (spec.prompt_law, spec.token_law, spec.token_trace)


def _workload_for(spec) -> ServingWorkload:
    """The workload of ``spec``: the one its plan was given (``prepare``), else read
    once per process."""
    key = _workload_key(spec)
    if key not in _WORKLOADS:
        _WORKLOADS[key] = workload_of(spec)
    return _WORKLOADS[key]


def _approximate_columns(spec, cost, sched, wl, rates) -> tuple[dict, np.ndarray, float]:
    """The approximation's SLA percentiles ({column: array over ``rates``}), the means
    (TTFT, TPOT, e2e arrays) and the capacity (requests/s) of one server."""
    values = {}
    cap = math.nan
    for q in sorted({q for _, q, _ in spec.sla}):        # one call per percentile
        ap = approximate_percentiles(cost, sched, input_tokens=wl.prompts,
                                     output_tokens=wl.replies, rate_per_s=rates, percentile=q)
        for metric, q_row, _ in spec.sla:
            if q_row == q:
                values[sla_column(metric, q)] = np.asarray(getattr(ap, f"{metric}_ms"), float)
        cap = ap.rate_limit_per_s
    means = approximate_serving(cost, sched, input_tokens=wl.prompts,
                                output_tokens=wl.replies, rate_per_s=rates)
    return values, means, cap


@lru_cache(maxsize=256)
def _colocated_group(spec, wl, hardware: str, max_num_seqs: int,
                     max_num_batched_tokens: int) -> list:
    """Every replica count of one (hardware, settings) priced at once (the
    approximation broadcasts over the per-replica rate)."""
    hw = spec.hardware_named(hardware)
    sched = _scheduler_of(hw, max_num_seqs, max_num_batched_tokens)
    reps = np.asarray(spec.replicas, float)
    rates = spec.rate_per_s / reps
    fam = spec.family
    fits = hw.kv_cache_tokens is None or wl.longest() <= hw.kv_cache_tokens
    if fits:
        values, means, cap = _approximate_columns(spec, hw.step_cost, sched, wl, rates)
    else:
        values = {c: np.full(reps.size, math.inf) for c in fam.sla_columns(spec)}
        means, cap = None, 0.0
    out = []
    for i, r in enumerate(reps):
        row = fam.judged(spec, values={c: float(v[i]) for c, v in values.items()}, cap=cap,
                         rate=float(rates[i]), power=(hw.busy_power_w, hw.idle_power_w),
                         fits=fits, cost_h=hw.price_usd_per_hour * r)
        row.update(mean_ttft_ms=float(means.ttft_ms[i]) if means else math.inf,
                   mean_tpot_ms=float(means.tpot_ms[i]) if means else math.inf,
                   mean_e2e_ms=float(means.e2e_ms[i]) if means else math.inf,
                   gpus=int(hw.gpus * r), capacity_per_s=cap * r)
        out.append(row)
    return out


@lru_cache(maxsize=None)
def _presets() -> dict:
    """Each serving preset (``presets/llm_serving``) that a price preset lists, priced at
    its GPUs' share of the instance; busy power the GPUs' datasheet maximum; KV bytes
    per token from the model's shape."""
    from ..hardware import price_of
    out = {}
    for pid, pre in serving_presets().items():
        price, gpus = price_of(pid)
        if price is None:
            continue
        shape = (tuple(pre.kv_capacity[k] for k in ("layers", "kv_heads", "head_dim",
                                                    "kv_dtype_bytes"))
                 if pre.kv_capacity else MODEL_SHAPES.get(pid))
        if shape is None:
            continue
        kv_bytes = kv_bytes_per_token(layers=shape[0], kv_heads=shape[1], head_dim=shape[2],
                                      kv_dtype_bytes=shape[3])
        out[pid] = ServingHardware(
            name=f"{pre.hardware} · {pre.model.split(' (')[0]}", model=pre.model,
            price_usd_per_hour=price.usd_per_gpu_hour * gpus, step_cost=pre.cost,
            kv_cache_tokens=pre.kv_cache_tokens, kv_bytes_per_token=kv_bytes,
            block_size=pre.block_size, gpus=gpus, busy_power_w=price.board_power_w * gpus,
            profile=pid, source=f"{pre.source} Price: {price.source}")
    return out


FAMILY = LlmServingColocated()
__all__ = ["LlmServingColocated", "ServingFamily", "ServingWorkload", "FAMILY",
           "workload_of", "workload_from_laws", "workload_from_pairs"]
