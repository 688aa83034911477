"""Parameter sweeps: one function evaluated over a grid of points, in-process, on local
processes or on a Dask cluster, gathered into one table.

``run(func, grid)`` calls ``func(**point)`` for every point of ``grid`` and returns a
pandas DataFrame with one row per point, in grid order: the point's parameters first (in
the grid's key order), then ``func``'s result fields.  A ``grid`` is a dict of parameter
name -> values (their Cartesian product, the first key varying slowest, as
``itertools.product``) or a list of dicts with the same keys.

Order.  Points are sent in chunks (``chunksize`` points per task) to any
``concurrent.futures.Executor``; each chunk's results are stored at the chunk's own
point indices and the table is built from the points in grid order, never in the order
the chunks finish.  The same grid and ``func`` therefore give the same table (values
and dtypes) in-process, on a process pool and on a Dask cluster.  ``func`` must be
deterministic for that: randomness derived from the point's own parameters (a seed
column, or a seed computed from them), never from a shared generator.

Other processes.  A process pool or Dask pickles ``func``: a module-level function, or
``functools.partial`` of one holding the fixed arguments.  Lambdas and functions defined
inside functions run only with ``executor="serial"`` (or a thread pool).

An existing Dask cluster::

    dask scheduler                          # on one machine: listens on tcp://host:8786
    dask worker tcp://host:8786             # on each worker machine

    from engine import sweep
    executor = sweep.dask_executor("tcp://host:8786")
    table = sweep.run(func, grid, executor=executor)
    executor.shutdown()

The workers unpickle ``func`` by importing its module, so each worker needs this project
importable: the same code (on its ``PYTHONPATH`` or as its working directory) and the
same requirements (``requirements.txt`` and ``requirements-dask.txt``).  Dask is
optional and imported only by ``dask_executor``.
"""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import functools
import itertools
import math
import multiprocessing
import os
import pickle
import sys
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

SERIAL = "serial"
MAX_DEFAULT_CHUNK = 2000     # points per task at most when chunksize is not given: the
                             # progress bar moves at least every ~2,000 points
CHUNKS_PER_WORKER = 16       # default: ~16 chunks per worker, so a slow chunk is not last alone
                             # (a plan's chunks differ ~1.5x in cost; benchmarks/bench_planner.py)


def run(func: Callable, grid, *, executor=None, chunksize: int | None = None,
        progress: Callable[[int, int], object] | None = None) -> pd.DataFrame:
    """``func(**point)`` for every point of ``grid``: a DataFrame, one row per point in
    grid order, the point's parameters as columns (in the grid's key order) followed by
    the result's fields.

    ``func`` returns a dataclass instance (its fields become columns), a dict (its keys),
    or anything else (one column ``"value"``; a 0-d numpy array becomes its scalar).  A
    result field named like a parameter is a ``ValueError``.  ``grid``: a dict of
    parameter name -> values (their Cartesian product, first key slowest) or a list of
    dicts with the same keys; an empty grid gives an empty table with the parameter
    columns.  ``executor``: ``None`` (a process pool of ``os.cpu_count()`` workers,
    created and shut down here; in-process for a grid of one point), ``"serial"`` (an
    in-process loop) or any ``concurrent.futures.Executor`` (never shut down here, e.g.
    ``dask_executor()``).  ``chunksize``: points per task; default ceil(points / (16 ×
    workers)), at most 2,000.  ``progress(done_points, total_points)`` is called in the
    calling process with (0, total) first and after each chunk (monotone, ends at total).
    An exception raised by ``func`` propagates with its own type and message.

    >>> run(pow, {"base": [2, 3], "exp": [1, 2]}, executor="serial")
       base  exp  value
    0     2    1      2
    1     2    2      4
    2     3    1      3
    3     3    2      9
    """
    chunksize, serial = _checked(func, executor, chunksize, progress)
    names, points = _grid_points(grid)
    total = len(points)
    if progress is not None:
        progress(0, total)
    if total == 0:
        return pd.DataFrame({name: pd.Series([], dtype=object) for name in names})
    serial = serial or executor is None and total == 1
    workers = 1 if serial else _worker_count(executor)
    size = chunksize or min(MAX_DEFAULT_CHUNK, math.ceil(total / (CHUNKS_PER_WORKER * workers)))
    chunks = [(start, points[start:start + size]) for start in range(0, total, size)]
    rows: list = [None] * total
    if serial:
        for start, chunk in chunks:
            rows[start:start + len(chunk)] = _evaluate_chunk(func, chunk)
            if progress is not None:
                progress(start + len(chunk), total)
    elif executor is None:
        _check_picklable(func)
        pool = cf.ProcessPoolExecutor(max_workers=min(workers, len(chunks)),
                                      mp_context=_pool_context(func))
        try:
            _gather(pool, func, chunks, rows, total, progress)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    else:
        if isinstance(executor, cf.ProcessPoolExecutor):
            _check_picklable(func)
        _gather(executor, func, chunks, rows, total, progress)
    return _table(names, points, rows)


