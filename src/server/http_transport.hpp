#pragma once
// The HTTP/1.1 server under the API (Boost.Beast over Asio): it reads
// requests, hands each whole request to a handler on a worker thread, and
// writes the answer back.
//
// Connections and workers are separate: one I/O thread (the one that calls
// serve()) holds every connection and reads and writes without blocking,
// and `threads` workers run only complete requests (the handlers block: they
// run queries). A client that sends slowly, or not at all, holds a socket
// and a few kilobytes, never a worker, and only until its deadline:
//   - a request must arrive whole, header and body, within request_timeout
//     of its first byte (else 408 and the connection is closed);
//   - a kept-alive connection waits idle_timeout for its next request;
//   - an answer must be taken within request_timeout.
// The header is checked before the body is read, so a body over the limit
// (413), a compressed body (415) or a malformed request (400) is answered at
// once. Past max_connections, a new connection gets a 503 and is closed.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "http_message.hpp"

namespace gpuolap::server {

struct TransportOptions {
  std::string host = "127.0.0.1";
  int port = 7777;  // 0: any free port
  int threads = 64;  // requests answered at once (worker threads)
  std::chrono::milliseconds request_timeout{10000};
  std::chrono::milliseconds idle_timeout{5000};
  int max_connections = 4096;  // connections open at once
};

class HttpTransport {
 public:
  // Answers a request; may block. Called on a worker thread, never throws
  // (an exception escaping it answers 500).
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  HttpTransport(TransportOptions options, size_t max_body_bytes, Handler handler);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Binds and listens (SO_REUSEADDR, not SO_REUSEPORT: a port in use is an
  // error); returns the port. Throws InputError naming the address when it cannot.
  int bind();
  // Serves on the calling thread until stop(); returns once the requests
  // being answered are done.
  void serve();
  // From any thread, before or during serve().
  void stop();

  class Server;  // defined where Boost is included, in http_transport.cpp

 private:
  std::unique_ptr<Server> server_;
};

// Raises the soft limit of open files to the hard limit, so that thousands
// of connections fit; returns the limit in force.
uint64_t raise_open_file_limit();

}  // namespace gpuolap::server
