#include "arrow_export.hpp"

#include <climits>
#include <cstring>
#include <utility>

namespace gpuolap::python {

namespace {

// The validity bitmap of `nulls` (bit set: valid), or nothing when no row is NULL.
std::vector<uint8_t> validity(Nulls nulls, size_t rows, int64_t& null_count) {
  null_count = 0;
  if (!nulls) return {};
  std::vector<uint8_t> bits((rows + 7) / 8, 0);
  for (size_t r = 0; r < rows; ++r) {
    if ((*nulls)[r]) ++null_count;
    else bits[r / 8] |= static_cast<uint8_t>(1u << (r % 8));
  }
  if (null_count == 0) return {};
  return bits;
}

template <class T>
std::vector<uint8_t> bytes_of(const T* data, size_t n) {
  std::vector<uint8_t> b(n * sizeof(T));
  if (n) std::memcpy(b.data(), data, b.size());
  return b;
}

struct ArrayPrivate {
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<const void*> pointers;
  std::vector<ArrowArray*> children;
};

struct SchemaPrivate {
  std::string format, name;
  std::vector<ArrowSchema*> children;
};

// Releases the children not moved away by the consumer, then this array's own buffers.
void release_array(ArrowArray* a) {
  auto* p = static_cast<ArrayPrivate*>(a->private_data);
  for (ArrowArray* c : p->children) {
    if (c->release) c->release(c);
    delete c;
  }
  delete p;
  a->release = nullptr;
}

void release_schema(ArrowSchema* s) {
  auto* p = static_cast<SchemaPrivate*>(s->private_data);
  for (ArrowSchema* c : p->children) {
    if (c->release) c->release(c);
    delete c;
  }
  delete p;
  s->release = nullptr;
}

void fill_schema(ArrowSchema* s, std::string format, std::string name, int64_t flags) {
  auto* p = new SchemaPrivate{std::move(format), std::move(name), {}};
  *s = ArrowSchema{};
  s->format = p->format.c_str();
  s->name = p->name.c_str();
  s->flags = flags;
  s->release = release_schema;
  s->private_data = p;
}

void fill_array(ArrowArray* a, int64_t length, int64_t null_count, std::vector<std::vector<uint8_t>> buffers) {
  auto* p = new ArrayPrivate{std::move(buffers), {}, {}};
  for (size_t i = 0; i < p->buffers.size(); ++i) {
    std::vector<uint8_t>& b = p->buffers[i];
    // Only the validity bitmap may be absent; other buffers get an address even when empty.
    if (i == 0 && b.empty()) {
      p->pointers.push_back(nullptr);
      continue;
    }
    if (b.empty()) b.reserve(8);
    p->pointers.push_back(b.data());
  }
  *a = ArrowArray{};
  a->length = length;
  a->null_count = null_count;
  a->n_buffers = static_cast<int64_t>(p->pointers.size());
  a->buffers = p->pointers.data();
  a->release = release_array;
  a->private_data = p;
}

}  // namespace

ArrowColumn utf8_column(std::string name, size_t rows, const std::function<std::string_view(size_t)>& value, Nulls nulls) {
  ArrowColumn c{std::move(name), "u", static_cast<int64_t>(rows), 0, {}};
  c.buffers.push_back(validity(nulls, rows, c.null_count));
  std::vector<int64_t> offsets(rows + 1, 0);
  std::vector<uint8_t> data;
  for (size_t r = 0; r < rows; ++r) {
    if (!nulls || !(*nulls)[r]) {
      const std::string_view v = value(r);
      data.insert(data.end(), v.begin(), v.end());
    }
    offsets[r + 1] = static_cast<int64_t>(data.size());
  }
  if (data.size() > static_cast<size_t>(INT32_MAX)) {
    c.format = "U";  // large utf8: 64-bit offsets
    c.buffers.push_back(bytes_of(offsets.data(), offsets.size()));
  } else {
    std::vector<int32_t> narrow(offsets.begin(), offsets.end());
    c.buffers.push_back(bytes_of(narrow.data(), narrow.size()));
  }
  c.buffers.push_back(std::move(data));
  return c;
}

ArrowColumn float64_column(std::string name, const std::vector<double>& values, Nulls nulls) {
  ArrowColumn c{std::move(name), "g", static_cast<int64_t>(values.size()), 0, {}};
  c.buffers.push_back(validity(nulls, values.size(), c.null_count));
  c.buffers.push_back(bytes_of(values.data(), values.size()));
  return c;
}

ArrowColumn uint64_column(std::string name, const std::vector<uint64_t>& values) {
  ArrowColumn c{std::move(name), "L", static_cast<int64_t>(values.size()), 0, {}};
  c.buffers.push_back({});
  c.buffers.push_back(bytes_of(values.data(), values.size()));
  return c;
}

ArrowColumn int_column(std::string name, std::string format, const std::vector<int64_t>& values, Nulls nulls) {
  ArrowColumn c{std::move(name), std::move(format), static_cast<int64_t>(values.size()), 0, {}};
  c.buffers.push_back(validity(nulls, values.size(), c.null_count));
  if (c.format == "tdD") {
    std::vector<int32_t> days(values.begin(), values.end());
    c.buffers.push_back(bytes_of(days.data(), days.size()));
  } else if (c.format == "tDs") {
    std::vector<int64_t> seconds(values.size());
    for (size_t i = 0; i < values.size(); ++i) seconds[i] = values[i] * 86400;
    c.buffers.push_back(bytes_of(seconds.data(), seconds.size()));
  } else {
    c.buffers.push_back(bytes_of(values.data(), values.size()));
  }
  return c;
}

ArrowColumn bool_column(std::string name, const std::vector<int64_t>& values, Nulls nulls) {
  ArrowColumn c{std::move(name), "b", static_cast<int64_t>(values.size()), 0, {}};
  c.buffers.push_back(validity(nulls, values.size(), c.null_count));
  std::vector<uint8_t> bits((values.size() + 7) / 8, 0);
  for (size_t r = 0; r < values.size(); ++r)
    if (values[r]) bits[r / 8] |= static_cast<uint8_t>(1u << (r % 8));
  c.buffers.push_back(std::move(bits));
  return c;
}

ArrowColumn null_column(std::string name, size_t rows) {
  // The null type has no buffers.
  return ArrowColumn{std::move(name), "n", static_cast<int64_t>(rows), static_cast<int64_t>(rows), {}};
}

ExportedBatch::ExportedBatch(std::vector<ArrowColumn> columns, int64_t rows)
    : array_(new ArrowArray{}), schema_(new ArrowSchema{}) {
  fill_schema(schema_, "+s", "", 0);
  std::vector<std::vector<uint8_t>> root_buffers(1);  // no validity: no row of a batch is NULL
  fill_array(array_, rows, 0, std::move(root_buffers));
  auto* array_private = static_cast<ArrayPrivate*>(array_->private_data);
  auto* schema_private = static_cast<SchemaPrivate*>(schema_->private_data);
  for (ArrowColumn& c : columns) {
    auto* child_schema = new ArrowSchema{};
    schema_private->children.push_back(child_schema);
    fill_schema(child_schema, c.format, c.name, ARROW_FLAG_NULLABLE);
    auto* child_array = new ArrowArray{};
    array_private->children.push_back(child_array);
    fill_array(child_array, c.length, c.null_count, std::move(c.buffers));
  }
  schema_->n_children = static_cast<int64_t>(schema_private->children.size());
  schema_->children = schema_private->children.data();
  array_->n_children = static_cast<int64_t>(array_private->children.size());
  array_->children = array_private->children.data();
}

ExportedBatch::~ExportedBatch() {
  if (array_->release) array_->release(array_);
  if (schema_->release) schema_->release(schema_);
  delete array_;
  delete schema_;
}

}  // namespace gpuolap::python
