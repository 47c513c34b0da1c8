#pragma once
// config.json -> Model. Dispatches on model_type (text_config's first, for multimodal wrappers).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/model.h"

namespace vc {

Model model_from_config(const nlohmann::json& config, const std::string& label);
// model_type values with a dedicated mapper.
std::vector<std::string> supported_model_types();

}  // namespace vc
