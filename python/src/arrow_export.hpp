#pragma once
// Result columns handed to pyarrow through the Arrow C data interface: a
// record batch is exported as a struct array (format "+s") whose children
// are the columns. The buffers move into the exported structs and are freed
// by their release callbacks, whenever the consumer calls them.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "arrow_c.hpp"

namespace gpuolap::python {

// One column, its buffers laid out as Arrow's format for it requires.
struct ArrowColumn {
  std::string name;
  std::string format;  // "u" utf8, "U" large utf8, "g" float64, "l" int64, "L" uint64, "b" bool, "tdD" date32, "n" null
  int64_t length = 0;
  int64_t null_count = 0;
  // In Arrow's order: validity bitmap (empty: no NULLs), then the type's own.
  std::vector<std::vector<uint8_t>> buffers;
};

// `nulls`, when given, holds one byte per row, non-zero for NULL.
using Nulls = const std::vector<uint8_t>*;

ArrowColumn utf8_column(std::string name, size_t rows, const std::function<std::string_view(size_t)>& value,
                        Nulls nulls = nullptr);
ArrowColumn float64_column(std::string name, const std::vector<double>& values, Nulls nulls = nullptr);
ArrowColumn uint64_column(std::string name, const std::vector<uint64_t>& values);
// format "l" (int64), "tdD" (date32: days, narrowed to 32 bits) or "tDs" (duration in seconds, from days).
ArrowColumn int_column(std::string name, std::string format, const std::vector<int64_t>& values, Nulls nulls = nullptr);
ArrowColumn bool_column(std::string name, const std::vector<int64_t>& values, Nulls nulls = nullptr);
ArrowColumn null_column(std::string name, size_t rows);

// A record batch exported as the two C structs, owned here until a consumer
// moves them (pyarrow's _import_from_c marks them released); whatever is
// left is released when this is destroyed.
class ExportedBatch {
 public:
  ExportedBatch(std::vector<ArrowColumn> columns, int64_t rows);
  ~ExportedBatch();
  ExportedBatch(const ExportedBatch&) = delete;
  ExportedBatch& operator=(const ExportedBatch&) = delete;

  uintptr_t array_address() const { return reinterpret_cast<uintptr_t>(array_); }
  uintptr_t schema_address() const { return reinterpret_cast<uintptr_t>(schema_); }

 private:
  ArrowArray* array_;
  ArrowSchema* schema_;
};

}  // namespace gpuolap::python
