"""engine.sweep: one grid gives the identical table in-process, on local processes and on
a Dask LocalCluster (a real scheduler and two worker processes on loopback); the table's
order, chunking, progress, errors and grid checks."""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import functools
import itertools
import os
import sys

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from engine import sweep
from tests.sweep import funcs

# 3 × 3 × 2 × 3 = 54 points, stable and unstable loads, b_max unlimited (None) and finite
GRID = {"lam": [0.05, 0.4, 0.9], "alpha_ms": [0.5, 1.0, 2.0], "tau0_ms": [1.0, 5.0],
        "b_max": [1, 8, None]}
FIELDS = [f.name for f in dataclasses.fields(funcs.Priced)]


def expected_table(func, grid: dict) -> pd.DataFrame:
    """The table written out by hand: itertools.product in the grid's order, func called
    on each point, one column per parameter then per result field."""
    names = list(grid)
    points = list(itertools.product(*grid.values()))
    results = [func(**dict(zip(names, p))) for p in points]
    columns = {n: [p[i] for p in points] for i, n in enumerate(names)}
    columns.update({f: [getattr(r, f) for r in results] for f in FIELDS})
    return pd.DataFrame(columns)


@pytest.fixture(scope="module")
def serial_table():
    return sweep.run(funcs.priced, GRID, executor="serial")


def test_serial_table_is_the_product_in_grid_order(serial_table):
    """One row per point, the first key varying slowest (itertools.product), parameters
    then the dataclass's fields, the values func returns."""
    expected = expected_table(funcs.priced, GRID)
    assert_frame_equal(serial_table, expected)
    assert list(serial_table.columns) == list(GRID) + FIELDS
    assert len(serial_table) == 3 * 3 * 2 * 3
    assert list(serial_table["lam"][:18]) == [0.05] * 18           # first key slowest
    assert list(serial_table["b_max"][:3].fillna(-1)) == [1, 8, -1]   # last key fastest
    stable = serial_table["stable"]
    assert stable.dtype == bool and stable.any() and not stable.all()
    assert np.isinf(serial_table.loc[~stable, "mean_latency_ms"]).all()


def test_default_process_pool_gives_the_same_table(serial_table):
    """executor=None: one worker process per core, created and shut down by run; the
    table is identical (values and dtypes), and the points ran in other processes."""
    seen = []
    table = sweep.run(funcs.priced, GRID, progress=lambda d, t: seen.append((d, t)))
    assert_frame_equal(table, serial_table)
    assert seen[0] == (0, 54) and seen[-1] == (54, 54)
    pids = sweep.run(funcs.pid, {"x": range(8)}, chunksize=1)["value"]
    assert os.getpid() not in set(pids)


def test_callers_process_pool_gives_the_same_table_and_stays_open(serial_table):
    """A ProcessPoolExecutor(2) of the caller: the same table for several chunk sizes;
    run never shuts it down."""
    with cf.ProcessPoolExecutor(2) as pool:
        for chunksize in (1, 7, 54, 1000):
            table = sweep.run(funcs.priced, GRID, executor=pool, chunksize=chunksize)
            assert_frame_equal(table, serial_table)
        assert pool.submit(funcs.product, 6, 7).result() == 42     # still open


# the first point is slow: its chunk finishes last, so the table is in completion order
# only if it is assembled by index
SLOW_FIRST = [{"x": i, "cost_ms": 100.0 if i == 0 else 0.0} for i in range(8)]


def test_rows_follow_the_grid_not_completion_order():
    with cf.ProcessPoolExecutor(2) as pool:
        table = sweep.run(funcs.busy, SLOW_FIRST, executor=pool, chunksize=1)
    assert table["x"].tolist() == list(range(8))
    assert table["value"].tolist() == [i * i for i in range(8)]


def test_thread_pool_gives_the_same_table(serial_table):
    with cf.ThreadPoolExecutor(3) as pool:
        assert_frame_equal(sweep.run(funcs.priced, GRID, executor=pool, chunksize=5),
                           serial_table)


def test_one_point_runs_in_process():
    """executor=None with a grid of one point starts no pool."""
    assert sweep.run(funcs.pid, {"x": [1]})["value"].tolist() == [os.getpid()]
    assert sweep.run(funcs.pid, {"x": [1, 2]}, executor="serial")["value"].tolist() == \
        [os.getpid()] * 2


# ------------------------------------------------------------ Dask LocalCluster

