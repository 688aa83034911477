"""The heavy-work budget: at most WORKERS heavy calls at once, re-entrant per thread."""
import threading
import time

from ui import budget


def test_no_more_than_workers_heavy_calls_run_at_once():
    running, peak, lock = [0], [0], threading.Lock()

    @budget.heavy
    def work():
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(4 * budget.WORKERS + 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert peak[0] == budget.WORKERS            # the slots are used, never exceeded


def test_a_heavy_call_inside_another_does_not_wait_for_a_second_slot():
    @budget.heavy
    def inner():
        return 1

    @budget.heavy
    def outer():
        return inner() + 1

    # With every other slot taken, a nested call that asked for a second slot
    # would block forever; it must run in the slot its caller holds.
    taken = [budget._SLOTS.acquire(timeout=1) for _ in range(budget.WORKERS - 1)]
    try:
        result = []
        t = threading.Thread(target=lambda: result.append(outer()))
        t.start()
        t.join(5)
        assert result == [2]
    finally:
        for ok in taken:
            if ok:
                budget._SLOTS.release()


def test_long_calls_never_hold_the_short_calls_slots():
    """With every long slot busy, a short heavy call still runs at once."""
    release = threading.Event()

    @budget.long_running
    def long_call():
        release.wait(10)

    @budget.heavy
    def short_call():
        return "done"

    longs = [threading.Thread(target=long_call) for _ in range(budget.LONG_WORKERS)]
    for t in longs:
        t.start()
    try:
        time.sleep(0.05)
        assert not budget._LONG_SLOTS.acquire(timeout=0.05)     # the long pool is full
        result = []
        t = threading.Thread(target=lambda: result.append(short_call()))
        t.start()
        t.join(2)
        assert result == ["done"]
    finally:
        release.set()
        for t in longs:
            t.join(10)
