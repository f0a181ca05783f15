"""An area query of the demo cube into pandas.

    build/src/gpuolap generate --kind demo --format store --out /tmp/demo
    python3 examples/area_to_pandas.py /tmp/demo

Prints the revenue of each product group per year, as a pivot table, and
the share of bikes in each year's revenue.
"""

import sys

import gpuolap


def main(store: str) -> None:
    with gpuolap.Cube(store) as cube:
        df = cube.area_df(
            "Revenue",
            {"Years": ["2023", "2024", "2025"], "Products": ["Bikes", "Parts", "Clothing"], "Regions": ["World"]},
        )
    pivot = df.pivot(index="Years", columns="Products", values="sum(Revenue)")
    print(pivot.round(0))
    print()
    print((pivot["Bikes"] / pivot.sum(axis=1)).round(3).rename("bike share"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: area_to_pandas.py CUBE_STORE_DIR")
    main(sys.argv[1])
