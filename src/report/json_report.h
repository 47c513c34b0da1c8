#pragma once
// The documented JSON shapes (docs/json.md): every byte figure an integer number of bytes, every
// line with its formula, assumption and source, the inputs echoed back.
#include <nlohmann/json.hpp>

#include "estimate/estimate.h"
#include "model/model.h"

namespace vc {

inline constexpr const char* kEstimateSchema = "vramcalc.estimate/1";

nlohmann::json scenario_json(const Scenario& s);
nlohmann::json model_summary_json(const Model& m);
nlohmann::json estimate_json(const Estimate& e);

}  // namespace vc
