#pragma once
// An engine's answer as JSON (the `engine` object of every verb; docs/json.md) and as text.
#include <string>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "engines/engine.h"

namespace vc {

nlohmann::json engine_json(const EngineAnswer& answer);
std::string engine_text(const EngineAnswer& answer, bool explain, ByteUnits units);

}  // namespace vc
