"""The BLAS thread count of the process, set once (the solvers' small dense blocks).

The exact tandem solves stacks of dense blocks at most a few thousand wide; on a
busy machine BLAS's own threads make them slower, not faster.  The count is a
process-wide setting of the BLAS library, and changing it while another thread
runs a solve is not safe (a Streamlit server runs each session on a thread), so it
is set once per process and never per call: ``limit_blas_threads`` is idempotent
and thread-safe, and the solvers call ``ensure_blas_limit`` (the default, one
thread) on their first use.  A program that wants another count, or BLAS left
alone (``None``), calls ``limit_blas_threads`` before its first solve.
"""
from __future__ import annotations

import threading

try:  # optional: without it BLAS keeps its own default
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover
    ThreadpoolController = None

DEFAULT_THREADS = 1
_LOCK = threading.Lock()
_STATE: dict = {}          # "threads": the count chosen once (None: BLAS left alone)


def limit_blas_threads(threads: int | None = DEFAULT_THREADS) -> int | None:
    """Set the process's BLAS thread count to ``threads`` the first time it is called;
    later calls change nothing and return the count chosen first.  ``None`` leaves
    BLAS as it is (and is also what is returned when threadpoolctl is missing)."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise ValueError(f"threads must be a positive integer or None, got {threads!r}")
    with _LOCK:
        if "threads" not in _STATE:
            if threads is not None and ThreadpoolController is not None:
                ThreadpoolController().limit(limits=threads, user_api="blas")  # kept (no `with`)
            _STATE["threads"] = threads if ThreadpoolController is not None else None
        return _STATE["threads"]


def ensure_blas_limit() -> None:
    """``limit_blas_threads()`` unless the count is already chosen (a lock-free check
    on every solve after the first)."""
    if "threads" not in _STATE:
        limit_blas_threads()


def blas_threads_chosen() -> int | None:
    """The count chosen by ``limit_blas_threads`` (``None`` also when none was chosen yet)."""
    return _STATE.get("threads")
