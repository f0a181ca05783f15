"""Helpers of the Python module's tests."""

from __future__ import annotations

import csv
import io


def read_csv(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a CSV answer."""
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]
