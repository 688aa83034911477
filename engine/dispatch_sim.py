"""The dispatch simulator of the SLA model, now ``engine.sla.sim`` (re-exported here)."""
from .sla.sim import (BACKEND, POLICIES, DispatchRecords, DispatchSimResult,  # noqa: F401
                      simulate_dispatch, simulate_records)
