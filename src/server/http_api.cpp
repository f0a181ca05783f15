#include "http_api.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "api_error.hpp"
#include "olap/over_limit.hpp"
#include "formats/json_parse.hpp"

namespace gpuolap::server {

using nlohmann::json;

namespace {

// Debian's cpp-httplib listens with a backlog of 5: a burst of new
// connections overflows it and waits for SYN retransmits (1 s, 3 s, ...).
// Listening again on the bound socket raises the backlog.
class Server : public httplib::Server {
 public:
  void raise_backlog() { ::listen(svr_sock_, SOMAXCONN); }
};

// Query parameters whose values are JSON rather than text.
const std::set<std::string> kJsonParameters{"area", "expand", "paths"};

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // Replace, not throw on, bytes that are not UTF-8 (a client's, echoed in a detail).
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& code, const std::string& detail) {
  send_json(res, status, json{{"error", code}, {"detail", detail}});
}

bool wants_csv(const httplib::Request& req) {
  httplib::Params params;
  if (const size_t q = req.target.find('?'); q != std::string::npos)
    httplib::detail::parse_query_text(req.target.substr(q + 1), params);
  if (const auto it = params.find("format"); it != params.end()) {
    const std::string f = it->second;
    if (f == "csv") return true;
    if (f != "json") throw InputError(fmt::format("format '{}': expected json or csv", f));
    return false;
  }
  return req.get_header_value("Accept").find("text/csv") != std::string::npos;
}

// The request's fields: the JSON body of a POST, else the query parameters.
json request_fields(const httplib::Request& req) {
  json fields = json::object();
  if (req.method == "POST" && !req.body.empty()) {
    fields = parse_json(req.body, req.path + ": request body");
    if (!fields.is_object()) throw InputError(req.path + ": the request body must be a JSON object");
  }
  // Only the query string's parameters: httplib also files a form body's
  // fields under params, and a body here is JSON whatever its content type.
  httplib::Params params;
  if (const size_t q = req.target.find('?'); q != std::string::npos)
    httplib::detail::parse_query_text(req.target.substr(q + 1), params);
  for (const auto& [key, value] : params) {
    if (key == "format") continue;
    if (fields.contains(key)) throw InputError(fmt::format("{}: \"{}\" is given twice", req.path, key));
    fields[key] = kJsonParameters.count(key) ? parse_json(value, fmt::format("{}: parameter {}", req.path, key)) : json(value);
  }
  return fields;
}

// "Bearer " in any case: the scheme is case-insensitive (RFC 7235), the token is not.
bool has_bearer_scheme(const std::string& auth) {
  static const std::string kScheme = "bearer ";
  return auth.size() >= kScheme.size() && std::equal(kScheme.begin(), kScheme.end(), auth.begin(), [](char s, char a) {
           return s == std::tolower(static_cast<unsigned char>(a));
         });
}

bool same_token(const std::string& a, const std::string& b) {
  // Compares in time independent of where they differ.
  unsigned char diff = a.size() != b.size();
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % std::max<size_t>(b.size(), 1)]);
  return diff == 0;
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

