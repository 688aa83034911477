"""A process-wide budget for heavy engine work (simulations, large exact solves).

One Streamlit server runs every user's session in its own thread.  Heavy calls
take a slot here first, so at most ``WORKERS`` of them run at once whoever
asks: a user starting many simulations queues behind the slots instead of
crowding out everyone else's reruns (cheap work, cached results and page
drawing never wait).  Sweeps take a slot per point, so concurrent users'
sweeps interleave.  Calls that take seconds (whole exact curves) have their
own, smaller pool (``LONG_WORKERS``): they never hold the slots that the short
calls of a what-if move (one simulation, tens of ms) wait for.  Re-entrant per
thread: a budgeted call made inside another does not wait for a second slot.
"""
from __future__ import annotations

import functools
import os
import threading

WORKERS = max(1, min(4, os.cpu_count() or 1))
LONG_WORKERS = max(1, WORKERS // 2)
_SLOTS = threading.BoundedSemaphore(WORKERS)
_LONG_SLOTS = threading.BoundedSemaphore(LONG_WORKERS)
_HELD = threading.local()


def _budgeted(slots: threading.BoundedSemaphore):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if getattr(_HELD, "depth", 0):
                return fn(*args, **kwargs)
            with slots:
                _HELD.depth = 1
                try:
                    return fn(*args, **kwargs)
                finally:
                    _HELD.depth = 0
        return wrapper
    return decorate


heavy = _budgeted(_SLOTS)
heavy.__doc__ = "Decorator: run a short heavy call holding one of the ``WORKERS`` slots."
long_running = _budgeted(_LONG_SLOTS)
long_running.__doc__ = ("Decorator: run a call of seconds holding one of the "
                        "``LONG_WORKERS`` slots (not the short calls' slots).")
