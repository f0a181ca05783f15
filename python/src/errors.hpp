#pragma once
// gpuolap::InputError becomes gpuolap.InputError (a ValueError) with the same
// message; other C++ errors become RuntimeError (std::bad_alloc: MemoryError).
#include <pybind11/pybind11.h>

namespace gpuolap::python {

void register_errors(pybind11::module_& m);

}  // namespace gpuolap::python
