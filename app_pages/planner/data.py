"""The page's engine calls, memoised, and what they cost.

``plan(spec, arrivals, workload)``: ``engine.planner.capacity_plan`` on the spec, the
arrival choice and (serving families) an uploaded trace's workload, all frozen and
hashable: the memo key.  Up to ``SERIAL_MAX`` units of work it runs in this process (a
process pool's start-up costs more than it saves there); above, on local processes.
``disaggregation(spec, arrivals, workload, rates)``: the best colocated and the best
disaggregated fleet at each rate (``engine.planner.disaggregation_pays``, when the
engine has it).
"""
from __future__ import annotations

from engine.planner import FAMILIES, capacity_plan
from engine.planner.families.base import SIMULATED_WEIGHT  # noqa: F401 (the page's words)
from engine.planner.plan import CONFIRM_RUNS
from ui.budget import long_running, shared_pool
from ui.memo import memo

SERIAL_MAX = 3000          # plan_work priced in this process, at most (about 1.2 s)
AUTO_RUN_MAX = 3000        # plan_work priced without pressing "Price", at most
AUTO_CONFIRM_MAX = 12_000  # confirm_work run without pressing "Price", at most (about 5 s)
#: each family's weights (``engine.planner.families``: ``cost_weight``, ``request_weight``)
COST_WEIGHT = {name: fam.cost_weight for name, fam in FAMILIES.items()}
REQUEST_WEIGHT = {name: fam.request_weight for name, fam in FAMILIES.items()
                  if fam.request_weight}
DISAGGREGATION_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)     # rates: the spec's × these


def plan_work(spec, arrivals) -> int:
    """The cost of pricing the plan's configurations (``Family.work``) under the arrival
    choice ``arrivals``."""
    return spec.family.work(spec, arrivals.is_poisson)


def confirm_work(spec) -> int:
    """The cost of confirming a serving plan's cheapest (``Family.confirm_work``)."""
    return spec.family.confirm_work(spec)


def waits_for_button(spec, arrivals) -> bool:
    """Whether the plan is large enough to run only on request."""
    return (plan_work(spec, arrivals) > AUTO_RUN_MAX
            or confirm_work(spec) > AUTO_CONFIRM_MAX)


def seconds(spec, arrivals) -> float:
    """The plan's time in this process, roughly (s): ``Family.work_seconds``."""
    return spec.family.work_seconds(spec, arrivals.is_poisson)


def executor_for(work: int):
    """``"serial"`` up to ``SERIAL_MAX`` units of ``plan_work``, else the server's one
    shared pool of worker processes (``ui.budget.shared_pool``: plans from every session
    take turns on it, never more processes than cores)."""
    return "serial" if work <= SERIAL_MAX else shared_pool()


@memo(4, ttl=3600)          # a plan holds its whole table: few, and they expire
@long_running
def plan(spec, arrivals, workload=None, bar=None):
    """``capacity_plan`` of ``spec`` under the arrival choice ``arrivals``
    (``ui.arrivals_input.ArrivalChoice``; Poisson: the exact models' case) and, for a
    serving family, the uploaded trace's ``workload`` (None: the laws the spec names);
    ``bar`` (a ``ui.memo.LazyProgress``, not part of the key) moves as the
    configurations are priced."""
    process = None if arrivals.is_poisson else arrivals.process(spec.rate_per_s)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            text = (f"Pricing configurations: {done:,} of {total:,}" if done < total else
                    f"Confirming the cheapest by simulation ({CONFIRM_RUNS} runs each)…")
            bar.progress(done / max(total, 1), text)
    extra = {} if workload is None else {"workload": workload}
    return capacity_plan(spec, arrivals=process,
                         executor=executor_for(plan_work(spec, arrivals)), progress=progress,
                         **extra)


def disaggregation_rates(spec) -> tuple:
    """The rates the "Where disaggregation pays" view compares: the spec's × 0.25 … 4."""
    return tuple(spec.rate_per_s * f for f in DISAGGREGATION_FACTORS)


def disaggregation_function():
    """``engine.planner.disaggregation_pays``, or None while the engine has none."""
    try:
        from engine.planner import disaggregation_pays
    except ImportError:
        return None
    return disaggregation_pays


@memo(4, ttl=3600)
@long_running
def disaggregation(spec, arrivals, workload, rates):
    """The best colocated and the best disaggregated fleet at each of ``rates``
    (``engine.planner.disaggregation_pays``: one frame)."""
    process = None if arrivals.is_poisson else arrivals.process(spec.rate_per_s)
    return disaggregation_function()(spec, list(rates), arrivals=process, workload=workload,
                                     executor="serial")


def unsearchable(spec) -> str:
    """Why no configuration would be priced ("" if some would): every b_max above every
    candidate's largest measured batch (a family that declares ``largest_batch``)."""
    fam = spec.family
    if not hasattr(fam, "largest_batch") or "b_max" not in {k.name for k in fam.knobs}:
        return ""
    largest = max(fam.largest_batch(h) for h in spec.hardware)
    if all(b > largest for b in spec.b_max):
        return (f"every b_max picked is above the largest batch any candidate measured "
                f"({largest:g}): pick a b_max of {largest:g} or less.")
    return ""


#: how the grid's factors are counted in words (knob -> singular, plural)
COUNT_WORDS = {"b_max": ("b_max", "b_max"), "queue_delay_ms": ("queue delay", "queue delays"),
               "token_limit": ("token limit", "token limits"),
               "replicas": ("replica count", "replica counts"),
               "max_num_seqs": ("max_num_seqs", "max_num_seqs"),
               "max_num_batched_tokens": ("token budget", "token budgets"),
               "prefill_instances": ("prefill count", "prefill counts"),
               "decode_instances": ("decode count", "decode counts")}


def grid_words(spec) -> str:
    """The grid's factors in words: "3 candidates × 8 b_max × 1 queue delay × 32 replica
    counts"."""
    def count(n: int, words: tuple) -> str:
        return f"{n:,} {words[0] if n == 1 else words[1]}"
    n_hw = len(spec.hardware)
    parts = [count(n_hw, ("candidate", "candidates")) if getattr(
        spec.family, "hardware_axes", 1) == 1 else f"{n_hw} × {n_hw} prefill and decode "
                                                   "candidates"]
    for knob in spec.family.knobs:
        parts.append(count(len(getattr(spec, knob.name)),
                           COUNT_WORDS.get(knob.name, (knob.name, knob.name))))
    return " × ".join(parts)
