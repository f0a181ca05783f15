"""gpuolap.load_table: pandas, Arrow and Parquet into a database's tables,
read back through SQL and the command, value for value."""

from __future__ import annotations

import datetime
import math
import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuolap


def read_back(db, name: str, order_by: str = "k") -> list[dict]:
    return gpuolap.sql(db, f"SELECT * FROM {name} ORDER BY {order_by}").to_pylist()


def random_table(rows: int, seed: int) -> pa.Table:
    """Every type load_table takes, with NULLs in every column; k numbers the rows."""
    rng = random.Random(seed)
    words = ["", "alpha", "beta", "gamma", "delta", "ü-umlaut", "a,b", 'q"uote', "zeta"]

    def maybe(value):
        return None if rng.random() < 0.15 else value

    return pa.table({
        "k": pa.array(range(rows), pa.int64()),
        "i8": pa.array([maybe(rng.randint(-128, 127)) for _ in range(rows)], pa.int8()),
        "i32": pa.array([maybe(rng.randint(-2**31, 2**31 - 1)) for _ in range(rows)], pa.int32()),
        "u64": pa.array([maybe(rng.randint(0, 2**63 - 1)) for _ in range(rows)], pa.uint64()),
        "flag": pa.array([maybe(rng.random() < 0.5) for _ in range(rows)], pa.bool_()),
        "f32": pa.array([maybe(rng.choice([0.5, -1.25, 3.0])) for _ in range(rows)], pa.float32()),
        "f64": pa.array([maybe(rng.uniform(-1e6, 1e6)) for _ in range(rows)], pa.float64()),
        "day": pa.array([maybe(datetime.date(1960, 1, 1) + datetime.timedelta(days=rng.randint(0, 40000)))
                         for _ in range(rows)], pa.date32()),
        "word": pa.array([maybe(rng.choice(words)) for _ in range(rows)], pa.string()),
        "big_word": pa.array([maybe(rng.choice(words)) for _ in range(rows)], pa.large_string()),
        "coded": pa.array([maybe(rng.choice(words)) for _ in range(rows)], pa.string()).dictionary_encode(),
    })


def expected_rows(table: pa.Table) -> list[dict]:
    """What SQL should answer for each row: ints widened, bools as 0/1, strings decoded."""
    out = []
    for row in table.to_pylist():
        row["flag"] = None if row["flag"] is None else int(row["flag"])
        out.append(row)
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_an_arrow_table_in_chunks_reads_back_value_for_value(tmp_path, seed):
    table = random_table(500, seed)
    # Several batches, sliced (offsets into shared buffers), each dictionary chunk its own.
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=97))
    loaded = gpuolap.load_table(tmp_path / "db", "t", chunked)
    assert loaded["rows"] == 500 and loaded["columns"] == len(table.columns)
    assert read_back(tmp_path / "db", "t") == expected_rows(table)


def test_dictionaries_that_differ_between_batches(tmp_path):
    first = pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 1], pa.int8()), pa.array(["zz", "aa"]))
    second = pa.DictionaryArray.from_arrays(pa.array([2, 0, 1], pa.int32()), pa.array(["mm", None, "aa"]))
    k = [pa.array([0, 1, 2, 3], pa.int64()), pa.array([4, 5, 6], pa.int64())]
    batches = [pa.RecordBatch.from_arrays([k[0], first], ["k", "s"]),
               pa.RecordBatch.from_arrays([k[1], second.cast(pa.dictionary(pa.int8(), pa.string()))], ["k", "s"])]
    gpuolap.load_table(tmp_path / "db", "t", pa.Table.from_batches(batches))
    assert [r["s"] for r in read_back(tmp_path / "db", "t")] == ["zz", "aa", None, "aa", "aa", "mm", None]
    # Codes are in byte order: MIN and MAX and ORDER BY see the strings' order.
    rows = gpuolap.sql(tmp_path / "db", "SELECT MIN(s) AS lo, MAX(s) AS hi FROM t").to_pylist()
    assert rows == [{"lo": "aa", "hi": "zz"}]


def test_pandas_with_its_index_left_out(tmp_path):
    frame = pd.DataFrame({"k": [3, 1, 2], "city": ["Oslo", None, "Lima"], "temp": [1.5, None, 20.25]},
                         index=[10, 20, 30])
    gpuolap.load_table(tmp_path / "db", "weather", frame, sort_by=["k"])
    assert read_back(tmp_path / "db", "weather") == [
        {"k": 1, "city": None, "temp": None}, {"k": 2, "city": "Lima", "temp": 20.25}, {"k": 3, "city": "Oslo", "temp": 1.5}]


