// The recording shim of the power-loss check, loaded with LD_PRELOAD into
// the workload: it wraps the libc calls that change files or make them
// durable and, for paths under $POWER_LOSS_WATCH, appends each call that
// succeeded to $POWER_LOSS_TRACE (trace_format.hpp) in call order, with
// the bytes written. Writes to $POWER_LOSS_MARKS become mark events, in
// order with the file operations, so that the trace says which writes were
// acknowledged before each operation.
//
// Only calls through the dynamic symbol table can be seen: libc's own
// stdio writes its files through internal calls, so opening a watched file
// with fopen for writing aborts the workload instead of going unrecorded.
// The check also rebuilds the tree from the whole trace and compares it
// with the real one, so any other unseen change fails it.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include "trace_format.hpp"

namespace {

using gpuolap::power_loss::EventHeader;
using gpuolap::power_loss::EventKind;

template <typename Fn>
Fn real(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) {
    fprintf(stderr, "power-loss shim: no libc function %s\n", name);
    abort();
  }
  return reinterpret_cast<Fn>(p);
}
#define REAL(name) static const auto real_##name = real<decltype(&::name)>(#name)

constexpr int kMaxFd = 1 << 16;
enum FdRole : uint8_t { untracked = 0, watched = 1, marks = 2 };

struct Shim {
  bool active = false;
  std::string watch;   // normalised, no trailing slash
  std::string marks;
  bool hide_directory_fsync = false;
  bool hide_file_fsync = false;
  bool hide_fdatasync = false;
  int trace_fd = -1;
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  std::array<FdRole, kMaxFd> role{};
  std::array<bool, kMaxFd> append{};
  std::array<bool, kMaxFd> directory{};
};

Shim& shim() {
  static Shim s;
  return s;
}

std::string normal(const std::string& p) { return std::filesystem::path(p).lexically_normal().string(); }

// The absolute path `path` names relative to `dirfd`.
std::string absolute(int dirfd, const char* path) {
  if (path[0] == '/') return normal(path);
  std::string base;
  if (dirfd == AT_FDCWD) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return "";
    base = cwd;
  } else {
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    const ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0) return "";
    base.assign(target, static_cast<size_t>(n));
  }
  return normal(base + "/" + path);
}

bool watched_path(const std::string& p) {
  const Shim& s = shim();
  return s.active && (p == s.watch || (p.size() > s.watch.size() && p.compare(0, s.watch.size(), s.watch) == 0 &&
                                       p[s.watch.size()] == '/'));
}

