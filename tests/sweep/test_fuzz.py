"""Fuzz tests of the sweep layer (engine.sweep): ``run`` over random small grids (a dict
of value lists or a list of dicts; values of mixed types, NaN and None included; any
chunk size) in-process gives the product in grid order with func's fields beside it and
progress ending at the total; a random bad grid is a ``ValueError`` naming ``grid``.
``dask_executor``: the missing-dependency message, its argument checks and one cheap
in-process cluster.  ``FUZZED`` maps each public name to its test
(tests/test_fuzz_contract.py).

Cost: a case is a grid of at most 4 × 4 × 4 points evaluated in-process (~1-3 ms with
the DataFrame), so 1,000 cases keep the file within ~10 s.
"""
import itertools
import sys

import pandas as pd
from pandas.testing import assert_frame_equal

from tests.fuzzing import *  # noqa: F401,F403 (settings, checks)
from engine import sweep          # after the star import: tests.fuzzing has its own ``sweep``
from tests.sweep import funcs

NAMES = st.sampled_from(["lam", "b_max", "alpha_ms", "seed"])
VALUES = st.one_of(st.integers(-10 ** 9, 10 ** 9), st.floats(), st.none(), st.booleans(),
                   st.text(max_size=3))
CHUNKS = st.one_of(st.none(), st.integers(1, 80))


@st.composite
def product_grids(draw):
    """A dict grid: 1-3 parameters, 0-4 values each, as a list or a tuple."""
    names = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
    return {n: draw(st.sampled_from([list, tuple]))(draw(st.lists(VALUES, max_size=4)))
            for n in names}


@st.composite
def list_grids(draw):
    """A list of 0-8 dicts with the same keys, each listing them in its own order."""
    names = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
    return [{n: draw(VALUES) for n in draw(st.permutations(names))}
            for _ in range(draw(st.integers(0, 8)))]


@st.composite
def bad_grids(draw):
    """A grid ``run`` must refuse: not a dict or list, no parameter, unequal keys, a
    non-dict point, a non-string name, a parameter's values not a sequence."""
    kind = draw(st.sampled_from(["type", "empty", "keys", "item", "name", "values"]))
    if kind == "type":
        return draw(st.one_of(VALUES, st.just(b"x"), st.sets(st.integers(), max_size=2)))
    if kind == "empty":
        return draw(st.sampled_from([{}, [{}], [{}, {}]]))
    if kind == "keys":
        good = draw(list_grids().filter(lambda g: len(g) > 0))
        point = dict(good[0])
        point.pop(next(iter(point))) if draw(st.booleans()) else point.update(extra=1)
        return good[:draw(st.integers(1, len(good)))] + [point]
    if kind == "item":
        good = draw(list_grids().filter(lambda g: len(g) > 0))
        return good + [draw(st.one_of(VALUES, st.lists(st.integers(), max_size=2)))]
    if kind == "name":
        good = draw(product_grids())
        return {**good, draw(st.one_of(st.integers(), st.none(), st.floats())): [1]}
    good = draw(product_grids())
    bad = draw(st.one_of(st.integers(), st.floats(), st.none(), st.text(max_size=3),
                         st.sets(st.integers(), max_size=2), st.just(np.array(1.0))))
    return {**good, draw(NAMES): bad}


def expected_table(grid) -> pd.DataFrame:
    """The table by hand: the product (or the list) in order, then summary's fields."""
    if isinstance(grid, dict):
        names = list(grid)
        points = [dict(zip(names, p)) for p in itertools.product(*grid.values())]
    else:
        names = list(grid[0]) if grid else []
        points = grid
    columns = {n: pd.Series([p[n] for p in points], dtype=None if points else object)
               for n in names}
    if points:
        results = [funcs.summary(**p) for p in points]
        columns["count"] = [r.count for r in results]
        columns["key"] = [r.key for r in results]
    return pd.DataFrame(columns)


@fuzz(1000)
@given(st.one_of(product_grids(), list_grids()), CHUNKS, bad_grids())
def test_run(grid, chunksize, bad):
    """The table is the grid's points in order with summary's fields; progress starts at
    0, is monotone and ends at the total; a bad grid is a ValueError naming grid."""
    seen = []
    table = sweep.run(funcs.summary, grid, executor="serial", chunksize=chunksize,
                      progress=lambda done, total: seen.append((done, total)))
    assert_frame_equal(table, expected_table(grid))
    total = len(table)
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert all(t == total for _, t in seen) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    tally(sweep.run)
    raises_naming("grid", sweep.run, funcs.summary, bad, executor="serial")


def test_dask_executor(monkeypatch):
    """Without distributed: an ImportError saying how to install it; a bad address or
    cluster options with an address: ValueError naming them; with it: an in-process
    LocalCluster gives the serial table and shutdown closes its client and cluster."""
    grid = {"lam": [0.1, 0.5], "alpha_ms": [1.0], "tau0_ms": [2.0], "b_max": [4, None]}
    for address in (3, "", "  ", b"tcp://x"):
        raises_naming("address", sweep.dask_executor, address)
    raises_naming("n_workers", sweep.dask_executor, "tcp://127.0.0.1:8786", n_workers=2)
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "distributed", None)
        with pytest.raises(ImportError, match=r"pip install -r requirements-dask\.txt"):
            sweep.dask_executor()
    tally(sweep.dask_executor)
    try:
        import distributed  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("distributed not installed: pip install -r requirements-dask.txt")
        pytest.skip("distributed not installed: pip install -r requirements-dask.txt")
    with sweep.dask_executor(n_workers=1, processes=False) as executor:
        table = sweep.run(funcs.priced, grid, executor=executor)
    assert executor.client.status == "closed"
    assert_frame_equal(table, sweep.run(funcs.priced, grid, executor="serial"))


FUZZED = {sweep: {"run": test_run, "dask_executor": test_dask_executor}}
