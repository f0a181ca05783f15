// `gpuolap serve` as a user starts it: the token file, the warning for a
// non-loopback address without one, and start-up errors (exit 2).
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>

#include "server_fixture.hpp"
#include "server_process.hpp"

namespace gpuolap::server::testing {
namespace {

namespace fs = std::filesystem;

class ServeCommandTest : public ShopCubeCommandTest {
 protected:
  ServeCommandTest() : ShopCubeCommandTest("serve_test") {}

  // Runs `gpuolap serve` expecting it to refuse to start: (exit status, stderr).
  // A server that starts instead is stopped after 20 s (exit 124).
  std::pair<int, std::string> refused(const std::string& args) {
    const std::string err = (dir_ / "err.txt").string();
    const int raw =
        std::system(("timeout 20 " + std::string(GPUOLAP_BINARY) + " serve " + args + " 2>" + err + " </dev/null").c_str());
    std::ifstream in(err);
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, std::string(std::istreambuf_iterator<char>(in), {})};
  }
};

TEST_F(ServeCommandTest, ATokenFileGuardsWritesAndAnOpenAddressWithoutOneIsWarnedAbout) {
  std::ofstream(dir_ / "token") << "t0ken\n";
  {
    ServerProcess server;
    ASSERT_TRUE(server.start(dir_ / "cube", dir_ / "serve.err", {"--token-file", (dir_ / "token").string()}));
    EXPECT_EQ(server.stderr_text().find("warning"), std::string::npos);
    httplib::Client client("127.0.0.1", server.port());
    const std::string body = R"({"path": "b,2025", "value": 1})";
    EXPECT_EQ(client.Post("/cell/replace", body, "application/json")->status, 401);
    EXPECT_EQ(client.Post("/cell/replace", {{"Authorization", "Bearer t0ken"}}, body, "application/json")->status, 200);
    EXPECT_EQ(server.terminate(), 0);
  }
  ServerProcess open;
  ASSERT_TRUE(open.start(dir_ / "cube", dir_ / "serve.err", {"--host", "0.0.0.0"}));
  EXPECT_NE(open.stderr_text().find("warning: serving on 0.0.0.0, not a loopback address, without --token-file"),
            std::string::npos)
      << open.stderr_text();
}

TEST_F(ServeCommandTest, StartUpErrorsExit2NamingTheProblem) {
  std::ofstream(dir_ / "empty") << "\n";
  auto [status, err] = refused("--cube " + (dir_ / "cube").string() + " --port 0 --token-file " + (dir_ / "empty").string());
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("the token file is empty"), std::string::npos) << err;
  std::tie(status, err) = refused("--cube " + (dir_ / "nothing").string() + " --port 0");
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("no cube store here"), std::string::npos) << err;
  std::tie(status, err) = refused("--cube " + (dir_ / "cube").string() + " --port 0 --engine warp-drive");
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("unknown engine 'warp-drive'"), std::string::npos) << err;
  std::tie(status, err) = refused("--cube " + (dir_ / "cube").string() + " --port 0 --host 256.1.1.1");
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("cannot listen on 256.1.1.1:0"), std::string::npos) << err;
  ServerProcess first;
  ASSERT_TRUE(first.start(dir_ / "cube", dir_ / "serve.err"));
  std::tie(status, err) = refused("--cube " + (dir_ / "cube").string() + " --port 0");
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("in use by another process"), std::string::npos) << err;
}

// A second server on a port in use, even over another cube, is refused:
// otherwise the kernel deals the port's requests to both (issue 24, item 0).
TEST_F(ServeCommandTest, APortInUseIsRefused) {
  write_shop_store(dir_ / "other");
  ServerProcess first;
  ASSERT_TRUE(first.start(dir_ / "cube", dir_ / "serve.err"));
  const std::string port = std::to_string(first.port());
  const auto [status, err] = refused("--cube " + (dir_ / "other").string() + " --port " + port);
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("cannot listen on 127.0.0.1:" + port + " (in use"), std::string::npos) << err;
  httplib::Client client("127.0.0.1", first.port());
  EXPECT_EQ(client.Get("/server/info")->status, 200);
}

}  // namespace
}  // namespace gpuolap::server::testing
