#pragma once
// The geometry of a catalogue entry's vision tower, for the engines that size what the tower does
// at run time (vLLM's encoder profile): read again from the entry's stored config.json, as the
// catalogue reads it (config_from, config_patch). The parameter count itself is in Model::params.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "model/model.h"
#include "sources/config/config_tower.h"

namespace vc {

// The config.json an entry's facts point at (defined in catalogue.cpp): its own, or config_from's.
std::string catalogue_config_path(const nlohmann::json& facts, std::string_view dir);

// nullopt for a model outside the catalogue or one whose tower is not counted from its config.
std::optional<TowerSpec> catalogue_tower(const Model& model);

}  // namespace vc
