#pragma once
// A loopback TCP connection that sends whatever bytes a test gives it, as
// slowly as the test likes, and reads answers with a deadline: for the
// transport's deadlines and limits, which a well-behaved client never meets.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace gpuolap::server::testing {

class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawConnection() { close(); }
  RawConnection(RawConnection&& other) noexcept
      : fd_(other.fd_), received_(std::move(other.received_)), closed_(other.closed_) {
    other.fd_ = -1;
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // False when the server has closed or reset the connection.
  bool send(const std::string& bytes) {
    for (size_t at = 0; at < bytes.size();) {
      const ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads until one whole answer (head and its Content-Length of body) has
  // come, the server closes, or the timeout passes; returns the answer's
  // text (empty if none came whole) and keeps what follows it.
  std::string read_answer(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      const size_t head_end = received_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const size_t length_at = received_.find("Content-Length: ");
        const size_t length = length_at < head_end ? std::stoul(received_.substr(length_at + 16)) : 0;
        if (received_.size() >= head_end + 4 + length) {
          std::string answer = received_.substr(0, head_end + 4 + length);
          received_.erase(0, answer.size());
          return answer;
        }
      }
      if (!receive_until(deadline)) return "";
    }
  }

  // Whether the server closes the connection (end of stream or reset)
  // within the timeout; what it sends before is kept.
  bool closed_within(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (receive_until(deadline)) {
    }
    return closed_;
  }

  const std::string& received() const { return received_; }

 private:
  // One read of what is there before the deadline; false at the deadline or the end.
  bool receive_until(std::chrono::steady_clock::time_point deadline) {
    if (fd_ < 0 || closed_) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buffer[65536];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    received_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  std::string received_;
  bool closed_ = false;
};

}  // namespace gpuolap::server::testing
