"""gpuolap.load_table: a table of a database directory from pandas, Arrow or Parquet."""

from __future__ import annotations

import os
from typing import Any, Iterable, Optional, Union

import pyarrow as pa

from . import _gpuolap


def load_table(
    db_path: Union[str, os.PathLike],
    name: str,
    data: Any,
    sort_by: Optional[Iterable[str]] = None,
) -> dict:
    """Stores ``data`` as table ``name`` of the database directory ``db_path``.

    ``data`` is a pandas DataFrame (its index left out), a pyarrow Table,
    RecordBatch or RecordBatchReader, anything else with
    ``__arrow_c_stream__`` (a DuckDB result, say), or the path of a Parquet
    file (its string columns read as dictionaries). The
    columns cross through the Arrow C stream interface, batch by batch, and
    become gpuolap's types: integers and bool as int64, floats as double,
    date32/date64 as date, strings (also dictionary-encoded) as string;
    NULLs stay NULLs; NaN and infinities are kept as they are (pandas' NaN
    arrives as NULL). Any other type (a timestamp, or the string_view that
    some producers export) raises InputError naming the column: cast it
    first. ``sort_by`` sorts the rows by those
    columns and records the order, as ``gpuolap table load --sort-by``.

    The database is created when missing; a table of that name is replaced,
    atomically. Returns the rows and columns stored and the seconds spent
    reading the stream, sorting and storing.
    """
    data = _arrow_data(data)
    rows = data.num_rows if isinstance(data, pa.Table) else 0
    return _gpuolap.load_table(os.fspath(db_path), name, data.__arrow_c_stream__(), list(sort_by or []), rows)


def _arrow_data(data: Any):
    """``data`` as an object with ``__arrow_c_stream__`` (a pyarrow Table where it can be)."""
    if isinstance(data, (str, os.PathLike)):
        import pyarrow.parquet as pq

        path = os.fspath(data)
        schema = pq.read_schema(path)
        strings = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        # Parquet keeps strings dictionary-encoded: read them so, and each
        # row group's strings are coded once, not row by row.
        data = pq.read_table(path, read_dictionary=strings)
    elif type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame":
        data = pa.Table.from_pandas(data, preserve_index=False)
    elif isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if not hasattr(data, "__arrow_c_stream__"):
        raise TypeError(
            f"load_table takes a pandas DataFrame, a pyarrow Table, RecordBatch or RecordBatchReader, an object "
            f"with __arrow_c_stream__, or a Parquet file's path; not {type(data).__name__}"
        )
    return data
