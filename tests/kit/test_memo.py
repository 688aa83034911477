"""ui.memo: the pages' memo (hashable keys, one computation per key, bounded)."""
import threading
import time

import pytest

from ui import memo as memo_mod
from ui.memo import LazyProgress, memo


def counted():
    calls = []

    def fn(x, y=0, bar=None, _law=None):
        calls.append((x, y))
        if bar is not None:
            bar.append(x)
        return x + y

    return fn, calls


def test_repeated_calls_compute_once_and_ignore_bars_and_underscored():
    fn, calls = counted()
    f = memo(8)(fn)
    assert f(1, 2, [], object()) == 3
    assert f(1, 2, [], object()) == 3                  # another bar and law: same key
    assert f(1, y=2) == 3 and f(1, 3) == 4
    assert calls == [(1, 2), (1, 2), (1, 3)]           # keyword and positional keys differ


def test_least_recent_results_are_dropped_beyond_maxsize():
    fn, calls = counted()
    f = memo(2)(fn)
    f(1), f(2), f(1), f(3)                             # 2 is the least recent when 3 comes
    f(1)
    f(2)
    assert calls == [(1, 0), (2, 0), (3, 0), (2, 0)]


def test_results_older_than_ttl_are_recomputed(monkeypatch):
    fn, calls = counted()
    now = [100.0]
    monkeypatch.setattr(memo_mod.time, "monotonic", lambda: now[0])
    f = memo(8, ttl=10)(fn)
    f(1)
    now[0] += 5
    f(1)
    now[0] += 11
    f(1)
    assert len(calls) == 2


def test_exceptions_are_not_kept():
    seen = []

    @memo(4)
    def f(x):
        seen.append(x)
        if len(seen) == 1:
            raise ValueError("first call fails")
        return x

    with pytest.raises(ValueError):
        f(1)
    assert f(1) == 1 and f(1) == 1
    assert seen == [1, 1]


def test_dict_and_list_arguments_make_keys():
    fn, calls = counted()
    f = memo(4)(lambda d, l: fn(len(d), len(l)))
    f({"a": 1, "b": 2}, [1, 2])
    f({"b": 2, "a": 1}, [1, 2])
    assert len(calls) == 1


def test_sessions_asking_at_once_share_one_computation():
    started, release = threading.Event(), threading.Event()
    calls = []

    @memo(4)
    def slow(x):
        calls.append(x)
        started.set()
        release.wait(5)
        return x * 2

    out = []
    threads = [threading.Thread(target=lambda: out.append(slow(21))) for _ in range(6)]
    threads[0].start()
    started.wait(5)
    for t in threads[1:]:
        t.start()
    time.sleep(0.05)
    release.set()
    for t in threads:
        t.join(5)
    assert out == [42] * 6 and calls == [21]


def test_a_waiting_session_computes_when_the_first_one_failed():
    started, release = threading.Event(), threading.Event()
    calls = []

    @memo(4)
    def flaky(x):
        calls.append(x)
        if len(calls) == 1:
            started.set()
            release.wait(5)
            raise RuntimeError("first attempt fails")
        return x

    errors, out = [], []

    def first():
        try:
            flaky(7)
        except RuntimeError as err:
            errors.append(err)

    t1 = threading.Thread(target=first)
    t1.start()
    started.wait(5)
    t2 = threading.Thread(target=lambda: out.append(flaky(7)))
    t2.start()
    time.sleep(0.05)
    release.set()
    t1.join(5)
    t2.join(5)
    assert len(errors) == 1 and out == [7] and calls == [7, 7]


def _page(move: bool):
    import streamlit as st
    from ui.memo import LazyProgress
    st.markdown("before")
    bar = LazyProgress("Working…")
    if move:
        bar.progress(0.5)
    st.markdown("after")
    if move == "and empty":
        bar.empty()


@pytest.mark.parametrize("move,elements", [(False, ["before", "after"]),
                                           (True, ["before", "progress", "after"]),
                                           ("and empty", ["before", "after"])])
def test_lazy_progress_draws_a_bar_only_once_it_moves(move, elements):
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_function(_page, kwargs={"move": move}).run()
    assert not at.exception
    drawn = [e.value if e.type == "markdown" else e.type for e in at.main
             if e.type in ("markdown", "progress")]
    assert drawn == elements


def test_ready_tells_whether_a_call_is_memoised():
    calls = []

    @memo(4)
    def square(x, bar=None):
        calls.append(x)
        return x * x

    assert not square.ready(3)
    assert square(3, bar=object()) == 9 and square.ready(3) and square.ready(3, bar=1)
    assert not square.ready(4) and calls == [3]
