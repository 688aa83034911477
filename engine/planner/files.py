"""A plan as a TOML file (``read_plan``, ``plan_toml``) and the arrival process it names
(``arrival_process``).  The file holds exactly what the planner page's inputs hold; the
page downloads its inputs as one, and ``python -m engine.planner PLAN.toml`` runs it::

    workload = "gpu"                 # or "llm"
    rate_per_s = 1000.0              # requests per s, all replicas together
    percentile = 99.0                # the SLA: this share of requests ...
    target_ms = 100.0                # ... within this time
    energy_cap_j = inf               # J per request (inf: no cap)
    truncation_cap = 1.0             # LLM: largest share of replies the limit may cut
    confirm = 5                      # cheapest configurations confirmed by simulation
    seed = 0

    [arrivals]
    kind = "poisson"                 # "bursty" (scv), "mmpp2" (trace: an arrival preset id or
    scv = 1.0                        # a trace file), "replay" (trace: a trace file; files are
                                     # read relative to this file)
    trace = ""

    [search]
    b_max = [1, 2, 4, 8, 16, 32, 64, 128]
    queue_delay_ms = [0.0]           # GPU: the Triton batcher's max queue delay
    token_limit = [0]                # LLM: largest reply in tokens (0: none)
    token_law = ""                   # LLM: a token-law preset id (presets/token_laws)
    replicas = [1, 2, 3, 4]          # or { from = 1, to = 16 } (every whole number)

    [[hardware]]                     # one table per candidate
    profile = "dle_tf_t4_resnet50_amp"   # a preset (engine.planner.hardware_presets) ...
    price_usd_per_hour = 0.526           # ... any field given here overrides it
    # or every field: name, price_usd_per_hour, busy_power_w, idle_power_w,
    # alpha_ms, tau0_ms, max_batch (GPU) or k_s = [k1, k2, k3, k4] (LLM), source

The serving families ("llm_serving", "llm_disaggregated") hold their SLA as rows, their
workload and link in [serving], and their candidates' step costs::

    workload = "llm_serving"
    rate_per_s = 20.0

    [[sla]]                          # every row must hold
    metric = "ttft"                  # "ttft", "tpot" or "e2e"
    percentile = 95.0
    target_ms = 500.0

    [serving]
    prompt_law = "azure_2023_conv_prompt"   # token-law presets (presets/token_laws) ...
    token_law = "azure_2023_conv_output"
    token_trace = ""                 # ... or a trace file: prompts and replies together
    dispatch = "least_outstanding"   # "random", "round_robin"
    link_gb_per_s = 50.0             # disaggregated: the KV link, GB/s one way
    link_latency_ms = 0.0

    [search]
    max_num_seqs = [64, 128, 256]
    max_num_batched_tokens = [2048, 8192]
    replicas = { from = 1, to = 16 }     # colocated; disaggregated: prefill_instances,
                                         # decode_instances

    [[hardware]]
    profile = "splitwise_h100_llama2_70b_tp8"   # a serving preset, fields override it
    # or every field: name, price_usd_per_hour, kv_cache_tokens, kv_bytes_per_token,
    # block_size, gpus, busy_power_w, idle_power_w, model, source and
    # step_cost = {base_ms = ..., prefill_ms_per_token = ..., ...} (ms)
"""
from __future__ import annotations

from dataclasses import fields, replace
import math
from pathlib import Path
import tomllib

from ..arrivals import MMPP2, Poisson, Renewal, Replay, fit_mmpp2
from ..llm_serving import StepCost
from ..measured import read_trace
from ..presets import arrival_presets
from .hardware import ServingHardware
from .spec import Hardware, PlanSpec, hardware_presets

TOP = ("workload", "rate_per_s", "percentile", "target_ms", "energy_cap_j", "truncation_cap",
       "confirm", "seed", "arrivals", "search", "hardware", "sla", "serving")
ARRIVALS = {"kind": "arrivals_kind", "scv": "arrivals_scv", "trace": "arrivals_trace"}
SEARCH = ("b_max", "queue_delay_ms", "token_limit", "token_law", "replicas")
SERVING_SEARCH = ("max_num_seqs", "max_num_batched_tokens", "replicas", "prefill_instances",
                  "decode_instances")
SERVING = ("prompt_law", "token_law", "token_trace", "dispatch", "link_gb_per_s",
           "link_latency_ms")
HARDWARE = tuple(f.name for f in fields(Hardware))
SERVING_HARDWARE = tuple(f.name for f in fields(ServingHardware))
STEP_COST = tuple(f.name for f in fields(StepCost))


