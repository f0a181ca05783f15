// `gpuolap serve` and `gpuolap shell`: a durable cube behind the HTTP API or
// the line interface.
#include <fmt/format.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "commands.hpp"
#include "server/cube_api.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
#include "server/http_api.hpp"
#include "progress.hpp"
#include "server/shell.hpp"
#include "server/sql_api.hpp"
#include "server/htree_api.hpp"
#include "htree/gpu/htree_gpu.hpp"
#include "table/database.hpp"

namespace gpuolap::cli {

namespace {

std::unique_ptr<olap::CubeService> open_service(const std::string& dir, const std::string& engine,
                                                  uint64_t checkpoint_bytes, LogRecovery recovery,
                                                  const GpuOptions& gpu = {}) {
  auto cube = [&] {
    Progress progress("loading " + dir);
    return std::make_unique<DurableCube>(
        dir, progress.callback(),
        [&] {
          throw InputError(
              fmt::format("{}: in use by another process (a server, a shell or a write); stop it first", dir));
        },
        recovery);
  }();
  const Recovery& r = cube->recovery();
  if (!r.problem.empty())
    std::cerr << fmt::format("gpuolap: warning: {}: {}{}\n", log_file(dir).string(), r.problem,
                             r.bytes_dropped ? fmt::format(" (the {} bytes are kept in cube.wal.bad)", r.bytes_dropped) : "");
  return std::make_unique<olap::CubeService>(std::move(cube), engine, checkpoint_bytes, gpu);
}

std::string read_token(const std::string& path) {
  std::string token = read_text_file(path);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) throw InputError(fmt::format("{}: the token file is empty", path));
  if (token.find_first_of(" \t\r\n") != std::string::npos)
    throw InputError(fmt::format("{}: the token must be one word", path));
  return token;
}

}  // namespace

int run_serve(const ServeOptions& o) {
  // A server loads its kernels when it starts, not at its first request:
  // CUDA 12 loads a kernel on its first launch (lazy loading), which made a
  // served H-tree's first append 10 ms slower than the others (20.5 against
  // 9.9-10.8 ms in the GPU on an H100). Set before any CUDA call; a value
  // the user set is kept.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  server::HttpOptions http;
  http.host = o.host;
  http.port = o.port;
  http.threads = o.threads;
  http.max_connections = o.max_connections;
  const auto milliseconds = [](double seconds) { return std::chrono::milliseconds(std::llround(seconds * 1000)); };
  http.request_timeout = milliseconds(o.request_timeout_s);
  http.idle_timeout = milliseconds(o.idle_timeout_s);
  // Every connection is a file; the soft limit is often 1,024.
  const uint64_t open_files = server::raise_open_file_limit();
  if (open_files < static_cast<uint64_t>(o.max_connections) + 64)
    std::cerr << fmt::format("gpuolap: warning: the open-file limit is {}, fewer than --max-connections {} needs; "
                             "connections past it wait in the listen queue\n",
                             open_files, o.max_connections);
  if (!o.token_file.empty()) http.token = read_token(o.token_file);
  if (http.token.empty() && !server::is_loopback(o.host))
    std::cerr << fmt::format("gpuolap: warning: serving on {}, not a loopback address, without --token-file: anyone who "
                             "reaches it can write\n", o.host);
  server::Limits limits;
  limits.max_cells = o.max_cells;
  limits.max_body_bytes = o.max_body_bytes;

  // Signals go to one thread, which stops the server; the others never see them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  if (o.cube.empty() && o.db.empty() && o.htree.empty())
    throw InputError("serve: give --cube DIR, --db DIR, --htree TREE, or several");
  std::unique_ptr<olap::CubeService> service;
  std::unique_ptr<server::CubeApi> cube_api;
  if (!o.cube.empty()) {
    GpuOptions gpu;
    gpu.gpus = o.gpus;
    service = open_service(o.cube, o.engine, o.checkpoint_bytes, o.recovery, gpu);
    cube_api = std::make_unique<server::CubeApi>(*service, limits);
  }
  std::unique_ptr<server::SqlApi> sql_api;
  if (!o.db.empty()) sql_api = std::make_unique<server::SqlApi>(table::Database(o.db), o.max_rows);
  std::unique_ptr<server::HTreeApi> htree_api;
  if (!o.htree.empty()) {
    htree::GpuKnobs knobs;
    knobs.online = htree::parse_online_kernel(o.htree_online);
    htree_api = std::make_unique<server::HTreeApi>(o.htree, htree::parse_engine(o.htree_engine), knobs);
  }
  server::HttpApi server(cube_api.get(), sql_api.get(), htree_api.get(), http, limits.max_body_bytes);
  const int port = server.bind();
  if (service) {
    const auto facts = service->snapshot();
    std::cerr << fmt::format("gpuolap serve: cube '{}' ({} filled cells, {} log records replayed), engine {}{}\n",
                             service->schema().name(), facts->size(), service->recovery().records_replayed, o.engine,
                             o.gpus.unset() ? "" : " on GPUs " + gpu_set_name(o.gpus));
  }
  if (sql_api)
    std::cerr << fmt::format("gpuolap serve: database {} ({} tables) at POST /sql\n", o.db,
                             sql_api->info()["tables"].size());
  if (htree_api) {
    const auto info = htree_api->info();
    std::cerr << fmt::format("gpuolap serve: H-tree {} ({} tuples, {} nodes), engine {}, at POST /htree/append and "
                             "/htree/query\n",
                             o.htree, info["tuples"].get<std::uint64_t>(), info["nodes"].get<std::uint64_t>(),
                             info["engine"].get<std::string>());
  }
  if (service) std::cerr << fmt::format("gpuolap serve: the pivot page is at http://{}:{}/\n", o.host, port);
  std::cerr << fmt::format("listening on http://{}:{}\n", o.host, port) << std::flush;

  std::atomic<bool> served{false};
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    // A signal may come before the server listens, when stop() does nothing yet.
    while (!served) {
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  server.serve();
  served = true;
  pthread_kill(waiter.native_handle(), SIGTERM);  // wakes the waiter if the server stopped by itself
  waiter.join();
  std::cerr << "gpuolap serve: stopped\n";
  return 0;
}

int run_shell(const ShellOptions& o) {
  auto service = open_service(o.cube, o.engine, kCheckpointLogBytes, o.recovery);
  server::CubeApi api(*service, server::Limits{});
  server::run_shell(api, std::cin, std::cout);
  return 0;
}

}  // namespace gpuolap::cli
