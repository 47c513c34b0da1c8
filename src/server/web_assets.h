#pragma once
// The web page's static files (web/*: HTML, CSS, JS), compiled into the binary by
// cmake/embed.cmake so `vramcalc serve` needs nothing beside the executable.
#include <cstddef>
#include <optional>
#include <string_view>

namespace vc::web_assets {

struct File {
  const char* path;  // relative to web/, e.g. "index.html"
  const char* data;
  std::size_t size;
};

extern const File kFiles[];
extern const std::size_t kFileCount;

struct Asset {
  std::string_view body;
  const char* content_type;
};

// The asset at `path` (relative to web/), with its content type from the extension.
std::optional<Asset> find(std::string_view path);

}  // namespace vc::web_assets
