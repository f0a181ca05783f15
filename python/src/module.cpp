// The extension module gpuolap._gpuolap: the C++ side of the gpuolap package.
// Results travel as ArrowBatch objects (the Arrow C data interface), which
// the package turns into pyarrow tables; python/gpuolap/ holds the API.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "arrow_export.hpp"
#include "errors.hpp"
#include "sql_batch.hpp"

namespace py = pybind11;
using gpuolap::python::ExportedBatch;

PYBIND11_MODULE(_gpuolap, m) {
  m.doc() = "The C++ side of gpuolap: use the gpuolap package, not this module.";
  gpuolap::python::register_errors(m);

  py::class_<ExportedBatch>(m, "ArrowBatch",
                            "A record batch exported through the Arrow C data interface. "
                            "pyarrow.RecordBatch._import_from_c(array_address, schema_address) moves it into pyarrow; "
                            "whatever is not moved is released when this object goes.")
      .def_property_readonly("array_address", &ExportedBatch::array_address, "The address of its struct ArrowArray.")
      .def_property_readonly("schema_address", &ExportedBatch::schema_address, "The address of its struct ArrowSchema.");

  m.def("sql", &gpuolap::python::run_sql, py::arg("db"), py::arg("query"), py::arg("engine"), py::arg("max_rows"),
        py::call_guard<py::gil_scoped_release>(), "Runs one SELECT over a database directory; an ArrowBatch.");
}
