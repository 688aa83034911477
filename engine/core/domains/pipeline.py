"""Domains of the CPU-GPU pipeline (May & Voigt 2010, engine/pipeline/): station
rates and sizes, the spec mapping, the simulator; rates per time unit (per ms with
the presets)."""
from __future__ import annotations

from .base import Choice, Domain

PIPE_MU = Domain("mu", "jobs per time unit", low=0.0, low_open=True, typical=(0.1, 10.0),
                 description="service rate of one server of a station")
PIPE_MU_CPU = Domain("mu_cpu", "jobs per time unit", low=0.0, low_open=True, typical=(0.1, 10.0),
                     description="CPU stage service rate (host preparation + host-to-device copy)")
PIPE_MU_MEM = Domain("mu_mem", "jobs per time unit", low=0.0, low_open=True, typical=(0.1, 10.0),
                     description="GPU global-memory stage service rate (device-memory traffic)")
PIPE_MU_CU = Domain("mu_cu", "jobs per time unit", low=0.0, low_open=True, typical=(0.01, 1.0),
                    description="service rate of one compute unit (SM)")
PIPE_K = Domain("K", "jobs", low=1.0, integer=True, typical=(1, 16),
                description="jobs the GPU global-memory stage holds, the one in service included")
PIPE_C = Domain("c", "servers", low=1.0, integer=True, typical=(1, 128),
                description="number of compute units (servers without buffer)")
PIPE_JOB_SIZE_BYTES = Domain("job_size_bytes", "bytes", low=0.0, low_open=True,
                             typical=(1e3, 1e8), description="bytes one pipeline job carries")
PIPE_FLOPS_PER_BYTE = Domain("flops_per_byte", "FLOP per byte", low=0.0, low_open=True,
                             typical=(1.0, 1024.0),
                             description="operations per byte of a job (its intensity)")
PIPE_SPEEDUP = Domain("factor", "", low=0.0, low_open=True, typical=(0.1, 100.0),
                      description="how many times faster the host stage runs")
PIPE_LOAD_FRACTION = Domain("fraction", "", low=0.0, typical=(0.01, 0.99),
                            description="a load as a fraction of the exact capacity")
PIPE_SIM_LAM = Domain("lam", "jobs per time unit", low=0.0, low_open=True,
                      typical=(0.1, 10.0),
                      description="arrival rate of a simulated run (positive and finite)")
PIPE_BLOCKING = Choice("blocking", ("before", "after"),
                       description="blocking before service (the paper's rule) or after it")
PIPE_METHOD = Choice("method", ("auto", "full", "reference"),
                     description="how the exact tandem's phases are solved")
PIPE_VARY = Choice("vary", ("K", "c"),
                   description="the size a capacity chart runs against")
PIPE_PRECISION = Choice("precision", ("fp32", "fp16"),
                        description="the arithmetic a pipeline job's operations run in")
PIPE_LOAD_MODE = Choice("mode", ("frac", "rate"),
                        description="a load as a fraction of the capacity, or as jobs per s")
