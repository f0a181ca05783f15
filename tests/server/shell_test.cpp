// `gpuolap shell` driven over a pipe, as a script would: one command a line
// in, one JSON answer a line out; errors answer and the shell goes on.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "server_fixture.hpp"
#include "server/shell.hpp"
#include "server_process.hpp"

namespace gpuolap::server::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class ShellTest : public ShopCubeCommandTest {
 protected:
  ShellTest() : ShopCubeCommandTest("shell_test") {}

  // Runs the shell on `input`; returns (exit status, stdout lines, stderr).
  std::tuple<int, std::vector<std::string>, std::string> shell(const std::string& input) {
    std::ofstream(dir_ / "in.txt") << input;
    const std::string cmd = std::string(GPUOLAP_BINARY) + " shell --cube " + (dir_ / "cube").string() + " <" +
                            (dir_ / "in.txt").string() + " >" + (dir_ / "out.txt").string() + " 2>" +
                            (dir_ / "err.txt").string();
    const int raw = std::system(cmd.c_str());
    std::ifstream out(dir_ / "out.txt"), err(dir_ / "err.txt");
    std::vector<std::string> lines;
    for (std::string line; std::getline(out, line);) lines.push_back(line);
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, lines, std::string(std::istreambuf_iterator<char>(err), {})};
  }
};

TEST_F(ShellTest, AnswersEachCommandOnOneLine) {
  const auto [status, lines, err] = shell(
      "info\n"
      "value a,2024\n"
      "value [\"All\", \"Y\"]\n"
      "  # a comment, and an empty line\n\n"
      "query {\"measure\": \"Sales\", \"area\": {\"Product\": [\"All\"], \"Year\": [\"2024\", \"2025\"]}}\n"
      "write {\"path\": \"b,2025\", \"value\": 7}\n"
      "value b,2025\n"
      "write {\"cells\": [{\"path\": \"c,2024\", \"value\": 1}, {\"path\": \"All,2024\", \"value\": 100}]}\n"
      "elements Year\n"
      "bogus\n"
      "query {\"measure\":\n"
      "value a,1999\n"
      "save\n"
      "exit\n"
      "value a,2024\n");
  ASSERT_EQ(status, 0) << err;
  ASSERT_EQ(lines.size(), 12u) << err;
  std::vector<json> a;
  for (const auto& l : lines) a.push_back(json::parse(l));
  EXPECT_EQ(a[0]["filled_cells"], 4);
  EXPECT_EQ(a[1]["value"], 10.0);
  EXPECT_EQ(a[2]["value"], 80.0);
  EXPECT_EQ(a[3]["cells"], json::parse(R"([{"path": ["All", "2024"], "value": 50.0}, {"path": ["All", "2025"], "value": 30.0}])"));
  EXPECT_EQ(a[4]["ok"], true);
  EXPECT_EQ(a[5]["value"], 7.0);
  EXPECT_EQ(a[6]["cells_written"], 3);  // c,2024, then a and b under All,2024
  EXPECT_EQ(a[7]["dimension"], "Year");
  EXPECT_EQ(a[8]["error"], "bad_request");
  EXPECT_NE(a[8]["detail"].get<std::string>().find("line 11: unknown command 'bogus'"), std::string::npos) << lines[8];
  EXPECT_NE(a[9]["detail"].get<std::string>().find("malformed JSON"), std::string::npos) << lines[9];
  EXPECT_NE(a[10]["detail"].get<std::string>().find("no element '1999'"), std::string::npos) << lines[10];
  EXPECT_EQ(a[11]["ok"], true);
  // Saved: the snapshot alone holds the writes.
  const Cube cube = load_store(dir_ / "cube");
  EXPECT_EQ(cube.facts.size(), 6u);
}

// `shell --help` lists every command the shell answers (it listed 6 of 9),
// and the shell takes each command the list names.
TEST_F(ShellTest, HelpListsEveryCommand) {
  const std::string help_file = (dir_ / "help.txt").string();
  ASSERT_EQ(std::system((std::string(GPUOLAP_BINARY) + " shell --help >" + help_file).c_str()), 0);
  std::ifstream in(help_file);
  const std::string help(std::istreambuf_iterator<char>(in), {});
  std::string input;
  const std::string commands = shell_commands();
  for (size_t at = 0; at < commands.size();) {
    const size_t comma = std::min(commands.find(", ", at), commands.size());
    const std::string name = commands.substr(at, comma - at);
    EXPECT_NE(help.find(name), std::string::npos) << name << " missing from: " << help;
    if (name != "exit") input += name + (name == "elements" ? " Year" : name == "value" ? " a,2024" : " {}") + "\n";
    at = comma + 2;
  }
  for (const char* known : {"query", "value", "values", "export", "elements", "write", "info", "save", "exit"})
    EXPECT_NE(commands.find(known), std::string::npos) << known;
  const auto [status, lines, err] = shell(input);
  ASSERT_EQ(status, 0) << err;
  for (const auto& l : lines) EXPECT_EQ(l.find("unknown command"), std::string::npos) << l;
}

TEST_F(ShellTest, ABodyThatIsNoObjectIsABadRequestForEveryCommand) {
  const auto [status, lines, err] = shell("query [1]\nvalues 5\nexport [1]\nexport \"x\"\nwrite [1]\nvalue {}\n");
  ASSERT_EQ(status, 0) << err;
  ASSERT_EQ(lines.size(), 6u) << err;
  for (const auto& l : lines) EXPECT_EQ(json::parse(l)["error"], "bad_request") << l;
}

TEST_F(ShellTest, WritesAreLoggedAndACubeInUseIsRefused) {
  ASSERT_EQ(std::get<0>(shell("write {\"path\": \"b,2025\", \"value\": 7}\n")), 0);
  EXPECT_EQ(load_cube_with_log(dir_ / "cube").facts.size(), 5u);  // in the log, not yet in the snapshot
  EXPECT_EQ(load_store(dir_ / "cube").facts.size(), 4u);
  ServerProcess server;
  ASSERT_TRUE(server.start(dir_ / "cube", dir_ / "serve.err"));
  const auto [status, lines, err] = shell("info\n");
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("in use by another process"), std::string::npos) << err;
}

}  // namespace
}  // namespace gpuolap::server::testing
