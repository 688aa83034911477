"""Capacity planner: the cheapest configuration — hardware, b_max, the batcher's max queue
delay, the token limit (LLM), replicas — that keeps a percentile of latency within a target
for a given traffic, from the exact models, confirmed by simulation.

* ``spec``   ``PlanSpec`` (everything the page's inputs hold), the presets
             (``hardware_presets``, ``default_spec``)
* ``hardware`` the candidates: ``Hardware`` (batch families), ``ServingHardware``
* ``families`` one module per workload family (``FAMILIES``, ``family``): GPU dynamic
             batching, LLM batch model, LLM serving colocated and disaggregated
* ``price``  one configuration priced: ``price_configuration`` -> ``ConfigPrice``
* ``plan``   every configuration priced over ``engine.sweep`` (any executor: local
             processes, a Dask cluster), ranked, confirmed: ``capacity_plan`` ->
             ``CapacityPlan``; the fronts (``pareto_front``); ``ranked_csv``
* ``compare`` where disaggregation pays: the cheapest colocated against the cheapest
             disaggregated fleet across rates (``disaggregation_pays``)
* ``files``  the plan as a TOML file (``read_plan``, ``plan_toml``), its arrivals
             (``arrival_process``)

Command line: ``python -m engine.planner PLAN.toml [--out results.csv] [--dask ADDRESS]``.
The model, its assumptions and checks: docs/models/planner.md.
"""
from .files import arrival_process, plan_toml, read_plan
from .plan import (CapacityPlan, capacity_plan, duration_text, money_text, pareto_front,
                   plan_grid, ranked_csv, settings_text, spreadsheet_safe)
from .price import ConfigPrice, configuration_seed, price_configuration, simulate_configuration
from .spec import (ARRIVAL_KINDS, MAX_CONFIGURATIONS, WORKLOADS, Hardware, PlanSpec,
                   ServingHardware, default_spec, hardware_presets)
from .families import FAMILIES, family
from .compare import disaggregation_pays

__all__ = ["FAMILIES", "family", "disaggregation_pays", "ServingHardware", "ARRIVAL_KINDS", "MAX_CONFIGURATIONS", "WORKLOADS", "CapacityPlan", "ConfigPrice",
           "Hardware", "PlanSpec", "arrival_process", "capacity_plan", "configuration_seed",
           "default_spec", "duration_text", "hardware_presets", "money_text", "pareto_front", "plan_grid", "plan_toml",
           "price_configuration", "ranked_csv", "read_plan", "simulate_configuration",
           "settings_text", "spreadsheet_safe"]
