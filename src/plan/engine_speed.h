#pragma once
// Decode and prefill as an engine runs them (src/speed/): llama.cpp with the placement of the
// command the plan prints (-ngl, -ts, -ot exps=CPU, --n-cpu-moe), vLLM and SGLang tensor parallel
// over the GPUs. Replaces the plan's speeds for those engines, each with the range measured runs
// show around it; the rule engine keeps its bytes-over-bandwidth figures (and the seed pages').
#include "plan/plan.h"

namespace vc {

void apply_engine_speed(Plan& plan, const Model& model);

// llama.cpp's host in the answer whose placement the plan's speed runs: the offload's when the GPUs
// alone are short and an offload was planned, else the engine's own; null for other engines.
const DeviceAllocation* llamacpp_speed_host(const Plan& plan);

}  // namespace vc
