#include "catalogue/catalogue_tower.h"

#include <map>
#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "catalogue/embedded_data.h"

namespace vc {
namespace {

// Entry id -> tower, for every entry whose config counts one; read once.
std::map<std::string, TowerSpec> read_towers() {
  std::map<std::string, TowerSpec> out;
  for (auto path : embedded::paths_under("models/")) {
    constexpr std::string_view suffix = "/facts.json";
    if (path.size() < suffix.size() || path.substr(path.size() - suffix.size()) != suffix) continue;
    const auto facts = nlohmann::json::parse(embedded::file_text(path));
    const Model* m = Catalogue::builtin().find(facts.at("id").get<std::string>());
    if (!m || !tower_from_config(*m)) continue;
    const std::string config_path = catalogue_config_path(facts, path.substr(0, path.size() - suffix.size()));
    nlohmann::json config = parse_config_text(std::string(embedded::file_text(config_path)), config_path);
    if (facts.contains("config_patch")) config.merge_patch(facts["config_patch"]);
    Model scratch;
    ConfigView view(config, "catalogue " + config_path, scratch);
    if (auto t = config_tower(view, m->hidden)) out.emplace(m->id, std::move(*t));
  }
  return out;
}

}  // namespace

std::optional<TowerSpec> catalogue_tower(const Model& model) {
  static const std::map<std::string, TowerSpec> towers = read_towers();
  if (!tower_from_config(model)) return std::nullopt;
  const auto it = towers.find(model.id);
  if (it == towers.end()) return std::nullopt;
  return it->second;
}

}  // namespace vc
