"""Errors: gpuolap.InputError (a ValueError) with the command's message."""

from __future__ import annotations

import pytest

import gpuolap

AREA = {"Years": ["2024"], "Products": ["Bikes"], "Regions": ["World"]}


def test_input_error_is_a_value_error():
    assert issubclass(gpuolap.InputError, ValueError)


def test_a_bad_element_is_named(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        with pytest.raises(gpuolap.InputError) as e:
            cube.area("Revenue", dict(AREA, Products=["Bikes", "Unicycle"]))
    assert "dimension 'Products' has no element 'Unicycle'" in str(e.value)


def test_bad_measure_dimension_aggregate_and_path(demo_store):
    with gpuolap.Cube(demo_store) as cube:
        with pytest.raises(gpuolap.InputError, match="no measure 'Profit'"):
            cube.area("Profit", AREA)
        with pytest.raises(gpuolap.InputError, match="dimension 'Regions' is missing"):
            cube.area("Revenue", {"Years": ["2024"], "Products": ["Bikes"]})
        with pytest.raises(gpuolap.InputError, match="no dimension 'Colour'"):
            cube.area("Revenue", dict(AREA, Colour=["Red"]))
        with pytest.raises(gpuolap.InputError, match="median"):
            cube.area("Revenue", AREA, aggregate="median")
        with pytest.raises(gpuolap.InputError, match="no element 'Mars'"):
            cube.value(["2024", "Bikes", "Mars"])
        with pytest.raises(gpuolap.InputError, match="3 dimensions"):
            cube.value(["2024", "Bikes"])
        with pytest.raises(gpuolap.InputError, match="unknown mode"):
            cube.write([(["2024-05", "City Bike", "Germany"], 1.0)], mode="replace")


def test_no_store_there(tmp_path):
    with pytest.raises((gpuolap.InputError, RuntimeError)):
        gpuolap.Cube(tmp_path / "nothing")
