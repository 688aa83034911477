"""The base of the planner's workload families (numpy.polynomial's pattern: a small
base, one module per family).

A family declares what a plan of its kind searches and how it prices it:

* ``hardware_type`` and ``hardware_fields``: the candidates it takes;
* ``knobs``: the settings it searches besides the hardware (``Knob``: a ``PlanSpec``
  field, its words, unit and domain);
* ``metrics``: the SLA metrics it can be held to (``METRICS``), ``default_metric``;
* ``capacity_per_s``: the most one configuration carries;
* ``price``: one configuration priced (``method`` says exact, approximate or simulated);
* ``confirm``: one configuration simulated again, longer (for the ranked cheapest);
* ``settings_text``, ``fleet_text``: its settings and its servers in plain words.

``engine.planner.plan`` does the rest the same way for every family: the grid over
``engine.sweep``, the ranking, the confirmation loop, the fronts and the answer.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from ...core.domains import Domain
from ...core.units import S_PER_HOUR
from ..words import duration_text

#: SLA metrics: name -> (words, short label)
METRICS = {
    "latency": ("latency", "latency"),
    "e2e": ("end-to-end latency", "e2e"),
    "ttft": ("time to first token", "TTFT"),
    "tpot": ("time per output token", "TPOT"),
}


#: the planner's unit of work: pricing one GPU configuration with Poisson arrivals, about
#: this many seconds in one process (``python -m benchmarks planner``)
WORK_UNIT_S = 4e-4
#: a configuration priced by simulation (arrivals not Poisson) weighs this many times more
SIMULATED_WEIGHT = 3

#: why a configuration fails its SLA, in words (the ``reason`` column)
REASONS = {"": "meets the SLA", "unstable": "unstable: more load than the replicas can carry",
           "latency": "latency above the target", "energy": "energy per request above the cap",
           "truncation": "the token limit cuts too many replies",
           "kv": "the KV cache cannot hold the longest request",
           "ttft": "TTFT above the target", "tpot": "TPOT above the target",
           "e2e": "end-to-end latency above the target",
           "confirmation": "missed the target in the longer confirmation runs"}


@dataclass(frozen=True)
class Knob:
    """One setting a family searches: the ``PlanSpec`` field ``name`` holding its values,
    ``label`` (plain words), ``unit``, ``domain`` (bounds, from
    ``engine.core.domains``), ``default`` (the values searched when none are given) and
    ``help`` (one sentence for the page)."""

    name: str
    label: str
    unit: str
    domain: Domain
    default: tuple
    help: str = ""


def sla_column(metric: str, percentile: float) -> str:
    """The table column of one SLA row: "ttft_p95_ms", "tpot_p99.9_ms"."""
    return f"{metric}_p{percentile:g}_ms"


def sla_text(sla) -> str:
    """SLA rows in words: "p95 TTFT ≤ 500 ms and p95 TPOT ≤ 50 ms"."""
    return " and ".join(f"p{q:g} {METRICS[m][1]} ≤ {duration_text(t)}" for m, q, t in sla)


class Family:
    """A workload family of the planner (see the module docstring).  Subclasses set the
    class attributes and implement the methods; one instance each is registered in
    ``engine.planner.families.FAMILIES``."""

    name: str = ""
    title: str = ""
    load_unit: str = "requests/s"
    time_unit: str = "ms"                 # how the page shows latencies: "ms" or "s"
    hardware_type: type = object
    hardware_fields: tuple = ()
    knobs: tuple = ()
    metrics: tuple = ()
    default_metric: str = ""
    #: how ``price`` finds its numbers, in words
    pricing: str = ""
    #: independent runs each confirmation averages
    confirm_runs: int = 4
    #: settings whose increase never makes a configuration slower (more servers):
    #: a configuration that misses on confirmation rules out those with fewer
    scale_knobs: tuple = ("replicas",)
    #: the cost of pricing one configuration, in ``WORK_UNIT_S`` units (a GPU
    #: configuration with Poisson arrivals weighs 1)
    cost_weight: float = 1
    #: one simulated request of a confirmation, in the same units (0: the pricing's own
    #: simulation covers the confirmation)
    request_weight: float = 0.0

    # ----------------------------------------------------------- declarations
    def presets(self) -> dict:
        """The candidates the presets make, keyed by preset id."""
        raise NotImplementedError

    def default_fields(self) -> dict:
        """A ``PlanSpec`` of this family to start from."""
        raise NotImplementedError

    def knob(self, name: str) -> Knob:
        for k in self.knobs:
            if k.name == name:
                return k
        raise KeyError(name)

    # ----------------------------------------------------------- the work
    def work(self, spec, poisson: bool = True) -> int:
        """The cost of pricing ``spec``'s configurations, in ``WORK_UNIT_S`` units: each
        weighs ``cost_weight``, ``SIMULATED_WEIGHT`` times more when the arrivals are not
        Poisson (``poisson`` False)."""
        return spec.n_configurations * self.cost_weight * (1 if poisson else SIMULATED_WEIGHT)

    def confirm_work(self, spec) -> int:
        """The cost of confirming ``spec``'s cheapest, in the same units: each confirmed
        configuration and each "one server fewer" check (one per ``scale_knobs``)
        simulates ``confirm_runs`` times ``confirm_requests`` requests of
        ``request_weight`` each (0 where the pricing covers the confirmation)."""
        if not self.request_weight or not hasattr(self, "confirm_requests"):
            return 0
        runs = (spec.confirm + len(self.scale_knobs)) * self.confirm_runs
        return int(runs * self.confirm_requests(spec) * self.request_weight)

    def work_seconds(self, spec, poisson: bool = True) -> float:
        """Roughly how long the whole plan takes in one process, s: its pricing and
        confirmation work at ``WORK_UNIT_S`` a unit."""
        return WORK_UNIT_S * (self.work(spec, poisson) + self.confirm_work(spec))

    # ----------------------------------------------------------- the plan
    def check(self, spec) -> None:
        """Checks of ``spec`` particular to this family (``ValueError``)."""

    def grid(self, spec) -> list[dict]:
        """The configurations of ``spec``: every combination of the hardware and the
        knobs' values (first slowest)."""
        points = [{}]
        axes = [("hardware", [h.name for h in spec.hardware])]
        axes += [(k.name, getattr(spec, k.name)) for k in self.knobs]
        for name, values in axes:
            points = [{**p, name: v} for p in points for v in values]
        return points

    def sla_columns(self, spec) -> list[str]:
        """The columns of the priced table that hold the SLA's percentiles, in the
        order of ``spec.sla``."""
        return [sla_column(m, q) for m, q, _ in spec.sla]

    def price(self, spec, *, arrivals=None, **config):
        """One configuration priced: a dataclass or dict of its numbers, among them
        ``stable``, ``method``, ``meets_sla``, ``reason``, ``cost_usd_per_hour``,
        ``capacity_per_s`` and the ``sla_columns``."""
        raise NotImplementedError

    def confirm(self, spec, row, arrivals) -> dict:
        """The SLA's percentiles of one ranked configuration from longer simulations:
        {column: (estimate, 95 % CI half-width)} over ``sla_columns``."""
        raise NotImplementedError

    def rejection(self, spec, rows) -> tuple[str, str]:
        """Why a candidate whose configurations all fail does: (reason, detail)."""
        raise NotImplementedError

    def settings_text(self, spec, row) -> str:
        """A configuration's settings in plain words."""
        raise NotImplementedError

    def reason_text(self, reason: str) -> str:
        """A ``reason`` in words ("unstable" names this family's servers)."""
        if reason == "unstable" and self.scale_knobs and self.scale_knobs != ("replicas",):
            return "unstable: more load than the servers can carry"
        return REASONS.get(reason, reason)

    def confirm_columns(self, spec) -> dict:
        """{SLA column: (confirmed estimate column, its 95 % CI half-width column)}."""
        return {c: (f"confirmed_{c}", f"confirmed_{c}_ci95") for c in self.sla_columns(spec)}

    def tie_column(self, spec) -> str:
        """The column that orders configurations of equal cost (lower first)."""
        return "sla_ratio"

    def prepare(self, spec, workload=None) -> dict:
        """Work done once per plan before pricing (e.g. reading the workload); returns
        what ``price`` needs besides the configuration (passed to every call)."""
        return {}

    def columns(self, spec) -> list[str]:
        """The priced table's columns (an empty plan's table has them)."""
        raise NotImplementedError

    def csv_columns(self, spec) -> list[str]:
        """The ranked table's columns written to CSV, in order."""
        raise NotImplementedError

    def setting_columns(self) -> list[str]:
        """The columns that name a configuration."""
        return [*self.candidate_columns(), *(k.name for k in self.knobs)]

    def candidate_columns(self) -> list[str]:
        """The columns naming the hardware of a configuration."""
        return ["hardware"]

    def candidates(self, spec) -> list[str]:
        """The candidates whose rejection is explained, by name."""
        return [h.name for h in spec.hardware]

    def uses(self, table, name: str):
        """Rows of ``table`` that run on candidate ``name``."""
        return table["hardware"] == name

    def candidate_of(self, row) -> str:
        return row["hardware"]

    def confirmed_words(self, spec) -> str:
        return "confirmed by simulation"

    def screened_words(self, spec) -> str:
        return "by the screening"

    more_servers_words = "add replicas to the range"
    screening_noun = "approximation"

    def closest_text(self, row) -> str:
        return self.fleet_text(row)

    def fleet_text(self, row) -> str:
        """The servers of a configuration in plain words: "3 replicas of H100"."""
        n = int(row["replicas"])
        return f"{n} replica{'s' if n != 1 else ''} of {row['hardware']}"

    def rate_text(self, spec) -> str:
        return f"{spec.rate_per_s:,.4g} {self.load_unit}"

    def __repr__(self) -> str:
        return f"<planner family {self.name!r}: {self.title}>"

    def __reduce__(self):                 # one instance per family, also across processes
        from . import family
        return (family, (self.name,))


def usd_per_million_requests(cost_usd_per_hour, rate_per_s):
    """What a million requests cost, $: the fleet's ``cost_usd_per_hour`` over the
    requests it serves in an hour, ``rate_per_s`` × 3600, times 10⁶."""
    return cost_usd_per_hour / (rate_per_s * S_PER_HOUR) * 1e6


def ratio_text(value: float, target: float) -> str:
    """How far a value misses its target: "62 % over", "3.1× the target"."""
    if not math.isfinite(value):
        return "unstable"
    r = value / target
    return f"{(r - 1) * 100:.0f} % over" if r < 2 else f"{r:.3g}× the target"


__all__ = ["Family", "Knob", "METRICS", "REASONS", "SIMULATED_WEIGHT", "WORK_UNIT_S",
           "ratio_text", "sla_column", "sla_text", "usd_per_million_requests"]
