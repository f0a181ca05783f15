"""gpuolap.sql over a sales-flat database, compared with `gpuolap sql`'s CSV."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest

import gpuolap
from helpers import read_csv

ROLLUP = (
    "SELECT year, product_group, count(*) AS n, sum(amount) AS total, "
    "CASE WHEN product_group % 2 = 0 THEN 'even' END AS parity "
    "FROM sales WHERE year >= 2005 GROUP BY ROLLUP (year, product_group) ORDER BY year, product_group"
)


def cli_text(value) -> str:
    """A value as `gpuolap sql --format csv` writes it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "t" if value else "f"
    return str(value)


@pytest.mark.parametrize("engine", ["cpu-parallel", "cpu-serial"])
def test_rollup_matches_the_cli(sales_db, run_cli, engine):
    header, rows = read_csv(run_cli("sql", "--db", str(sales_db), "--engine", engine, ROLLUP))
    table = gpuolap.sql(sales_db, ROLLUP, engine=engine)
    assert table.column_names == header
    assert table.num_rows == len(rows) > 10
    assert [f.type for f in table.schema] == [pa.int64(), pa.int64(), pa.int64(), pa.float64(), pa.string()]
    # ROLLUP's total rows and the CASE without ELSE hold NULLs.
    assert table.column("year").null_count == 1
    assert table.column("parity").null_count > 0
    for mine, theirs in zip(table.to_pylist(), rows):
        for name, text in zip(header, theirs):
            if name == "total":
                # cpu-parallel adds in an order of its threads' choosing: the last bits may differ between runs.
                expected = float(text)
                assert mine[name] == (expected if engine == "cpu-serial" else pytest.approx(expected, rel=1e-12))
            else:
                assert cli_text(mine[name]) == text, (name, mine, theirs)


def test_types_dates_booleans_and_nulls(sales_db, run_cli):
    query = "SELECT DATE '2024-03-01' + 3 AS d, year > 2005 AS recent, NULL AS nothing, 'a,\"b' AS s FROM sales LIMIT 2"
    table = gpuolap.sql(sales_db, query)
    assert table.schema.field("d").type == pa.date32()
    assert table.schema.field("recent").type == pa.bool_()
    assert table.schema.field("nothing").type == pa.null()
    assert table.column("d").to_pylist() == [datetime.date(2024, 3, 4)] * 2
    assert table.column("nothing").to_pylist() == [None, None]
    header, rows = read_csv(run_cli("sql", "--db", str(sales_db), query))
    assert rows == [[cli_text(v) for v in r.values()] for r in table.to_pylist()]


def test_bad_sql_is_an_input_error(sales_db):
    with pytest.raises(gpuolap.InputError, match="no_such_column"):
        gpuolap.sql(sales_db, "SELECT no_such_column FROM sales")
    with pytest.raises(gpuolap.InputError, match="cpu-serial"):
        gpuolap.sql(sales_db, "SELECT 1", engine="quantum")


def test_an_empty_result(sales_db):
    table = gpuolap.sql(sales_db, "SELECT product, amount FROM sales WHERE year < 0")
    assert table.num_rows == 0 and table.column_names == ["product", "amount"]


def test_arrow_memory_outlives_what_it_came_from(sales_db):
    query = "SELECT product, CASE WHEN amount > 100 THEN 'big' END AS size FROM sales LIMIT 100"
    table = gpuolap.sql(sales_db, query)
    expected = table.column("size").to_pylist()
    column = table.column("size")
    del table  # the column keeps the exported buffers until it goes too
    assert column.to_pylist() == expected
    # A batch never imported into pyarrow is released by the extension.
    for _ in range(10):
        batch = gpuolap._gpuolap.sql(str(sales_db), query, "cpu-serial", 1000)
        assert batch.array_address and batch.schema_address
        del batch
