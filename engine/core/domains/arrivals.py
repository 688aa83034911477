"""Domains of arrival processes (bursty arrivals and trace replay, engine/arrivals/);
any one time unit."""
from __future__ import annotations

from .base import Domain

ARRIVAL_RATE = Domain("rate", "arrivals per time unit", low=0.0, low_open=True,
                      typical=(0.01, 100.0), description="mean arrival rate λ of a process")
ARRIVAL_SCV = Domain("scv", "", low=0.0, high=1e6, typical=(0.0, 20.0),
                     description="squared coefficient of variation of the inter-arrival times "
                                 "(0: deterministic, 1: exponential, above 1: bursty)")
PHASE_RATE = Domain("rate_1", "arrivals per time unit", low=0.0, typical=(0.0, 100.0),
                    description="arrival rate in one phase of a Markov-modulated Poisson process")
SWITCH_RATE = Domain("switch_12", "per time unit", low=0.0, low_open=True,
                     typical=(0.001, 10.0),
                     description="rate of leaving one phase of a Markov-modulated Poisson process")
COUNT_WINDOW = Domain("window", "time", low=0.0, low_open=True, typical=(0.1, 1000.0),
                      description="length of the windows arrivals are counted in (IDC, rate "
                                  "over time)")
COUNT_TIME = Domain("t", "time", low=0.0, typical=(0.0, 100.0),
                    description="length of an interval arrivals are counted over")
N_ARRIVALS = Domain("n", "arrivals", low=0.0, integer=True, typical=(1, 100_000),
                    description="number of arrival times drawn from a process")
COUNT_MAX = Domain("n_max", "arrivals", low=0.0, high=2000.0, integer=True, typical=(0, 200),
                   description="largest arrival count a table of counting probabilities holds")
