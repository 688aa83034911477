"""Memoisation of the pages' data functions, and progress bars drawn only when needed.

``st.cache_resource`` hashes every argument with its own hasher and reads the
function's signature on every call, and a sidebar move calls a page's cached
functions a dozen times, nearly all hits (docs/benchmarks.md).  These functions take
hashable arguments (numbers, strings, tuples, frozen dataclasses), so Python's
own hash is enough: ``memo`` keeps the ``maxsize`` most recent results for every
session, computes each key once even when sessions ask at the same time (the
others wait for it), and leaves out of the key the parameters whose names start
with ``_`` (as Streamlit does: a law whose key is passed beside it) or are
named ``bar`` (a progress bar).  Dicts and lists in the key become tuples.
Exceptions are not kept.
"""
from __future__ import annotations

import functools
import inspect
import threading
import time
from collections import OrderedDict

import streamlit as st

IGNORED = ("bar",)


def memo(maxsize: int = 64, ttl: float | None = None):
    """Decorator: ``fn`` memoised on its arguments (see the module docstring).

    ``ttl`` (seconds) drops a result that old, for results that hold much memory.
    The wrapper's ``clear()`` empties the memo.
    """
    def wrap(fn):
        return functools.wraps(fn)(_Memo(fn, maxsize, ttl))
    return wrap


class _Memo:
    def __init__(self, fn, maxsize: int, ttl: float | None):
        self.fn, self.maxsize, self.ttl = fn, maxsize, ttl
        params = list(inspect.signature(fn).parameters)
        self.keep = tuple(not (p.startswith("_") or p in IGNORED) for p in params)
        self.data: OrderedDict = OrderedDict()      # key -> (value, time stored)
        self.pending: dict = {}                     # key -> Event of the call computing it
        self.lock = threading.Lock()

    def _key(self, args, kwargs):
        # (positional, keyword) always, so no positional key can equal a keyword one
        pos = tuple(_hashable(a) for a, k in zip(args, self.keep) if k)
        kw = tuple(sorted((k, _hashable(v)) for k, v in kwargs.items()
                          if not (k.startswith("_") or k in IGNORED))) if kwargs else ()
        return pos, kw

    def _get(self, key):
        """(True, value) for a fresh stored result, else (False, None); holds the lock."""
        hit = self.data.get(key)
        if hit is None:
            return False, None
        if self.ttl is not None and time.monotonic() - hit[1] > self.ttl:
            del self.data[key]
            return False, None
        self.data.move_to_end(key)
        return True, hit[0]

    def cached(self, *args, **kwargs) -> bool:
        """Whether a call with these arguments would return a stored result at once."""
        key = self._key(args, kwargs)
        with self.lock:
            return self._get(key)[0]

    def __call__(self, *args, **kwargs):
        key = self._key(args, kwargs)
        while True:
            with self.lock:
                found, value = self._get(key)
                if found:
                    return value
                event = self.pending.get(key)
                if event is None:
                    event = self.pending[key] = threading.Event()
                    break
            event.wait()          # another session computes it; then read it (or retry)
        try:
            value = self.fn(*args, **kwargs)
            with self.lock:
                self.data[key] = (value, time.monotonic())
                while len(self.data) > self.maxsize:
                    self.data.popitem(last=False)
        finally:
            with self.lock:
                del self.pending[key]
            event.set()
        return value

    def clear(self) -> None:
        with self.lock:
            self.data.clear()

    def ready(self, *args, **kwargs) -> bool:
        """Whether a call with these arguments would be answered from the memo."""
        key = self._key(args, kwargs)
        with self.lock:
            return self._get(key)[0]


def with_spinner(text: str, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` (a ``memo``'d function), under an ``st.spinner`` only
    when it has work to do: a spinner costs a timer thread and messages on every
    rerun, and most reruns find the result memoised."""
    if fn.ready(*args, **kwargs):
        return fn(*args, **kwargs)
    with st.spinner(text):
        return fn(*args, **kwargs)


def over_points(point, arguments, bar=None, text: str = "Simulating…") -> list:
    """``point(*args)`` for each ``args`` of ``arguments`` in order: an engine function
    over these loads (or limits, or replica counts), each point memoised by ``point``
    itself, and ``bar`` (an ``st.progress`` or ``LazyProgress``) moved after each."""
    arguments = list(arguments)
    results = []
    for i, args in enumerate(arguments):
        results.append(point(*args))
        if bar is not None:
            bar.progress((i + 1) / len(arguments), text)
    return results


def _hashable(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


class LazyProgress:
    """An ``st.progress`` bar created on the first ``progress`` call: a rerun whose
    work is all memoised draws no bar and sends no message for it."""

    def __init__(self, text: str):
        self.text = text
        self.bar = None

    def progress(self, value: float, text: str | None = None) -> None:
        if self.bar is None:
            self.bar = st.progress(value, text or self.text)
        else:
            self.bar.progress(value, text or self.text)

    def empty(self) -> None:
        if self.bar is not None:
            self.bar.empty()
            self.bar = None
