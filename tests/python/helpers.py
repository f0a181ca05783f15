"""Helpers of the Python module's tests."""

from __future__ import annotations

import csv
import io

import pytest


def read_csv(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a CSV answer."""
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def _gpu_status() -> dict:
    import gpuolap

    return gpuolap.gpu_status()


GPU = _gpu_status()
# Tests of the gpu engines run where the module was built with CUDA and sees a GPU.
needs_gpu = pytest.mark.skipif(GPU["devices"] == 0, reason=f"no GPU for the gpu engines: {GPU['problem']}")
