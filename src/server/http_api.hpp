#pragma once
// The HTTP API, modelled on the Palo/Jedox OLAP server's:
//   GET  /server/info, /cube/info, /dimension/elements?dimension=D,
//        /cell/value?path=..., /cell/export?area=...&blocksize=...
//   POST /cell/values, /cell/area, /cell/export, /cell/replace,
//        /cell/replace_bulk, /cube/save (with a cube); /sql (with a database);
//        /htree/append, /htree/query (with an H-tree: htree_api.hpp)
//   GET  /, /pivot.js, /pivot.css: the pivot page (with a cube; pivot/)
// Answers are JSON, or CSV with format=csv or "Accept: text/csv" where an
// answer is a list of cells or elements. Errors are
// {"error": code, "detail": message} with a 4xx status (5xx only for the
// server's own failures). Writes need "Authorization: Bearer TOKEN" when a
// token is set. The routes see only HttpRequest and HttpResponse; the
// connections, deadlines and limits are the transport's (http_transport.hpp).
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cube_api.hpp"
#include "htree_api.hpp"
#include "http_transport.hpp"
#include "sql_api.hpp"

namespace gpuolap::server {

struct HttpOptions : TransportOptions {
  std::string token;  // empty: writes need no token
};

class HttpApi {
 public:
  // Serves the cube's routes when `cube` is given, POST /sql when `sql` is,
  // the H-tree's when `htree` is; /server/info always. None is owned.
  HttpApi(CubeApi* cube, SqlApi* sql, HTreeApi* htree, HttpOptions options, size_t max_body_bytes);
  ~HttpApi();
  HttpApi(const HttpApi&) = delete;
  HttpApi& operator=(const HttpApi&) = delete;

  // Binds the listening socket; returns the port. Throws InputError when it cannot.
  int bind();
  // Serves until stop() (from another thread or a signal handler's thread).
  void serve();
  void stop();

 private:
  using Route = std::function<HttpResponse(const HttpRequest&)>;
  void route(const std::string& method, const std::string& path, Route answer);
  void add_cube_routes();
  void add_htree_routes();
  // A write's token, when the server has one: 401 or 403 otherwise.
  void check_write_token(const HttpRequest& req) const;
  HttpResponse answer(const HttpRequest& request) const;

  CubeApi* cube_;
  SqlApi* sql_;
  HTreeApi* htree_;
  HttpOptions options_;
  std::map<std::string, std::map<std::string, Route>> routes_;  // path -> method -> route
  HttpTransport transport_;
};

bool is_loopback(const std::string& host);

}  // namespace gpuolap::server