def test_parquet_file_with_row_groups_and_the_sort_order_it_records(tmp_path, run_cli):
    table = random_table(2000, 3)
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=300)
    loaded = gpuolap.load_table(tmp_path / "db", "t", path, sort_by=["word", "k"])
    assert loaded["rows"] == 2000 and loaded["sort_seconds"] >= 0
    assert read_back(tmp_path / "db", "t") == expected_rows(table)
    listing = run_cli("table", "list", "--db", str(tmp_path / "db"))
    assert "word,k" in listing or "word, k" in listing, listing


def test_parquet_strings_kept_as_indices_are_read_as_dictionaries_the_others_plainly(tmp_path):
    rng = random.Random(4)
    names = [f"Customer#{i:06d}" for i in range(3000)]
    table = pa.table({
        "k": pa.array(range(20000), pa.int64()),
        "flag": pa.array([rng.choice(["A", "N", "R", None]) for _ in range(20000)], pa.string()),
        "name": pa.array([rng.choice(names) if rng.random() > 0.1 else None for _ in range(20000)], pa.string()),
    })
    path = tmp_path / "t.parquet"
    # A 16 KiB dictionary page: `name`'s dictionary outgrows it and the writer
    # falls back to plain strings; `flag` stays indices.
    pq.write_table(table, path, row_group_size=5000, dictionary_pagesize_limit=16384)
    assert gpuolap.tables._dictionary_columns(pq.ParquetFile(path).metadata) == ["flag"]
    gpuolap.load_table(tmp_path / "db", "t", path)
    assert read_back(tmp_path / "db", "t") == table.to_pylist()


def test_many_batches_keep_their_order_through_waves_and_growth(tmp_path):
    # Past one wave of rows (2^19), from a Parquet file of many row groups
    # (its row count known) and from a stream of batches (not known: the
    # columns grow as they come).
    import numpy as np

    rows = 1_200_000
    k = np.random.default_rng(5).permutation(rows)
    table = pa.table({
        "k": pa.array(k),
        "s": pa.array(np.char.add("name", (k % 5000).astype(str)).astype(object), pa.string()),
        "d": pa.array(np.where(k % 7 == 0, np.nan, k * 0.5), pa.float64(), from_pandas=True),
    })
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=70_000)
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=90_000))
    for name, source in (("from_file", path), ("from_stream", reader)):
        gpuolap.load_table(tmp_path / "db", name, source)
        got = gpuolap.sql(tmp_path / "db", f"SELECT k, s, d FROM {name}", engine="cpu-serial")
        assert got.column("k").to_pylist() == table.column("k").to_pylist(), name
        assert got.column("s").to_pylist() == table.column("s").to_pylist(), name
        assert got.column("d").to_pylist() == table.column("d").to_pylist(), name


def test_dictionary_memory_the_producer_reuses_once_released(tmp_path):
    # Batches are released once their wave (2^19 rows) is read, and a
    # thread keeps the codes of the dictionary it saw last by the addresses
    # of its buffers. A producer may then put the next dictionary where a
    # released one was: here each wave brings a new dictionary (the words in
    # another order), written into the memory of an earlier one wherever no
    # batch holds it any more. (A stale code needs a thread to see the old
    # and the new dictionary at one address with no other between, which
    # takes two or more threads reading waves: on 2 cores TBB has one worker,
    # which reads the waves in order, so there the test passes either way.)
    import sys

    import numpy as np

    rows_a_batch, batch_count, width = 65_536, 64, 4
    words = [f"w{i:03d}" for i in range(300)]
    pool = []  # [offsets, bytes] numpy arrays: a dictionary's buffers
    reused = 0
    expected = []  # numpy arrays of strings, a batch each

    def dictionary(order):
        nonlocal reused
        offsets = np.arange(0, width * (len(order) + 1), width, dtype=np.int32)
        data = np.frombuffer("".join(words[i] for i in order).encode(), dtype=np.uint8)
        # Only the pool refers to a free pair (and getrefcount's argument).
        free = [pair for pair in pool if sys.getrefcount(pair[0]) == 2 and sys.getrefcount(pair[1]) == 2]
        if free:
            free[0][0][:] = offsets
            free[0][1][:] = data
            pair = free[0]
            reused += 1
        else:
            pair = [offsets.copy(), data.copy()]
            pool.append(pair)
        return pa.Array.from_buffers(pa.string(), len(order), [None, pa.py_buffer(pair[0]), pa.py_buffer(pair[1])])

    def batches():
        rng = np.random.default_rng(11)
        entries = None
        for b in range(batch_count):
            if b % 8 == 0:
                order = rng.permutation(len(words))
                entries = None  # (its memory free for the next once the batches are released)
                entries = dictionary(order)
            indices = rng.integers(0, len(words), rows_a_batch).astype(np.int32)
            expected.append(np.asarray(words, dtype=object)[order][indices])
            k = pa.array(np.arange(b * rows_a_batch, (b + 1) * rows_a_batch))
            yield pa.RecordBatch.from_arrays([k, pa.DictionaryArray.from_arrays(pa.array(indices), entries)],
                                             ["k", "s"])

    schema = pa.schema([("k", pa.int64()), ("s", pa.dictionary(pa.int32(), pa.string()))])
    gpuolap.load_table(tmp_path / "db", "t", pa.RecordBatchReader.from_batches(schema, batches()))
    assert reused > 0  # (else the test saw no memory come back)
    got = gpuolap.sql(tmp_path / "db", "SELECT s FROM t ORDER BY k", engine="cpu-serial")
    assert np.array_equal(got.column("s").to_numpy(zero_copy_only=False), np.concatenate(expected))


