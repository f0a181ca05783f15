"""Writes through gpuolap.Cube, read back by the module and by the command."""

from __future__ import annotations

import pytest

import gpuolap
from helpers import read_csv

CELL = ["2024-05", "City Bike", "Germany"]


def test_write_then_read(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        before = cube.value(["2024", "City Bike", "Germany"], "Revenue")
        old = cube.value(CELL, "Revenue") or 0.0
        answer = cube.write([(CELL, 1234.5)], measure="Revenue")
        assert answer["cells_written"] == 1 and answer["sequence"] > 0
        assert cube.value(CELL, "Revenue") == 1234.5
        assert cube.value(",".join(CELL), "Revenue") == 1234.5
        # The consolidated cell above it moved by the difference.
        assert cube.value(["2024", "City Bike", "Germany"], "Revenue") == pytest.approx((before or 0.0) - old + 1234.5)
        cube.write([(CELL, 0.5)], mode="add", measure="Revenue")
        assert cube.value(CELL, "Revenue") == 1235.0


def test_writes_are_durable_and_the_cli_sees_them(demo_store, run_cli, tmp_path):
    with gpuolap.Cube(demo_store) as cube:
        cube.write([(CELL, 42.0)], measure="Units")
    query = tmp_path / "q.json"
    query.write_text('{"measure": "Units", "area": {"Years": ["2024-05"], "Products": ["City Bike"], "Regions": ["Germany"]}}')
    header, rows = read_csv(run_cli("query", "--cube", str(demo_store), "--query", str(query)))
    assert header[-1] == "sum(Units)" and rows == [CELL + ["42"]]
    with gpuolap.Cube(demo_store) as cube:
        assert cube.value(CELL, "Units") == 42.0


def test_delete_leaves_an_empty_cell_and_an_empty_area(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        cube.write([(CELL, 7.0)], measure="Revenue")
        cube.write([CELL], mode="delete")
        assert cube.value(CELL, "Revenue") is None
        table = cube.area("Revenue", {"Years": [CELL[0]], "Products": [CELL[1]], "Regions": [CELL[2]]})
        assert table.num_rows == 0
        assert table.column_names == ["Years", "Products", "Regions", "sum(Revenue)"]
        assert table.to_pandas().empty


def test_rows_as_pairs_lists_or_bare_paths(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        other = ["2024-06", "City Bike", "Germany"]
        cube.write([[CELL, 3], (",".join(other), 4.0)], measure="Units")
        assert (cube.value(CELL, "Units"), cube.value(other, "Units")) == (3.0, 4.0)
        cube.write([(CELL, None)], measure="Units")  # mode set: None clears the measure
        assert cube.value(CELL, "Units") is None
        cube.write([",".join(other)], mode="delete")
        assert cube.value(other, "Units") is None
        with pytest.raises(gpuolap.InputError, match="cell 1: expected a \\(path, value\\) pair"):
            cube.write([CELL])
        with pytest.raises(gpuolap.InputError, match="mode add needs a value"):
            cube.write([(CELL, None)], mode="add")


def test_a_write_is_all_or_nothing(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        cube.write([(CELL, 1.0)], measure="Revenue")
        with pytest.raises(gpuolap.InputError, match="cell 2: .*Nowhere"):
            cube.write([(CELL, 2.0), (["2024-05", "City Bike", "Nowhere"], 3.0)], measure="Revenue")
        assert cube.value(CELL, "Revenue") == 1.0


def test_a_splash_onto_a_consolidated_cell(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        path = ["2024 Q2", "City Bike", "Germany"]
        answer = cube.write([(path, 900.0)], measure="Units", splash="set")
        assert answer["cells_written"] == 3  # the three months of the quarter
        assert cube.value(["2024-04", "City Bike", "Germany"], "Units") == 900.0
        with pytest.raises(gpuolap.InputError):
            cube.write([(path, 1.0)], measure="Units", splash="none")


def test_the_store_is_locked_while_open(demo_store):
    cube = gpuolap.Cube(demo_store)
    with pytest.raises(gpuolap.InputError, match="in use"):
        gpuolap.Cube(demo_store)
    cube.close()
    assert cube.closed
    with pytest.raises(gpuolap.InputError, match="closed"):
        cube.value(CELL)
    gpuolap.Cube(demo_store).close()


def test_queries_and_writes_from_several_threads(demo_store):
    from concurrent.futures import ThreadPoolExecutor

    area = {"Years": ["2024"], "Products": ["City Bike"], "Regions": ["Germany"]}
    with gpuolap.Cube(demo_store) as cube:
        cube.write([(CELL, 0.0)], measure="Units")
        base = cube.value(["2024", "City Bike", "Germany"], "Units")

        def add_one(_):
            return cube.write([(CELL, 1.0)], mode="add", measure="Units")["sequence"]

        def read(_):
            return cube.area("Units", area).num_rows

        with ThreadPoolExecutor(max_workers=4) as pool:
            writes = pool.map(add_one, range(40))
            reads = pool.map(read, range(40))
            sequences = list(writes)
            assert all(n == 1 for n in reads)
        assert len(set(sequences)) == 40  # each write its own log record
        assert cube.value(CELL, "Units") == 40.0
        assert cube.value(["2024", "City Bike", "Germany"], "Units") == base + 40.0
