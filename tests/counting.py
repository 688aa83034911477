"""Work counted, not timed: a profile hook that counts the calls a function makes.

A test bounds what can be counted (calls of Python functions and builtins, calls of a
method of one large text: each at most one pass over it), so it passes on a busy
machine; the times themselves live in ``python -m benchmarks readers``.
"""
import sys


def counted(fn, *args, big_bytes=1_000_000):
    """(``fn(*args)``'s result, or the ValueError it raised; calls made; names of the
    methods called on a str or bytes of ``big_bytes`` or more)."""
    calls = 0
    on_big = []

    def hook(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1
        if event == "c_call":
            owner = getattr(arg, "__self__", None)
            if isinstance(owner, (str, bytes)) and len(owner) >= big_bytes:
                on_big.append(arg.__name__)
    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        out = fn(*args)
    except ValueError as err:
        out = err
    finally:
        sys.setprofile(previous)
    return out, calls, on_big
