#include "errors.hpp"

#include <new>
#include <stdexcept>

#include "gpuolap/error.hpp"

namespace gpuolap::python {

void register_errors(pybind11::module_& m) {
  static pybind11::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  input_error.doc() =
      "Bad input: an unknown dimension, element or measure, a malformed path or query, bad SQL. "
      "The message names what is at fault. A subclass of ValueError.";
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(input_error.ptr(), e.what());
    } catch (const std::logic_error& e) {
      // pybind11 would make some of these ValueError or IndexError; they are internal errors here.
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace gpuolap::python
