// The request bodies of cell/value, cell/values, cell/area and cell/export
// (server/cube_api.cpp, area_request.cpp), as the HTTP API and the shell
// hand them over — JSON parsed by formats/json_parse.cpp — answered on the
// shop cube, a store of its own in the scratch directory. Any body is
// answered or refused with an InputError (ApiError and OverLimit are ones).
// The writes are left out: they would change the cube from one input to the
// next, and a crash found could not be replayed.
#include <memory>
#include <nlohmann/json.hpp>

#include "formats/json_parse.hpp"
#include "fuzz_input.hpp"
#include "gpuolap/cube_store.hpp"
#include "gpuolap/durable_cube.hpp"
#include "olap/cube_service.hpp"
#include "olap/shop_cube.hpp"
#include "server/cube_api.hpp"

namespace {

using namespace gpuolap;

server::CubeApi& shop_api() {
  static olap::CubeService* service = [] {
    const auto dir = fuzz::scratch_dir() / "shop";
    Cube cube = testing::shop_cube();
    save_store(dir, cube.schema, cube.facts);
    return new olap::CubeService(std::make_unique<DurableCube>(dir), "cpu-serial", kCheckpointLogBytes);
  }();
  static server::CubeApi api(*service, server::Limits{});
  return api;
}

template <typename Operation>
void answer(const Operation& operation) {
  try {
    operation();
  } catch (const InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  server::CubeApi& api = shop_api();
  nlohmann::json body;
  try {
    body = parse_json(fuzz::as_text(data, size), "request body");
  } catch (const InputError&) {
    return 0;
  }
  answer([&] { api.value(body); });
  answer([&] { api.values(body); });
  answer([&] {
    // The answer is written as text straight from the result: its JSON form
    // must read back as JSON (a parse error here is a finding), its CSV
    // form must be written whole.
    const std::string json_text = api.area_text(body, AnswerFormat::json).body;
    (void)nlohmann::json::parse(json_text);
    (void)api.area_text(body, AnswerFormat::csv);
  });
  answer([&] { api.export_cells(body); });
  return 0;
}
