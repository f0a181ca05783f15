"""gpuolap.sql: a SELECT over a database directory of tables."""

from __future__ import annotations

import os
from typing import Union

import pyarrow as pa

from . import _gpuolap
from ._arrow import to_table


def sql(
    db_path: Union[str, os.PathLike],
    query: str,
    engine: str = "cpu-parallel",
    max_rows: int = 10_000_000,
) -> pa.Table:
    """Runs one SELECT (or EXPLAIN SELECT) over a database directory, as ``gpuolap sql`` does.

    Returns a pyarrow Table: text as string, bigint as int64, double
    precision as float64, date as date32, boolean as bool, NULLs as nulls.
    ``engine`` is ``cpu-parallel`` (all cores), ``cpu-serial`` (the
    oracle) or ``gpu`` (a GROUP BY, ROLLUP, CUBE or GROUPING SETS of one
    table's columns without WHERE, by the full-cube operator on the GPU); ``max_rows`` bounds the result, its groups and the rows sorted.
    Bad SQL and unknown names raise InputError naming line and column.
    """
    return to_table(_gpuolap.sql(os.fspath(db_path), query, engine, max_rows))
