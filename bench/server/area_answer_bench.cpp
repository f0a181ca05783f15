// The B3 answer (17,460 cells) written as the JSON tree the server built
// before (nlohmann::json per cell, then dump) and by append_area_answer
// (straight text), best of 7. Needs the Biker schema and queries:
//   build-cpu/src/gpuolap generate --kind biker --scale 0.01 --out /tmp/bk
//   g++ -O2 -std=c++20 -I include -I src bench/server/area_answer_bench.cpp build-cpu/src/molap/libgpuolap_molap.a \
//     build-cpu/src/molap/libgpuolap_molap_planning.a build-cpu/src/formats/libgpuolap_formats.a \
//     build-cpu/src/core/libgpuolap_core.a -lfmt -ltbb -o /tmp/area_answer_bench && /tmp/area_answer_bench /tmp/bk
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include "gpuolap/formats.hpp"
#include "gpuolap/aggregation_map.hpp"
using namespace gpuolap;
using nlohmann::json;
int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp/bk";
  const Schema s = parse_schema_json(read_text_file(dir + "/schema.json"), "schema");
  const AreaQuery q = read_query_file(s, dir + "/queries/B3.json");
  const AggregationMap map(s, q);
  AreaResult r;
  for (uint64_t t = 0; t < map.target_count(); ++t) { r.targets.push_back(t); r.values.push_back(12345.678 + t * 0.37); }
  auto time = [&](auto f) { double best = 1e9; for (int i = 0; i < 7; ++i) { auto a = std::chrono::steady_clock::now(); size_t n = f(); double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count(); if (ms < best) best = ms; if (i == 0) std::printf("  %zu bytes\n", n);} return best; };
  const double old_ms = time([&] {
    json cells = json::array();
    for (size_t i = 0; i < r.targets.size(); ++i) {
      const std::vector<uint32_t> pos = target_positions(q, r.targets[i]);
      json path = json::array();
      for (size_t d = 0; d < pos.size(); ++d) path.push_back(s.dimension(d).element(q.area[d][pos[d]]).name);
      cells.push_back(json{{"path", std::move(path)}, {"value", r.values[i]}});
    }
    json dims = json::array();
    for (const Dimension& d : s.dimensions()) dims.push_back(d.name());
    json a{{"dimensions", dims}, {"measure", "m"}, {"aggregate", "sum"}, {"target_cells", 17460}, {"cells", std::move(cells)}};
    return a.dump(-1, ' ', false, json::error_handler_t::replace).size();
  });
  const double new_ms = time([&] { std::string out; append_area_answer(out, s, q, r, map.target_count(), AnswerFormat::json); return out.size(); });
  const double csv_ms = time([&] { std::string out; append_area_answer(out, s, q, r, map.target_count(), AnswerFormat::csv); return out.size(); });
  std::printf("B3 answer, %zu cells: json tree + dump %.2f ms, straight JSON %.2f ms, straight CSV %.2f ms\n", r.targets.size(), old_ms, new_ms, csv_ms);
}
