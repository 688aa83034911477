"""Replicas for a percentile-latency SLA (Swayam appendix): random dispatch with
retries, the M/M/n reference, GPU operating points, load traces and replica plans,
and the dispatch simulator.  Times in s, rates per s.  Model, errata and methods:
docs/models/sla.md.

* ``cdfs``      response-time CDFs and percentiles (eqs 1, 7; M/M/n)
* ``replicas``  the fewest replicas meeting an SLA
* ``answers``   the page's answers: replicas by eq 7, M/M/n and simulation, numbers at n
* ``curves``    curves against n (eq 7, corrected eq 7, M/M/n, eq 1) and CDFs at one n
* ``central``   one central queue's mean wait under any arrivals (GI/G/n)
* ``gpu``       the service rate of one GPU at a mean-latency target
* ``traces``    load traces and replica plans over them
* ``random_dispatch``  ``RandomDispatch``: the model's parameters bound once, the
                answers and the simulator as its methods
* ``sim``       the dispatch simulator; any arrival process
                or a replayed trace with ``arrivals=``, beside it the GI/G/n (Allen–Cunneen)
                and GI/G/1 (Kingman) approximations of ``engine.core.two_moment``

Replicas for 900 requests/s of 10 ms exponential service, 99% within 100 ms,
d1 = d2 = 0.25 ms, Δ = 0.5 ms (simulation needs 11 with random_retry):

>>> from scipy import stats
>>> service = stats.expon(scale=0.01)
>>> int(min_backends(900.0, 100.0, 0.1, 99, 0.00025, 0.00025, 0.0005, service))
10
>>> int(erlang_c_min_servers(900.0, 100.0, 0.1, 99))
10
"""
from ..core.two_moment import mean_wait_gg1, mean_wait_ggn  # noqa: F401
from ..core.service_laws import (SERVICE_LAWS, empirical_service, service_cdf,  # noqa: F401
                                 service_law, service_sampler)
from .cdfs import (MISS_RESOLUTION, erlang_c, mmn_response_cdf, mmn_response_percentile,  # noqa: F401
                   mmn_waiting_cdf, mmn_waiting_percentile, response_cdf,
                   resolved_miss, response_percentile, retry_busy_probability, utilization,
                   utilisation,
                   waiting_percentile)
from .answers import (SIM_MAX_N, SIM_POINTS, at_replicas, fewest_simulated,  # noqa: F401
                      late_curve, replica_answers, sim_grid, sim_requests, simulable,
                      sweep_summary)
from .central import central_mean_wait_s, service_scv  # noqa: F401
from .checks import check_delays, check_probability  # noqa: F401
from .gpu import gpu_service_rate  # noqa: F401
from .curves import (CDF_POINTS, CURVE_POINTS, FIX_MAX_C_MU, FIX_MAX_N, FIX_POINTS,  # noqa: F401
                     cdf_curves, correction_applies, curve_top, replica_curves, replica_grid,
                     resolved_curve)
from .random_dispatch import RandomDispatch  # noqa: F401
from .replicas import (erlang_c_min_servers, fewest_meeting, min_backends,  # noqa: F401
                       offered_load, stable_replicas)
from .sim import (BACKEND, POLICIES, DispatchRecords, DispatchSimResult,  # noqa: F401
                  simulate_dispatch, simulate_records)
from .traces import (MAX_TRACE_INTERVALS, ReplicaPlan, binned_rates,  # noqa: F401
                     diurnal_trace, even_interval_s, plan_replicas, synthetic_interval_s,
                     trace_rates)
# the one converter module, engine.core.units (re-exported for the page and old callers)
from ..core.units import (MS_PER_S, S_PER_HOUR, hours_from_s, ms_from_s,  # noqa: F401
                          s_from_ms)
