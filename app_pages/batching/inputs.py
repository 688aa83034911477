"""The GPU batching page's inputs: share-link fields (URL keys = widget keys) and the
frozen dataclasses built from them, which are the cache keys of its figures."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from engine.batching import PRICE, RATE_PER_S, RHO, TARGET, rate_from_load
from engine.core.domains import B_MAX, PREFERRED
from app_pages.batching import data, views
from app_pages.batching.profile_input import Profile
from ui import arrivals_input, share
from ui.arrivals_input import POISSON, ArrivalChoice

PRESET = share.Field("preset", "v100_resnet50_mixed", str)
LOAD_MODE = share.Field("load_mode", "rho", str, choices=("rho", "rate"))
RHO_FIELD = share.Field("rho", 0.5, float, 0.01, 0.99, domain=RHO)
RATE = share.Field("rate_per_s", 3000.0, float, 1.0, 1e7, domain=RATE_PER_S)
CAP_BATCH = share.Field("cap_batch", False, bool)
B_MAX_FIELD = share.Field("b_max", 64, int, 1, 1024, domain=B_MAX)
SLA = share.Field("sla_ms", 10.0, float, 0.01, 1e5, domain=TARGET)
GPU_PRICE = share.Field("gpu_usd_h", 2.5, float, 0.0, 1e3, domain=PRICE)
POWER_PRICE = share.Field("usd_kwh", 0.15, float, 0.0, 100.0, domain=PRICE)
SIMULATE = share.Field("simulate", False, bool)
PREFERRED_FIELD = share.Field("preferred", 32, int, 1, 4096, domain=PREFERRED)
VIEW = share.Field("view", views.LATENCY, str, choices=views.VIEWS,
                   old_values=(("Utilisation & energy", views.ENERGY),))
IMAGE = share.Field("img", "png", str, choices=("png", "svg"))
FIELDS = [PRESET, LOAD_MODE, RHO_FIELD, RATE, CAP_BATCH, B_MAX_FIELD, SLA, GPU_PRICE,
          POWER_PRICE, SIMULATE, PREFERRED_FIELD, VIEW, IMAGE, *arrivals_input.FIELDS]
ARRIVALS_UPLOAD = "gpu_arrivals_upload"
LOAD_UNITS = {"rho": "rho", "rate": "per_s"}        # load_mode → the engine's load unit
LOAD_LABELS = {"rho": "ρ = λα", "rate": "requests/s"}
LARGEST_BATCH = 1024                                   # the preferred size's cap without b_max


@dataclass(frozen=True)
class Scenario:
    """The sidebar inputs: a change re-runs the whole page."""

    profile: Profile
    b_max: int | None                  # None: unlimited
    load_unit: str                     # "rho" or "per_s" (engine.batching.LOAD_UNITS)
    sla_ms: float
    gpu_usd_per_hour: float
    usd_per_kwh: float
    simulate: bool
    preferred: int
    arrivals: ArrivalChoice = POISSON  # the arrival process (ui.arrivals_input)

    @property
    def fit(self):
        """The fitted laws τ[b] = αb + τ0 (ms) and c[b] = βb + c0 (J) of the profile."""
        p = self.profile
        return data.profile_fit(p.batch_size, p.throughput_per_s, p.power_w)

    @property
    def model(self) -> tuple:
        """(α ms, τ0 ms, b_max, β J, c0 J): the engine's parameters."""
        fit = self.fit
        return fit.alpha_ms, fit.tau0_ms, self.b_max, fit.beta_j, fit.c0_j

    @property
    def preferred_batch_size(self) -> int:
        return min(self.preferred, self.b_max or LARGEST_BATCH)


@dataclass(frozen=True)
class Point:
    """The what-if inputs a view's charts depend on: the load (per ms) and the pinned
    baseline's model (``Scenario.model``); None where the view does not use them."""

    lam_per_ms: float | None
    baseline: tuple | None = None

    @classmethod
    def for_view(cls, view: str, lam_per_ms: float, baseline: tuple | None) -> Point:
        return cls(lam_per_ms if view in views.LOAD_VIEWS else None,
                   baseline if view == views.LATENCY else None)

    def at(self, scenario: Scenario):
        """``engine.batching.OperatingPoint`` of ``scenario`` at this load."""
        return data.operating_point(self.lam_per_ms, *scenario.model,
                                    scenario.gpu_usd_per_hour, scenario.usd_per_kwh)


def scenario(profile: Profile, arrivals: ArrivalChoice = POISSON) -> Scenario:
    """The sidebar inputs of this run, from session state."""
    s = st.session_state
    return Scenario(profile, int(s[B_MAX_FIELD.key]) if s[CAP_BATCH.key] else None,
                    LOAD_UNITS[s[LOAD_MODE.key]], float(s[SLA.key]), float(s[GPU_PRICE.key]),
                    float(s[POWER_PRICE.key]), bool(s[SIMULATE.key]),
                    int(s[PREFERRED_FIELD.key]), arrivals)


def load_per_ms(scenario: Scenario) -> float:
    """The what-if load of this run (per ms), from the slider or the rate input."""
    field = RHO_FIELD if scenario.load_unit == "rho" else RATE
    return float(rate_from_load(st.session_state[field.key], scenario.fit.alpha_ms,
                                scenario.load_unit))
