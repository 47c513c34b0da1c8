#include "sources/config/config_mapper.h"

#include <functional>
#include <map>

#include "core/error.h"
#include "sources/config/families.h"
#include "sources/config/native_checkpoint.h"

namespace vc {
namespace {

using Mapper = void (*)(ConfigView&);

// model_type -> mapper; the architecture table of this project.
const std::map<std::string, Mapper>& mapper_table() {
  static const std::map<std::string, Mapper> table = {
      {"kimi_linear", families::map_kimi_linear},
      {"kimi_k3", families::map_kimi_linear},
  };
  return table;
}

std::string model_type_of(const nlohmann::json& config) {
  for (const char* k : {"text_config", "language_config", "llm_config"}) {
    auto it = config.find(k);
    if (it != config.end() && it->is_object()) {
      auto t = it->find("model_type");
      if (t != it->end() && t->is_string()) return t->get<std::string>();
    }
  }
  auto t = config.find("model_type");
  if (t != config.end() && t->is_string()) return t->get<std::string>();
  return "";
}

}  // namespace

std::vector<std::string> supported_model_types() {
  std::vector<std::string> out;
  for (const auto& [k, v] : mapper_table()) out.push_back(k);
  return out;
}

Model model_from_config(const nlohmann::json& config, const std::string& label) {
  Model model;
  std::string type = model_type_of(config);
  auto top = config.find("model_type");
  std::string outer = (top != config.end() && top->is_string()) ? top->get<std::string>() : type;
  const auto& table = mapper_table();
  auto it = table.find(type);
  if (it == table.end()) it = table.find(outer);
  if (it == table.end()) {
    std::string names;
    for (const auto& [k, v] : table) names += (names.empty() ? "" : ", ") + k;
    throw InputError(label + ": model_type", "'" + type + "' has no mapper; supported: " + names);
  }
  model.architecture = outer;
  model.family = it->first;
  ConfigView cfg(config, label, model);
  it->second(cfg);
  if (model.layers.empty()) throw InputError(label, "the mapper found no layers");
  model.max_context = cfg.u64_or("max_position_embeddings", 0, uint64_t{1} << 34, "not in the config");
  apply_native_checkpoint(cfg);
  return model;
}

}  // namespace vc
