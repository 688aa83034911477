"""A process-wide budget for heavy engine work (simulations, large exact solves).

One Streamlit server runs every user's session in its own thread.  Heavy calls
take a slot here first, so at most ``WORKERS`` of them run at once whoever
asks: a user starting many simulations queues behind the slots instead of
crowding out everyone else's reruns (cheap work, cached results and page
drawing never wait).  Sweeps take a slot per point, so concurrent users'
sweeps interleave.  Re-entrant per thread: a heavy call made inside another
does not wait for a second slot.
"""
from __future__ import annotations

import functools
import os
import threading

WORKERS = max(1, min(4, os.cpu_count() or 1))
_SLOTS = threading.BoundedSemaphore(WORKERS)
_HELD = threading.local()


def heavy(fn):
    """Decorator: run ``fn`` holding one of the ``WORKERS`` slots."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if getattr(_HELD, "depth", 0):
            return fn(*args, **kwargs)
        with _SLOTS:
            _HELD.depth = 1
            try:
                return fn(*args, **kwargs)
            finally:
                _HELD.depth = 0
    return wrapper