def _checked(func, executor, chunksize, progress) -> tuple[int | None, bool]:
    """(chunksize as an int or None, whether to run in-process); ValueError naming the
    bad argument."""
    if not callable(func):
        raise ValueError(f"func must be callable, got {type(func).__name__}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be callable (done, total) or None, "
                         f"got {type(progress).__name__}")
    if chunksize is not None:
        if isinstance(chunksize, (bool, np.bool_)) \
                or not isinstance(chunksize, (int, np.integer)) or chunksize < 1:
            raise ValueError(f"chunksize must be a whole number >= 1 or None, got {chunksize!r}")
        chunksize = int(chunksize)
    serial = isinstance(executor, str) and executor == SERIAL
    if not (executor is None or serial or isinstance(executor, cf.Executor)):
        raise ValueError(f"executor must be None, {SERIAL!r} or a concurrent.futures.Executor, "
                         f"got {executor!r}")
    return chunksize, serial


def _grid_points(grid) -> tuple[list, list]:
    """(parameter names, list of point dicts in grid order); ValueError naming ``grid``
    (or the parameter whose values are not a sequence)."""
    if isinstance(grid, Mapping):
        if not grid:
            raise ValueError("grid must name at least one parameter, got an empty dict")
        names = list(grid)
        _check_names(names)
        axes = []
        for name, values in grid.items():
            if isinstance(values, (str, bytes, Mapping, set, frozenset)) \
                    or not isinstance(values, Iterable) \
                    or isinstance(values, np.ndarray) and values.ndim == 0:
                raise ValueError(f"grid parameter {name!r} must be a sequence of values "
                                 f"(list, tuple, range or array), got {type(values).__name__}")
            axes.append(list(values))
        return names, [dict(zip(names, combo)) for combo in itertools.product(*axes)]
    if isinstance(grid, (list, tuple)):
        if not grid:
            return [], []
        if not all(isinstance(point, Mapping) for point in grid):
            bad = next(i for i, p in enumerate(grid) if not isinstance(p, Mapping))
            raise ValueError(f"grid as a list must hold dicts (parameter name -> value); "
                             f"item {bad} is a {type(grid[bad]).__name__}")
        names = list(grid[0])
        if not names:
            raise ValueError("grid's points must name at least one parameter, got an empty dict")
        _check_names(names)
        for i, point in enumerate(grid):
            if set(point) != set(names):
                raise ValueError(f"grid's points must all have the same keys: point 0 has "
                                 f"{sorted(names)}, point {i} has {sorted(map(str, point))}")
        return names, [{name: point[name] for name in names} for point in grid]
    raise ValueError(f"grid must be a dict of parameter name -> values or a list of dicts, "
                     f"got {type(grid).__name__}")


def _check_names(names: list) -> None:
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise ValueError(f"grid's parameter names must be strings (func is called as "
                         f"func(**point)), got {bad[0]!r}")


def _check_picklable(func) -> None:
    """A process pool sends ``func`` by pickling it: a clear error before any worker starts."""
    try:
        pickle.dumps(func)
    except Exception as err:
        raise ValueError(f"func must be picklable to run in other processes (a module-level "
                         f"function or functools.partial of one), got {func!r} ({err}); "
                         f"executor='serial' runs it in this process") from err


def _pool_context(func):
    """The start method of the default pool's workers.

    forkserver, not fork: the calling process may run threads (Streamlit's server, BLAS
    or numba thread pools), and forking a threaded process can copy into the child a lock
    another thread holds, which then never opens.  The fork server is a separate
    single-threaded process that forks each worker.  It is asked to import this module
    and ``func``'s module before it starts (once per calling process: the server lives
    until the caller exits), so each run's workers begin with numpy, pandas and the engine
    imported (~10 ms each) instead of importing them (~1 s each on a 2-core machine).
    spawn (a fresh interpreter per worker) where the platform has no fork server.  Either
    way workers get func by unpickling it, the same under pytest and under Streamlit.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    target = func.func if isinstance(func, functools.partial) else func
    modules = [__name__, getattr(target, "__module__", None)]
    context.set_forkserver_preload([m for m in dict.fromkeys(modules)
                                    if isinstance(m, str) and m in sys.modules
                                    and not m.startswith(("__main__", "__mp_main__"))])
    return context


def _worker_count(executor) -> int:
    """Workers of ``executor``: the stdlib pools' and the Dask executor's ``_max_workers``;
    one per core for the default pool or an executor that does not say."""
    count = getattr(executor, "_max_workers", None)
    return max(1, int(count) if isinstance(count, (int, np.integer)) else os.cpu_count() or 1)


def _evaluate_chunk(func, points: list) -> list:
    """``func(**point)`` for each point, as field dicts (runs in a worker: module-level so
    it pickles)."""
    return [_fields(func(**point)) for point in points]


def _fields(result) -> dict:
    """A result as a dict of column -> value: a dataclass's fields, a dict's keys, or
    ``{"value": result}`` (a 0-d array as its scalar)."""
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    if isinstance(result, Mapping):
        return dict(result)
    if isinstance(result, np.ndarray) and result.ndim == 0:
        return {"value": result[()]}
    return {"value": result}


def _gather(executor, func, chunks: list, rows: list, total: int, progress) -> None:
    """Submit every chunk, store each one's rows at its own indices as it finishes."""
    futures = {executor.submit(_evaluate_chunk, func, chunk): (start, len(chunk))
               for start, chunk in chunks}
    done = 0
    try:
        for future in cf.as_completed(futures):
            start, count = futures[future]
            rows[start:start + count] = future.result()   # func's exception, as raised
            done += count
            if progress is not None:
                progress(done, total)
    except BaseException:
        for future in futures:
            future.cancel()
        raise


