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
