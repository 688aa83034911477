"""Domains of GPU dynamic batching (Inoue 2021, engine/batching/): the batch-time and
energy laws, the batcher's knobs, the simulators (open and closed loop), answers,
curves and load units; times in ms, rates per ms."""
from __future__ import annotations

import numpy as np

from .base import Choice, Domain, check_limit

LAM = Domain("lam", "jobs per time unit", low=0.0, allow_inf=True, typical=(0.0, 10.0),
             description="Poisson arrival rate λ (per ms with the presets)")
ALPHA = Domain("alpha", "time per job", low=0.0, low_open=True, typical=(0.01, 2.0),
               description="per-job batch time α (slope of τ[b] = αb + τ0)")
TAU0 = Domain("tau0", "time", low=0.0, typical=(0.0, 5.0),
              description="fixed batch overhead τ0 (intercept of τ[b] = αb + τ0)")
B_MAX = Domain("b_max", "jobs", low=1.0, integer=True, allow_inf=True, typical=(1, 256),
               description="largest batch the server forms (None or inf: unlimited)")
BETA = Domain("beta", "energy per job", low=0.0, low_open=True, typical=(0.001, 1.0),
              description="per-job energy β (slope of c[b] = βb + c0, Inoue 2021 eq 17)")
C0 = Domain("c0", "energy", low=0.0, typical=(0.0, 1.0),
            description="per-batch energy overhead c0 (intercept of c[b] = βb + c0)")
DELAY = Domain("max_queue_delay", "time", low=0.0, typical=(0.0, 10.0),
               description="longest wait for more requests before a batch below the preferred size starts")
PREFERRED = Domain("preferred_batch_size", "jobs", low=1.0, integer=True, typical=(1, 128),
                   description="batch size that starts at once without waiting")
N_JOBS = Domain("n_jobs", "jobs", low=1.0, integer=True, typical=(1_000, 1_000_000),
                description="number of simulated jobs")
WARMUP = Domain("warmup_jobs", "jobs", low=0.0, integer=True, typical=(0, 100_000),
                description="jobs left out of the statistics at the start of a run")
# Closed loop (fixed concurrency, what perf_analyzer drives): engine/batching/closed_loop.py
N_CLIENTS = Domain("n_clients", "clients", low=1.0, high=4096.0, integer=True,
                   typical=(1, 256),
                   description="concurrency N: clients that each send a request when the last returns")
THINK_TIME = Domain("think_time", "time", low=0.0, typical=(0.0, 10.0),
                    description="mean time a client spends outside the server between a reply "
                                "and its next request (client and network: a delay)")
INSTANCES = Domain("instances", "copies", low=1.0, high=1024.0, integer=True, typical=(1, 8),
                   description="copies of the batching server sharing one queue (Triton instances)")
N_BATCHES = Domain("n_batches", "batches", low=1.0, integer=True, typical=(1_000, 100_000),
                   description="number of simulated batches counted")
WARMUP_BATCHES = Domain("warmup", "batches", low=0.0, integer=True, typical=(0, 10_000),
                        description="batches left out of the statistics at the start of a run")
# GPU dynamic batching (Inoue 2021): answers, curves and load units of engine/batching/;
# times in ms, rates per ms
BATCH_MEAN_SIZE = Domain("mean_batch_size", "jobs", low=0.0, low_open=True, allow_inf=True,
                         typical=(1.0, 256.0), description="mean batch size E[B]")
BATCH_RHO = Domain("rho", "", low=0.0, allow_inf=True, typical=(0.0, 1.0),
                   description="normalised load ρ = λα")
BATCH_RATE_PER_S = Domain("rate_per_s", "requests per s", low=0.0, allow_inf=True,
                          typical=(1.0, 10_000.0),
                          description="arrival rate in requests per second")
BATCH_TARGET_MS = Domain("target_ms", "ms", low=0.0, low_open=True, typical=(1.0, 200.0),
                         description="latency SLA")
BATCH_PRICE = Domain("price", "$", low=0.0, typical=(0.0, 10.0), description="a price")
BATCH_ENERGY_J = Domain("joules_per_request", "J", low=0.0, typical=(0.0, 10.0),
                        description="energy one request takes")
BATCH_POWER_W = Domain("power_w", "W", low=0.0, typical=(0.0, 1000.0),
                       description="what a GPU draws, busy or idle")
CURVE_POINTS = Domain("n_points", "loads", low=1.0, integer=True, typical=(20, 200),
                      description="number of loads on a curve")
CURVE_MAX_FRACTION = Domain("max_fraction", "of capacity", low=0.0, high=1.0, low_open=True,
                            high_open=True, typical=(0.9, 0.99),
                            description="highest load of a curve, as a fraction of the "
                                        "capacity")
BATCH_SIZE_B = Domain("b", "jobs", low=0.0, low_open=True, typical=(1.0, 256.0),
                      description="a batch size the throughput μ[b] is read at (finite)")
BATCH_SIZE_B0 = Domain("b", "jobs", low=0.0, typical=(0.0, 256.0),
                       description="a batch size the energy c[b] is read at (finite, 0 too)")
LOAD_UNIT = Choice("unit", ("rho", "per_s"),
                   description="a load as the normalised ρ = λα, or requests per second")
THINK_LAW = Choice("think", ("exponential", "deterministic"),
                   description="law of a closed-loop client's think time")


def check_b_max(b_max) -> np.ndarray:
    """b_max as a float array where ``inf`` means unlimited (``None`` accepted)."""
    return check_limit(B_MAX, b_max)
