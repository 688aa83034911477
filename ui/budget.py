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

import atexit
import concurrent.futures as cf
import functools
import multiprocessing
import os
import threading

WORKERS = max(1, min(4, os.cpu_count() or 1))
LONG_WORKERS = max(1, WORKERS // 2)
_SLOTS = threading.BoundedSemaphore(WORKERS)
_LONG_SLOTS = threading.BoundedSemaphore(LONG_WORKERS)
_HELD = threading.local()
_WAITING = [0, 0]                 # long calls (running, waiting for a slot), all sessions
_COUNT = threading.Lock()
_POOL: list = []                  # the one shared process pool, made on first use
_POOL_LOCK = threading.Lock()


def _budgeted(slots: threading.BoundedSemaphore, counted: bool = False):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if getattr(_HELD, "depth", 0):
                return fn(*args, **kwargs)
            _count(counted, 0, 1)
            try:
                slots.acquire()
            finally:
                _count(counted, 0, -1)
            _count(counted, 1, 0)
            try:
                _HELD.depth = 1
                try:
                    return fn(*args, **kwargs)
                finally:
                    _HELD.depth = 0
            finally:
                _count(counted, -1, 0)
                slots.release()
        return wrapper
    return decorate


def _count(counted: bool, running: int, waiting: int) -> None:
    if counted:
        with _COUNT:
            _WAITING[0] += running
            _WAITING[1] += waiting


def long_queue() -> tuple[int, int]:
    """(long calls running, long calls waiting for a slot) across every session: what
    a page says before starting a plan ("2 plans ahead of yours")."""
    with _COUNT:
        return _WAITING[0], _WAITING[1]


def shared_pool() -> cf.ProcessPoolExecutor:
    """The one pool of worker processes (one per core) every session's large plans share:
    made on first use and kept, so plans from many sessions never start more processes
    than cores (a plan holds a long slot while it uses it: they take turns)."""
    with _POOL_LOCK:
        if not _POOL:
            method = ("forkserver" if "forkserver" in multiprocessing.get_all_start_methods()
                      else "spawn")
            pool = cf.ProcessPoolExecutor(os.cpu_count() or 1,
                                          mp_context=multiprocessing.get_context(method))
            atexit.register(pool.shutdown, wait=False, cancel_futures=True)
            _POOL.append(pool)
        return _POOL[0]


heavy = _budgeted(_SLOTS)
heavy.__doc__ = "Decorator: run a short heavy call holding one of the ``WORKERS`` slots."
long_running = _budgeted(_LONG_SLOTS, counted=True)
long_running.__doc__ = ("Decorator: run a call of seconds holding one of the "
                        "``LONG_WORKERS`` slots (not the short calls' slots).")
