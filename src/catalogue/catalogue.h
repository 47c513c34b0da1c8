#pragma once
// The built-in catalogue: for each model, its published config.json plus a sidecar of facts
// (data/models/<id>/facts.json), mapped through the same readers as a user's own files.
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace vc {

class Catalogue {
 public:
  static const Catalogue& builtin();

  // Exact id, case-insensitive; also matches the display name ("Kimi K3.1 Pro").
  const Model* find(std::string_view id_or_name) const;
  const std::vector<Model>& models() const { return models_; }
  std::string ids() const;  // "kimi-k3, kimi-k3.1-pro, ..." for messages

 private:
  Catalogue();
  std::vector<Model> models_;
};

// Builds one model from a facts document and a config (used by the catalogue and by tests).
// `facts_json` is the sidecar text; `config_lookup` returns the text of a model id's config.json.
Model model_from_facts(const std::string& facts_json, const std::string& config_json, const std::string& label);

}  // namespace vc
