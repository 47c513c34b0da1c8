#pragma once
// `vramcalc.validate-log/1`: a pasted engine log's figures beside ours (`validate --log --json`,
// /api/validate-log): the engine, the model, a row per figure and the notes the log's reading left.
#include <nlohmann/json.hpp>
#include <vector>

#include "engines/engine_log.h"

namespace vc {

nlohmann::json validate_log_json(const EngineLog& log, const Model& model, const std::vector<ValidationRow>& rows);

}  // namespace vc