def _table(data, where: str, allowed) -> dict:
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be a table")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r} (allowed: "
                         f"{', '.join(allowed)})")
    return data


def _range(value, where: str):
    """A list, or {from, to[, step]} for every step-th whole number from..to."""
    if isinstance(value, dict):
        _table(value, where, ("from", "to", "step"))
        ends = [value.get("from"), value.get("to"), value.get("step", 1)]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in ends):
            raise ValueError(f"{where} must be a list or {{from = a, to = b}} of whole "
                             f"numbers, got {value!r}")
        lo, hi, step = ends
        if step < 1 or hi < lo or (hi - lo) // step > 100_000:
            raise ValueError(f"{where}: need from <= to, step >= 1, at most 100,000 values")
        return list(range(lo, hi + 1, step))
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list of numbers")
    return value


def _hardware(item, i: int, workload: str):
    where = f"hardware[{i}]"
    serving = workload in ("llm_serving", "llm_disaggregated")
    item = dict(_table(item, where, SERVING_HARDWARE if serving else HARDWARE))
    if serving and "step_cost" in item:
        cost = _table(item["step_cost"], f"{where}.step_cost", STEP_COST)
        try:
            item["step_cost"] = StepCost(**cost)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}.step_cost: {exc}") from None
    if "k_s" in item:
        if not isinstance(item["k_s"], list):
            raise ValueError(f"{where}.k_s must be a list of 4 numbers")
        item["k_s"] = tuple(item["k_s"])
    pid = item.get("profile", "")
    for key in ("name", "profile", "source", "model"):
        if key in item and not isinstance(item[key], str):
            raise ValueError(f"{where}.{key} must be text, got {item[key]!r}")
    if pid:
        presets = hardware_presets(workload)
        if pid not in presets:
            raise ValueError(f"{where}.profile: no {workload} preset {pid!r} (one of "
                             f"{', '.join(sorted(presets))})")
        try:
            return replace(presets[pid], **item)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
    if serving:
        item.setdefault("kv_cache_tokens", None)
    try:
        return (ServingHardware if serving else Hardware)(**item)
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from None


