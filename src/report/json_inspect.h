#pragma once
// The JSON of `inspect` (schema vramcalc.inspect/1), shared by the CLI's --json and /api/inspect.
#include <nlohmann/json.hpp>

#include "sources/checkpoint.h"

namespace vc {

nlohmann::json inspection_json(const CheckpointInspection& c);

}  // namespace vc
