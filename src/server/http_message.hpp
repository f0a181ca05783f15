#pragma once
// An HTTP request and response as the API's routes see them: plain values,
// independent of the transport that read and will write them
// (http_transport.hpp), so a route never touches a socket or a parser.
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace gpuolap::server {

using HttpFields = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: path and query string, percent-encoded
  std::string path;    // the target's path, percent-decoded
  HttpFields headers;  // in the order sent; names as sent
  std::string body;

  // The first header of this name (compared in any case); empty when there is none.
  std::string header(const std::string& name) const;
  bool has_header(const std::string& name) const;
  // The query string's parameters, percent- and '+'-decoded, in order (a key may repeat).
  HttpFields query_parameters() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type;  // empty: no body
  std::string body;
  HttpFields headers;        // beyond Content-Type and Content-Length
  bool close = false;        // the connection cannot carry another request after this one

  void set_content(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
};

// A Server-Timing header's value (the W3C form a browser's tools show):
// "name;dur=ms, ..." for each step, in milliseconds.
std::string server_timing(std::initializer_list<std::pair<const char*, double>> steps);

// {"error": code, "detail": detail} with the status: the shape of every refusal.
HttpResponse error_response(int status, const std::string& code, const std::string& detail);

// `text` with %XX sequences decoded (and '+' as a space when plus_is_space);
// a '%' not followed by two hex digits is kept as it is.
std::string percent_decode(const std::string& text, bool plus_is_space);

// Compresses `response`'s body as the request's Accept-Encoding allows
// (br, else gzip), for text and JSON answers, and names the encoding.
void compress_for(const HttpRequest& request, HttpResponse& response);

}  // namespace gpuolap::server
