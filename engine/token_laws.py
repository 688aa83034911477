"""Former home of the token-length laws, now ``engine.core.token_laws`` (re-exported)."""
from .core.token_laws import *  # noqa: F401,F403
from .core.token_laws import (MAX_TOKEN_GRID, EmpiricalTokens, binned_pmf,  # noqa: F401
                              empirical_from_csv, grid_top, lognormal, sample_tokens,
                              token_cdf, token_pmf, token_quantile, truncated_normal, uniform)
