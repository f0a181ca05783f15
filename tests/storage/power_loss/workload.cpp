#include "workload.hpp"

#include <cmath>
#include <random>

#include "gpuolap/formats.hpp"

namespace gpuolap::power_loss {

namespace {

const char* kSchema = R"({"name": "PowerLoss", "dimensions": [
  {"name": "Product", "elements": [{"name": "p0"}, {"name": "p1"}, {"name": "p2"}, {"name": "p3"},
                                   {"name": "p4"}, {"name": "p5"}, {"name": "p6"}, {"name": "p7"}]},
  {"name": "Region", "elements": [{"name": "r0"}, {"name": "r1"}, {"name": "r2"}, {"name": "r3"},
                                  {"name": "r4"}, {"name": "r5"}]},
  {"name": "Month", "elements": [{"name": "m0"}, {"name": "m1"}, {"name": "m2"}, {"name": "m3"}, {"name": "m4"}]}],
  "measures": ["Sales", "Units"]})";

uint64_t random_key(const Schema& schema, std::mt19937_64& rng) {
  uint32_t ids[3];
  for (size_t d = 0; d < 3; ++d)
    ids[d] = static_cast<uint32_t>(rng() % schema.dimension(d).base_count());
  return schema.codec().encode(ids);
}

}  // namespace

Cube workload_cube() {
  Schema schema = parse_schema_json(kSchema, "power-loss workload schema");
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values(2);
  for (uint32_t p = 0; p < 8; p += 3) {
    const uint32_t ids[] = {p, 0, 0};
    keys.push_back(schema.codec().encode(ids));
    values[0].push_back(100.0 + p);
    values[1].push_back(p);
  }
  FactTable facts(schema.codec(), std::move(keys), std::move(values));
  return Cube{std::move(schema), std::move(facts)};
}

LogRecord workload_record(const Schema& schema, uint64_t seed, uint64_t n) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + n);
  LogRecord record;
  // Most records are one cell; some are several batches of several cells,
  // which must come back all or not at all.
  const bool multi = rng() % 3 == 0;
  const size_t batches = multi ? 1 + rng() % 3 : 1;
  for (size_t i = 0; i < batches; ++i) {
    WriteBatch b;
    const uint64_t pick = rng() % 10;
    b.mode = pick < 5 ? WriteMode::set : pick < 9 ? WriteMode::add : WriteMode::remove;
    const size_t rows = multi ? 1 + rng() % 6 : 1;
    for (size_t r = 0; r < rows; ++r) b.keys.push_back(random_key(schema, rng));
    b.present.assign(2, false);
    b.values.resize(2);
    if (b.mode != WriteMode::remove) {
      const uint64_t named = 1 + rng() % 3;  // Sales, Units or both
      b.present = {(named & 1) != 0, (named & 2) != 0};
      for (size_t m = 0; m < 2; ++m) {
        if (!b.present[m]) continue;
        for (size_t r = 0; r < rows; ++r) {
          // Values of many bits, so that a value replayed from the wrong
          // bytes cannot pass for the right one; now and then an empty
          // field, which a set clears the measure with.
          const bool empty = b.mode == WriteMode::set && rng() % 8 == 0;
          b.values[m].push_back(empty ? kNoValue : std::ldexp(static_cast<double>(rng() >> 11), -43) - 512.0);
        }
      }
    }
    record.batches.push_back(std::move(b));
  }
  return record;
}

uint64_t group_size(uint64_t seed, uint64_t n) {
  std::mt19937_64 rng(seed * 0xD1B54A32D192ED03ull + n);
  return 1 + rng() % 3;
}

}  // namespace gpuolap::power_loss
