#pragma once
// The message of the InputError that `f` throws, or "no error".
#include <functional>
#include <string>

#include "gpuolap/error.hpp"

namespace gpuolap::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace gpuolap::testing
