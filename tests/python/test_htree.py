"""gpuolap.HTree: built, fed and queried from Python; every answer equals
pandas over the same rows, and the command reads the same tree."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

import gpuolap


@pytest.fixture
def htree_db(tmp_path, run_cli):
    db = tmp_path / "db"
    run_cli("generate", "--kind", "htree", "--db", str(db), "--shape", "D4C6T3K", "--seed", "5")
    return db


def rows_of(db) -> pd.DataFrame:
    return gpuolap.sql(db, "SELECT * FROM d4c6t3k").to_pandas()


def expected(rows: pd.DataFrame, query: dict) -> tuple:
    match = rows
    for dim, value in query.items():
        if value != "*":
            match = match[match[dim] == int(value)]
    if match.empty:
        return 0, None, None, None
    return len(match), float(match["m"].sum()), float(match["m"].min()), float(match["m"].max())


def random_queries(rows: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    rng = random.Random(seed)
    dims = ["d1", "d2", "d3", "d4"]
    queries = []
    for _ in range(n):
        row = rows.iloc[rng.randrange(len(rows))]
        queries.append({d: (str(int(row[d])) if rng.random() < 0.5 else "*") for d in dims})
    queries.append({d: "999" if d == "d2" else "*" for d in dims})  # no match
    return pd.DataFrame(queries)


def assert_answers(rows: pd.DataFrame, queries: pd.DataFrame, answers) -> None:
    got = answers.to_pylist()
    assert len(got) == len(queries)
    for query, answer in zip(queries.to_dict("records"), got):
        count, total, low, high = expected(rows, query)
        assert answer["count"] == count, query
        if count == 0:
            assert answer["sum"] is None and answer["min"] is None and answer["avg"] is None
        else:
            assert math.isclose(answer["sum"], total) and answer["min"] == low and answer["max"] == high, query
            assert math.isclose(answer["avg"], total / count)


@pytest.mark.parametrize("engine", ["cpu-serial", "cpu-parallel"])
def test_build_append_and_query_equal_pandas(htree_db, tmp_path, engine):
    rows = rows_of(htree_db)
    with gpuolap.HTree.build(htree_db, "d4c6t3k", "m", tmp_path / "tree", engine=engine) as tree:
        assert tree.tuples == len(rows) and tree.measure == "m" and sorted(tree.dimensions) == ["d1", "d2", "d3", "d4"]
        queries = random_queries(rows, 200, 1)
        assert_answers(rows, queries, tree.query(queries))
        batch = pd.DataFrame({"d1": [1, 2, 70], "d2": [3, 3, 71], "d3": [1, 5, 72], "d4": [2, 2, 73], "m": [5, 6, 7]})
        assert tree.append(batch) == 3
        rows = pd.concat([rows, batch], ignore_index=True)
        assert tree.tuples == len(rows)
        queries = random_queries(rows, 200, 2)
        assert_answers(rows, queries, tree.query(queries))


def test_the_command_reads_what_python_wrote(htree_db, tmp_path, run_cli):
    out = tmp_path / "tree"
    with gpuolap.HTree.build(htree_db, "d4c6t3k", "m", out, order=["d1", "d2", "d3", "d4"]) as tree:
        tree.append(pd.DataFrame({"d1": [1], "d2": [2], "d3": [3], "d4": [4], "m": [1000]}))
        text = "d1,d2,d3,d4\n1,*,*,*\n*,2,3,*\n"
        mine = tree.query(text).to_pylist()
    queries = tmp_path / "q.csv"
    queries.write_text(text)
    answer_lines = run_cli("htree", "query", "--tree", str(out), "--queries", str(queries)).splitlines()[1:]
    for line, answer in zip(answer_lines, mine):
        count, total = line.split(",")[4:6]
        assert int(count) == answer["count"] and float(total) == answer["sum"]
    # Reopened, the appended batch is there (it was logged before append returned).
    with gpuolap.HTree(out) as again:
        assert again.tuples == 3001


def test_errors_name_what_is_wrong(htree_db, tmp_path):
    with gpuolap.HTree.build(htree_db, "d4c6t3k", "m", tmp_path / "tree") as tree:
        with pytest.raises(gpuolap.InputError, match="d4"):
            tree.append(pd.DataFrame({"d1": [1], "d2": [2], "d3": [3], "m": [1]}))
        assert tree.tuples == 3000
        with pytest.raises(gpuolap.InputError, match="not an int64"):
            tree.query("d1,d2,d3,d4\nx,*,*,*\n")
    with pytest.raises(gpuolap.InputError, match="closed"):
        tree.query("d1,d2,d3,d4\n*,*,*,*\n")
    with pytest.raises(gpuolap.InputError, match="closed"):
        tree.append(pd.DataFrame({"d1": [1], "d2": [2], "d3": [3], "d4": [4], "m": [1]}))
    with pytest.raises(gpuolap.InputError):
        gpuolap.HTree.build(htree_db, "d4c6t3k", "m", tmp_path / "tree")  # already there
    with pytest.raises(gpuolap.InputError):
        gpuolap.HTree.build(htree_db, "d4c6t3k", "nope", tmp_path / "other")


def test_the_example_script_runs(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "examples" / "sales_from_pandas.py"
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "25071" in done.stdout  # north's count after the appended sale