def test_nulls_first_seen_in_a_late_batch(tmp_path):
    # The NULL flags are made only once a batch may hold NULLs: here the
    # first NULLs come past a wave (2^19 rows) and past the columns' first
    # growth (a stream: no row count), in a plain column, a string column
    # and a dictionary column whose indices have none but whose last
    # dictionary has a NULL entry.
    import numpy as np

    rows, late = 1_200_000, 1_100_000
    k = np.arange(rows)
    x = pa.array(np.where(k >= late, None, k).tolist(), pa.int64())
    s = pa.array([None if i >= late and i % 3 == 0 else f"s{i % 100}" for i in range(rows)], pa.string())
    batches = []
    for begin in range(0, rows, 100_000):
        end = begin + 100_000
        entries = ["aa", None, "zz"] if begin >= late else ["aa", "mm", "zz"]
        coded = pa.DictionaryArray.from_arrays(pa.array(k[begin:end] % 3, pa.int32()), pa.array(entries))
        batches.append(pa.RecordBatch.from_arrays([pa.array(k[begin:end]), x[begin:end], s[begin:end], coded],
                                                  ["k", "x", "s", "c"]))
    table = pa.Table.from_batches(batches)
    reader = pa.RecordBatchReader.from_batches(table.schema, batches)
    gpuolap.load_table(tmp_path / "db", "t", reader)
    got = gpuolap.sql(tmp_path / "db", "SELECT k, x, s, c FROM t", engine="cpu-serial")
    for name in ("k", "x", "s", "c"):
        expected = table.column(name).to_pylist()
        assert got.column(name).to_pylist() == expected, name
    assert got.column("x").null_count == rows - late and got.column("c").null_count == (rows - late) // 3


def test_a_parquet_file_with_a_column_name_twice_is_an_input_error(tmp_path):
    table = pa.Table.from_arrays([pa.array(["a", "b"]), pa.array([1, 2])], names=["x", "x"])
    pq.write_table(table, tmp_path / "t.parquet")
    with pytest.raises(gpuolap.InputError, match="two columns named 'x'"):
        gpuolap.load_table(tmp_path / "db", "t", tmp_path / "t.parquet")


def test_the_first_bad_row_is_named_however_the_rows_are_spread(tmp_path):
    values = [1] * 100_000
    values[70_000] = values[90_000] = 2**63
    with pytest.raises(gpuolap.InputError, match="column 'x', row 70001: "):
        gpuolap.load_table(tmp_path / "db", "t", pa.table({"x": pa.array(values, pa.uint64())}))
    # In two columns, the earlier row wins whichever column and task found it.
    later = [1] * 100_000
    later[74_000] = 2**63  # in the same range of rows as row 70,000 on 2 cores
    with pytest.raises(gpuolap.InputError, match="column 'y', row 70001: "):
        gpuolap.load_table(tmp_path / "db", "t", pa.table({
            "x": pa.array(later, pa.uint64()),
            "y": pa.array(values, pa.uint64()),
        }))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("type_", [pa.float64(), pa.float32()])
def test_a_nan_or_an_infinity_is_refused_naming_its_row_a_null_is_not(tmp_path, bad, type_):
    values = [0.5] * 1000
    values[700] = bad
    with pytest.raises(gpuolap.InputError, match=r"column 'x', row 701: (nan|inf|-inf) is not a finite number"):
        gpuolap.load_table(tmp_path / "db", "t", pa.table({"x": pa.array(values, type_)}))
    assert not (tmp_path / "db" / "t.table").exists()  # nothing written
    # A NULL row's slot may hold a NaN (pandas' NaN arrives so): it stays NULL.
    masked = pa.array(values, type_, mask=np.array([i == 700 for i in range(1000)]))
    gpuolap.load_table(tmp_path / "db", "t", pa.table({"x": masked}))
    got = gpuolap.sql(tmp_path / "db", "SELECT COUNT(*) AS n, COUNT(x) AS c FROM t").to_pylist()
    assert got == [{"n": 1000, "c": 999}]


