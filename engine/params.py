"""Former home of the parameter domains, now ``engine.core.domains`` (re-exported)."""
from .core.domains import *  # noqa: F401,F403
from .core.domains import Domain, check_b_max, check_n_max  # noqa: F401
