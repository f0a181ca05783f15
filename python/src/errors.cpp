#include "errors.hpp"

#include <stdexcept>

#include "gpuolap/error.hpp"

namespace gpuolap::python {

void register_errors(pybind11::module_& m) {
  // pybind11 keeps the exception type (and its translator, which catches
  // InputError and its subclasses) for the interpreter's lifetime.
  pybind11::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  m.attr("InputError").attr("__doc__") =
      "Bad input: an unknown dimension, element or measure, a malformed path or query, bad SQL. "
      "The message names what is at fault. A subclass of ValueError.";
  m.attr("InputError").attr("__module__") = "gpuolap";  // where users find it
  // Tried before the default translation, which would make some of these
  // ValueError or IndexError: here they are internal errors. std::bad_alloc
  // stays MemoryError, other std::exceptions RuntimeError (pybind11's own).
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::logic_error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace gpuolap::python
