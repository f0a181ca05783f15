"""The gpu engines through the module. Where the module was built with CUDA
and sees a GPU, each of them (the cube's area queries, SQL's grouping sets,
the H-tree's build, append and queries) answers as the CPU oracle does, on
random data. Elsewhere, asking for one raises InputError saying why, and
`auto` answers on the CPU."""

from __future__ import annotations

import math
import random

import re

import pytest

import gpuolap
from helpers import GPU, needs_gpu

no_gpu = pytest.mark.skipif(GPU["devices"] > 0, reason="a GPU is here: the gpu engines run")


def test_gpu_status_is_plain_data():
    status = gpuolap.gpu_status()
    assert set(status) == {"cuda_build", "devices", "device_name", "problem"}
    assert isinstance(status["cuda_build"], bool) and status["devices"] >= 0
    assert (status["devices"] == 0) == bool(status["problem"])
    if not status["cuda_build"]:
        assert status["devices"] == 0 and "without CUDA" in status["problem"]


def same(a, b) -> bool:
    """Equal, or for doubles equal but for the order of additions."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-9)
    return a == b


def assert_tables_agree(gpu, oracle) -> None:
    assert gpu.column_names == oracle.column_names
    assert gpu.schema == oracle.schema
    assert gpu.num_rows == oracle.num_rows
    for mine, theirs in zip(gpu.to_pylist(), oracle.to_pylist()):
        assert all(same(mine[c], theirs[c]) for c in gpu.column_names), (mine, theirs)


@pytest.fixture(scope="session")
def biker_template(tmp_path_factory, run_cli):
    out = tmp_path_factory.mktemp("biker") / "store"
    run_cli("generate", "--kind", "biker", "--scale", "0.001", "--format", "store", "--out", str(out))
    return out


def random_areas(schema: dict, n: int, seed: int):
    """Areas of one to three elements (base or consolidated) per dimension, or
    all of a small one's (up to some 100,000 cells)."""
    rng = random.Random(seed)
    for _ in range(n):
        area = {}
        for dim in schema["dimensions"]:
            names = [e["name"] for e in dim["elements"]]
            # Mostly consolidated elements: the facts are sparse, so base cells are mostly empty.
            totals = [e["name"] for e in dim["elements"] if e["type"] == "consolidated"] or names
            pool = totals if rng.random() < 0.7 else names
            small = len(names) <= 12
            area[dim["name"]] = "*" if small and rng.random() < 0.25 else rng.sample(pool, min(len(pool), rng.randint(1, 3)))
        yield area


@needs_gpu
@pytest.mark.parametrize("aggregate", ["sum", "count", "min", "max", "avg"])
def test_cube_areas_on_the_gpu_equal_cpu_serial(biker_template, aggregate):
    with gpuolap.Cube(biker_template, engine="gpu") as cube:
        assert cube.engine == "gpu"
        measure = cube.schema["measures"][0]
        for area in random_areas(cube.schema, 12, ["sum", "count", "min", "max", "avg"].index(aggregate)):
            gpu = cube.area(measure, area, aggregate, max_cells=2_000_000)
            oracle = cube.area(measure, area, aggregate, engine="cpu-serial", max_cells=2_000_000)
            assert_tables_agree(gpu, oracle)


@needs_gpu
def test_sql_grouping_sets_on_the_gpu_equal_cpu_serial(sales_db):
    query = (
        "SELECT year, month, product_group, count(*) AS n, sum(amount) AS total, min(amount) AS low, "
        "max(amount) AS high, avg(amount) AS mean FROM sales "
        "GROUP BY GROUPING SETS ((year, month), (product_group), ()) ORDER BY year, month, product_group"
    )
    assert_tables_agree(gpuolap.sql(sales_db, query, engine="gpu"), gpuolap.sql(sales_db, query, engine="cpu-serial"))


@needs_gpu
def test_htree_on_the_gpu_equals_cpu_serial(tmp_path, run_cli):
    db = tmp_path / "db"
    run_cli("generate", "--kind", "htree", "--db", str(db), "--shape", "D5C8T20K", "--seed", "9")
    rng = random.Random(3)

    def queries(n):
        return "\n".join(["d1,d2,d3,d4,d5"] + [",".join(str(rng.randrange(1, 10)) if rng.random() < 0.5 else "*"
                                                         for _ in range(5)) for _ in range(n)]) + "\n"

    batch = {f"d{i}": [rng.randrange(1, 12) for _ in range(500)] for i in range(1, 6)}
    batch["m"] = [rng.randrange(1, 100) for _ in range(500)]
    trees = {}
    for engine in ("gpu", "cpu-serial"):
        trees[engine] = gpuolap.HTree.build(db, "d5c8t20k", "m", tmp_path / engine, order=[f"d{i}" for i in range(1, 6)],
                                            engine=engine)
    assert trees["gpu"].engine == "gpu"
    for step in range(2):
        if step:
            import pandas as pd

            for tree in trees.values():
                tree.append(pd.DataFrame(batch))
        text = queries(400)
        assert_tables_agree(trees["gpu"].query(text), trees["cpu-serial"].query(text))
        assert trees["gpu"].nodes == trees["cpu-serial"].nodes
    for tree in trees.values():
        tree.close()


@no_gpu
def test_without_a_gpu_the_gpu_engines_say_why(demo_store, sales_db, tmp_path, run_cli):
    why = re.escape(gpuolap.gpu_status()["problem"])  # each refusal says what gpu_status says
    with pytest.raises(gpuolap.InputError, match="gpu"):
        gpuolap.Cube(demo_store, engine="gpu")
    with gpuolap.Cube(demo_store) as cube:
        area = {"Years": ["2023"], "Products": "*", "Regions": ["World"]}
        with pytest.raises(gpuolap.InputError, match="gpu"):
            cube.area("Revenue", area, engine="gpu")
        assert cube.area("Revenue", area).num_rows > 0  # auto: on the CPU
    with pytest.raises(gpuolap.InputError, match=f"gpu engine needs an NVIDIA GPU: {why}"):
        gpuolap.sql(sales_db, "SELECT year, count(*) FROM sales GROUP BY year", engine="gpu")
    with pytest.raises(gpuolap.InputError, match=f"needs an NVIDIA GPU: {why}"):
        gpuolap.sql(sales_db, "SELECT year, count(*) FROM sales GROUP BY ROLLUP(year)", engine="gpu")
    db = tmp_path / "db"
    run_cli("generate", "--kind", "htree", "--db", str(db), "--shape", "D3C4T1K")
    with pytest.raises(gpuolap.InputError, match=f"gpu.*{why}"):
        gpuolap.HTree.build(db, "d3c4t1k", "m", tmp_path / "tree", engine="gpu")
    with gpuolap.HTree.build(db, "d3c4t1k", "m", tmp_path / "tree") as tree:
        assert tree.engine == "cpu-parallel"