def dask_or_skip():
    """``distributed`` imported, or skip with the reason (fail when CI is set: the
    project's checks must run the Dask tests)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        reason = "distributed not installed: pip install -r requirements-dask.txt"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def dask_cluster():
    """A LocalCluster of 2 worker processes (1 thread each) on loopback, started for this
    module and closed after it."""
    dask_or_skip()
    executor = sweep.dask_executor(n_workers=2, threads_per_worker=1)
    yield executor
    executor.shutdown()
    assert executor.client.status == "closed"


def test_dask_cluster_gives_the_same_table(dask_cluster, serial_table):
    """A real scheduler and two worker processes: the identical table, for the default
    chunk size (ceil(54 / (16 × 2)) = 2: 27 tasks) and for one point per task; progress in this
    process, monotone, ending at the total."""
    workers = dask_cluster.client.scheduler_info()["workers"]
    assert len(workers) == 2 and all(a.startswith("tcp://127.0.0.1:") for a in workers)
    assert all(w["nthreads"] == 1 for w in workers.values())
    for chunksize, calls in ((None, 27), (1, 54)):
        seen = []
        table = sweep.run(funcs.priced, GRID, executor=dask_cluster, chunksize=chunksize,
                          progress=lambda d, t: seen.append(d))
        assert_frame_equal(table, serial_table)
        assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == 54
        assert len(seen) == calls + 1
    pids = sweep.run(funcs.pid, {"x": range(8)}, executor=dask_cluster, chunksize=1)["value"]
    assert os.getpid() not in set(pids)
    slow_first = sweep.run(funcs.busy, SLOW_FIRST, executor=dask_cluster, chunksize=1)
    assert slow_first["value"].tolist() == [i * i for i in range(8)]


def test_dask_error_keeps_its_type(dask_cluster):
    with pytest.raises(funcs.SweepFailure, match="lam=0.4"):
        sweep.run(functools.partial(funcs.priced, fail_at=0.4), GRID, executor=dask_cluster)


# ------------------------------------------------------------ grids

def test_list_of_dicts_keeps_its_order():
    """A list of dicts: rows in list order, columns in the first dict's key order (a later
    dict may list the same keys in another order)."""
    grid = [{"x": 3, "y": 1}, {"y": 2, "x": 1}, {"x": 2, "y": 0}]
    table = sweep.run(funcs.as_dict, grid, executor="serial")
    expected = pd.DataFrame({"x": [3, 1, 2], "y": [1, 2, 0], "total": [4, 3, 2],
                             "label": ["3/1", "1/2", "2/0"]})
    assert_frame_equal(table, expected)


def test_scalar_result_is_column_value():
    table = sweep.run(funcs.product, {"x": [1, 2], "y": np.array([10, 20, 30])},
                      executor="serial")
    assert list(table.columns) == ["x", "y", "value"]
    assert table["value"].tolist() == [10, 20, 30, 20, 40, 60]


@pytest.mark.parametrize("chunksize", [1, 2, 5, 6, 100])
def test_chunk_size_changes_nothing_but_progress(chunksize):
    """Any chunk size gives the same table; progress: (0, total), then once per chunk,
    monotone, ending at the total."""
    grid = {"x": range(6), "y": [0.5, 1.5]}
    seen = []
    table = sweep.run(funcs.as_dict, grid, executor="serial", chunksize=chunksize,
                      progress=lambda d, t: seen.append((d, t)))
    assert_frame_equal(table, sweep.run(funcs.as_dict, grid, executor="serial"))
    chunks = -(-12 // chunksize)
    assert len(seen) == chunks + 1 and seen[0] == (0, 12) and seen[-1] == (12, 12)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_empty_grid_gives_an_empty_table_with_the_parameter_columns():
    seen = []
    table = sweep.run(funcs.product, {"x": [], "y": [1, 2]}, progress=lambda d, t:
                      seen.append((d, t)))
    assert list(table.columns) == ["x", "y"] and len(table) == 0 and seen == [(0, 0)]
    assert len(sweep.run(funcs.product, [], executor="serial")) == 0


def test_errors_keep_their_type_and_message():
    """func's exception reaches the caller as raised, from the loop and from a pool."""
    failing = functools.partial(funcs.priced, fail_at=0.9)
    with pytest.raises(funcs.SweepFailure, match="no configuration at lam=0.9"):
        sweep.run(failing, GRID, executor="serial")
    with cf.ProcessPoolExecutor(2) as pool:
        with pytest.raises(funcs.SweepFailure, match="no configuration at lam=0.9"):
            sweep.run(failing, GRID, executor=pool, chunksize=4)
    with pytest.raises(ZeroDivisionError):
        sweep.run(lambda x: 1 / x, {"x": [1, 0]}, executor="serial")


BAD_GRIDS = [
    ({}, "grid"),                                   # no parameter
    ([{"x": 1}, {"y": 2}], "grid"),                 # different keys
    ([{"x": 1}, {"x": 1, "y": 2}], "grid"),
    ([{"x": 1}, 3], "grid"),                        # not a dict
    ([{}], "grid"),
    ({1: [1, 2]}, "grid"),                          # not a name
    ("x=1", "grid"),
    (42, "grid"),
    (None, "grid"),
    ({"x": 3}, "'x'"),                              # values not a sequence
    ({"x": [1], "y": "abc"}, "'y'"),
    ({"x": {1, 2}}, "'x'"),
    ({"x": np.array(2.0)}, "'x'"),
]


@pytest.mark.parametrize("grid, name", BAD_GRIDS, ids=[repr(g) for g, _ in BAD_GRIDS])
def test_bad_grid_is_a_value_error_naming_it(grid, name):
    with pytest.raises(ValueError, match="grid") as err:
        sweep.run(funcs.product, grid, executor="serial")
    assert name in str(err.value)


def test_bad_arguments_are_value_errors_naming_them():
    grid = {"x": [1, 2], "y": [3]}
    for kwargs, name in (({"chunksize": 0}, "chunksize"), ({"chunksize": 1.5}, "chunksize"),
                         ({"chunksize": True}, "chunksize"),
                         ({"chunksize": "2"}, "chunksize"), ({"executor": "dask"}, "executor"),
                         ({"executor": 2}, "executor"), ({"progress": "bar"}, "progress")):
        with pytest.raises(ValueError, match=name):
            sweep.run(funcs.product, grid, **kwargs)
    with pytest.raises(ValueError, match="func"):
        sweep.run("product", grid)
    with pytest.raises(ValueError, match="'x'.*grid parameter"):
        sweep.run(funcs.clashing, grid, executor="serial")


def test_unpicklable_func_needs_serial():
    """A lambda cannot reach worker processes: a ValueError naming func, before any pool
    starts; in-process it runs."""
    with pytest.raises(ValueError, match="func must be picklable"):
        sweep.run(lambda x: x, {"x": [1, 2]})
    assert sweep.run(lambda x: x, {"x": [1, 2]}, executor="serial")["value"].tolist() == [1, 2]


def test_dask_executor_without_distributed_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"pip install -r requirements-dask\.txt"):
        sweep.dask_executor()
