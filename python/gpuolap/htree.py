"""gpuolap.HTree: an H-tree partial cube kept durable in a directory."""

from __future__ import annotations

import csv
import datetime
import io
import os
from typing import Any, Iterable, Optional, Union

import pyarrow as pa
import pyarrow.csv

from . import _gpuolap
from ._arrow import to_table
from .tables import _arrow_data, _arrow_source

PathLike = Union[str, os.PathLike]


class HTree:
    """An H-tree over a table's columns (the paper's partial cube): the popular
    path's cuboids aggregated along the tree, other group-bys answered online
    over its side links, batches appended durably. ``gpuolap htree build``,
    ``update`` and ``query`` do the same from the command line.

    Open one with ``HTree(path)`` or make one with ``HTree.build(...)``; the
    tree's lock is held until ``close()`` or the end of a ``with`` block.
    ``engine`` is ``auto`` (gpu where :func:`gpuolap.gpu_status` lists a
    device, else cpu-parallel), ``cpu-serial``, ``cpu-parallel`` or ``gpu``.
    """

    def __init__(self, path: PathLike, engine: str = "auto"):
        self._tree = _gpuolap.HTree(os.fspath(path), engine)

    @classmethod
    def build(
        cls,
        db_path: PathLike,
        table: str,
        measure: str,
        out: PathLike,
        order: Optional[Iterable[str]] = None,
        engine: str = "auto",
        replace: bool = False,
    ) -> "HTree":
        """Builds a tree over ``table`` of a database directory and stores it in ``out``.

        ``order`` is the popular path, root first (default: every column but
        the measure, by ascending distinct count); ``measure`` an int64 or
        double column. An existing tree in ``out`` is an InputError unless
        ``replace``. Returns the tree, opened.
        """
        _gpuolap.build_htree(os.fspath(db_path), table, measure, os.fspath(out), list(order or []), engine, replace)
        return cls(out, engine)

    @property
    def path(self) -> str:
        return self._tree.path

    @property
    def engine(self) -> str:
        return self._tree.engine

    @property
    def dimensions(self) -> list[str]:
        """The popular path, root to leaves."""
        return self._tree.dimensions

    @property
    def measure(self) -> str:
        return self._tree.measure

    @property
    def tuples(self) -> int:
        return self._tree.tuples

    @property
    def leaves(self) -> int:
        return self._tree.leaves

    @property
    def nodes(self) -> int:
        return self._tree.nodes

    def append(self, batch: Any) -> int:
        """Appends a batch: a pandas DataFrame, an Arrow table or anything
        ``load_table`` takes, with every dimension and the measure (new values
        join the dictionaries). Durable and visible when it returns; a batch
        that fails leaves the tree as it was. Returns its rows."""
        source, rows = _arrow_source(batch)
        return self._tree.append(source.__arrow_c_stream__(), rows)

    def query(self, queries: Any) -> pa.Table:
        """Answers a batch of queries, one a row: a DataFrame or Arrow table
        with a column per dimension (a value, ``"*"`` for any, None for NULL),
        or a query file's CSV text. Returns the queries' columns and count,
        sum, min, max, avg (NULL where nothing matches)."""
        if isinstance(queries, str):
            text = queries
            header = next(csv.reader(io.StringIO(text)), [])
            # Every field as written: the tree reads the values by its own types.
            options = pyarrow.csv.ConvertOptions(column_types={name: pa.string() for name in header},
                                                 strings_can_be_null=False)
            asked = pyarrow.csv.read_csv(io.BytesIO(text.encode()), convert_options=options)
        else:
            asked = _arrow_data(queries)
            if not isinstance(asked, pa.Table):
                asked = pa.table(asked)
            text = _query_csv(asked)
        answers = to_table(self._tree.query(text))
        for name in answers.column_names:
            asked = asked.append_column(name, answers.column(name))
        return asked

    def checkpoint(self) -> None:
        """Writes a new snapshot and empties the log."""
        self._tree.checkpoint()

    def close(self) -> None:
        self._tree.close()

    @property
    def closed(self) -> bool:
        return self._tree.closed

    def __enter__(self) -> "HTree":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return f"HTree({self.path!r}, closed)"
        return f"HTree({self.path!r}, {self.tuples} tuples over {', '.join(self.dimensions)}; measure {self.measure})"


def _query_csv(queries: pa.Table) -> str:
    """A query file's text: a field a value as the tree reads it, * as any, NULL as empty."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(queries.column_names)

    def field(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):  # stored as int64 0 and 1
            return str(int(value))
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, (datetime.date, datetime.datetime)):
            return value.isoformat()[:10]
        return str(value)

    for row in zip(*(column.to_pylist() for column in queries.columns)):
        writer.writerow([field(v) for v in row])
    return out.getvalue()
