#pragma once
// The documented JSON shapes (docs/json.md): every byte figure an integer number of bytes, every
// line with its formula, assumption and source, the inputs echoed back.
#include <nlohmann/json.hpp>

#include "engines/engine.h"
#include "estimate/estimate.h"
#include "model/model.h"

namespace vc {

inline constexpr const char* kEstimateSchema = "vramcalc.estimate/2";

nlohmann::json scenario_json(const Scenario& s);
nlohmann::json model_summary_json(const Model& m);
nlohmann::json estimate_json(const Estimate& e);
// The estimate and the engine's per-device answer (`engine`, docs/json.md): what `estimate --json`
// and /api/estimate print.
nlohmann::json estimate_json(const Estimate& e, const EngineAnswer& engine);

}  // namespace vc