def _table(names: list, points: list, rows: list) -> pd.DataFrame:
    """Parameter columns then result columns (first appearance, in grid order)."""
    fields = list(dict.fromkeys(key for row in rows for key in row))
    clash = [f for f in fields if f in names]
    if clash:
        raise ValueError(f"func's result field {clash[0]!r} has the name of a grid parameter; "
                         f"rename the field or the parameter (grid parameters: {names})")
    missing = object()
    columns = {name: [point[name] for point in points] for name in names}
    for field in fields:
        values = [row.get(field, missing) for row in rows]
        columns[field] = [None if v is missing else v for v in values]
    return pd.DataFrame(columns)


class _DaskExecutor(cf.Executor):
    """A Dask ``Client.get_executor()`` whose ``shutdown()`` also closes the client and the
    local cluster ``dask_executor`` created (``client``: the Dask client)."""

    def __init__(self, client, cluster=None):
        self.client = client
        self._cluster = cluster
        self._executor = client.get_executor(pure=False)   # each chunk runs, no key hashing
        self._closed = False

    @property
    def _max_workers(self) -> int:
        """Worker threads connected now (read by ``run`` for its default chunk size)."""
        return max(1, sum(self.client.nthreads().values()))

    def submit(self, fn, /, *args, **kwargs):
        return self._executor.submit(fn, *args, **kwargs)

    def map(self, fn, *iterables, timeout=None, chunksize=1):
        return self._executor.map(fn, *iterables, timeout=timeout)

    def shutdown(self, wait=True, *, cancel_futures=False):
        if self._closed:
            return
        self._closed = True
        self._executor.shutdown(wait=wait and not cancel_futures)
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def dask_executor(address: str | None = None, **cluster_options) -> cf.Executor:
    """A ``concurrent.futures.Executor`` running tasks on a Dask distributed cluster (for
    ``run(..., executor=...)``).

    ``address``: a scheduler's address (``"tcp://host:8786"``: ``dask scheduler`` there,
    ``dask worker tcp://host:8786`` on each worker machine, each with this project
    importable).  ``None``: a ``LocalCluster`` on this machine: worker processes
    (``n_workers`` = ``os.cpu_count()``, ``threads_per_worker=1``) on loopback
    (``host="127.0.0.1"``), no dashboard; ``cluster_options`` override these and pass on
    to ``distributed.LocalCluster`` (only without ``address``; ``processes=False``: worker
    threads in this process, talking in memory).

    Returns ``distributed.Client(...).get_executor()`` wrapped so that ``shutdown()`` (or
    leaving a ``with`` block) also closes the client and the local cluster it started (a
    remote cluster keeps running); ``.client`` is the Dask client.  Dask is optional:
    ``ImportError`` saying ``pip install -r requirements-dask.txt`` when it is missing.
    """
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise ValueError(f"address must be a scheduler address such as 'tcp://host:8786' "
                         f"or None (a local cluster), got {address!r}")
    if address is not None and cluster_options:
        raise ValueError(f"cluster options {sorted(cluster_options)} apply to a local cluster "
                         f"only (address=None); the cluster at address {address!r} has its own")
    try:
        import distributed
    except ImportError as err:
        raise ImportError("dask_executor needs Dask's distributed scheduler, an optional "
                          "dependency: pip install -r requirements-dask.txt") from err
    if address is not None:
        return _DaskExecutor(distributed.Client(address))
    options = dict(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True,
                   dashboard_address=None)
    options.update(cluster_options)
    if options["processes"]:          # in-process workers talk over inproc://, no host
        options.setdefault("host", "127.0.0.1")
    cluster = distributed.LocalCluster(**options)
    try:
        client = distributed.Client(cluster)
    except BaseException:
        cluster.close()
        raise
    return _DaskExecutor(client, cluster)
