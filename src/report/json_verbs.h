#pragma once
// The JSON of the sub-commands other than `estimate` (builds, sweep, compare, stream, models),
// shared by the CLI's --json and the HTTP API so both faces print the same document.
#include <nlohmann/json.hpp>
#include <vector>

#include "core/units.h"
#include "estimate/estimate.h"
#include "estimate/ladder.h"
#include "estimate/streaming.h"
#include "estimate/sweep.h"
#include "model/model.h"
#include "plan/engine_ladder.h"

namespace vc {

nlohmann::json models_json(const std::vector<Model>& models);
nlohmann::json builds_json(const Model& model, const std::vector<LadderRow>& rows);
// `builds --engine` (vramcalc.builds/2): the tiers the engine loads and the fewest cards its answer fits on.
nlohmann::json engine_builds_json(const Model& model, const Scenario& scenario, const std::vector<EngineLadderRow>& rows);
nlohmann::json sweep_json(const Model& model, const std::vector<SweepRow>& rows);
nlohmann::json compare_json(const Estimate& a, const Estimate& b, const EngineAnswer& engine_a, const EngineAnswer& engine_b);
// Each side's engine answer (scenario.engine, no devices): what compare prints beside the estimates.
EngineAnswer engine_for(const Model& model, const Scenario& scenario);
nlohmann::json stream_json(const Model& model, const StreamEstimate& s);

// Display strings for an estimate (bytes formatted by the library, in GB or GiB), so a page can
// show figures without computing any: lines[i], totals, the clamp note and card counts.
nlohmann::json estimate_display_json(const Estimate& e, ByteUnits units);

}  // namespace vc
