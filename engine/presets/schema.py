"""What every preset loader shares: one TOML file read, its keys checked against the
preset's dataclass, each number checked against its domain (``engine.core.domains``:
the field's own where it has one, else ``PRESET_VALUE``, positive and finite), and a
folder of files read once per process.

Every check raises ``ValueError`` naming the file and the field (``where``: the file's
name, with ``[table]`` for a field of a sub-table).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path
import tomllib
import types
import typing

import numpy as np

from ..core.domains import PRESET_VALUE, Domain

PRESET_DIR = Path(__file__).resolve().parent.parent.parent / "presets"
IDENTITY = ("id", "name", "source")           # text fields every preset file starts with


def read_toml(path) -> tuple[dict, str]:
    """The table of the TOML file ``path`` and the file's name (the ``where`` of every
    message about it); ``ValueError`` naming the file if it is not valid TOML."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh), path.name
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path.name}: not valid TOML ({exc})") from None


def check_keys(data: dict, allowed, required, where: str) -> None:
    """No key of ``data`` outside ``allowed``, every one of ``required`` present."""
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r} (allowed: {', '.join(allowed)})")
    for key in required:
        if key not in data:
            raise ValueError(f"{where}: missing field {key!r}")


@functools.cache
def schema(cls) -> dict[str, tuple[type, bool]]:
    """The file schema of the preset dataclass ``cls``: each field's name → (its type, with
    ``X | None`` read as ``X``; whether a file must give it, i.e. it has no default)."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        if typing.get_origin(kind) in (typing.Union, types.UnionType):
            kind = next(a for a in typing.get_args(kind) if a is not type(None))
        out[f.name] = (kind, f.default is dataclasses.MISSING
                       and f.default_factory is dataclasses.MISSING)
    return out


def scalars(cls, data: dict, where: str, domains: dict | None = None, skip=()) -> dict:
    """The fields of ``cls`` (but ``skip``) that ``data`` gives, checked by their type in
    ``schema(cls)``: ``str`` a non-empty string, ``int`` a whole number, ``float`` a
    finite number, each number in ``domains[name]`` (``PRESET_VALUE`` when absent)."""
    domains = domains or {}
    out = {}
    for name, (kind, _) in schema(cls).items():
        if name in skip or name not in data:
            continue
        if kind is str:
            out[name] = text(data, name, where)
        elif kind in (int, float):
            out[name] = number(data, name, where, domains.get(name, PRESET_VALUE),
                               whole=kind is int)
    return out


def text(table: dict, key: str, where: str) -> str:
    """``table[key]`` if it is a string with more than blanks, else ``ValueError``."""
    value = table[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: field {key!r} must be a non-empty string")
    return value


def number(table: dict, key: str, where: str, domain: Domain = PRESET_VALUE, *,
           whole: bool = False):
    """``table[key]`` as a finite number in ``domain`` (``Domain.check``; an ``int`` when it
    must be whole: ``whole`` or an integer domain), else ``ValueError`` naming ``where``
    and the field."""
    val = table[key]
    name = f"{where}: field {key!r}"
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise ValueError(f"{name} must be a number, got {val!r}")
    try:
        finite = math.isfinite(val)
    except OverflowError:                            # an int beyond any float
        finite = False
    if not finite:
        raise ValueError(f"{name} must be finite, got {val!r}")
    if whole and not domain.integer:
        domain = dataclasses.replace(domain, integer=True)
    domain.check(val, name)
    return int(val) if domain.integer else float(val)


def _frozen(values) -> np.ndarray:
    """``values`` as a read-only float array (presets are shared: read once, never changed)."""
    arr = np.array(values, dtype=float)
    arr.flags.writeable = False
    return arr


def column(values, where: str) -> np.ndarray:
    """A column of a preset table: a list of at least 2 finite positive numbers, as a
    read-only float array; ``ValueError`` naming ``where`` otherwise."""
    if not isinstance(values, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{where}: must be a list of numbers")
    arr = _frozen(values)
    if arr.size < 2:
        raise ValueError(f"{where}: needs at least 2 rows, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{where}: values must be finite")
    if np.any(arr <= 0):
        raise ValueError(f"{where}: values must be positive, got {arr[arr <= 0][0]:g}")
    return arr


def number_list(values, where: str, *, low: float = 0.0) -> np.ndarray:
    """A non-empty list of finite numbers ≥ ``low``, as a read-only float array."""
    if not isinstance(values, list) or not values or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{where}: must be a non-empty list of numbers")
    arr = _frozen(values)
    bad = ~np.isfinite(arr) | (arr < low)
    if bad.any():
        raise ValueError(f"{where}: values must be finite and at least {low:g}, "
                         f"got {arr[bad][0]:g}")
    return arr


def whole_increasing(arr: np.ndarray, where: str) -> None:
    """``ValueError`` naming ``where`` unless ``arr`` holds whole numbers, strictly
    increasing."""
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{where}: must be whole numbers")
    if np.any(np.diff(arr) <= 0):
        raise ValueError(f"{where}: must be strictly increasing")


def read_columns(path, columns, required, length_key: str):
    """A preset of the form id/name/source + a ``[columns]`` table of equal-length
    columns of positive numbers (``columns`` allowed, ``required`` among them).

    Returns (the file's table, {column: array}, the file's name).
    """
    data, where = read_toml(path)
    check_keys(data, IDENTITY + ("columns",), IDENTITY + ("columns",), where)
    for key in IDENTITY:
        text(data, key, where)
    cols = data["columns"]
    if not isinstance(cols, dict):
        raise ValueError(f"{where}: field 'columns' must be a table")
    check_keys(cols, columns, required, f"{where} [columns]")
    arrays = {k: column(cols[k], f"{where} [columns].{k}") for k in columns if k in cols}
    n = arrays[length_key].size
    for key, arr in arrays.items():
        if arr.size != n:
            raise ValueError(f"{where} [columns].{key}: {arr.size} rows, {length_key} has {n}")
    return data, arrays, where


def load_folder(directory, loader) -> dict:
    """Every ``*.toml`` file of ``directory`` loaded by ``loader``, keyed by preset id (in
    file-name order), a new dict each call (the presets themselves are frozen).  The
    project's folders (under ``PRESET_DIR``) are read once per process; any other folder
    is parsed again only when its file names, sizes or modification times change."""
    folder = Path(directory)
    if folder.is_absolute() and folder.is_relative_to(PRESET_DIR) and ".." not in folder.parts:
        return dict(_project_folder(loader, folder))   # the project's own: read once
    folder = folder.resolve()
    files = tuple((p.name, s.st_size, s.st_mtime_ns)
                  for p in sorted(folder.glob("*.toml")) for s in (p.stat(),))
    return dict(_parsed_folder(loader, folder, files))


@functools.lru_cache(maxsize=64)
def _project_folder(loader, folder: Path) -> dict:
    """A folder of the project's presets (under ``PRESET_DIR``), listed and parsed once per
    process: what every ``PlanSpec`` and page asks for again costs no disk access."""
    files = tuple((p.name, 0, 0) for p in sorted(folder.glob("*.toml")))
    return _parsed_folder(loader, folder, files)


@functools.lru_cache(maxsize=64)
def _parsed_folder(loader, folder: Path, files: tuple) -> dict:
    presets = (loader(folder / name) for name, _, _ in files)
    return {preset.id: preset for preset in presets}
