"""Keyword arguments renamed to say their unit, the old names kept for one release.

``renamed_keywords(lam="lam_per_ms")`` wraps a function whose parameter is now called
``lam_per_ms``: a call with ``lam=`` still works, with a ``DeprecationWarning`` that
names the new keyword and the release that drops the old one (scipy's pattern).
Positional calls are untouched.  Giving both names is a ``TypeError``.
``renamed_attribute("mean_latency_ms")`` is the same for a result's field: the old
attribute name reads the new one, with the warning.

>>> import warnings
>>> @renamed_keywords(lam="lam_per_s")
... def twice(lam_per_s):
...     return 2 * lam_per_s
>>> with warnings.catch_warnings(record=True) as seen:
...     warnings.simplefilter("always")
...     twice(lam=3), seen[0].category.__name__
(6, 'DeprecationWarning')
"""
from __future__ import annotations

import functools
import warnings

REMOVED_IN = "0.6"

__all__ = ["REMOVED_IN", "renamed_keywords", "renamed_attribute"]


def renamed_keywords(**old_to_new):
    """Decorator: accept each old keyword for its new one, with a ``DeprecationWarning``."""
    def wrap(func):
        @functools.wraps(func)
        def inner(*args, **kwargs):
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{func.__name__}() got both {old}= (old name) and "
                                        f"{new}=")
                    warnings.warn(f"{func.__name__}({old}=...) is deprecated; use {new}= "
                                  f"(the old name is removed in {REMOVED_IN})",
                                  DeprecationWarning, stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)
        inner.renamed_keywords = dict(old_to_new)
        return inner
    return wrap


class renamed_attribute:
    """A read-only class attribute: the old name of the field ``new``, read with a
    ``DeprecationWarning`` naming ``new`` (set as ``old = renamed_attribute("new")``)."""

    def __init__(self, new: str):
        self.new = new
        self.old = "?"

    def __set_name__(self, owner, name):
        self.old = f"{owner.__name__}.{name}"

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        warnings.warn(f"{self.old} is deprecated; use .{self.new} (the old name is removed "
                      f"in {REMOVED_IN})", DeprecationWarning, stacklevel=2)
        return getattr(obj, self.new)
