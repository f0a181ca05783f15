#include "http_transport.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

// Before Beast: Boost 1.74's Beast uses std::uint32_t without including
// <cstdint>, which libstdc++ 13 no longer brings in by the way.
#include <cstdint>

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "answer_buffers.hpp"
#include "gpuolap/error.hpp"

namespace gpuolap::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// The request line and header fields together; a 1 MB header line is
// refused once this much of it has come.
constexpr uint32_t kHeaderLimit = 64 * 1024;
// How long a connection closed after a refusal keeps reading what its client
// still sends (see Connection::linger).
constexpr std::chrono::seconds kLingerTime{1};

std::string text(beast::string_view view) { return std::string(view.data(), view.size()); }

std::string seconds_text(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? fmt::format("{} s", d.count() / 1000) : fmt::format("{} ms", d.count());
}

// The whole answer to a refused connection, written on the raw socket.
std::string busy_answer(int max_connections) {
  const HttpResponse refusal = error_response(
      503, "too_many_connections",
      fmt::format("the server holds its limit of {} connections (--max-connections); try again later", max_connections));
  return fmt::format("HTTP/1.1 503 Service Unavailable\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                     refusal.content_type, refusal.body.size(), refusal.body);
}

// Threads that take tasks in arrival order. (Asio's thread_pool wakes its
// threads through one scheduler that, with 64 threads blocked in group
// commits, cost a fifth of the write throughput in context switches.)
class WorkerPool {
 public:
  explicit WorkerPool(size_t threads) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
  }
  ~WorkerPool() { stop(); }

  void post(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

  // Tasks running finish; those not started are dropped.
  void stop() {
    std::deque<std::function<void()>> dropped;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      dropped.swap(tasks_);
    }
    ready_.notify_all();
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (stopping_) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

class HttpTransport::Server {
 public:
  Server(TransportOptions options, size_t max_body_bytes, Handler handler)
      : options_(std::move(options)),
        max_body_bytes_(max_body_bytes),
        handler_(std::move(handler)),
        busy_answer_(busy_answer(options_.max_connections)),
        acceptor_(io_),
        retry_accept_(io_),
        workers_(static_cast<size_t>(std::max(1, options_.threads))) {}

  int bind();
  void serve() {
    accept();
    io_.run();
    // Requests being answered finish; those not yet started are dropped
    // with their connections.
    workers_.stop();
  }
  void stop() { io_.stop(); }

  const TransportOptions& options() const { return options_; }
  size_t max_body_bytes() const { return max_body_bytes_; }
  WorkerPool& workers() { return workers_; }
  HttpResponse answer(const HttpRequest& request) const {
    try {
      return handler_(request);
    } catch (...) {
      return error_response(500, "internal", "the request could not be answered");
    }
  }
  void connection_closed() { --open_connections_; }

 private:
  void accept();

  const TransportOptions options_;
  const size_t max_body_bytes_;
  const Handler handler_;
  const std::string busy_answer_;
  std::atomic<int> open_connections_{0};
  // Destroyed last: connections in its queues and in the workers' close their sockets through it.
  asio::io_context io_{1};
  tcp::acceptor acceptor_;
  asio::steady_timer retry_accept_;
  WorkerPool workers_;
};

namespace {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Server = HttpTransport::Server;
  Connection(Server& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), deadline_(socket_.get_executor()) {}
  ~Connection() { server_.connection_closed(); }

  void start() { wait_for_request(); }

 private:
  const TransportOptions& options() const { return server_.options(); }

  // Each wait on the client (a request's arrival, an answer's taking) has a
  // deadline; when it passes, the socket's operations are cancelled, and
  // the connection can still say why (Beast's tcp_stream would close it).
  void arm(std::chrono::steady_clock::duration timeout) {
    timed_out_ = false;
    deadline_.expires_after(timeout);  // cancels the wait of the deadline before
    deadline_.async_wait([weak = weak_from_this()](error_code ec) {
      if (ec) return;
      if (const auto self = weak.lock()) {
        self->timed_out_ = true;
        error_code ignored;
        self->socket_.cancel(ignored);
      }
    });
  }

  // A kept-alive connection may wait idle_timeout for its next request's
  // first byte; the request's own deadline starts there.
  void wait_for_request() {
    if (buffer_.size() > 0) return read_header();
    arm(options().idle_timeout);
    socket_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](error_code ec, size_t n) {
      if (ec) return self->close();
      self->buffer_.commit(n);
      self->read_header();
    });
  }

  void read_header() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    // The Content-Length is checked when the header is in, so its answer can
    // say how large it was. (Not boost::none: Beast 1.74 compares a length
    // with the empty optional as larger.)
    parser_->body_limit(std::numeric_limits<uint64_t>::max());
    arm(options().request_timeout);
    http::async_read_header(socket_, buffer_, *parser_,
                            [self = shared_from_this()](error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(error_code ec) {
    if (ec) return refuse_unread(ec);
    const auto& request = parser_->get();
    std::string encoding = text(request[http::field::content_encoding]);
    std::transform(encoding.begin(), encoding.end(), encoding.begin(), [](unsigned char c) { return std::tolower(c); });
    // A compressed body would be inflated past --max-body-bytes (the limit
    // counts the bytes on the wire): refused before it is read.
    if (!encoding.empty() && encoding != "identity")
      return refuse(error_response(
          415, "unsupported_encoding",
          fmt::format("request bodies with Content-Encoding '{}' are not accepted; send the body uncompressed",
                      encoding.substr(0, 64))));
    const size_t limit = server_.max_body_bytes();
    if (const auto length = parser_->content_length(); length && *length > limit)
      return refuse(error_response(413, "body_too_large",
                                   fmt::format("the request body has {} bytes; the limit is {}", *length, limit)));
    if (request.method() == http::verb::post && !parser_->content_length() && !parser_->chunked())
      return refuse(error_response(400, "bad_request", "malformed HTTP request (a POST needs a Content-Length, even of 0)"));
    parser_->body_limit(limit);  // for a chunked body, whose size comes only as it is read
    if (beast::iequals(request[http::field::expect], "100-continue") && !parser_->is_done()) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      return asio::async_write(socket_, asio::buffer(kContinue.data(), kContinue.size()),
                               [self = shared_from_this()](error_code ec, size_t) {
                                 if (ec) return self->close();
                                 self->read_body();
                               });
    }
    read_body();
  }

  // Under the deadline that the header's read started (which may have
  // passed with nothing left to cancel).
  void read_body() {
    if (timed_out_) return refuse_unread(asio::error::operation_aborted);
    http::async_read(socket_, buffer_, *parser_, [self = shared_from_this()](error_code ec, size_t) {
      if (ec) return self->refuse_unread(ec);
      self->dispatch();
    });
  }

  // The whole request goes to a worker; its answer comes back to this
  // connection's I/O thread. Nothing is read meanwhile.
  void dispatch() {
    auto message = parser_->release();
    parser_.reset();
    HttpRequest request;
    request.method = text(message.method_string());
    request.target = text(message.target());
    request.path = percent_decode(request.target.substr(0, request.target.find('?')), false);
    for (const auto& field : message) request.headers.emplace_back(text(field.name_string()), text(field.value()));
    request.body = std::move(message.body());
    const bool keep_alive = message.keep_alive();
    const unsigned version = message.version();
    deadline_.cancel();
    server_.workers().post([self = shared_from_this(), request = std::move(request), keep_alive, version] {
      HttpResponse response = self->server_.answer(request);
      const bool head = request.method == "HEAD";
      asio::post(self->socket_.get_executor(), [self, response = std::move(response), keep_alive, version, head]() mutable {
        self->send(std::move(response), keep_alive, version, head);
      });
    });
  }

  void send(HttpResponse answer, bool keep_alive, unsigned version, bool head = false) {
    response_ = {};
    response_.version(version);
    response_.result(static_cast<unsigned>(answer.status));
    if (!answer.content_type.empty()) response_.set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) response_.insert(name, value);
    const size_t length = answer.body.size();
    if (!head) response_.body() = std::move(answer.body);
    response_.content_length(length);
    const bool close = answer.close || !keep_alive;
    response_.keep_alive(!close);
    arm(options().request_timeout);
    http::async_write(socket_, response_, [self = shared_from_this(), close](error_code ec, size_t) {
      // The answer's memory goes to the next large answer (answer_buffers.hpp).
      AnswerBuffers::shared().give_back(std::move(self->response_.body()));
      if (ec) return self->close();
      if (close) return self->linger();
      self->wait_for_request();
    });
  }

  // A refusal closes the connection: what remains of the request is not read.
  void refuse(HttpResponse answer) {
    answer.close = true;
    send(std::move(answer), false, parser_ && parser_->get().version() == 10 ? 10 : 11);
  }

  // A read that failed: say why, unless there is no one to tell.
  void refuse_unread(error_code ec) {
    if (ec == http::error::end_of_stream && !parser_->got_some()) return close();  // closed between requests
    if (timed_out_)
      return refuse(error_response(408, "request_timeout",
                                   fmt::format("the request did not arrive whole within {} (--request-timeout)",
                                               seconds_text(options().request_timeout))));
    if (ec == http::error::body_limit)
      return refuse(error_response(
          413, "body_too_large",
          fmt::format("the request body is larger than the limit of {} bytes", server_.max_body_bytes())));
    if (ec == http::error::bad_method || ec == http::error::bad_target || ec == http::error::bad_version)
      return refuse(error_response(400, "bad_request", "malformed HTTP request line (expected: METHOD TARGET HTTP/1.1)"));
    if (ec == http::error::header_limit)
      return refuse(error_response(
          400, "bad_request",
          fmt::format("malformed HTTP request: a header line that is too long or malformed (the header has more than {} bytes)",
                      kHeaderLimit)));
    if (ec == http::error::bad_content_length)
      return refuse(error_response(400, "bad_request",
                                   "malformed HTTP request: the Content-Length is not a whole number of bytes"));
    if (ec == http::error::bad_transfer_encoding)
      return refuse(error_response(400, "bad_request",
                                   "malformed HTTP request: a Transfer-Encoding other than chunked, or chunked not last"));
    if ((ec == http::error::partial_message || ec == http::error::end_of_stream) && parser_->is_header_done())
      return refuse(error_response(400, "bad_request",
                                   "malformed HTTP request: the connection ended with a body shorter than its Content-Length"));
    if (ec == http::error::partial_message || ec == http::error::end_of_stream)
      return refuse(error_response(400, "bad_request", "malformed HTTP request: the connection ended inside the header"));
    if (&ec.category() == &http::make_error_code(http::error::bad_field).category())
      return refuse(error_response(400, "bad_request",
                                   "malformed HTTP request: a header line that is too long or malformed, or a malformed "
                                   "chunk of a chunked body"));
    close();  // the socket failed: no one to answer
  }

  // Closing a socket with unread bytes resets the connection, and a reset
  // can destroy the answer before the client reads it: the sending side is
  // shut, and what the client still sends is read and dropped for a moment.
  void linger() {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    arm(kLingerTime);
    drain();
  }
  void drain() {
    socket_.async_read_some(asio::buffer(drain_buffer_), [self = shared_from_this()](error_code ec, size_t) {
      if (ec) return self->close();
      self->drain();
    });
  }

  void close() {
    error_code ignored;
    deadline_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  Server& server_;
  tcp::socket socket_;
  asio::steady_timer deadline_;
  bool timed_out_ = false;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;  // kept while it is written
  std::array<char, 16384> drain_buffer_;
};

}  // namespace

