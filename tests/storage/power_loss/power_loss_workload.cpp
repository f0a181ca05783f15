// The workload the power-loss check records (run under trace_shim): creates
// a store as `gpuolap create` does (store lock, then save_store), then writes through a DurableCube as the
// cube service does — a group of records appended, one sync, then each
// applied and acknowledged — and checkpoints every so many records. Each
// step it reports on the marks file, whose writes the shim puts into the
// trace in order with the store's file operations:
//   created      the store exists (save_store returned)
//   begin N      record N is about to be appended
//   ack N        record N is durable and acknowledged
//   checkpoint   a checkpoint starts
// Given AFTER, it creates nothing: STORE_DIR is a store left by a power cut
// that holds the cube after write AFTER; it opens it as a writer (which
// repairs it) and goes on with writes AFTER+1 to AFTER+WRITES, so that a
// cut during or after that repair is checked too.
// Usage: power_loss_workload STORE_DIR MARKS_FILE WRITES CHECKPOINT_EVERY SEED [AFTER]
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>

#include "gpuolap/cube_store.hpp"
#include "gpuolap/durable_cube.hpp"
#include "gpuolap/store_lock.hpp"
#include "workload.hpp"

namespace {

void mark(int fd, const std::string& line) {
  const std::string text = line + "\n";
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    std::perror("power_loss_workload: marks file");
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuolap;
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: %s STORE_DIR MARKS_FILE WRITES CHECKPOINT_EVERY SEED [AFTER]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int marks = ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (marks < 0) {
    std::perror(argv[2]);
    return 1;
  }
  power_loss::WorkloadShape shape;
  shape.writes = std::stoull(argv[3]);
  shape.checkpoint_every = std::stoull(argv[4]);
  shape.seed = std::stoull(argv[5]);
  const bool recovering = argc == 7;
  const uint64_t first = recovering ? std::stoull(argv[6]) + 1 : 1, last_write = first + shape.writes - 1;
  try {
    if (!recovering) {
      // As run_create (gpuolap create): the lock first, which makes the directory.
      Cube start = power_loss::workload_cube();
      const StoreLock lock(dir);
      save_store(dir, start.schema, start.facts);
      mark(marks, "created");
    }
    DurableCube cube(dir);
    uint64_t since_checkpoint = 0;
    for (uint64_t n = first; n <= last_write;) {
      const uint64_t last = std::min(last_write, n + power_loss::group_size(shape.seed, n) - 1);
      std::vector<LogRecord> group;
      for (uint64_t i = n; i <= last; ++i) {
        group.push_back(power_loss::workload_record(cube.schema(), shape.seed, i));
        mark(marks, fmt::format("begin {}", i));
        cube.append(group.back());
      }
      cube.sync();
      // The log numbers records from 1 in each log; the marks use the workload's numbers.
      for (uint64_t i = n; i <= last; ++i) {
        apply_record(cube.store(), group[i - n]);
        mark(marks, fmt::format("ack {}", i));
      }
      since_checkpoint += group.size();
      n = last + 1;
      if (since_checkpoint >= shape.checkpoint_every) {
        mark(marks, "checkpoint");
        cube.checkpoint();
        since_checkpoint = 0;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "power_loss_workload: %s\n", e.what());
    return 1;
  }
  return 0;
}
