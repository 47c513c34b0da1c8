#include "catalogue/embedded_data.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vc::embedded {

std::string_view file_text(std::string_view path) {
  for (std::size_t i = 0; i < kFileCount; ++i) {
    if (path == kFiles[i].path) return {kFiles[i].data, kFiles[i].size};
  }
  throw std::out_of_range("embedded data file not found: " + std::string(path));
}

std::vector<std::string_view> paths_under(std::string_view prefix) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < kFileCount; ++i) {
    std::string_view p = kFiles[i].path;
    if (p.substr(0, prefix.size()) == prefix) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace vc::embedded
