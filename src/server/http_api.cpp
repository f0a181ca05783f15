#include "http_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "api_error.hpp"
#include "formats/json_parse.hpp"
#include "gpuolap/elapsed.hpp"
#include "olap/over_limit.hpp"
#include "server/pivot/pivot_page.hpp"

namespace gpuolap::server {

using nlohmann::json;

namespace {

// Query parameters whose values are JSON rather than text.
const std::set<std::string> kJsonParameters{"area", "expand", "paths"};

HttpResponse json_response(const json& body) {
  HttpResponse response;
  // Replace, not throw on, bytes that are not UTF-8 (a client's, echoed in a detail).
  response.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  return response;
}

bool wants_csv(const HttpRequest& req) {
  for (const auto& [key, f] : req.query_parameters()) {
    if (key != "format") continue;
    if (f == "csv") return true;
    if (f != "json") throw InputError(fmt::format("format '{}': expected json or csv", f));
    return false;
  }
  return req.header("Accept").find("text/csv") != std::string::npos;
}

// The request's fields: the JSON body of a POST, else the query parameters.
json request_fields(const HttpRequest& req) {
  json fields = json::object();
  if (req.method == "POST" && !req.body.empty()) {
    fields = parse_json(req.body, req.path + ": request body");
    if (!fields.is_object()) throw InputError(req.path + ": the request body must be a JSON object");
  }
  for (const auto& [key, value] : req.query_parameters()) {
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

// Whether an Origin ("http://host:port") names the host and port the request
// was sent to (its Host header), compared in any case.
bool same_origin(const std::string& origin, const std::string& host) {
  const auto scheme_end = origin.find("://");
  if (scheme_end == std::string::npos || host.empty()) return false;
  const std::string_view site = std::string_view(origin).substr(scheme_end + 3);
  return site.size() == host.size() && std::equal(site.begin(), site.end(), host.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
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

namespace {

// Every route answers through this: input errors become 4xx answers,
// anything else a 500 or 503, and the server carries on.
HttpResponse answer_or_error(const std::function<HttpResponse()>& answer) {
  try {
    return answer();
  } catch (const ApiError& e) {
    return error_response(e.status(), e.code(), e.what());
  } catch (const olap::OverLimit& e) {
    return error_response(413, e.code(), e.what());
  } catch (const InputError& e) {
    return error_response(400, "bad_request", e.what());
  } catch (const std::bad_alloc&) {
    return error_response(503, "out_of_memory", "the server ran out of memory answering this request");
  } catch (const std::exception& e) {
    return error_response(500, "internal", e.what());
  }
}

}  // namespace

HttpApi::HttpApi(CubeApi* cube, SqlApi* sql, HTreeApi* htree, HttpOptions options, size_t max_body_bytes)
    : cube_(cube),
      sql_(sql),
      htree_(htree),
      options_(std::move(options)),
      transport_(options_, max_body_bytes, [this](const HttpRequest& request) { return answer(request); }) {
  route("GET", "/server/info", [this](const HttpRequest& req) {
    return answer_or_error([&] {
      if (wants_csv(req)) throw InputError(req.path + ": this answer has no CSV form");
      json info = cube_ ? cube_->server_info() : json{{"server", "gpuolap"}, {"version", "0.1.0"}, {"api_version", 1}};
      if (sql_) info["sql"] = sql_->info();
      if (htree_) info["htree"] = htree_->info();
      return json_response(info);
    });
  });
  if (cube_) add_cube_routes();
  if (htree_) add_htree_routes();
  if (sql_) {
    // Read-only: no token needed, as for the cube's reads.
    route("POST", "/sql", [this](const HttpRequest& req) {
      return answer_or_error([&] {
        const bool csv = wants_csv(req);
        HttpResponse res;
        res.set_content(sql_->run(request_fields(req), csv ? sql::ResultFormat::Csv : sql::ResultFormat::Json),
                        csv ? "text/csv" : "application/json");
        return res;
      });
    });
  }
}

void HttpApi::add_cube_routes() {
  CubeApi& api = *cube_;
  auto guarded = [this, &api](bool write, std::function<json(const json&)> op, std::string csv_value_column) -> Route {
    return [this, &api, write, op = std::move(op), csv_value_column](const HttpRequest& req) -> HttpResponse {
      return answer_or_error([&] {
        if (write) check_write_token(req);
        const bool csv = wants_csv(req);
        // Refused before the operation runs: a write must not be applied under an error answer.
        if (csv && csv_value_column.empty()) throw InputError(req.path + ": this answer has no CSV form");
        const json answer = op(request_fields(req));
        if (!csv) return json_response(answer);
        HttpResponse res;
        if (csv_value_column == "elements")
          res.set_content(elements_csv(answer), "text/csv");
        else
          res.set_content(cells_csv(api.schema(), answer, answer.contains("aggregate") && answer.contains("measure")
                                                                ? fmt::format("{}({})", answer["aggregate"].get<std::string>(),
                                                                              answer["measure"].get<std::string>())
                                                                : csv_value_column),
                          "text/csv");
        if (answer.contains("done")) {
          res.headers.emplace_back("X-Export-Done", answer["done"].get<bool>() ? "true" : "false");
          res.headers.emplace_back("X-Export-Progress", fmt::format("{}/{}", answer["progress"]["scanned"].get<uint64_t>(),
                                                                    answer["progress"]["total"].get<uint64_t>()));
          if (!answer["next"].is_null()) res.headers.emplace_back("X-Export-Next", answer["next"].dump());
        }
        return res;
      });
    };
  };

  route("GET", "/cube/info", guarded(false, [&api](const json&) { return api.cube_info(); }, ""));
  route("GET", "/dimension/elements", guarded(false, [&api](const json& r) { return api.elements(r); }, "elements"));
  route("GET", "/cell/value", guarded(false, [&api](const json& r) { return api.value(r); }, ""));
  route("POST", "/cell/values", guarded(false, [&api](const json& r) { return api.values(r); }, "value"));
  // The one answer that can be megabytes: written straight from the result
  // as text, with no JSON tree of its cells (CubeApi::area_text).
  route("POST", "/cell/area", [this, &api](const HttpRequest& req) {
    return answer_or_error([&] {
      const bool csv = wants_csv(req);
      const auto start = SteadyClock::now();
      const json fields = request_fields(req);
      const double body_ms = ms_since(start);
      CubeApi::AreaText text = api.area_text(fields, csv ? AnswerFormat::csv : AnswerFormat::json);
      text.steps.parse_ms += body_ms;  // the body's JSON is part of reading the request
      HttpResponse res;
      res.set_content(std::move(text.body), csv ? "text/csv" : "application/json");
      // Where the answer's time went: the request parsed, the aggregation
      // map, the engine, the answer written.
      const CubeApi::AreaSteps& t = text.steps;
      res.headers.emplace_back("Server-Timing", server_timing({{"parse", t.parse_ms}, {"map", t.map_ms},
                                                               {"engine", t.engine_ms}, {"write", t.write_ms}}));
      return res;
    });
  });
  route("GET", "/cell/export", guarded(false, [&api](const json& r) { return api.export_cells(r); }, "value"));
  route("POST", "/cell/export", guarded(false, [&api](const json& r) { return api.export_cells(r); }, "value"));
  route("POST", "/cell/replace", guarded(true, [&api](const json& r) { return api.replace(r); }, ""));
  route("POST", "/cell/replace_bulk", guarded(true, [&api](const json& r) { return api.replace_bulk(r); }, ""));
  route("POST", "/cube/save", guarded(true, [&api](const json&) { return api.save(); }, ""));

  // The pivot page: a client of the routes above, so only where there is a cube.
  for (const StaticFile& file : pivot_page_files()) {
    route("GET", std::string(file.path), [&file](const HttpRequest&) {
      HttpResponse res;
      res.set_content(std::string(file.body), std::string(file.content_type));
      // The page comes with the binary: a browser asks again after a restart
      // rather than run an older page against a newer server.
      res.headers.emplace_back("Cache-Control", "no-cache");
      return res;
    });
  }
}

void HttpApi::check_write_token(const HttpRequest& req) const {
  // A browser names the page's site in Origin on every POST a page makes. A
  // page of another site could otherwise write to a server on localhost that
  // has no token (a "simple" text/plain POST needs no CORS consent, and the
  // body is read as JSON whatever its type); curl and other clients send no
  // Origin.
  const std::string origin = req.header("Origin");
  if (!origin.empty() && !same_origin(origin, req.header("Host")))
    throw ApiError(403, "forbidden", fmt::format("a write from a page of another site ({}) is refused", origin));
  if (options_.token.empty()) return;
  const std::string auth = req.header("Authorization");
  if (auth.empty()) throw ApiError(401, "unauthorized", "writes need an \"Authorization: Bearer TOKEN\" header");
  // The scheme is case-insensitive (RFC 7235); the token is not.
  if (!has_bearer_scheme(auth) || !same_token(auth.substr(7), options_.token))
    throw ApiError(403, "forbidden", "the bearer token is wrong");
}

void HttpApi::add_htree_routes() {
  route("POST", "/htree/append", [this](const HttpRequest& req) {
    return answer_or_error([&] {
      check_write_token(req);
      return json_response(htree_->append(req.body));
    });
  });
  route("POST", "/htree/query", [this](const HttpRequest& req) {
    return answer_or_error([&] {
      HTreeQueryAnswer a = htree_->query(req.body);
      HttpResponse res;
      res.set_content(std::move(a.csv), "text/csv");
      res.headers.emplace_back("X-HTree-Popular-Path", std::to_string(a.stats.popular_path));
      res.headers.emplace_back("X-HTree-Online", std::to_string(a.stats.online));
      res.headers.emplace_back("X-HTree-Side-Link-Nodes", std::to_string(a.stats.side_link_nodes));
      res.headers.emplace_back("X-HTree-Ms", fmt::format("{:.3f}", a.ms));
      res.headers.emplace_back("X-HTree-Stages-Ms",
                               fmt::format("parse={:.3f}; query={:.3f}; write={:.3f}", a.parse_ms, a.query_ms, a.write_ms));
      res.headers.emplace_back("Server-Timing",
                               server_timing({{"parse", a.parse_ms}, {"query", a.query_ms}, {"write", a.write_ms}}));
      return res;
    });
  });
}

HttpApi::~HttpApi() = default;

void HttpApi::route(const std::string& method, const std::string& path, Route answer) {
  routes_[path][method] = std::move(answer);
}

HttpResponse HttpApi::answer(const HttpRequest& request) const {
  const auto path = routes_.find(request.path);
  if (path == routes_.end()) {
    const char* why = !cube_ && (request.path.rfind("/cell/", 0) == 0 || request.path.rfind("/cube/", 0) == 0 ||
                                 request.path.rfind("/dimension/", 0) == 0 || request.path == "/")
                          ? " (this server serves no cube: start it with --cube DIR)"
                      : !sql_ && request.path == "/sql" ? " (this server serves no database: start it with --db DIR)"
                      : !htree_ && request.path.rfind("/htree/", 0) == 0
                          ? " (this server serves no H-tree: start it with --htree TREE)"
                          : "";
    return error_response(404, "not_found", fmt::format("no endpoint {}{}", request.path, why));
  }
  // HEAD is GET without the body (the transport drops it).
  const auto method = path->second.find(request.method == "HEAD" ? "GET" : request.method);
  if (method == path->second.end())
    return error_response(405, "method_not_allowed", fmt::format("{} does not take {}", request.path, request.method));
  HttpResponse response = method->second(request);
  compress_for(request, response);
  return response;
}

int HttpApi::bind() { return transport_.bind(); }

void HttpApi::serve() { transport_.serve(); }

void HttpApi::stop() { transport_.stop(); }

}  // namespace gpuolap::server