int HttpTransport::Server::bind() {
  const auto cannot = [&](const std::string& why) {
    return InputError(fmt::format("cannot listen on {}:{} ({})", options_.host, options_.port, why));
  };
  error_code ec;
  tcp::resolver resolver(io_);
  const auto endpoints = resolver.resolve(options_.host, std::to_string(options_.port),
                                          tcp::resolver::numeric_service | tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) throw cannot("in use, or not an address of this machine: " + ec.message());
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) throw cannot(ec.message());
  // SO_REUSEADDR lets a restarted server bind at once while a second one
  // fails; SO_REUSEPORT (never set) would let the kernel deal the port's
  // requests to two servers, each with its own cube.
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(endpoint, ec);
  if (ec) throw cannot("in use, or not an address of this machine: " + ec.message());
  acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw cannot(ec.message());
  return acceptor_.local_endpoint().port();
}

void HttpTransport::Server::accept() {
  acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of file descriptors (or another passing failure): try again
      // shortly rather than spin on the pending connection.
      retry_accept_.expires_after(std::chrono::milliseconds(50));
      retry_accept_.async_wait([this](error_code wait) {
        if (!wait) accept();
      });
      return;
    }
    if (open_connections_.load() >= options_.max_connections) {
      // Written without waiting: a new connection's send buffer takes it.
      error_code ignored;
      socket.non_blocking(true, ignored);
      socket.write_some(asio::buffer(busy_answer_), ignored);
      socket.shutdown(tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
    } else {
      ++open_connections_;
      error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Connection>(*this, std::move(socket))->start();
    }
    accept();
  });
}

HttpTransport::HttpTransport(TransportOptions options, size_t max_body_bytes, Handler handler)
    : server_(std::make_unique<Server>(std::move(options), max_body_bytes, std::move(handler))) {}

HttpTransport::~HttpTransport() = default;

int HttpTransport::bind() { return server_->bind(); }

void HttpTransport::serve() { server_->serve(); }

void HttpTransport::stop() { server_->stop(); }

uint64_t raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur;
}

}  // namespace gpuolap::server
