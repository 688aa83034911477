"""Domains of percentile-latency SLAs, dispatch to n backends and autoscaling (Swayam,
engine/sla/); times in s."""
from __future__ import annotations

from .base import Choice, Domain

MU = Domain("mu", "requests per s", low=0.0, low_open=True, typical=(1.0, 1000.0),
            description="service rate μ of one backend (1/mean service time)")
N_BACKENDS = Domain("n", "backends", low=1.0, integer=True, typical=(1, 200),
                    description="number of backends (replicas, GPUs)")
NET_DELAY = Domain("d1", "s", low=0.0, typical=(0.0, 0.01),
                   description="message time or retry pause (d1, d2, Δ), also a fixed service time")
PERCENTILE = Domain("percentile", "%", low=0.0, high=100.0, low_open=True, high_open=True,
                    typical=(50.0, 99.9), description="service level, e.g. 99 for p99")
RESPONSE_TARGET = Domain("rt", "s", low=0.0, typical=(0.01, 1.0),
                         description="response-time target RT of the SLA")
N_REQUESTS = Domain("n_requests", "requests", low=1.0, integer=True, typical=(1_000, 1_000_000),
                    description="number of simulated requests")
HEADROOM = Domain("headroom", "fraction", low=0.0, typical=(0.0, 0.5),
                  description="extra load provisioned for, as a fraction of the measured rate")
PROVISIONING_DELAY = Domain("provisioning_delay", "s", low=0.0, typical=(0.0, 600.0),
                            description="time from ordering a replica to it serving")
INTERVAL = Domain("interval_s", "s", low=0.0, low_open=True, typical=(1.0, 3600.0),
                  description="length of one interval of a load trace")
COST = Domain("cost_per_gpu_hour", "currency per GPU-hour", low=0.0, typical=(0.0, 10.0),
              description="price of one replica (GPU) per hour")
LATENCY_TARGET_MS = Domain("latency_target_ms", "ms", low=0.0, low_open=True,
                           typical=(1.0, 500.0),
                           description="mean-latency target of one GPU at its operating point")
# Autoscaling for a latency SLA (engine/sla/): probabilities, the simulator's rate and
# retry cycle, synthetic-trace shapes, trace layouts and the page's replica grids
PROBABILITY = Domain("p", "", low=0.0, high=1.0, typical=(0.0, 1.0),
                     description="a probability or a share of requests")
SIM_RATE_PER_S = Domain("lam", "requests per s", low=0.0, low_open=True, typical=(1.0, 1000.0),
                        description="Poisson arrival rate a simulation draws (finite, > 0)")
RETRY_CYCLE_S = Domain("d1 + d2 + delta", "s", low=0.0, low_open=True, typical=(1e-4, 0.01),
                       description="time from one try to the next, c = d1 + d2 + Δ (random "
                                   "dispatch with retries needs c > 0)")
TRACE_MEAN_RATE = Domain("mean_rate", "requests per s", low=0.0, typical=(1.0, 1000.0),
                         description="mean load of a synthetic trace (finite)")
TRACE_HOURS = Domain("hours", "h", low=0.0, low_open=True, typical=(1.0, 168.0),
                     description="length of a synthetic trace")
SPIKES = Domain("n_spikes", "spikes", low=0.0, integer=True, typical=(0, 20),
                description="load spikes in a synthetic trace")
SPIKE_FACTOR = Domain("spike_factor", "", low=0.0, typical=(1.0, 5.0),
                      description="factor a spike multiplies the load by")
SPIKE_MINUTES = Domain("spike_minutes", "min", low=0.0, typical=(1.0, 60.0),
                       description="length of a load spike (at least one interval)")
TRACE_NOISE = Domain("noise", "log-sd", low=0.0, typical=(0.0, 0.5),
                     description="log-sd of the lognormal noise on a synthetic trace's load")
MIN_INTERVAL = Domain("min_interval_s", "s", low=0.0, typical=(0.0, 60.0),
                      description="shortest interval a rate table may have")
TRACE_INTERVALS = Domain("max_intervals", "intervals", low=1.0, integer=True,
                         typical=(100, 10_000_000), description="most intervals a trace may span")
REPLICA_TOP = Domain("top", "replicas", low=1.0, typical=(1.0, 1000.0),
                     description="largest replica count on a curve against replicas")
REPLICA_ANSWER = Domain("approx", "replicas", low=1.0, integer=True, allow_inf=True,
                        typical=(1, 1000),
                        description="a fewest-replicas answer (inf: none meets the SLA)")
REL_TOLERANCE = Domain("rel", "", low=0.0, typical=(0.0, 0.1),
                       description="relative tolerance of a comparison")
TRACE_KIND = Choice("kind", ("rate", "timestamps"),
                    description="what a load trace holds: a rate per interval, or arrival times")
DISPATCH_POLICY = Choice("policy", ("random_retry", "jsq", "central_queue"),
                         description="how the simulated dispatcher places a request")
