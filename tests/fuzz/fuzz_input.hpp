#pragma once
// What the harnesses share: the fuzzer's bytes as text, the error a parser
// may throw (InputError: a refusal, the expected answer to bad input), a
// scratch directory for the harnesses that read files, and a cap on the
// threads of the parallel code.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <tbb/global_control.h>

#include "gpuolap/error.hpp"

namespace gpuolap::fuzz {

// The parallel code (cpu-parallel's TBB tasks) runs on two threads, as on
// CI's two cores, whatever the host; GPUOLAP_FUZZ_THREADS=N sets another
// count. A campaign of a job per core (scripts/fuzz_campaign.sh) takes 1:
// a second thread a job, spinning between an input's parallel loops, made
// every job's core run two threads.
inline std::size_t parallel_threads() {
  const char* set = std::getenv("GPUOLAP_FUZZ_THREADS");
  const long n = set ? std::strtol(set, nullptr, 10) : 2;
  return n >= 1 && n <= 256 ? static_cast<std::size_t>(n) : 2;
}
inline const tbb::global_control kParallelThreads{tbb::global_control::max_allowed_parallelism, parallel_threads()};

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Stops the run on an invariant a parser broke: libFuzzer saves the input.
[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz: invariant broken: %s\n", what.c_str());
  std::abort();
}

// A directory of this process's own under TMPDIR (a tmpfs keeps the file
// harnesses fast), removed when the process exits normally.
// (Never destroyed, so that the exit handler still finds its name.)
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path* dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpuolap-fuzz-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) broken("cannot create a scratch directory under TMPDIR");
    const auto* made = new std::filesystem::path(pattern);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return made;
  }();
  return *dir;
}

}  // namespace gpuolap::fuzz
