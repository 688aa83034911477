"""The optional-numba switch shared by every simulator and solver loop.

numba compiles the event loops (about 100x the plain-Python loop: see
``python -m benchmarks sim``); without it the same Python functions run
unchanged and give identical results.  ``BACKEND`` says which is in use.
"""
from __future__ import annotations

from typing import Callable

from .domains import JIT_BACKEND

try:  # numba is optional
    import numba
except ImportError:  # pragma: no cover - the numpy backend is tested explicitly
    numba = None

BACKEND = "numba" if numba is not None else "numpy"
BACKENDS = JIT_BACKEND.values


def compiled(fn: Callable) -> Callable:
    """``fn`` compiled by numba (cached on disk, releasing the GIL), or ``fn`` itself
    when numba is not installed."""
    if numba is None:
        return fn
    return numba.njit(cache=True, nogil=True)(fn)


def choose(backend: str | None, fast: Callable, plain: Callable) -> Callable:
    """The loop a ``backend`` argument asks for: ``None`` the fastest available
    (``fast``), ``"numba"`` the compiled one, ``"numpy"`` the plain-Python one
    (``plain``); any other value raises ``ValueError`` naming ``backend``."""
    JIT_BACKEND.check(backend)
    return plain if backend == "numpy" else fast
