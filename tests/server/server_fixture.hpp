#pragma once
// A server on a loopback port of its own (port 0: the kernel picks a free
// one), over a small hand-checkable cube in a temporary store, and an HTTP
// client for it.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "server/cube_api.hpp"
#include "gpuolap/cube_store.hpp"
#include "gpuolap/durable_cube.hpp"
#include "olap/shop_cube.hpp"
#include "server/http_api.hpp"
#include "support/test_path.hpp"

namespace gpuolap::server::testing {

// The Shop cube (olap/shop_cube.hpp) as a store.
inline void write_shop_store(const std::filesystem::path& dir) {
  const Cube shop = ::gpuolap::testing::shop_cube();
  save_store(dir, shop.schema, shop.facts);
}

// A test of the gpuolap command on the Shop cube, stored in dir_ / "cube".
class ShopCubeCommandTest : public ::testing::Test {
 protected:
  explicit ShopCubeCommandTest(std::string kind) : kind_(std::move(kind)) {}
  void SetUp() override {
    dir_ = ::gpuolap::testing::fresh_test_path(kind_);
    std::filesystem::create_directories(dir_);
    write_shop_store(dir_ / "cube");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;

 private:
  std::string kind_;
};

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::gpuolap::testing::fresh_test_path("server_test");
    write_shop_store(dir_);
  }
  void TearDown() override {
    stop();
    std::filesystem::remove_all(dir_);
  }

  void start(Limits limits = {}, const std::string& token = "", uint64_t checkpoint_bytes = uint64_t{1} << 30) {
    service_ = std::make_unique<olap::CubeService>(std::make_unique<DurableCube>(dir_), "cpu-serial", checkpoint_bytes);
    api_ = std::make_unique<CubeApi>(*service_, limits);
    HttpOptions options = http_options_;
    options.port = 0;
    options.token = token;
    if (!database_.empty()) sql_ = std::make_unique<SqlApi>(table::Database(database_), max_rows_);
    if (!htree_.empty()) htree_api_ = std::make_unique<HTreeApi>(htree_, htree::Engine::CpuParallel, htree::GpuKnobs{});
    http_ = std::make_unique<HttpApi>(api_.get(), sql_.get(), htree_api_.get(), options, limits.max_body_bytes);
    port_ = http_->bind();
    thread_ = std::thread([this] { http_->serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(60, 0);
  }
  void stop() {
    if (!http_) return;
    http_->stop();
    thread_.join();
    client_.reset();
    http_.reset();
    sql_.reset();
    htree_api_.reset();
    api_.reset();
    service_.reset();
  }

  struct Reply {
    int status = 0;
    nlohmann::json body;
    std::string text;
  };
  static Reply reply(const httplib::Result& r) {
    Reply out;
    if (!r) return out;
    out.status = r->status;
    out.text = r->body;
    out.body = nlohmann::json::parse(r->body, nullptr, false);
    return out;
  }
  Reply get(const std::string& path) { return reply(client_->Get(path)); }
  Reply post(const std::string& path, const nlohmann::json& body, const httplib::Headers& headers = {}) {
    return reply(client_->Post(path, headers, body.dump(), "application/json"));
  }
  Reply post_text(const std::string& path, const std::string& body, const httplib::Headers& headers = {}) {
    return reply(client_->Post(path, headers, body, "application/json"));
  }
  // The value of one cell (null when empty).
  nlohmann::json value(const std::string& path, const std::string& measure = "Sales") {
    const Reply r = get("/cell/value?path=" + httplib::detail::encode_query_param(path) + "&measure=" + measure);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body["value"];
  }

  std::filesystem::path dir_;
  // The transport's options of the next start() (its port and token are start()'s).
  HttpOptions http_options_ = [] {
    HttpOptions options;
    options.threads = 16;
    return options;
  }();
  std::unique_ptr<olap::CubeService> service_;
  std::unique_ptr<CubeApi> api_;
  // With a database folder, start() serves POST /sql over it too.
  std::filesystem::path database_;
  uint64_t max_rows_ = 10'000'000;
  std::unique_ptr<SqlApi> sql_;
  // With an H-tree directory, start() serves /htree/append and /htree/query (cpu-parallel).
  std::filesystem::path htree_;
  std::unique_ptr<HTreeApi> htree_api_;
  std::unique_ptr<HttpApi> http_;
  std::thread thread_;
  int port_ = 0;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace gpuolap::server::testing
