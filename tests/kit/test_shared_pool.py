"""Plans from many sessions share one bounded pool of worker processes and take turns:
ten threads (ten sessions pressing "Price" at once) start no more worker processes than
cores, every one gets the same answer as a plan run alone, and while they wait the
queue counts them (what the planner page shows)."""
from __future__ import annotations

import os
import threading

from engine.planner import capacity_plan, default_spec
from ui import budget


def _descendants() -> set:
    """Every process below this one (Linux /proc; empty elsewhere): a pool's workers
    may be a fork server's children."""
    parent = {}
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    parent[int(pid)] = int(f.read().split(")")[-1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    out, todo = set(), [os.getpid()]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out.update(kids)
        todo.extend(kids)
    return out


def test_ten_sessions_share_one_bounded_pool():
    spec = default_spec("gpu").with_(b_max=(8, 16), replicas=(6, 7, 8, 9), confirm=0)
    alone = capacity_plan(spec, executor="serial").table
    before = _descendants()
    seen, answers, queue = set(), [], []

    @budget.long_running
    def plan():
        queue.append(budget.long_queue())
        table = capacity_plan(spec, executor=budget.shared_pool()).table
        seen.update(_descendants() - before)
        return table

    threads = [threading.Thread(target=lambda: answers.append(plan())) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answers) == 10 and all(a.equals(alone) for a in answers)
    assert budget.shared_pool() is budget.shared_pool()
    workers = seen - {os.getpid()}
    # the pool's workers, its fork server and multiprocessing's resource tracker
    assert 1 <= len(workers) <= (os.cpu_count() or 1) + 2
    # every plan held a long slot: never more running at once than there are slots
    assert all(1 <= running <= budget.LONG_WORKERS for running, _ in queue)
    assert max(waiting for _, waiting in queue) <= 9
    assert budget.long_queue() == (0, 0)
