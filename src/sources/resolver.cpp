#include "sources/resolver.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"

namespace vc {
namespace {

constexpr uintmax_t kMaxConfigFileBytes = 16 * 1024 * 1024;

Model from_config_file(const std::filesystem::path& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(path.string(), "cannot read: " + ec.message());
  if (size > kMaxConfigFileBytes) throw InputError(path.string(), "is larger than 16 MiB; a config.json is a few KB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  Model m = model_from_config(parse_config_text(ss.str(), path.string()), path.string());
  m.id = path.string();
  m.name = path.parent_path().filename().string().empty() ? path.string() : path.parent_path().filename().string();
  return m;
}

}  // namespace

Model resolve_model(const std::string& spec, const std::string& subject) {
  if (spec.empty()) throw InputError(subject, "is empty; give a catalogue id (see `vramcalc models`) or a config.json path");
  if (const Model* m = Catalogue::builtin().find(spec)) return *m;
  std::filesystem::path p(spec);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) {
    auto cfg = p / "config.json";
    if (std::filesystem::exists(cfg, ec)) return from_config_file(cfg);
    throw InputError(subject, "directory '" + spec + "' has no config.json");
  }
  if (std::filesystem::is_regular_file(p, ec)) return from_config_file(p);
  throw InputError(subject, "'" + spec + "' is neither a catalogue model nor a file; catalogue: " + Catalogue::builtin().ids());
}

}  // namespace vc
