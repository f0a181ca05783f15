#pragma once
// Cell paths: one element name per dimension, in dimension order, given as a
// JSON array of names or as one string with the names separated by commas
// (an array for names that contain commas).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpuolap/schema.hpp"

namespace gpuolap::olap {

struct CellPath {
  std::vector<ElementId> elements;  // one per dimension
  bool base = true;                 // every element is a base element
  uint64_t key = 0;                 // the cell key, when base
};

// The path of the cell at `elements`, one per dimension.
CellPath cell_path(const Schema& schema, std::vector<ElementId> elements);
// The elements of a base cell, from its key.
std::vector<ElementId> key_elements(const Schema& schema, uint64_t key);

// Throws InputError naming `where`, the dimension and the element at fault.
CellPath parse_cell_path(const Schema& schema, const nlohmann::json& path, const std::string& where);
// A path from the text of a query parameter: a JSON array if it starts with '[', else names separated by commas.
CellPath parse_cell_path_text(const Schema& schema, const std::string& text, const std::string& where);
nlohmann::json path_names(const Schema& schema, const std::vector<ElementId>& elements);
nlohmann::json key_names(const Schema& schema, uint64_t key);

// The measure named `name` (the first measure when empty).
size_t find_measure_or_first(const Schema& schema, const std::string& name, const std::string& where);

}  // namespace gpuolap::olap