void write_fully(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::syscall(SYS_write, fd, p, n);
    if (w <= 0) {
      fprintf(stderr, "power-loss shim: cannot write the trace\n");
      abort();
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// Appends one event; the caller holds the mutex.
void record(EventKind kind, int fd, int64_t offset, int flags, const std::string& path, const std::string& path2,
            const void* data, uint64_t data_bytes) {
  EventHeader h{};
  h.kind = kind;
  h.fd = fd;
  h.offset = offset;
  h.flags = flags;
  h.path_bytes = static_cast<uint32_t>(path.size());
  h.path2_bytes = static_cast<uint32_t>(path2.size());
  h.data_bytes = data_bytes;
  const int t = shim().trace_fd;
  write_fully(t, &h, sizeof h);
  write_fully(t, path.data(), path.size());
  write_fully(t, path2.data(), path2.size());
  if (data_bytes > 0) write_fully(t, data, data_bytes);
}

struct Locked {
  Locked() { pthread_mutex_lock(&shim().mutex); }
  ~Locked() { pthread_mutex_unlock(&shim().mutex); }
};

__attribute__((constructor)) void start() {
  Shim& s = shim();
  const char* watch = getenv(gpuolap::power_loss::kWatchedDirVariable);
  const char* trace = getenv(gpuolap::power_loss::kTraceVariable);
  if (!watch || !trace) return;
  s.watch = normal(watch);
  while (s.watch.size() > 1 && s.watch.back() == '/') s.watch.pop_back();
  if (const char* marks = getenv(gpuolap::power_loss::kMarksVariable)) s.marks = normal(marks);
  if (const char* hide = getenv(gpuolap::power_loss::kHideVariable)) {
    const std::string h = hide;
    s.hide_directory_fsync = h == "directory-fsync";
    s.hide_file_fsync = h == "file-fsync";
    s.hide_fdatasync = h == "fdatasync";
    if (!s.hide_directory_fsync && !s.hide_file_fsync && !s.hide_fdatasync) {
      fprintf(stderr, "power-loss shim: %s=%s: expected directory-fsync, file-fsync or fdatasync\n",
              gpuolap::power_loss::kHideVariable, hide);
      abort();
    }
  }
  s.trace_fd = static_cast<int>(::syscall(SYS_openat, AT_FDCWD, trace, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (s.trace_fd < 0) {
    fprintf(stderr, "power-loss shim: cannot create the trace %s\n", trace);
    abort();
  }
  s.active = true;
}

// After a successful open of `path` (relative to dirfd) giving `fd`.
void opened(int dirfd, const char* path, int flags, int fd) {
  if (fd < 0 || !shim().active) return;
  const std::string p = absolute(dirfd, path);
  Shim& s = shim();
  const bool is_marks = !s.marks.empty() && p == s.marks;
  if (!is_marks && !watched_path(p)) {
    // The number may have been a watched file's, closed where the shim
    // could not see it (closedir, fclose inside libc): it is not one now.
    if (fd < kMaxFd) s.role[fd] = untracked;
    return;
  }
  if (fd >= kMaxFd) {
    fprintf(stderr, "power-loss shim: descriptor %d of %s is past what the shim tracks\n", fd, p.c_str());
    abort();
  }
  Locked lock;
  s.role[fd] = is_marks ? marks : watched;
  s.append[fd] = (flags & O_APPEND) != 0;
  struct stat st{};
  s.directory[fd] = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  if (!is_marks) record(EventKind::open, fd, 0, flags, p, "", nullptr, 0);
}

FdRole role_of(int fd) { return fd >= 0 && fd < kMaxFd ? shim().role[fd] : untracked; }

void wrote(int fd, int64_t offset, const void* data, ssize_t n) {
  if (n <= 0) return;
  Locked lock;
  if (role_of(fd) == marks)
    record(EventKind::mark, fd, 0, 0, "", "", data, static_cast<uint64_t>(n));
  else
    record(EventKind::write, fd, offset, 0, "", "", data, static_cast<uint64_t>(n));
}

void synced(int fd, EventKind kind) {
  Shim& s = shim();
  if (role_of(fd) != watched) return;
  const bool hidden = kind == EventKind::fdatasync ? s.hide_fdatasync
                      : s.directory[fd]              ? s.hide_directory_fsync
                                                     : s.hide_file_fsync;
  if (hidden) return;
  Locked lock;
  record(kind, fd, 0, 0, "", "", nullptr, 0);
}

void path_event(EventKind kind, int dirfd, const char* path, int dirfd2 = AT_FDCWD, const char* path2 = nullptr) {
  if (!shim().active) return;
  const std::string p = absolute(dirfd, path);
  const std::string p2 = path2 ? absolute(dirfd2, path2) : "";
  const bool in = watched_path(p), in2 = path2 && watched_path(p2);
  if (!in && !in2) return;
  if (path2 && in != in2) {
    fprintf(stderr, "power-loss shim: %s -> %s crosses the watched tree\n", p.c_str(), p2.c_str());
    abort();
  }
  Locked lock;
  record(kind, -1, 0, 0, p, p2, nullptr, 0);
}

bool is_directory(int dirfd, const char* path) {
  struct stat st{};
  return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

mode_t mode_argument(int flags, va_list args) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? static_cast<mode_t>(va_arg(args, int)) : 0;
}

void refuse_stdio_write(const char* path, const char* mode) {
  if (!shim().active || !path) return;
  const bool writing = strpbrk(mode, "wa+") != nullptr;
  if (writing && watched_path(absolute(AT_FDCWD, path))) {
    fprintf(stderr, "power-loss shim: %s opened with stdio for writing; its writes could not be recorded\n", path);
    abort();
  }
}

// Before a descriptor is closed, by close or inside closedir or fclose.
void closing(int fd) {
  if (role_of(fd) == untracked) return;
  Locked lock;
  if (shim().role[fd] == watched) record(EventKind::close, fd, 0, 0, "", "", nullptr, 0);
  shim().role[fd] = untracked;
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  REAL(open);
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  const int fd = real_open(path, flags, mode);
  opened(AT_FDCWD, path, flags, fd);
  return fd;
}

int open64(const char* path, int flags, ...) {
  REAL(open64);
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  const int fd = real_open64(path, flags, mode);
  opened(AT_FDCWD, path, flags, fd);
  return fd;
}

int openat(int dirfd, const char* path, int flags, ...) {
  REAL(openat);
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  const int fd = real_openat(dirfd, path, flags, mode);
  opened(dirfd, path, flags, fd);
  return fd;
}

int openat64(int dirfd, const char* path, int flags, ...) {
  REAL(openat64);
  va_list args;
  va_start(args, flags);
  const mode_t mode = mode_argument(flags, args);
  va_end(args);
  const int fd = real_openat64(dirfd, path, flags, mode);
  opened(dirfd, path, flags, fd);
  return fd;
}

// The fortified forms (_FORTIFY_SOURCE) that compilers call for open().
int __open_2(const char* path, int flags) {
  static const auto real___open_2 = real<int (*)(const char*, int)>("__open_2");
  const int fd = real___open_2(path, flags);
  opened(AT_FDCWD, path, flags, fd);
  return fd;
}
int __open64_2(const char* path, int flags) {
  static const auto real___open64_2 = real<int (*)(const char*, int)>("__open64_2");
  const int fd = real___open64_2(path, flags);
  opened(AT_FDCWD, path, flags, fd);
  return fd;
}
int __openat_2(int dirfd, const char* path, int flags) {
  static const auto real___openat_2 = real<int (*)(int, const char*, int)>("__openat_2");
  const int fd = real___openat_2(dirfd, path, flags);
  opened(dirfd, path, flags, fd);
  return fd;
}

int creat(const char* path, mode_t mode) {
  REAL(creat);
  const int fd = real_creat(path, mode);
  opened(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, fd);
  return fd;
}
int creat64(const char* path, mode_t mode) {
  REAL(creat64);
  const int fd = real_creat64(path, mode);
  opened(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, fd);
  return fd;
}

int mkstemp(char* pattern) {
  REAL(mkstemp);
  const int fd = real_mkstemp(pattern);
  opened(AT_FDCWD, pattern, O_RDWR | O_CREAT | O_EXCL, fd);
  return fd;
}
int mkstemp64(char* pattern) {
  REAL(mkstemp64);
  const int fd = real_mkstemp64(pattern);
  opened(AT_FDCWD, pattern, O_RDWR | O_CREAT | O_EXCL, fd);
  return fd;
}
int mkostemp(char* pattern, int flags) {
  REAL(mkostemp);
  const int fd = real_mkostemp(pattern, flags);
  opened(AT_FDCWD, pattern, O_RDWR | O_CREAT | O_EXCL | flags, fd);
  return fd;
}
int mkostemp64(char* pattern, int flags) {
  REAL(mkostemp64);
  const int fd = real_mkostemp64(pattern, flags);
  opened(AT_FDCWD, pattern, O_RDWR | O_CREAT | O_EXCL | flags, fd);
  return fd;
}

FILE* fopen(const char* path, const char* mode) {
  REAL(fopen);
  refuse_stdio_write(path, mode);
  return real_fopen(path, mode);
}
FILE* fopen64(const char* path, const char* mode) {
  REAL(fopen64);
  refuse_stdio_write(path, mode);
  return real_fopen64(path, mode);
}
FILE* freopen(const char* path, const char* mode, FILE* stream) {
  REAL(freopen);
  refuse_stdio_write(path, mode);
  return real_freopen(path, mode, stream);
}

int close(int fd) {
  REAL(close);
  closing(fd);
  return real_close(fd);
}

// std::filesystem's directory iterators open a directory with openat and
// close it with closedir, whose close the shim does not see otherwise.
int closedir(DIR* dir) {
  REAL(closedir);
  if (dir) closing(dirfd(dir));
  return real_closedir(dir);
}

int fclose(FILE* file) {
  REAL(fclose);
  if (file) closing(fileno(file));
  return real_fclose(file);
}

ssize_t write(int fd, const void* data, size_t n) {
  REAL(write);
  if (role_of(fd) == untracked) return real_write(fd, data, n);
  const int64_t offset = shim().append[fd] ? -1 : lseek(fd, 0, SEEK_CUR);
  const ssize_t w = real_write(fd, data, n);
  wrote(fd, offset, data, w);
  return w;
}

ssize_t pwrite(int fd, const void* data, size_t n, off_t offset) {
  REAL(pwrite);
  const ssize_t w = real_pwrite(fd, data, n, offset);
  if (role_of(fd) != untracked) wrote(fd, offset, data, w);
  return w;
}
ssize_t pwrite64(int fd, const void* data, size_t n, off64_t offset) {
  REAL(pwrite64);
  const ssize_t w = real_pwrite64(fd, data, n, offset);
  if (role_of(fd) != untracked) wrote(fd, offset, data, w);
  return w;
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  REAL(writev);
  if (role_of(fd) == untracked) return real_writev(fd, iov, count);
  const int64_t offset = shim().append[fd] ? -1 : lseek(fd, 0, SEEK_CUR);
  const ssize_t w = real_writev(fd, iov, count);
  if (w > 0) {
    std::string bytes;
    for (int i = 0; i < count && bytes.size() < static_cast<size_t>(w); ++i)
      bytes.append(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
    bytes.resize(static_cast<size_t>(w));
    wrote(fd, offset, bytes.data(), w);
  }
  return w;
}

int ftruncate(int fd, off_t size) {
  REAL(ftruncate);
  const int r = real_ftruncate(fd, size);
  if (r == 0 && role_of(fd) == watched) {
    Locked lock;
    record(EventKind::truncate, fd, size, 0, "", "", nullptr, 0);
  }
  return r;
}
int ftruncate64(int fd, off64_t size) {
  REAL(ftruncate64);
  const int r = real_ftruncate64(fd, size);
  if (r == 0 && role_of(fd) == watched) {
    Locked lock;
    record(EventKind::truncate, fd, size, 0, "", "", nullptr, 0);
  }
  return r;
}
int truncate(const char* path, off_t size) {
  REAL(truncate);
  if (shim().active && watched_path(absolute(AT_FDCWD, path))) {
    fprintf(stderr, "power-loss shim: truncate(%s) by path is not recorded; the store truncates through its descriptor\n",
            path);
    abort();
  }
  return real_truncate(path, size);
}

int fsync(int fd) {
  REAL(fsync);
  const int r = real_fsync(fd);
  if (r == 0) synced(fd, EventKind::fsync);
  return r;
}
int fdatasync(int fd) {
  REAL(fdatasync);
  const int r = real_fdatasync(fd);
  if (r == 0) synced(fd, EventKind::fdatasync);
  return r;
}
void sync() {
  REAL(sync);
  real_sync();
  if (shim().active) {
    Locked lock;
    record(EventKind::sync_all, -1, 0, 0, "", "", nullptr, 0);
  }
}
int syncfs(int fd) {
  REAL(syncfs);
  const int r = real_syncfs(fd);
  if (r == 0 && shim().active) {
    Locked lock;
    record(EventKind::sync_all, -1, 0, 0, "", "", nullptr, 0);
  }
  return r;
}

int rename(const char* from, const char* to) {
  REAL(rename);
  const int r = real_rename(from, to);
  if (r == 0) path_event(EventKind::rename, AT_FDCWD, from, AT_FDCWD, to);
  return r;
}
int renameat(int fromfd, const char* from, int tofd, const char* to) {
  REAL(renameat);
  const int r = real_renameat(fromfd, from, tofd, to);
  if (r == 0) path_event(EventKind::rename, fromfd, from, tofd, to);
  return r;
}
int renameat2(int fromfd, const char* from, int tofd, const char* to, unsigned int flags) {
  REAL(renameat2);
  if (flags != 0 && shim().active && watched_path(absolute(fromfd, from))) {
    fprintf(stderr, "power-loss shim: renameat2 with flags %u is not modelled\n", flags);
    abort();
  }
  const int r = real_renameat2(fromfd, from, tofd, to, flags);
  if (r == 0) path_event(EventKind::rename, fromfd, from, tofd, to);
  return r;
}

int unlink(const char* path) {
  REAL(unlink);
  const int r = real_unlink(path);
  if (r == 0) path_event(EventKind::unlink, AT_FDCWD, path);
  return r;
}
int unlinkat(int dirfd, const char* path, int flags) {
  REAL(unlinkat);
  const int r = real_unlinkat(dirfd, path, flags);
  if (r == 0) path_event(flags & AT_REMOVEDIR ? EventKind::rmdir : EventKind::unlink, dirfd, path);
  return r;
}
int rmdir(const char* path) {
  REAL(rmdir);
  const int r = real_rmdir(path);
  if (r == 0) path_event(EventKind::rmdir, AT_FDCWD, path);
  return r;
}
// libc's remove() unlinks through internal calls: record it here.
int remove(const char* path) {
  REAL(remove);
  const bool directory = is_directory(AT_FDCWD, path);
  const int r = real_remove(path);
  if (r == 0) path_event(directory ? EventKind::rmdir : EventKind::unlink, AT_FDCWD, path);
  return r;
}

int mkdir(const char* path, mode_t mode) {
  REAL(mkdir);
  const int r = real_mkdir(path, mode);
  if (r == 0) path_event(EventKind::mkdir, AT_FDCWD, path);
  return r;
}
int mkdirat(int dirfd, const char* path, mode_t mode) {
  REAL(mkdirat);
  const int r = real_mkdirat(dirfd, path, mode);
  if (r == 0) path_event(EventKind::mkdir, dirfd, path);
  return r;
}

int link(const char* from, const char* to) {
  REAL(link);
  const int r = real_link(from, to);
  if (r == 0) path_event(EventKind::link, AT_FDCWD, from, AT_FDCWD, to);
  return r;
}
int linkat(int fromfd, const char* from, int tofd, const char* to, int flags) {
  REAL(linkat);
  const int r = real_linkat(fromfd, from, tofd, to, flags);
  if (r == 0) path_event(EventKind::link, fromfd, from, tofd, to);
  return r;
}

}  // extern "C"
