#pragma once
// The HTTP API (cpp-httplib), modelled on the Palo/Jedox OLAP server's:
//   GET  /server/info, /cube/info, /dimension/elements?dimension=D,
//        /cell/value?path=..., /cell/export?area=...&blocksize=...
//   POST /cell/values, /cell/area, /cell/export, /cell/replace,
//        /cell/replace_bulk, /cube/save
// Answers are JSON, or CSV with format=csv or "Accept: text/csv" where an
// answer is a list of cells or elements. Errors are
// {"error": code, "detail": message} with a 4xx status (5xx only for the
// server's own failures). Writes need "Authorization: Bearer TOKEN" when a
// token is set.
#include <memory>
#include <string>

#include "cube_api.hpp"

namespace httplib {
class Server;
}

namespace gpuolap::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 7777;        // 0: any free port
  std::string token;      // empty: writes need no token
  int threads = 64;       // connections served at once
};

class HttpApi {
 public:
  HttpApi(CubeApi& api, HttpOptions options);
  ~HttpApi();
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds the listening socket; returns the port. Throws InputError when it cannot.
  int bind();
  // Serves until stop() (from another thread or a signal handler's thread).
  void serve();
  void stop();

 private:
  CubeApi& api_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> http_;
};

bool is_loopback(const std::string& host);

}  // namespace gpuolap::server
