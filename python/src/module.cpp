// The extension module gpuolap._gpuolap: the C++ side of the gpuolap package.
// Results travel as ArrowBatch objects (the Arrow C data interface), which
// the package turns into pyarrow tables; python/gpuolap/ holds the API.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>

#include "arrow_export.hpp"
#include "cube.hpp"
#include "errors.hpp"
#include "gpu/runtime/device_info.hpp"
#include "schema_data.hpp"
#include "htree_tree.hpp"
#include "sql_batch.hpp"
#include "table_load.hpp"

namespace py = pybind11;
using gpuolap::python::Cube;

namespace {

// The stream of an "arrow_array_stream" PyCapsule, moved out as the
// PyCapsule protocol says: the capsule's copy is marked released, so that
// its destructor does not release it again. A capsule read before is refused.
ArrowArrayStream move_stream(const py::capsule& capsule) {
  if (std::string_view(capsule.name() ? capsule.name() : "") != "arrow_array_stream")
    throw py::type_error("expected an 'arrow_array_stream' capsule (from __arrow_c_stream__())");
  auto* given = capsule.get_pointer<ArrowArrayStream>();
  if (!given->release) throw py::value_error("this Arrow stream was read already: ask __arrow_c_stream__() again");
  ArrowArrayStream stream = *given;
  given->release = nullptr;
  return stream;
}

}  // namespace
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

  py::class_<Cube>(m, "Cube", "A cube store opened read-write (holding its lock until closed).")
      .def(py::init<const std::string&, const std::string&>(), py::arg("path"), py::arg("engine") = "auto",
           py::call_guard<py::gil_scoped_release>(), "Opens the cube store directory `path`, replaying its log.")
      .def_property_readonly("path", &Cube::dir, "The store's directory.")
      .def_property_readonly("engine", &Cube::engine, "The engine of area queries that name none.")
      .def_property_readonly(
          "schema", [](const Cube& c) { return gpuolap::python::schema_data(c.schema()); },
          "The schema as plain data: name, measures, dimensions with their elements.")
      .def_property_readonly("recovery_problem", &Cube::recovery_problem,
                             "What opening found wrong in the log, in words; '' when nothing.")
      .def_property_readonly("filled_cells", &Cube::filled_cells, "Filled base cells now.")
      .def("area", &Cube::area, py::arg("measure"), py::arg("area"), py::arg("aggregate"), py::arg("engine"),
           py::arg("max_cells"), py::call_guard<py::gil_scoped_release>(),
           "The non-empty target cells of an area as an ArrowBatch.")
      .def(
          "value",
          [](const Cube& c, const gpuolap::python::PathSpec& path, const std::string& measure,
             const std::string& aggregate) -> py::object {
            std::optional<double> v;
            {
              py::gil_scoped_release release;
              v = c.value(path, measure, aggregate);
            }
            if (!v) return py::none();
            if (aggregate == "count") return py::int_(static_cast<long long>(std::llround(*v)));
            return py::float_(*v);
          },
          py::arg("path"), py::arg("measure"), py::arg("aggregate"),
          "One cell's aggregate; None when it is empty.")
      .def(
          "write",
          [](const Cube& c, const std::vector<gpuolap::python::PathSpec>& paths,
             const std::vector<std::optional<double>>& values, const std::string& mode, const std::string& measure,
             const std::string& splash) {
            gpuolap::olap::WriteOutcome o;
            {
              py::gil_scoped_release release;
              o = c.write(paths, values, mode, measure, splash);
            }
            py::dict d;
            d["sequence"] = o.sequence;
            d["cells_written"] = o.cells;
            return d;
          },
          py::arg("paths"), py::arg("values"), py::arg("mode"), py::arg("measure"), py::arg("splash"),
          "Writes cells, all or nothing; returns the log sequence number and the base cells written.")
      .def("save", &Cube::save, py::call_guard<py::gil_scoped_release>(),
           "Writes a snapshot of the store and truncates its log.")
      .def("close", &Cube::close, py::call_guard<py::gil_scoped_release>(), "Releases the store and its lock.")
      .def_property_readonly("closed", &Cube::closed, "Whether close() was called.");

  m.def(
      "gpu_status",
      [] {
        const gpuolap::GpuStatus s = gpuolap::gpu_status();
        py::dict d;
        d["cuda_build"] = s.cuda_build;
        d["devices"] = s.device_count;
        d["device_name"] = s.device_name;
        d["problem"] = s.problem;
        return d;
      },
      "Whether this module was built with CUDA, the GPUs it can use, and why none where there is none.");

  m.def("sql", &gpuolap::python::run_sql, py::arg("db"), py::arg("query"), py::arg("engine"), py::arg("max_rows"),
        py::call_guard<py::gil_scoped_release>(), "Runs one SELECT over a database directory; an ArrowBatch.");

  m.def(
      "build_htree",
      [](const std::string& db, const std::string& table, const std::string& measure, const std::string& out,
         const std::vector<std::string>& order, const std::string& engine, bool replace) {
        gpuolap::python::BuiltHTree built;
        {
          py::gil_scoped_release release;
          built = gpuolap::python::build_htree(db, table, measure, out, order, engine, replace);
        }
        py::dict d;
        d["tuples"] = built.tuples;
        d["leaves"] = built.leaves;
        d["nodes"] = built.nodes;
        d["engine"] = built.engine;
        d["build_seconds"] = built.build_seconds;
        return d;
      },
      py::arg("db"), py::arg("table"), py::arg("measure"), py::arg("out"), py::arg("order"), py::arg("engine"),
      py::arg("replace"), "Builds an H-tree over a table of a database and stores it durably in `out`.");

  using gpuolap::python::HTreeHandle;
  py::class_<HTreeHandle>(m, "HTree", "A durable H-tree opened (holding its lock until closed).")
      .def(py::init<const std::string&, const std::string&>(), py::arg("path"), py::arg("engine"),
           py::call_guard<py::gil_scoped_release>(), "Opens the tree in `path`, replaying its log.")
      .def_property_readonly("path", &HTreeHandle::dir)
      .def_property_readonly("engine", &HTreeHandle::engine)
      .def_property_readonly("dimensions", &HTreeHandle::dimensions, "The popular path, root to leaves.")
      .def_property_readonly("measure", &HTreeHandle::measure)
      .def_property_readonly("tuples", &HTreeHandle::tuples)
      .def_property_readonly("leaves", &HTreeHandle::leaves)
      .def_property_readonly("nodes", &HTreeHandle::nodes)
      .def(
          "append",
          [](HTreeHandle& t, const py::capsule& stream_capsule, std::size_t rows_hint) {
            ArrowArrayStream stream = move_stream(stream_capsule);
            py::gil_scoped_release release;
            return t.append(&stream, rows_hint);
          },
          py::arg("stream"), py::arg("rows_hint") = 0, "Appends a batch (durable when it returns); its rows.")
      .def("query", &HTreeHandle::query, py::arg("csv"), py::call_guard<py::gil_scoped_release>(),
           "Answers a query file's text: an ArrowBatch of count, sum, min, max, avg.")
      .def("checkpoint", &HTreeHandle::checkpoint, py::call_guard<py::gil_scoped_release>(),
           "A new snapshot and an empty log.")
      .def("close", &HTreeHandle::close, py::call_guard<py::gil_scoped_release>(), "Releases the tree and its lock.")
      .def_property_readonly("closed", &HTreeHandle::closed);

  m.def(
      "load_table",
      [](const std::string& db, const std::string& name, const py::capsule& stream_capsule,
         const std::vector<std::string>& sort_by, std::size_t rows_hint) {
        ArrowArrayStream stream = move_stream(stream_capsule);
        gpuolap::python::LoadedTable loaded;
        {
          py::gil_scoped_release release;
          loaded = gpuolap::python::load_table(db, name, &stream, sort_by, rows_hint);
        }
        py::dict d;
        d["rows"] = loaded.rows;
        d["columns"] = loaded.columns;
        d["read_seconds"] = loaded.read_seconds;
        d["read_cpu_seconds"] = loaded.read_cpu_seconds;
        d["sort_seconds"] = loaded.sort_seconds;
        d["store_seconds"] = loaded.store_seconds;
        return d;
      },
      py::arg("db"), py::arg("name"), py::arg("stream"), py::arg("sort_by"), py::arg("rows_hint") = 0,
      "Stores an Arrow stream (a PyCapsule from __arrow_c_stream__) as table `name` of the database `db`; "
      "rows_hint, the rows it holds where known, sizes the columns once.");
}