def read_plan(text) -> PlanSpec:
    """The ``PlanSpec`` a TOML text (str or UTF-8 bytes) describes (format: the module
    docstring); ``ValueError`` naming the field for anything wrong."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("the plan file is not UTF-8 text") from None
    if not isinstance(text, str):
        raise ValueError(f"text must be the TOML text of a plan, got {type(text).__name__}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"the plan file is not valid TOML ({exc})") from None
    _table(data, "plan", TOP)
    args = {k: data[k] for k in TOP[:8] if k in data}
    if isinstance(data.get("workload", "gpu"), str) and "sla" in data:
        for key in ("percentile", "target_ms"):
            if key in args:
                raise ValueError(f"{key}: give the SLA either as [[sla]] rows or as "
                                 f"percentile and target_ms, not both")
    for key, name in ARRIVALS.items():
        arrivals = _table(data.get("arrivals", {}), "arrivals", tuple(ARRIVALS))
        if key in arrivals:
            args[name] = arrivals[key]
    workload = args.get("workload", "gpu")
    from .families import family
    family(workload)                              # ValueError naming the workloads
    serving = workload in ("llm_serving", "llm_disaggregated")
    allowed = SERVING_SEARCH if serving else SEARCH
    search = _table(data.get("search", {}), "search", allowed)
    for key in allowed:
        if key in search:
            args[key] = search[key] if key == "token_law" else _range(search[key],
                                                                      f"search.{key}")
    if "serving" in data:
        if not serving:
            raise ValueError("serving: applies to the llm_serving and llm_disaggregated "
                             "workloads only")
        args.update(_table(data["serving"], "serving", SERVING))
    if "sla" in data:
        rows = data["sla"]
        if not isinstance(rows, list):
            raise ValueError("sla must be a list of tables ([[sla]] with metric, percentile, "
                             "target_ms)")
        args["sla"] = tuple(_table(r, f"sla[{i}]", ("metric", "percentile", "target_ms"))
                            for i, r in enumerate(rows))
    items = data.get("hardware", [])
    if not isinstance(items, list) or not items:
        raise ValueError("hardware: list at least one candidate ([[hardware]] tables)")
    args["hardware"] = tuple(_hardware(h, i, workload) for i, h in enumerate(items))
    if workload == "llm":
        args.setdefault("b_max", (4, 8, 16, 32, 64))
    try:
        return PlanSpec(**args)
    except TypeError as exc:                 # a table where a number or text belongs
        raise ValueError(f"plan: a field has the wrong kind of value ({exc})") from None


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "inf" if v == math.inf else repr(v)
    return "[" + ", ".join(_value(x) for x in v) + "]"


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quotes and backslashes escaped, control characters
    (U+0000-U+001F, U+007F, which TOML forbids raw) as \\uXXXX, the rest as it is."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def plan_toml(spec: PlanSpec) -> str:
    """``spec`` as a TOML text ``read_plan`` reads back to an equal spec."""
    if not isinstance(spec, PlanSpec):
        raise ValueError(f"spec must be a PlanSpec, got {type(spec).__name__}")
    serving = spec.workload in ("llm_serving", "llm_disaggregated")
    lines = ["# Capacity plan of the Inference Queueing Lab. Run it with",
             "#   python -m engine.planner this_file.toml [--out results.csv] [--dask ADDRESS]"]
    top = [k for k in TOP[:8] if not (serving and k in ("percentile", "target_ms"))]
    lines += [f"{k} = {_value(getattr(spec, k))}" for k in top]
    lines += ["", "[arrivals]"]
    lines += [f"{k} = {_value(getattr(spec, name))}" for k, name in ARRIVALS.items()]
    if serving:
        lines += ["", "[serving]"]
        lines += [f"{k} = {_value(getattr(spec, k))}" for k in SERVING]
        lines += ["", "[search]"]
        lines += [f"{k.name} = {_value(getattr(spec, k.name))}" for k in spec.family.knobs]
        for metric, q, target in spec.sla:
            lines += ["", "[[sla]]", f"metric = {_value(metric)}", f"percentile = {_value(q)}",
                      f"target_ms = {_value(target)}"]
    else:
        lines += ["", "[search]"]
        lines += [f"{k} = {_value(getattr(spec, k))}" for k in SEARCH]
    for h in spec.hardware:
        lines += ["", "[[hardware]]"]
        for k in (SERVING_HARDWARE if serving else HARDWARE):
            v = getattr(h, k)
            if k in ("alpha_ms", "tau0_ms", "max_batch") and h.workload == "llm":
                continue
            if k == "k_s" and h.workload == "gpu":
                continue
            if v is None:                                   # kv_cache_tokens not known
                continue
            if k == "step_cost":
                cost = ", ".join(f"{f} = {_value(getattr(v, f))}" for f in STEP_COST)
                lines.append(f"step_cost = {{{cost}}}")
                continue
            lines.append(f"{k} = {_value(v)}")
    return "\n".join(lines) + "\n"


def arrival_process(spec: PlanSpec, base_dir=None):
    """The total stream ``spec`` names, at ``spec.rate_per_s`` per s: None for Poisson (the
    exact models' case), ``Renewal`` for "bursty", for "mmpp2" the MMPP-2 fitted to the
    arrival preset ``arrivals_trace`` (or to the trace file of that name), and for
    "replay" the trace file ``arrivals_trace`` itself, each time-scaled to the rate.  A
    file is read relative to ``base_dir``, in any format ``engine.measured.read_trace``
    reads."""
    if not isinstance(spec, PlanSpec):
        raise ValueError(f"spec must be a PlanSpec, got {type(spec).__name__}")
    rate = spec.rate_per_s
    if spec.arrivals_kind == "poisson":
        return None
    if spec.arrivals_kind == "bursty":
        return Poisson(rate) if spec.arrivals_scv == 1.0 else Renewal(rate, spec.arrivals_scv)
    if spec.arrivals_kind == "mmpp2" and spec.arrivals_trace in arrival_presets():
        return _at_rate(arrival_presets()[spec.arrivals_trace].mmpp2(), rate)
    path = Path(base_dir or ".") / spec.arrivals_trace
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"arrivals.trace: cannot read {str(path)!r} ({exc.strerror})") from None
    times = read_trace(data).arrival_s
    if spec.arrivals_kind == "mmpp2":
        return _at_rate(fit_mmpp2(times, name=path.name), rate)
    return Replay(times, path.name).scaled(rate)


def _at_rate(process: MMPP2, rate: float) -> MMPP2:
    """``process`` time-scaled to mean ``rate`` (every rate × the same factor: its SCV and
    its IDC at correspondingly scaled windows kept)."""
    f = rate / process.rate
    return MMPP2(process.rate_1 * f, process.rate_2 * f, process.switch_12 * f,
                 process.switch_21 * f, process.name)


__all__ = ["arrival_process", "plan_toml", "read_plan"]
