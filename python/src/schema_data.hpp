#pragma once
// A cube's schema as plain Python data.
#include <pybind11/pybind11.h>

#include "gpuolap/schema.hpp"

namespace gpuolap::python {

// {"name": str, "measures": [str], "dimensions": [{"name": str, "elements":
// [{"name": str, "type": "base" | "consolidated", "children": [(name, weight)]}]}]}
// with the elements in schema order.
pybind11::dict schema_data(const Schema& schema);

}  // namespace gpuolap::python
