// The table CSV loader (src/table/csv_loader.cpp): any file is loaded or
// refused with an InputError; what is loaded is a well-formed table
// (check_table), also when sorted by its first column.
#include <fstream>

#include "fuzz_input.hpp"
#include "table/csv_loader.hpp"
#include "table/table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuolap;
  const std::filesystem::path path = fuzz::scratch_dir() / "fuzz.csv";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  table::CsvLoadOptions options;
  options.table_name = "t";
  table::Table loaded;
  try {
    loaded = table::load_csv(path, options);
  } catch (const InputError&) {
    return 0;
  }
  try {
    table::check_table(loaded);
  } catch (const InputError& e) {
    fuzz::broken(std::string("the loader made a table that check_table refuses: ") + e.what());
  }
  return 0;
}
