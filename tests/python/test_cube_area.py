"""Area queries through gpuolap.Cube, compared with `gpuolap query`'s CSV."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import gpuolap
from helpers import read_csv


def demo_queries(store):
    return sorted((store / "queries").glob("*.json"))


def test_schema_is_plain_data(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        schema = cube.schema
    assert [d["name"] for d in schema["dimensions"]] == ["Years", "Products", "Regions"]
    assert schema["measures"] == ["Revenue", "Units"]
    years = schema["dimensions"][0]["elements"]
    q1 = next(e for e in years if e["name"] == "2023 Q1")
    assert q1["type"] == "consolidated"
    assert [name for name, _ in q1["children"]] == ["2023-01", "2023-02", "2023-03"]
    assert years[0] == {"name": "2023-01", "type": "base", "children": []}


def test_every_demo_query_matches_the_cli(demo_store, run_cli):
    queries = demo_queries(demo_store)
    assert len(queries) == 5
    expected = {q.name: run_cli("query", "--cube", str(demo_store), "--query", str(q)) for q in queries}
    with gpuolap.Cube(demo_store) as cube:
        for q in queries:
            spec = json.loads(q.read_text())
            table = cube.area(spec["measure"], spec["area"], spec["aggregate"])
            header, rows = read_csv(expected[q.name])
            assert table.column_names == header, q.name
            assert table.num_rows == len(rows), q.name
            got = table.to_pylist()
            for mine, theirs in zip(got, rows):
                assert [mine[c] for c in header[:-1]] == theirs[:-1], q.name
                # The CLI prints the shortest text that reads back to the same double.
                assert mine[header[-1]] == (int(theirs[-1]) if spec["aggregate"] == "count" else float(theirs[-1])), q.name


def test_area_types_and_the_engines_agree(demo_store):
    area = {"Years": ["2023", "2024", "2025"], "Products": "*", "Regions": ["World"]}
    with gpuolap.Cube(demo_store) as cube:
        sums = cube.area("Revenue", area)
        counts = cube.area("Units", area, aggregate="count")
        serial = cube.area("Revenue", area, engine="cpu-serial")
        parallel = cube.area("Revenue", area, engine="cpu-parallel")
    assert sums.schema.field("Years").type == pa.string()
    assert sums.schema.field("sum(Revenue)").type == pa.float64()
    assert counts.schema.field("count(Units)").type == pa.uint64()
    assert serial.equals(sums) and parallel.equals(sums)


def test_area_df_is_pandas(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        df = cube.area_df("Revenue", {"Years": ["All Years"], "Products": ["Bikes", "Parts"], "Regions": ["World"]})
        table = cube.area("Revenue", {"Years": ["All Years"], "Products": ["Bikes", "Parts"], "Regions": ["World"]})
    assert list(df.columns) == ["Years", "Products", "Regions", "sum(Revenue)"]
    assert list(df["Products"]) == ["Bikes", "Parts"]
    assert df["sum(Revenue)"].tolist() == table.column("sum(Revenue)").to_pylist()


def test_the_area_limit(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        with pytest.raises(gpuolap.InputError, match="target cells"):
            cube.area("Revenue", {"Years": "*", "Products": "*", "Regions": "*"}, max_cells=10)
        assert cube.area("Revenue", {"Years": "*", "Products": "*", "Regions": "*"}, max_cells=0).num_rows > 10
