"""gpuolap.load_table: a table of a database directory from pandas, Arrow or Parquet."""

from __future__ import annotations

import os
from typing import Any, Iterable, Optional, Union

import pyarrow as pa

from . import _gpuolap
from ._gpuolap import InputError


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
    file (read by pyarrow: the string columns the file keeps as dictionary
    indices read as dictionaries, see ``_dictionary_columns``). The
    columns cross through the Arrow C stream interface, batch by batch, and
    become gpuolap's types: integers and bool as int64, floats as double,
    date32/date64 as date, strings (utf8, large_utf8 and the utf8_view that
    polars exports, also dictionary-encoded) as string;
    NULLs stay NULLs; a NaN or an infinity raises InputError naming its
    column and row, as the CSV loader takes only finite numbers (pandas'
    NaN arrives as NULL). Any other type (a timestamp, a binary_view) raises
    InputError naming the column: cast it first. ``sort_by`` sorts the rows by those
    columns and records the order, as ``gpuolap table load --sort-by``.

    The database is created when missing; a table of that name is replaced,
    atomically. Returns the rows and columns stored and the seconds spent
    reading the stream (``read_seconds``; ``read_cpu_seconds``: the
    process's CPU time meanwhile, every thread's, a Parquet file's decoding
    included), sorting and storing.
    """
    source, rows = _arrow_source(data)
    return _gpuolap.load_table(os.fspath(db_path), name, source.__arrow_c_stream__(), list(sort_by or []), rows)


def _arrow_source(data: Any):
    """``data`` as an object with ``__arrow_c_stream__`` and its rows where
    known (0 otherwise), which size the columns once."""
    if isinstance(data, (str, os.PathLike)):
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        path = os.fspath(data)
        metadata = pq.ParquetFile(path).metadata
        names = metadata.schema.to_arrow_schema().names
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:  # (pyarrow's scanner would refuse it with its own error)
            raise InputError(f"{path}: two columns named '{twice[0]}'")
        # Read as a stream: pyarrow's threads decode the next batches while
        # load_table codes the ones before (bench/python/parquet_load.py
        # measures both ways; the stream was the faster in 4 of 5 runs).
        options = ds.ParquetReadOptions(dictionary_columns=_dictionary_columns(metadata))
        scanner = ds.dataset(path, format=ds.ParquetFileFormat(read_options=options)).scanner(use_threads=True)
        return scanner.to_reader(), metadata.num_rows
    data = _arrow_data(data)
    return data, (data.num_rows if isinstance(data, pa.Table) else 0)


def _arrow_data(data: Any):
    """``data`` as an object with ``__arrow_c_stream__`` (a pyarrow Table where it can be: a Parquet file read whole)."""
    if isinstance(data, (str, os.PathLike)):
        import pyarrow.parquet as pq

        path = os.fspath(data)
        data = pq.read_table(path, read_dictionary=_dictionary_columns(pq.ParquetFile(path).metadata))
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


def _dictionary_columns(metadata) -> list:
    """The string columns of a Parquet file that are best read as dictionaries.

    A Parquet writer keeps a string column as dictionary indices until a row
    group's dictionary outgrows its page (1 MiB by default), then falls back
    to plain strings. Indices read as a dictionary are cheap: the strings
    are read once a row group and each row is an integer. Plain strings read
    as a dictionary are hashed into one by pyarrow, which costs more than
    reading them plainly and coding them in load_table
    (bench/python/parquet_load.py). Indices take at most 4 bytes a value
    and a plain string at least 4 (its length), so a column whose pages
    hold under 4 bytes a value, uncompressed, in every row group is read as
    a dictionary; other string columns are read plainly. A heuristic (the
    dictionary page and NULLs count too): it decides only how fast the
    column is read, never what is read.
    """
    chosen = []
    arrow_schema = metadata.schema.to_arrow_schema()
    for index in range(len(metadata.schema)):
        column = metadata.schema.column(index)
        if column.max_repetition_level != 0 or "." in column.path:
            continue  # only top-level columns
        fields = arrow_schema.get_all_field_indices(column.path)
        if len(fields) != 1:
            continue  # a name twice (load_table refuses the table) or none
        field = arrow_schema.field(fields[0])
        if not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            continue
        chunks = [metadata.row_group(g).column(index) for g in range(metadata.num_row_groups)]
        if all(c.has_dictionary_page and c.total_uncompressed_size < 4 * max(c.num_values, 1) for c in chunks):
            chosen.append(column.path)
    return chosen
