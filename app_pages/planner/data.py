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

from engine.planner import capacity_plan
from engine.planner.plan import CONFIRM_RUNS
from ui.budget import long_running, shared_pool
from ui.memo import memo

SERIAL_MAX = 3000          # plan_work priced in this process, at most (about 1.2 s)
AUTO_RUN_MAX = 3000        # plan_work priced without pressing "Price", at most
AUTO_CONFIRM_MAX = 12_000  # confirm_work run without pressing "Price", at most (about 5 s)
#: the cost of pricing one configuration, in GPU configurations with Poisson arrivals
#: (~400 µs each in this process, ``python -m benchmarks planner``): an LLM batch one
#: solves a chain (2-170 ms), a serving one an approximation over its replica counts
COST_WEIGHT = {"gpu": 1, "llm": 10, "llm_serving": 2, "llm_disaggregated": 2}
SIMULATED_WEIGHT = 3       # arrivals not Poisson: priced by simulation (~2.7x)
#: one simulated request of a serving family's confirmation, in the same units
#: (a whole fleet ~20 µs per request, the disaggregated sides and link ~5 µs)
REQUEST_WEIGHT = {"llm_serving": 0.05, "llm_disaggregated": 0.012}
DISAGGREGATION_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)     # rates: the spec's × these


def plan_work(spec, arrivals) -> int:
    """The cost of pricing the plan's configurations in GPU configurations with Poisson
    arrivals: a configuration of another family weighs ``COST_WEIGHT``, a non-Poisson
    one ``SIMULATED_WEIGHT`` times more."""
    weight = COST_WEIGHT.get(spec.workload, 1) * (1 if arrivals.is_poisson
                                                  else SIMULATED_WEIGHT)
    return spec.n_configurations * weight


def confirm_work(spec) -> int:
    """The cost of confirming a serving plan's cheapest, in the same units: each
    confirmed configuration and each "one server fewer" check simulates the fleet
    ``CONFIRM_RUNS`` times (0 for the batch families, whose confirmation the pricing
    estimate covers)."""
    fam = spec.family
    per_request = REQUEST_WEIGHT.get(spec.workload)
    if per_request is None or not hasattr(fam, "confirm_requests"):
        return 0
    runs = (spec.confirm + len(fam.scale_knobs)) * CONFIRM_RUNS
    return int(runs * fam.confirm_requests(spec) * per_request)


def waits_for_button(spec, arrivals) -> bool:
    """Whether the plan is large enough to run only on request."""
    return (plan_work(spec, arrivals) > AUTO_RUN_MAX
            or confirm_work(spec) > AUTO_CONFIRM_MAX)


def seconds(spec, arrivals) -> float:
    """The plan's time in this process, roughly (s): its work at ~400 µs a unit."""
    return 4e-4 * (plan_work(spec, arrivals) + confirm_work(spec))


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
