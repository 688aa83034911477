"""What a capacity plan searches: the workload family, the traffic, the SLA, the
candidate hardware with its price, and the ranges of the settings (``PlanSpec``),
validated on construction, and the presets that fill them (``hardware_presets``,
``default_spec``).

Units: the total request rate in requests/s, latencies in ms, energy in J per request,
prices in $ per hour, power in W.  The families (``engine.planner.families``) say what
each candidate holds and which settings each searches.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
import math

from ..core import domains as dom
from .checks import MAX_REPLICAS, number_in, values_in, whole_in  # noqa: F401
from .hardware import Hardware, ServingHardware, price_of, short_name  # noqa: F401

ARRIVAL_KINDS = dom.ARRIVAL_KIND.values
MAX_CONFIGURATIONS = 200_000      # the largest grid one plan prices
MAX_CONFIRM = int(dom.PLAN_CONFIRM.high)
MAX_SLA_ROWS = 6


def _families():
    from .families import FAMILIES
    return FAMILIES


def _family(workload):
    """The family of ``workload`` (a key of ``families.FAMILIES``), or ``ValueError``."""
    from .families import family
    return family(workload)


WORKLOADS = ("gpu", "llm", "llm_serving", "llm_disaggregated")

#: the ranges a plan searches, each field's domain (``engine.core.domains``)
RANGES = {"b_max": dom.PLAN_B_MAX, "queue_delay_ms": dom.PLAN_QUEUE_DELAY_MS,
          "token_limit": dom.PLAN_TOKEN_LIMIT, "replicas": dom.PLAN_REPLICAS,
          "max_num_seqs": dom.MAX_NUM_SEQS, "max_num_batched_tokens": dom.MAX_BATCHED_TOKENS,
          "prefill_instances": dom.SERVING_INSTANCES,
          "decode_instances": dom.SERVING_INSTANCES}


def _sla(rows, metrics: tuple, from_fields: bool = False) -> tuple:
    """``rows`` as a tuple of (metric, percentile, target ms), each checked
    (``from_fields``: the one row made of ``percentile`` and ``target_ms``, named so)."""
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise ValueError(f"sla must be a list of (metric, percentile, target_ms), got {rows!r}")
    out = []
    for i, row in enumerate(rows):
        where = f"sla[{i}]"
        q_name, t_name = ((f"{where} percentile", f"{where} target_ms") if not from_fields
                          else ("percentile", "target_ms"))
        if isinstance(row, dict):
            unknown = set(row) - {"metric", "percentile", "target_ms"}
            if unknown:
                raise ValueError(f"{where}: unknown field {sorted(unknown)[0]!r} (allowed: "
                                 f"metric, percentile, target_ms)")
            row = (row.get("metric"), row.get("percentile"), row.get("target_ms"))
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__") or len(row) != 3:
            raise ValueError(f"{where} must be (metric, percentile, target_ms), got {row!r}")
        metric, q, target = row
        dom.Choice("metric", tuple(metrics)).check(metric, f"{where}: metric")
        out.append((metric, number_in(q, dom.PLAN_PERCENTILE, q_name),
                    number_in(target, dom.PLAN_TARGET_MS, t_name)))
    if not out:
        raise ValueError("sla must hold at least one (metric, percentile, target_ms)")
    if len(out) > MAX_SLA_ROWS:
        raise ValueError(f"sla holds {len(out)} rows, at most {MAX_SLA_ROWS}")
    seen = [(m, q) for m, q, _ in out]
    if len(set(seen)) != len(seen):
        m, q = next(x for x in seen if seen.count(x) > 1)
        raise ValueError(f"sla: p{q:g} {m} appears twice")
    return tuple(out)


@dataclass(frozen=True)
class PlanSpec:
    """Everything a capacity plan needs: exactly what the planner page's inputs hold.

    ``workload``: the family (``engine.planner.families.FAMILIES``: "gpu", "llm",
    "llm_serving", "llm_disaggregated").
    Traffic: ``rate_per_s`` requests/s in total, arriving as ``arrivals_kind`` ("poisson";
    "bursty": a renewal process with gap SCV ``arrivals_scv``; "mmpp2": the MMPP-2 fitted
    to ``arrivals_trace``, an arrival preset's id or a trace file; "replay": the trace
    file ``arrivals_trace``).
    SLA: ``sla``, rows of (metric, percentile, target ms), every one to hold (metrics:
    the family's: "latency" for the GPU family, "e2e" for the LLM batch family, "ttft",
    "tpot" and "e2e" for the serving families); ``percentile`` and ``target_ms`` are the
    first row's (given alone they make a one-row SLA of the family's metric; given with
    ``sla`` they replace its first row's).  At most ``energy_cap_j`` J per request (inf:
    no cap); LLM batch: the token limit may cut at most ``truncation_cap`` of the replies
    (a fraction, 1: no cap).  Candidates: ``hardware``.
    Ranges searched (every combination of the family's knobs): ``b_max``,
    ``queue_delay_ms`` (GPU), ``token_limit`` (LLM batch, drawn from the token-law preset
    ``token_law``), ``replicas``; serving: ``max_num_seqs``, ``max_num_batched_tokens``
    (colocated: with ``replicas``; disaggregated: each side's, with
    ``prefill_instances`` and ``decode_instances``, every pair of candidates as prefill
    and decode hardware).  Serving workload: prompts from the token-law preset
    ``prompt_law`` and replies from ``token_law``, or both from the trace file
    ``token_trace`` (prompt and reply taken together, request by request); ``dispatch``
    across replicas ("random", "round_robin", "least_outstanding"); the KV link of the
    disaggregated family ``link_gb_per_s``, ``link_latency_ms``.
    ``confirm``: how many of the cheapest are confirmed by simulation; ``seed``: the
    simulations' seed.
    """

    workload: str = "gpu"
    rate_per_s: float = 1000.0
    arrivals_kind: str = "poisson"
    arrivals_scv: float = 1.0
    arrivals_trace: str = ""
    percentile: float | None = None
    target_ms: float | None = None
    energy_cap_j: float = math.inf
    truncation_cap: float = 1.0
    hardware: tuple = ()
    b_max: tuple = (1, 2, 4, 8, 16, 32, 64, 128)
    queue_delay_ms: tuple = (0.0,)
    token_limit: tuple = (0,)
    token_law: str = ""
    replicas: tuple = tuple(range(1, 17))
    confirm: int = 5
    seed: int = 0
    sla: tuple = ()
    prompt_law: str = ""
    token_trace: str = ""
    max_num_seqs: tuple = (256,)
    max_num_batched_tokens: tuple = (8192,)
    prefill_instances: tuple = (1, 2, 3, 4)
    decode_instances: tuple = (1, 2, 3, 4)
    dispatch: str = "least_outstanding"
    link_gb_per_s: float = 50.0
    link_latency_ms: float = 0.0

    def __post_init__(self):
        fam = _family(self.workload)
        setv = lambda k, v: object.__setattr__(self, k, v)   # noqa: E731 (frozen fields)
        setv("rate_per_s", number_in(self.rate_per_s, dom.PLAN_RATE_PER_S))
        dom.ARRIVAL_KIND.check(self.arrivals_kind)
        setv("arrivals_scv", number_in(self.arrivals_scv, dom.PLAN_ARRIVALS_SCV))
        for key in ("arrivals_trace", "token_trace", "prompt_law", "token_law"):
            if not isinstance(getattr(self, key), str):
                raise ValueError(f"{key} must be text, got {getattr(self, key)!r}")
        if self.arrivals_kind in ("mmpp2", "replay") and not self.arrivals_trace:
            raise ValueError(f"arrivals_trace must name a trace for arrivals_kind "
                             f"{self.arrivals_kind!r}")
        self._resolve_sla(fam)
        setv("energy_cap_j", number_in(self.energy_cap_j, dom.PLAN_ENERGY_CAP_J))
        setv("truncation_cap", number_in(self.truncation_cap, dom.PLAN_TRUNCATION_CAP))
        hw = tuple(self.hardware) if isinstance(self.hardware, (list, tuple)) else None
        if not hw or not all(isinstance(h, (Hardware, ServingHardware)) for h in hw):
            raise ValueError("hardware must list at least one Hardware")
        names = [h.name for h in hw]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"hardware names must be unique, {dup!r} appears twice")
        wrong = [h.name for h in hw if not fam.accepts(h)]
        if wrong:
            raise ValueError(f"hardware {wrong[0]!r} does not describe a {self.workload} "
                             f"workload")
        setv("hardware", hw)
        for key, domain in RANGES.items():
            setv(key, values_in(getattr(self, key), domain, key))
        dom.FLEET_DISPATCH.check(self.dispatch)
        setv("link_gb_per_s", number_in(self.link_gb_per_s, dom.PLAN_LINK_GB_PER_S))
        setv("link_latency_ms", number_in(self.link_latency_ms, dom.PLAN_LINK_LATENCY_MS))
        fam.check(self)
        setv("confirm", whole_in(self.confirm, dom.PLAN_CONFIRM))
        setv("seed", whole_in(self.seed, dom.PLAN_SEED))
        n = self.n_configurations
        if n > MAX_CONFIGURATIONS:
            knobs = ", ".join(k.name for k in fam.knobs)
            raise ValueError(f"the ranges make {n:,} configurations, at most "
                             f"{MAX_CONFIGURATIONS:,} per plan: narrow {knobs}")

    def _resolve_sla(self, fam) -> None:
        """``sla`` from itself, or from ``percentile`` and ``target_ms`` (see the class
        docstring); afterwards ``percentile`` and ``target_ms`` are its first row's."""
        rows = list(self.sla) if self.sla else []
        q = 99.0 if self.percentile is None else self.percentile
        t = 100.0 if self.target_ms is None else self.target_ms
        from_fields = not rows
        if not rows:
            rows = [(fam.default_metric, q, t)]
        elif self.percentile is not None or self.target_ms is not None:
            first = rows[0]
            if isinstance(first, dict):
                first = (first.get("metric"), first.get("percentile"), first.get("target_ms"))
            if isinstance(first, (list, tuple)) and len(first) == 3:
                rows[0] = (first[0], first[1] if self.percentile is None else self.percentile,
                           first[2] if self.target_ms is None else self.target_ms)
        sla = _sla(rows, fam.metrics, from_fields)
        object.__setattr__(self, "sla", sla)
        object.__setattr__(self, "percentile", sla[0][1])
        object.__setattr__(self, "target_ms", sla[0][2])

    @property
    def family(self):
        """The workload family (``engine.planner.families``)."""
        return _families()[self.workload]

    @property
    def n_configurations(self) -> int:
        """How many combinations the ranges make (before dropping b_max above a
        profile's largest measured batch)."""
        fam = self.family
        n = len(self.hardware) ** getattr(fam, "hardware_axes", 1)
        for k in fam.knobs:
            n *= len(getattr(self, k.name))
        return n

    def hardware_named(self, name: str):
        """The candidate called ``name`` (``ValueError`` naming it if there is none)."""
        for h in self.hardware:
            if h.name == name:
                return h
        raise ValueError(f"hardware: no candidate named {name!r}")

    def with_(self, **changes) -> "PlanSpec":
        """A copy with ``changes`` (validated again).  A new ``sla`` replaces the old
        one whole; a new ``percentile`` or ``target_ms`` alone changes its first row."""
        if "sla" in changes:
            changes.setdefault("percentile", None)
            changes.setdefault("target_ms", None)
        elif "workload" in changes and changes["workload"] != self.workload:
            changes.setdefault("sla", ())
        return replace(self, **changes)


# ---------------------------------------------------------------- presets

def hardware_presets(workload: str = "gpu") -> dict:
    """The candidates the presets make for ``workload``'s family, keyed by profile id:
    GPU: each batch profile (``presets/gpu_batching``, fitted τ[b] = αb + τ0); LLM batch:
    each LLM batch-time preset (``presets/llm_batching``); serving: each serving preset
    (``presets/llm_serving``); those a price preset (``presets/hardware_prices``) lists,
    priced at their GPUs' share of the instance.  Read once per process."""
    return _family(workload).presets()


def default_spec(workload: str = "gpu") -> PlanSpec:
    """A plan to start from (each family's ``default_spec`` says which)."""
    return PlanSpec(**_family(workload).default_fields())


def __getattr__(name):
    """The default candidates' ids, now declared by their families."""
    if name in ("DEFAULT_GPU_PROFILES", "DEFAULT_LLM_PROFILES"):
        fam = _families()["gpu" if name == "DEFAULT_GPU_PROFILES" else "llm"]
        return type(fam).default_profiles
    raise AttributeError(name)


__all__ = ["ARRIVAL_KINDS", "MAX_CONFIGURATIONS", "WORKLOADS", "Hardware", "PlanSpec",
           "ServingHardware", "default_spec", "hardware_presets"]
