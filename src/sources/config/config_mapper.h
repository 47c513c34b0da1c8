#pragma once
// config.json -> Model. Dispatches on model_type (text_config's first, for multimodal wrappers).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/model.h"
#include "sources/config/stored_tensors.h"

namespace vc {

// `stored`: what the checkpoint holds beyond its geometry where config.json does not say (the
// catalogue's facts); unset facts take the family's default.
Model model_from_config(const nlohmann::json& config, const std::string& label, const StoredTensors& stored = {});
// model_type values with a dedicated mapper.
std::vector<std::string> supported_model_types();

}  // namespace vc
