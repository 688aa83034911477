"""The capacity-planner page's share-link fields, which of them each workload family
takes, and the field values of a ``PlanSpec`` (``values_of``: a family's defaults, a
plan file opened).

Every input is a share-link field; the ranges searched are sets of values
(``ValuesField``, "1,2,4,8" in the link), the candidate hardware a table
(``HardwareField``: compact JSON, ``hardware.encode``) and the serving families' SLA a
list of rows (``SlaField``: "ttft:95:500;tpot:95:50", targets in ms).  What a family
takes is read from its declaration (``engine.planner.FAMILIES``): its knobs (one field
each, bounds from ``Knob.domain``), its SLA metrics, its hardware type (``uses``).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from engine.core import domains as dom
from engine.llm_serving import DISPATCH, LINK_GB_PER_S
from engine.planner import FAMILIES, ServingHardware, default_spec
from engine.planner.families import METRICS
from engine.planner.spec import MAX_CONFIRM, MAX_SLA_ROWS
from engine.presets import token_law_presets
from ui import arrivals_input, share

from . import hardware as hw_table

WORKLOADS = {name: fam.title for name, fam in FAMILIES.items()}
OUTPUT_LAWS = {pid: p for pid, p in token_law_presets().items() if p.kind == "output"}
PROMPT_LAWS = {pid: p for pid, p in token_law_presets().items() if p.kind == "prompt"}
B_MAX_OPTIONS = tuple(2 ** k for k in range(10))                  # 1 … 512
DELAY_OPTIONS_MS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
LIMIT_OPTIONS = (0, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
SEQS_OPTIONS = (8, 16, 32, 64, 128, 256, 512, 1024)
BUDGET_OPTIONS = (512, 1024, 2048, 4096, 8192, 16384, 32768)
INSTANCE_OPTIONS = tuple(range(1, 9))
MAX_VALUES = 64                                                   # values per range, at most
VIEWS = ("Cost vs latency", "Cost vs energy", "All configurations",
         "Where disaggregation pays", "How it works")
CUSTOM_LINK = "custom"
TOKEN_SOURCES = {"laws": "token laws (measured presets)",
                 "trace": "a request trace: prompts and replies together (upload)"}
#: SLA metrics of the families held to several (the SLA rows' choices)
SLA_METRICS = tuple(dict.fromkeys(m for f in FAMILIES.values() if len(f.metrics) > 1
                                  for m in f.metrics))


def uses(fam) -> frozenset:
    """Which of the page's optional inputs the family ``fam`` takes, read from its
    declaration: "sla_rows" (several SLA metrics: a list of rows, targets in ms; else one
    percentile and target), "tokens" (serving hardware: prompt and reply tokens),
    "dispatch" (serving replicas sharing the traffic), "link" (prefill and decode
    instances: the KV link), "reply_law" and "truncation" (a token limit among its
    knobs: the reply law it cuts)."""
    knobs = {k.name for k in fam.knobs}
    out = set()
    if len(fam.metrics) > 1:
        out.add("sla_rows")
    if fam.hardware_type is ServingHardware:
        out.add("tokens")
        if "replicas" in knobs:
            out.add("dispatch")
    if {"prefill_instances", "decode_instances"} <= knobs:
        out.add("link")
    if "token_limit" in knobs:
        out |= {"reply_law", "truncation"}
    return frozenset(out)


@dataclass(frozen=True)
class ValuesField(share.Field):
    """A set of numbers (a multiselect's values), "1,2,4" in the link, each whole
    (``kind`` int) or not, within ``low``..``high``; sorted, without repeats."""

    def parse(self, raw: str):
        if len(raw) > 2000:
            raise ValueError("too long a list")
        values = []
        for part in (p.strip() for p in raw.split(",")) if raw.strip() else ():
            try:
                v = float(part)
            except ValueError:
                raise ValueError(f"{share.inert(part[:20])} is not a number") from None
            if not math.isfinite(v):
                raise ValueError("not a finite number")
            if self.kind is int and v != int(v):
                raise ValueError(f"{v:g} is not a whole number")
            if (self.low is not None and v < self.low) or (self.high is not None
                                                           and v > self.high):
                raise ValueError(f"{v:g} is outside {self.low:g}–{self.high:g}")
            values.append(self.kind(v))
        values = sorted(set(values))
        if len(values) > MAX_VALUES:
            raise ValueError(f"more than {MAX_VALUES} values")
        return values

    def format(self, value) -> str:
        return ",".join(_FLOAT.format(float(v)) if self.kind is float else str(int(v))
                        for v in sorted(value))


_FLOAT = share.Field("number", 0.0)          # how the link writes a float (exact, short)


@dataclass(frozen=True)
class HardwareField(share.Field):
    """The candidate-hardware table as compact JSON (``hardware.encode``)."""

    def parse(self, raw: str):
        return hw_table.encode(hw_table.decode(raw))

    def format(self, value) -> str:
        return str(value)


@dataclass(frozen=True)
class SlaField(share.Field):
    """SLA rows (metric, percentile %, target ms) as "ttft:95:500;tpot:95:50": at most
    ``MAX_SLA_ROWS`` rows, metrics of ``SLA_METRICS``, percentiles within
    ``low``..``high``, targets above 0 and at most ``MAX_TARGET_MS``, no (metric,
    percentile) twice.  Its value is a tuple of (metric, percentile, target ms)."""

    def parse(self, raw: str):
        if len(raw) > 500:
            raise ValueError("too long an SLA")
        rows = []
        for part in raw.split(";"):
            bits = part.strip().split(":")
            if len(bits) != 3:
                raise ValueError("expected rows of metric:percentile:target_ms")
            metric = bits[0].strip()
            if metric not in SLA_METRICS:
                raise ValueError(f"metric must be one of {', '.join(SLA_METRICS)}")
            try:
                q, target = float(bits[1]), float(bits[2])
            except ValueError:
                raise ValueError("percentile and target must be numbers") from None
            rows.append((metric, q, target))
        return check_sla(rows, self.low, self.high)

    def format(self, value) -> str:
        return ";".join(f"{m}:{_FLOAT.format(q)}:{_FLOAT.format(t)}" for m, q, t in value)


MAX_TARGET_MS = 1e9


def check_sla(rows, low: float = 50.0, high: float = 99.99) -> tuple:
    """``rows`` of (metric, percentile, target ms) as a tuple, or ``ValueError`` saying
    what is wrong (row numbers from 1)."""
    out = []
    for i, (metric, q, target) in enumerate(rows):
        where = f"row {i + 1}"
        if not (math.isfinite(q) and low <= q <= high):
            raise ValueError(f"{where}: the percentile must be within {low:g}–{high:g}, "
                             f"got {q:g}")
        if not (math.isfinite(target) and 0 < target <= MAX_TARGET_MS):
            raise ValueError(f"{where}: the target must be above 0 and at most "
                             f"{MAX_TARGET_MS:g} ms, got {target:g}")
        out.append((metric, float(q), float(target)))
    if not out:
        raise ValueError("the SLA needs at least one row")
    if len(out) > MAX_SLA_ROWS:
        raise ValueError(f"at most {MAX_SLA_ROWS} SLA rows, got {len(out)}")
    seen = [(m, q) for m, q, _ in out]
    for i, key in enumerate(seen):
        if key in seen[:i]:
            raise ValueError(f"row {i + 1}: p{key[1]:g} {METRICS[key[0]][1]} appears twice")
    return tuple(out)


def _domain(knob: str):
    """The domain a family declares for the knob called ``knob`` (the first one's)."""
    return next(k.domain for f in FAMILIES.values() for k in f.knobs if k.name == knob)


def _default(knob: str) -> list:
    """The values the first family that searches ``knob`` starts from."""
    fam = next(f for f in FAMILIES.values() if knob in {k.name for k in f.knobs})
    return list(getattr(default_spec(fam.name), knob))


def _knob_field(key: str, knob: str) -> ValuesField:
    d = _domain(knob)
    return ValuesField(key, _default(knob), int if d.integer else float, d.low, d.high)


def link_name(gb_per_s: float) -> str:
    """The first link preset of ``gb_per_s`` GB/s, else ``CUSTOM_LINK``."""
    return next((n for n, v in LINK_GB_PER_S.items() if v == gb_per_s), CUSTOM_LINK)


_GPU, _LLM, _SERVING = (default_spec(w) for w in ("gpu", "llm", "llm_serving"))
WORKLOAD = share.Field("plan_workload", "gpu", str, choices=tuple(WORKLOADS))
RATE = share.Field("plan_rate", _GPU.rate_per_s, float, 1e-4, 1e8, domain=dom.PLAN_RATE_PER_S)
PCT = share.Field("plan_pct", _GPU.percentile, float, domain=dom.PLAN_PERCENTILE)
TARGET = share.Field("plan_target", _GPU.target_ms, float, 1e-6, 1e9,
                     domain=dom.PLAN_TARGET_MS)         # in ms or s (TARGET_UNIT): > 0
TARGET_UNIT = share.Field("plan_target_unit", "ms", str, choices=("ms", "s"))
SLA = SlaField("plan_sla", _SERVING.sla, tuple, 50.0, 99.99)
ENERGY_ON = share.Field("plan_energy_cap", False, bool)
ENERGY = share.Field("plan_energy_j", 1.0, float, 1e-6, 1e9, domain=dom.PLAN_ENERGY_CAP_J)
TRUNCATION = share.Field("plan_cut_pct", 100 * _LLM.truncation_cap, float, 0.0, 100.0)
TOKEN_LAW = share.Field("plan_token_law", _LLM.token_law, str, choices=tuple(OUTPUT_LAWS))
TOKENS = share.Field("plan_tokens", "laws", str, choices=tuple(TOKEN_SOURCES))
PROMPT_LAW = share.Field("plan_prompt_law", _SERVING.prompt_law, str,
                         choices=tuple(PROMPT_LAWS))
DISPATCH_POLICY = share.Field("plan_dispatch", _SERVING.dispatch, str, choices=DISPATCH)
LINK = share.Field("plan_link", link_name(default_spec("llm_disaggregated").link_gb_per_s),
                   str, choices=(*LINK_GB_PER_S, CUSTOM_LINK))
LINK_GBPS = share.Field("plan_link_gb_s", default_spec("llm_disaggregated").link_gb_per_s,
                        float, 1e-3, domain=dom.PLAN_LINK_GB_PER_S)
LINK_MS = share.Field("plan_link_ms", 0.0, float, domain=dom.PLAN_LINK_LATENCY_MS)
HARDWARE = HardwareField("plan_hw", hw_table.encode(_GPU.hardware), str)
B_MAX = _knob_field("plan_b_max", "b_max")
DELAYS = _knob_field("plan_delay_ms", "queue_delay_ms")
LIMITS = _knob_field("plan_token_limits", "token_limit")
SEQS = _knob_field("plan_max_num_seqs", "max_num_seqs")
BUDGET = _knob_field("plan_batched_tokens", "max_num_batched_tokens")
PREFILL = _knob_field("plan_prefill", "prefill_instances")
DECODE = _knob_field("plan_decode", "decode_instances")
_R = _domain("replicas")
R_LO = share.Field("plan_r_min", min(_GPU.replicas), int, _R.low, _R.high)
R_HI = share.Field("plan_r_max", max(_GPU.replicas), int, _R.low, _R.high)
CONFIRM = share.Field("plan_confirm", _GPU.confirm, int, 1, MAX_CONFIRM, domain=dom.PLAN_CONFIRM)
SEED = share.Field("plan_seed", _GPU.seed, int, 0, 2 ** 31 - 1, domain=dom.PLAN_SEED)
VIEW = share.Field("plan_view", VIEWS[0], str, choices=VIEWS)
IMG = share.Field("img", "png", str, choices=("png", "svg"))
FIELDS = [WORKLOAD, RATE, *arrivals_input.FIELDS, PCT, TARGET, TARGET_UNIT, SLA, ENERGY_ON,
          ENERGY, TRUNCATION, TOKEN_LAW, TOKENS, PROMPT_LAW, DISPATCH_POLICY, LINK, LINK_GBPS,
          LINK_MS, HARDWARE, B_MAX, DELAYS, LIMITS, SEQS, BUDGET, PREFILL, DECODE, R_LO, R_HI,
          CONFIRM, SEED, VIEW, IMG]
#: the same whatever the workload; every other field is kept per workload
COMMON = (WORKLOAD, *arrivals_input.FIELDS, CONFIRM, SEED, VIEW, IMG)
SWITCHED = tuple(f for f in FIELDS if f not in COMMON)


@dataclass(frozen=True)
class KnobInput:
    """How the page draws a knob's values: a multiselect of ``options`` (plus the values
    held) into ``field``, each shown by ``fmt``."""

    field: ValuesField
    options: tuple
    fmt: object = None


KNOB_INPUTS = {
    "b_max": KnobInput(B_MAX, B_MAX_OPTIONS, lambda v: f"{v:d}"),
    "queue_delay_ms": KnobInput(DELAYS, DELAY_OPTIONS_MS,
                                lambda v: "0 (at once)" if v == 0 else f"{v:g} ms"),
    "token_limit": KnobInput(LIMITS, LIMIT_OPTIONS,
                             lambda v: "none" if v == 0 else f"{v:,d}"),
    "max_num_seqs": KnobInput(SEQS, SEQS_OPTIONS, lambda v: f"{v:,d}"),
    "max_num_batched_tokens": KnobInput(BUDGET, BUDGET_OPTIONS, lambda v: f"{v:,d}"),
    "prefill_instances": KnobInput(PREFILL, INSTANCE_OPTIONS, lambda v: f"{v:d}"),
    "decode_instances": KnobInput(DECODE, INSTANCE_OPTIONS, lambda v: f"{v:d}"),
}
#: knobs searched over every whole number between two inputs
RANGE_KNOBS = {"replicas": (R_LO, R_HI)}
