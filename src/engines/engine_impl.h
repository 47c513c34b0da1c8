#pragma once
// The engines behind run_engine (engine.h), one file each; shared helpers for building answers.
#include "engines/engine.h"

namespace vc::engines {

EngineAnswer rule(const EngineRequest& request);
EngineAnswer llamacpp(const EngineRequest& request, const EngineRun& run);
EngineAnswer vllm(const EngineRequest& request, const EngineRun& run);
EngineAnswer sglang(const EngineRequest& request, const EngineRun& run);

// The allocation kind of an estimate line ("weights", "cache.*", "state.*", "overhead").
AllocKind kind_of_line(const std::string& line_id);
Allocation from_line(const Line& line);
// Sets total_bytes and every device's fits from its capacity.
void finish(EngineAnswer& answer);

}  // namespace vc::engines
