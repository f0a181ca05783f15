#pragma once
// The pivot page (index.html, pivot.js, pivot.css beside this header),
// compiled into the binary by cmake/embed_files.cmake so that `gpuolap
// serve` answers it at `/` with no files to install and nothing fetched from
// elsewhere.
#include <span>
#include <string_view>

namespace gpuolap::server {

struct StaticFile {
  std::string_view path;          // where the server answers it: "/", "/pivot.js", ...
  std::string_view content_type;  // with its charset
  std::string_view body;
};

std::span<const StaticFile> pivot_page_files();

}  // namespace gpuolap::server
