#include "http_message.hpp"

#include <brotli/encode.h>
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

namespace gpuolap::server {

namespace {

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return std::string(text);
}

// Whether Accept-Encoding lists `coding` with a weight above 0 ("gzip;q=0" refuses it).
bool accepts(const std::string& accept_encoding, const std::string& coding) {
  size_t at = 0;
  while (at <= accept_encoding.size()) {
    const size_t comma = std::min(accept_encoding.find(',', at), accept_encoding.size());
    const std::string item = trimmed(std::string_view(accept_encoding).substr(at, comma - at));
    const size_t semicolon = item.find(';');
    if (same_name(trimmed(item.substr(0, semicolon)), coding)) {
      if (semicolon == std::string::npos) return true;
      std::string params = item.substr(semicolon + 1);
      params.erase(std::remove(params.begin(), params.end(), ' '), params.end());
      const bool zero = params == "q=0" || (params.rfind("q=0.", 0) == 0 && params.find_first_not_of('0', 4) == std::string::npos);
      return !zero;
    }
    at = comma + 1;
  }
  return false;
}

bool compressible(const std::string& content_type) {
  return content_type.rfind("text/", 0) == 0 || content_type.rfind("application/json", 0) == 0;
}

bool gzip(const std::string& in, std::string& out) {
  if (in.size() > std::numeric_limits<uInt>::max()) return false;  // zlib counts in 32 bits
  z_stream stream{};
  // 15 + 16: a 32 KiB window with a gzip header and trailer.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  out.resize(deflateBound(&stream, in.size()));
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  stream.avail_in = static_cast<uInt>(in.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const bool done = deflate(&stream, Z_FINISH) == Z_STREAM_END;
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return done;
}

bool brotli(const std::string& in, std::string& out) {
  size_t size = BrotliEncoderMaxCompressedSize(in.size());
  if (size == 0) return false;
  out.resize(size);
  // Quality 5 of 11: most of the ratio at a fraction of the time the
  // default (11) takes on answers of megabytes.
  if (!BrotliEncoderCompress(5, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, in.size(),
                             reinterpret_cast<const uint8_t*>(in.data()), &size, reinterpret_cast<uint8_t*>(out.data())))
    return false;
  out.resize(size);
  return true;
}

}  // namespace

std::string HttpRequest::header(const std::string& name) const {
  for (const auto& [key, value] : headers)
    if (same_name(key, name)) return value;
  return "";
}

bool HttpRequest::has_header(const std::string& name) const {
  return std::any_of(headers.begin(), headers.end(), [&](const auto& field) { return same_name(field.first, name); });
}

HttpFields HttpRequest::query_parameters() const {
  HttpFields parameters;
  const size_t q = target.find('?');
  if (q == std::string::npos) return parameters;
  const std::string query = target.substr(q + 1);
  for (size_t at = 0; at < query.size();) {
    const size_t amp = std::min(query.find('&', at), query.size());
    const std::string item = query.substr(at, amp - at);
    if (!item.empty()) {
      const size_t eq = item.find('=');
      parameters.emplace_back(percent_decode(item.substr(0, eq), true),
                              eq == std::string::npos ? "" : percent_decode(item.substr(eq + 1), true));
    }
    at = amp + 1;
  }
  return parameters;
}

std::string percent_decode(const std::string& text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else if (text[i] == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string server_timing(std::initializer_list<std::pair<const char*, double>> steps) {
  std::string value;
  for (const auto& [name, ms] : steps) value += fmt::format("{}{};dur={:.3f}", value.empty() ? "" : ", ", name, ms);
  return value;
}

HttpResponse error_response(int status, const std::string& code, const std::string& detail) {
  HttpResponse response;
  response.status = status;
  // Replace, not throw on, bytes that are not UTF-8 (a client's, echoed in a detail).
  response.set_content(nlohmann::json{{"error", code}, {"detail", detail}}.dump(-1, ' ', false,
                                                                               nlohmann::json::error_handler_t::replace),
                       "application/json");
  return response;
}

void compress_for(const HttpRequest& request, HttpResponse& response) {
  if (response.body.empty() || !compressible(response.content_type)) return;
  const std::string accept_encoding = request.header("Accept-Encoding");
  if (accept_encoding.empty()) return;
  std::string compressed;
  std::string coding;
  if (accepts(accept_encoding, "br") && brotli(response.body, compressed))
    coding = "br";
  else if (accepts(accept_encoding, "gzip") && gzip(response.body, compressed))
    coding = "gzip";
  else
    return;
  response.body = std::move(compressed);
  response.headers.emplace_back("Content-Encoding", coding);
  response.headers.emplace_back("Vary", "Accept-Encoding");
}

}  // namespace gpuolap::server
