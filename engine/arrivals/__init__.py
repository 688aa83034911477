"""Arrival processes: Poisson, bursty renewal, MMPP-2 (exact and fitted to a trace) and
trace replay, plus what a trace looks like.

Each process is a frozen object with ``rate`` (mean arrivals per time unit), ``scv``
(squared coefficient of variation of the gaps), ``label`` (plain words) and
``sample(n, rng)`` (n sorted arrival times, float64; vectorised):

* ``Poisson(rate)``
* ``Renewal(rate, scv)``: deterministic (scv 0), gamma/Erlang (scv < 1), exponential
  (scv 1), balanced-means two-phase hyperexponential (scv > 1) gaps
* ``MMPP2(rate_1, rate_2, switch_12, switch_21)``: ``D0``, ``D1``, ``stationary_phase``,
  exact ``scv``, ``idc(window)``, ``count_variance(t)``, ``counting_probabilities(t, n_max)``
* ``Replay(arrival_times)``: the trace itself; ``scaled(rate)`` time-scales it
* ``fit_mmpp2(arrival_times)`` / ``fit_mmpp2_report``: an MMPP-2 matching the mean rate,
  the gap SCV and the IDC at two windows, with what it achieves
* ``thinned(process, fraction)``: one replica's share when requests are spread at random
  (exact for Poisson and MMPP-2; ``Thinned`` samples any other process)
* ``describe(arrival_times, windows=None)`` -> ``ArrivalStats`` (mean rate, SCV, IDC and
  peak-to-mean per window); ``rate_over_time(arrival_times, window)`` for drawing

Derivations and the fits to the Azure traces: docs/models/arrivals.md.
"""
from .fit import Mmpp2Fit, fit_mmpp2, fit_mmpp2_report
from .mmpp import MMPP2
from .processes import Poisson, Renewal
from .replay import Replay
from .stats import ArrivalStats, RateOverTime, describe, rate_over_time
from .thinning import Thinned, thinned

__all__ = ["Poisson", "Renewal", "MMPP2", "Replay", "describe", "ArrivalStats",
           "rate_over_time", "RateOverTime", "fit_mmpp2", "fit_mmpp2_report", "Mmpp2Fit", "Thinned", "thinned"]
