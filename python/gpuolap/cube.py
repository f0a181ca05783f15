"""gpuolap.Cube: a cube store opened read-write, as `gpuolap shell` opens it."""

from __future__ import annotations

import numbers
import os
import warnings
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence, Union

import pyarrow as pa

from . import _gpuolap
from ._arrow import to_table
from ._gpuolap import InputError

if TYPE_CHECKING:
    import pandas

#: A cell path: one element name per dimension, as a list or as one string with commas.
Path = Union[str, Sequence[str]]
#: The elements of one dimension of an area: a list of names, or "*" for every element.
Elements = Union[str, Sequence[str]]


def _path(path: Path) -> Union[str, list[str]]:
    return path if isinstance(path, str) else list(path)


def _row(row: Any, mode: str, number: int) -> tuple:
    """A row of Cube.write as (path, value): a (path, value) pair, or with mode delete a path alone.

    Element names are strings, so a pair is told from a path of two names by its second item.
    """
    if isinstance(row, (tuple, list)) and len(row) == 2 and (row[1] is None or isinstance(row[1], numbers.Real)):
        path, value = row
        if isinstance(value, bool):
            raise InputError(f"Cube.write: cell {number}: the value must be a number, not {value!r}")
        return _path(path), None if value is None else float(value)
    if mode == "delete" and (isinstance(row, str) or isinstance(row, (tuple, list))):
        return _path(row), None
    raise InputError(f"Cube.write: cell {number}: expected a (path, value) pair, not {row!r}")


class Cube:
    """A cube store directory opened read-write.

    Opening loads the snapshot and replays the write-ahead log, and holds the
    store's lock until :meth:`close` (or the end of a ``with`` block):
    meanwhile a server, a shell or a second Cube refuses to open the store
    and ``gpuolap write`` waits; ``gpuolap query`` still reads it. Reads see
    every write acknowledged before them; writes are durable when they return.

    ``engine`` answers area queries that name none: ``auto`` (the default),
    ``cpu-serial``, ``cpu-parallel`` or ``gpu`` (where :func:`gpuolap.gpu_status`
    lists a device; elsewhere ``gpu`` raises InputError saying why).
    """

    def __init__(self, path: Union[str, os.PathLike], engine: str = "auto") -> None:
        self._cube = _gpuolap.Cube(os.fspath(path), engine)
        if self._cube.recovery_problem:
            warnings.warn(f"gpuolap: {self._cube.recovery_problem}", RuntimeWarning, stacklevel=2)

    def __enter__(self) -> "Cube":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.filled_cells} filled cells"
        return f"gpuolap.Cube({self.path!r}, engine={self.engine!r}; {state})"

    @property
    def path(self) -> str:
        """The store's directory."""
        return self._cube.path

    @property
    def engine(self) -> str:
        """The engine of area queries that name none."""
        return self._cube.engine

    @property
    def schema(self) -> dict:
        """The schema as plain data.

        ``{"name": str, "measures": [str], "dimensions": [{"name": str,
        "elements": [{"name": str, "type": "base" | "consolidated",
        "children": [(name, weight)]}]}]}``, elements in schema order.
        """
        return self._cube.schema

    @property
    def filled_cells(self) -> int:
        """Filled base cells now."""
        return self._cube.filled_cells

    @property
    def closed(self) -> bool:
        """Whether the cube was closed."""
        return self._cube.closed

    def area(
        self,
        measure: Optional[str],
        area: Mapping[str, Elements],
        aggregate: str = "sum",
        engine: str = "auto",
        max_cells: int = 1_000_000,
    ) -> pa.Table:
        """Answers an area query as a pyarrow Table.

        ``area`` names every dimension: a list of element names or ``"*"``
        (every element, in schema order). The target cells are the cartesian
        product of the lists. The table has one string column per dimension
        and one value column named like ``sum(Revenue)`` (float64; uint64 for
        ``count``), one row per non-empty target cell, in area order (the
        first dimension varies slowest) — the rows of ``gpuolap query``.

        ``measure`` None is the first measure; ``aggregate`` is sum, count,
        avg, min or max; ``engine`` ``auto`` uses the cube's engine.
        ``max_cells`` refuses (InputError) an area of more target cells;
        0 sets no limit.
        """
        lists = {dim: (v if isinstance(v, str) else list(v)) for dim, v in area.items()}
        chosen = "" if engine in ("auto", "") else engine
        return to_table(self._cube.area(measure or "", lists, aggregate, chosen, max_cells))

    def area_df(
        self,
        measure: Optional[str],
        area: Mapping[str, Elements],
        aggregate: str = "sum",
        engine: str = "auto",
        max_cells: int = 1_000_000,
    ) -> "pandas.DataFrame":
        """:meth:`area` as a pandas DataFrame (pyarrow's ``to_pandas``)."""
        return self.area(measure, area, aggregate, engine, max_cells).to_pandas()

    def value(self, path: Path, measure: Optional[str] = None, aggregate: str = "sum") -> Union[float, int, None]:
        """One cell's value: a base cell's, or a consolidated cell's aggregate.

        ``path`` names one element per dimension. Returns None when the cell
        is empty; an int for ``count``.
        """
        return self._cube.value(_path(path), measure or "", aggregate)

    def write(
        self,
        rows: Iterable[Union[Path, tuple]],
        mode: str = "set",
        measure: Optional[str] = None,
        splash: str = "proportional",
    ) -> dict:
        """Writes cells, all or nothing, durably.

        ``rows`` are ``(path, value)`` pairs; with ``mode="delete"`` a row may
        be just a path. ``mode`` is ``set`` (None clears the measure of a base
        cell), ``add`` or ``delete``. A consolidated cell is written by
        splashing onto the base cells under it: ``splash`` is
        ``proportional``, ``add``, ``set`` or ``none`` (refuse). Later rows
        see the effect of earlier ones. Returns ``{"sequence": the log
        record's number, "cells_written": base cells written}``.
        """
        paths: list = []
        values: list = []
        for number, row in enumerate(rows, 1):
            path, value = _row(row, mode, number)
            paths.append(path)
            values.append(value)
        return self._cube.write(paths, values, mode, measure or "", splash)

    def save(self) -> None:
        """Writes a snapshot of the store and truncates its log."""
        self._cube.save()

    def close(self) -> None:
        """Releases the store and its lock; later calls raise InputError."""
        self._cube.close()

