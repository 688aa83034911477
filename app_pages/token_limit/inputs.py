"""The token-limit page's inputs: share-link fields (URL keys = widget keys) and the
frozen dataclasses built from them, which are the cache keys of its figures."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from engine.core.domains import (A_S_PER_TOKEN, C_S, LAM_PER_S, LOAD_RHO, LOSS_COST, N_MAX,
                                 PATIENCE_S, THETA)
from engine.token_limit import rate_at_load
from app_pages.token_limit import data, views
from ui import arrivals_input as arr
from ui import share
from ui import token_law_input as tli
from ui.arrivals_input import POISSON, ArrivalChoice
from ui.token_law_input import TokenLawChoice

TYPED = "typed"
PRESETS = tuple(data.preset_table())
PRESET = share.Field("preset", PRESETS[0], str, choices=PRESETS + (TYPED,))
INPUT_TERM = share.Field("input_term", False, bool)
PROMPT = share.Field("prompt_tokens", 128, int, 1, 32768)
A_S = share.Field("a_s", 0.023087, float, *data.A_S_BOUNDS, domain=A_S_PER_TOKEN)
C_S_FIELD = share.Field("c_s", 0.49, float, *data.C_S_BOUNDS, domain=C_S)
LOAD_MODE = share.Field("load_mode", "rate", str, choices=("rate", "rho"))
LAM = share.Field("lam_per_s", 0.025, float, 1e-4, 100.0, domain=LAM_PER_S)
RHO = share.Field("rho", 0.82, float, 0.01, 3.0, domain=LOAD_RHO)
N_LO = share.Field("n_lo", 100, int, 1, 100_000, domain=N_MAX)
N_HI = share.Field("n_hi", 4000, int, 2, 100_000, domain=N_MAX)
LIMIT = share.Field("limit", 1600, int, 1, 100_000, domain=N_MAX)
PATIENCE = share.Field("patience_s", 60.0, float, 1.0, 600.0, domain=PATIENCE_S)
METHOD = share.Field("method", "exact", str, choices=("exact", "interpolation"))
THETA_V1 = share.Field("theta_v1", 119 / 120, float, 0.5, 1.0, domain=THETA)
THETA_V2 = share.Field("theta_v2", 0.95, float, 0.5, 1.0, domain=THETA)
LOSS = share.Field("loss_cost", 4.0, float, 0.0, 100.0, domain=LOSS_COST)
PRINTED = share.Field("printed_sign", False, bool)
SIMULATE = share.Field("simulate", True, bool)
VIEW = share.Field("view", views.DELAY, str, choices=views.VIEWS)
IMAGE = share.Field("img", "png", str, choices=("png", "svg"))
ARRIVALS_UPLOAD = "tokens_arrivals_upload"
FIELDS = [PRESET, INPUT_TERM, PROMPT, A_S, C_S_FIELD, LOAD_MODE, LAM, RHO, *arr.FIELDS,
          *tli.fields(), N_LO, N_HI, LIMIT, PATIENCE, METHOD, THETA_V1, THETA_V2, LOSS, PRINTED,
          SIMULATE, VIEW, IMAGE]
PAPER_A = dict(load_mode="rate", lam_per_s=0.025, law="lognormal", log_mean=7.0, log_sd=0.7,
               theta_v1=119 / 120)                                     # Fig 4a
PAPER_BD = dict(load_mode="rate", lam_per_s=0.04, law="lognormal", log_mean=7.0, log_sd=0.7,
                patience_s=60.0, theta_v2=0.95, loss_cost=4.0)         # Figs 4b-d


@dataclass(frozen=True)
class Profile:
    """The latency profile S = a·n + c: a (s per output token), c (s per request)."""

    name: str
    a_s: float
    c_s: float
    table: tuple | None = None      # (input tokens, output tokens, latency s) of a preset
    input_term: bool = False        # the Latency fit view shows the fit with input tokens


@dataclass(frozen=True)
class Scenario:
    """The sidebar inputs: a change re-runs the whole page."""

    profile: Profile
    law: TokenLawChoice
    lam_per_s: float
    n_range: tuple                  # (lowest, highest) n_max of the curves
    patience_s: float
    method: str                     # "exact" or "interpolation"
    theta_v1: float
    theta_v2: float
    loss_cost: float
    printed_sign: bool
    simulate: bool
    arrivals: ArrivalChoice = POISSON   # the arrival process (ui.arrivals_input), at λ

    @property
    def poisson(self) -> bool:
        return self.arrivals.is_poisson

    @property
    def model(self) -> tuple:
        """(law, λ per s, a, c): the leading arguments of the data functions."""
        return self.law, self.lam_per_s, self.profile.a_s, self.profile.c_s

    @property
    def queue(self):
        """The scenario's queue (``engine.token_limit.TokenLimitQueue``, patience τ): the
        charts' memoised calls are its methods (``data.queue``)."""
        return data.queue(*self.model, self.patience_s)

    @property
    def grid(self) -> tuple:
        return data.n_max_grid(*self.n_range)

    @property
    def label(self) -> str:
        p = self.profile
        traffic = "" if self.poisson else f", {self.arrivals.label}"
        return (f"{self.law.label}, λ = {self.lam_per_s:.4g}/s, a = {p.a_s:.4g}, "
                f"c = {p.c_s:.3g}{traffic}")


@dataclass(frozen=True)
class Point:
    """The what-if inputs a view's charts depend on: the chosen limit (views that mark
    it) and the pinned baseline scenario (Delay & loss); None where unused."""

    limit: int | None = None
    baseline: Scenario | None = None

    @classmethod
    def for_view(cls, view: str, limit: int | None, baseline: Scenario | None) -> Point:
        return cls(limit if view in views.LIMIT_VIEWS else None,
                   baseline if view == views.DELAY else None)


def n_range() -> tuple:
    """(lowest, highest) n_max of the curves, at least one token apart."""
    s = st.session_state
    lo, hi = sorted((int(s[N_LO.key]), int(s[N_HI.key])))
    return (lo, hi + 1) if lo == hi else (lo, hi)


def scenario(profile: Profile, law: TokenLawChoice,
             arrivals: ArrivalChoice = POISSON) -> Scenario:
    """The Scenario of the current session state (after the sidebar's widgets)."""
    s = st.session_state
    if s[LOAD_MODE.key] == "rate":
        lam = float(s[LAM.key])
    else:
        lam = float(rate_at_load(s[RHO.key], profile.a_s, profile.c_s,
                                 data.law_summary(law).mean_tokens))
    return Scenario(profile, law, lam, n_range(), float(s[PATIENCE.key]), s[METHOD.key],
                    float(s[THETA_V1.key]), float(s[THETA_V2.key]), float(s[LOSS.key]),
                    bool(s[PRINTED.key]), bool(s[SIMULATE.key]), arrivals)
