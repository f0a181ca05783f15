#include "schema_data.hpp"

namespace gpuolap::python {

namespace py = pybind11;

pybind11::dict schema_data(const Schema& schema) {
  py::list dimensions;
  for (const Dimension& dim : schema.dimensions()) {
    py::list elements;
    for (const Element& e : dim.elements()) {
      py::list children;
      for (const Child& c : e.children) children.append(py::make_tuple(dim.element(c.element).name, c.weight));
      py::dict element;
      element["name"] = e.name;
      element["type"] = e.is_base() ? "base" : "consolidated";
      element["children"] = children;
      elements.append(element);
    }
    py::dict d;
    d["name"] = dim.name();
    d["elements"] = elements;
    dimensions.append(d);
  }
  py::list measures;
  for (const std::string& m : schema.measures()) measures.append(m);
  py::dict out;
  out["name"] = schema.name();
  out["measures"] = measures;
  out["dimensions"] = dimensions;
  return out;
}

}  // namespace gpuolap::python
