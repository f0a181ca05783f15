#pragma once
// `gpuolap serve` as a child process on a free loopback port, for tests that
// kill it (kill -9) and start it again.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace gpuolap::server::testing {

class ServerProcess {
 public:
  // Starts the server and waits until it listens; fails the test (returning
  // false) if it exits first.
  bool start(const std::filesystem::path& cube, const std::filesystem::path& log, std::vector<std::string> extra = {}) {
    log_ = log;
    std::filesystem::remove(log);
    std::vector<std::string> args{GPUOLAP_BINARY, "serve", "--cube", cube.string(), "--port", "0", "--engine", "cpu-serial"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 2);
      const int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0);
      ::dup2(null, 1);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    const std::regex listening("listening on http://[^:]+:([0-9]+)");
    // Waits for start-up however long it takes (bounded by the test's own
    // time limit), so a slow machine makes the test slow, not flaky.
    for (int i = 0; i < 60000; ++i) {
      std::smatch m;
      const std::string text = stderr_text();
      if (std::regex_search(text, m, listening)) {
        port_ = std::stoi(m[1]);
        return true;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        ADD_FAILURE() << "the server exited before listening:\n" << text;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ADD_FAILURE() << "the server did not start listening";
    return false;
  }
  void kill9() { stop(SIGKILL); }
  // SIGTERM: a clean stop; returns the exit status.
  int terminate() { return stop(SIGTERM); }
  ~ServerProcess() { stop(SIGKILL); }

  int port() const { return port_; }
  std::string stderr_text() const {
    std::ifstream in(log_);
    return {std::istreambuf_iterator<char>(in), {}};
  }

 private:
  int stop(int signal) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  pid_t pid_ = -1;
  int port_ = 0;
  std::filesystem::path log_;
};

}  // namespace gpuolap::server::testing
