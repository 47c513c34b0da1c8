#pragma once
// Data files compiled into the binary by cmake/embed.cmake (catalogue, quant formats, devices).
#include <cstddef>
#include <string_view>
#include <vector>

namespace vc::embedded {

struct File {
  const char* path;  // relative to data/, e.g. "models/kimi-k3/config.json"
  const char* data;
  std::size_t size;
};

extern const File kFiles[];
extern const std::size_t kFileCount;

// The text of data/<path>; throws std::out_of_range when it is not embedded.
std::string_view file_text(std::string_view path);
// Every embedded path that starts with `prefix`, sorted.
std::vector<std::string_view> paths_under(std::string_view prefix);

}  // namespace vc::embedded