def test_string_views_as_polars_exports_them(tmp_path):
    # utf8_view: strings of up to 12 bytes inline, longer ones in data
    # buffers (several, once they are large), with NULLs, sliced, and as a
    # dictionary's values.
    rng = random.Random(8)
    words = ["", "short", "exactly12byt", "thirteen byte", "ü" * 20, "a much longer string than twelve bytes"]
    values = [rng.choice(words) + (str(i) if i % 3 == 0 else "") if rng.random() > 0.1 else None for i in range(30000)]
    views = pa.array(values, pa.string_view())
    table = pa.table({"k": pa.array(range(30000)), "s": views}).slice(5, 29990)
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=7000))
    gpuolap.load_table(tmp_path / "db", "t", chunked)
    got = gpuolap.sql(tmp_path / "db", "SELECT k, s FROM t ORDER BY k", engine="cpu-serial")
    assert got.column("s").to_pylist() == values[5:29995]
    coded = pa.DictionaryArray.from_arrays(pa.array([1, 0, 1, None], pa.int32()), pa.array(["x" * 20, "y"], pa.string_view()))
    gpuolap.load_table(tmp_path / "db", "d", pa.table({"k": [0, 1, 2, 3], "s": coded}))
    assert read_back(tmp_path / "db", "d") == [{"k": 0, "s": "y"}, {"k": 1, "s": "x" * 20}, {"k": 2, "s": "y"},
                                               {"k": 3, "s": None}]


@pytest.mark.parametrize("buffer, offset", [(3, 0), (0, 30), (-1, 0)])
def test_a_string_view_outside_its_data_is_an_input_error(tmp_path, buffer, offset):
    import struct

    data = pa.py_buffer(b"x" * 40)  # one data buffer of 40 bytes
    views = b"".join([struct.pack("<i12s", 2, b"ok"), struct.pack("<i4sii", 20, b"xxxx", buffer, offset)])
    column = pa.Array.from_buffers(pa.string_view(), 2, [None, pa.py_buffer(views), data])
    with pytest.raises(gpuolap.InputError, match="column 's', row 2: a string view points outside its data buffers"):
        gpuolap.load_table(tmp_path / "db", "t", pa.table({"s": column}))


def test_an_empty_table(tmp_path):
    gpuolap.load_table(tmp_path / "db", "empty", pa.table({"k": pa.array([], pa.int64()), "s": pa.array([], pa.string())}))
    assert gpuolap.sql(tmp_path / "db", "SELECT COUNT(*) AS n FROM empty").to_pylist() == [{"n": 0}]


@pytest.mark.parametrize("column, message", [
    (pa.array([datetime.datetime(2024, 1, 1)], pa.timestamp("us")), "column 'x': Arrow type timestamp"),
    (pa.array([b"\x00"], pa.binary()), "column 'x': Arrow type binary"),
    (pa.array([[1]], pa.list_(pa.int64())), "column 'x': Arrow type list"),
    (pa.array([2**63], pa.uint64()), "column 'x', row 1: 9223372036854775808 does not fit int64"),
    (pa.array([1000], pa.date64()), "column 'x', row 1: date64 1000 ms is not a whole day"),
])
def test_types_it_cannot_hold_are_refused_naming_the_column(tmp_path, column, message):
    with pytest.raises(gpuolap.InputError, match=message.replace("(", r"\(")):
        gpuolap.load_table(tmp_path / "db", "t", pa.table({"x": column}))
    assert not (tmp_path / "db" / "t.table").exists()


def test_bad_names_and_inputs(tmp_path):
    with pytest.raises(gpuolap.InputError):
        gpuolap.load_table(tmp_path / "db", "no spaces", pa.table({"k": [1]}))
    with pytest.raises(gpuolap.InputError):
        gpuolap.load_table(tmp_path / "db", "t", pa.table({"k": [1], "s": ["a"]}), sort_by=["missing"])
    with pytest.raises(TypeError, match="not list"):
        gpuolap.load_table(tmp_path / "db", "t", [1, 2, 3])


def test_a_string_column_of_nulls_only(tmp_path):
    # No string at all: the dictionary is empty and every row NULL.
    gpuolap.load_table(tmp_path / "db", "t", pa.table({"k": [1, 2], "s": pa.array([None, None], pa.string())}))
    assert read_back(tmp_path / "db", "t") == [{"k": 1, "s": None}, {"k": 2, "s": None}]


def test_a_stream_is_read_once(tmp_path):
    stream = pa.table({"k": [1]}).__arrow_c_stream__()
    gpuolap._gpuolap.load_table(str(tmp_path / "db"), "t", stream, [])
    with pytest.raises(ValueError, match="read already"):
        gpuolap._gpuolap.load_table(str(tmp_path / "db"), "t", stream, [])
