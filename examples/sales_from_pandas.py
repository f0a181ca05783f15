"""A pandas DataFrame into a gpuolap database, SQL over it, and an H-tree
partial cube over the same rows, fed a new batch and queried.

    python3 examples/sales_from_pandas.py /tmp/sales-example

Prints a ROLLUP through SQL, then the H-tree's answers to three queries
before and after a batch of sales is appended.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

import gpuolap


def main(work: Path) -> None:
    rng = np.random.default_rng(1)
    n = 100_000
    sales = pd.DataFrame({
        "region": rng.choice(["north", "south", "east", "west"], n),
        "product": rng.choice([f"p{i}" for i in range(20)], n),
        "day": pd.to_datetime("2026-01-01") + pd.to_timedelta(rng.integers(0, 90, n), unit="D"),
        "amount": rng.gamma(2.0, 50.0, n).round(2),
    })
    sales["day"] = sales["day"].dt.date  # a date column (date32), not a timestamp
    db = work / "db"
    print(gpuolap.load_table(db, "sales", sales))
    print(gpuolap.sql(db, "SELECT region, COUNT(*) AS n, SUM(amount) AS total FROM sales "
                          "GROUP BY ROLLUP(region) ORDER BY region NULLS LAST").to_pandas())

    queries = pd.DataFrame({"region": ["north", "*", "*"], "product": ["*", "p3", "*"], "day": ["*", "*", "2026-02-01"]})
    with gpuolap.HTree.build(db, "sales", "amount", work / "tree", order=["region", "product", "day"], replace=True) as tree:
        print(tree)
        print(tree.query(queries).to_pandas())
        tree.append(pd.DataFrame({"region": ["north"], "product": ["p3"], "day": [pd.Timestamp("2026-02-01").date()],
                                  "amount": [1000.0]}))
        print(tree.query(queries).to_pandas())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: sales_from_pandas.py WORK_DIR")
    main(Path(sys.argv[1]))