HttpApi::HttpApi(CubeApi& api, HttpOptions options)
    : api_(api), options_(std::move(options)), http_(std::make_unique<Server>()) {
  const int threads = std::max(1, options_.threads);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http_->set_payload_max_length(api_.limits().max_body_bytes);
  http_->set_keep_alive_max_count(100000);
  http_->set_tcp_nodelay(true);
  // httplib's default also sets SO_REUSEPORT, with which a second server
  // binds the same port and the kernel deals requests to both, each with
  // its own cube. SO_REUSEADDR alone lets a restarted server bind at once
  // and a second one fail.
  http_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // A compressed body would be inflated by httplib past --max-body-bytes
  // (the limit counts the bytes on the wire): refused before it is read.
  http_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    std::string encoding = req.get_header_value("Content-Encoding");
    std::transform(encoding.begin(), encoding.end(), encoding.begin(), [](unsigned char c) { return std::tolower(c); });
    if (encoding.empty() || encoding == "identity") return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, 415, "unsupported_encoding",
               fmt::format("request bodies with Content-Encoding '{}' are not accepted; send the body uncompressed",
                           encoding.substr(0, 64)));
    // The body is left unread: the connection cannot carry another request.
    res.set_header("Connection", "close");
    return httplib::Server::HandlerResponse::Handled;
  });

  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  // Every handler answers through this: input errors become 4xx answers,
  // anything else a 500 or 503, and the server carries on.
  auto guarded = [this](bool write, std::function<json(const json&)> op, std::string csv_value_column) -> Handler {
    return [this, write, op = std::move(op), csv_value_column](const httplib::Request& req, httplib::Response& res) {
      try {
        if (write && !options_.token.empty()) {
          const std::string auth = req.get_header_value("Authorization");
          if (auth.empty()) throw ApiError(401, "unauthorized", "writes need an \"Authorization: Bearer TOKEN\" header");
          // The scheme is case-insensitive (RFC 7235); the token is not.
          if (!has_bearer_scheme(auth) || !same_token(auth.substr(7), options_.token))
            throw ApiError(403, "forbidden", "the bearer token is wrong");
        }
        const bool csv = wants_csv(req);
        // Refused before the operation runs: a write must not be applied under an error answer.
        if (csv && csv_value_column.empty()) throw InputError(req.path + ": this answer has no CSV form");
        const json answer = op(request_fields(req));
        if (csv && !csv_value_column.empty()) {
          res.status = 200;
          if (csv_value_column == "elements")
            res.set_content(elements_csv(answer), "text/csv");
          else
            res.set_content(cells_csv(api_.schema(), answer, answer.contains("aggregate") && answer.contains("measure")
                                                                   ? fmt::format("{}({})", answer["aggregate"].get<std::string>(),
                                                                                 answer["measure"].get<std::string>())
                                                                   : csv_value_column),
                            "text/csv");
          if (answer.contains("done")) {
            res.set_header("X-Export-Done", answer["done"].get<bool>() ? "true" : "false");
            res.set_header("X-Export-Progress", fmt::format("{}/{}", answer["progress"]["scanned"].get<uint64_t>(),
                                                            answer["progress"]["total"].get<uint64_t>()));
            if (!answer["next"].is_null()) res.set_header("X-Export-Next", answer["next"].dump());
          }
        } else {
          send_json(res, 200, answer);
        }
      } catch (const ApiError& e) {
        send_error(res, e.status(), e.code(), e.what());
      } catch (const olap::OverLimit& e) {
        send_error(res, 413, e.code(), e.what());
      } catch (const InputError& e) {
        send_error(res, 400, "bad_request", e.what());
      } catch (const std::bad_alloc&) {
        send_error(res, 503, "out_of_memory", "the server ran out of memory answering this request");
      } catch (const std::exception& e) {
        send_error(res, 500, "internal", e.what());
      }
    };
  };

  http_->Get("/server/info", guarded(false, [this](const json&) { return api_.server_info(); }, ""));
  http_->Get("/cube/info", guarded(false, [this](const json&) { return api_.cube_info(); }, ""));
  http_->Get("/dimension/elements", guarded(false, [this](const json& r) { return api_.elements(r); }, "elements"));
  http_->Get("/cell/value", guarded(false, [this](const json& r) { return api_.value(r); }, ""));
  http_->Post("/cell/values", guarded(false, [this](const json& r) { return api_.values(r); }, "value"));
  http_->Post("/cell/area", guarded(false, [this](const json& r) { return api_.area(r); }, "value"));
  http_->Get("/cell/export", guarded(false, [this](const json& r) { return api_.export_cells(r); }, "value"));
  http_->Post("/cell/export", guarded(false, [this](const json& r) { return api_.export_cells(r); }, "value"));
  http_->Post("/cell/replace", guarded(true, [this](const json& r) { return api_.replace(r); }, ""));
  http_->Post("/cell/replace_bulk", guarded(true, [this](const json& r) { return api_.replace_bulk(r); }, ""));
  http_->Post("/cube/save", guarded(true, [this](const json&) { return api_.save(); }, ""));

  static const std::set<std::string> kEndpoints{"/server/info", "/cube/info", "/dimension/elements", "/cell/value",
                                                "/cell/values", "/cell/area", "/cell/export", "/cell/replace",
                                                "/cell/replace_bulk", "/cube/save"};
  // Called for every status >= 400: fills in only what httplib itself refused.
  http_->set_error_handler([limit = api_.limits().max_body_bytes](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404 && kEndpoints.count(req.path))
      send_error(res, 405, "method_not_allowed", fmt::format("{} does not take {}", req.path, req.method));
    else if (res.status == 404)
      send_error(res, 404, "not_found", fmt::format("no endpoint {}", req.path));
    else if (res.status == 413)
      send_error(res, 413, "body_too_large",
                 req.has_header("Content-Length")
                     ? fmt::format("the request body has {} bytes; the limit is {}", req.get_header_value("Content-Length"), limit)
                     : fmt::format("the request body is larger than the limit of {} bytes", limit));
    else if (res.status == 400 && (req.version.empty() || req.target.empty()))
      send_error(res, 400, "bad_request", "malformed HTTP request line (expected: METHOD TARGET HTTP/1.1)");
    else if (res.status == 400 && req.method == "POST" && !req.has_header("Content-Length"))
      send_error(res, 400, "bad_request", "malformed HTTP request (a POST needs a Content-Length, even of 0)");
    else if (res.status == 400)
      send_error(res, 400, "bad_request",
                 "malformed HTTP request: a header line that is too long or malformed, or a body shorter than its "
                 "Content-Length");
    else
      send_error(res, res.status, "http_error", fmt::format("HTTP status {}", res.status));
  });
  http_->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_error(res, 500, "internal", "the request could not be answered");
  });
}

HttpApi::~HttpApi() = default;

int HttpApi::bind() {
  const int port = options_.port == 0 ? http_->bind_to_any_port(options_.host)
                                      : (http_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port < 0) throw InputError(fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", options_.host, options_.port));
  static_cast<Server&>(*http_).raise_backlog();
  return port;
}

void HttpApi::serve() { http_->listen_after_bind(); }

void HttpApi::stop() { http_->stop(); }

}  // namespace gpuolap::server
