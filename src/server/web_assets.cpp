#include "server/web_assets.h"

namespace vc::web_assets {
namespace {

const char* content_type_of(std::string_view path) {
  auto ends = [&](std::string_view ext) { return path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext; };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace

std::optional<Asset> find(std::string_view path) {
  for (std::size_t i = 0; i < kFileCount; ++i) {
    if (path == kFiles[i].path) return Asset{{kFiles[i].data, kFiles[i].size}, content_type_of(path)};
  }
  return std::nullopt;
}

}  // namespace vc::web_assets
