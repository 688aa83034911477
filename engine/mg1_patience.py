"""The M/G/1 queue with deterministic patience (M/G/1+D): a shim, the code is in
``engine.token_limit.patience`` (docs/models/token_limit.md)."""
from .token_limit.patience import (BACKEND, EXACT_LAM_TAU, ServiceLaw,  # noqa: F401
                                   md1_deterministic_patience, mm1_deterministic_patience)
