#pragma once
// Decode and prefill as an engine runs them (src/speed/): llama.cpp with the placement of the
// command the plan prints (-ngl, -ts, -ot exps=CPU, --n-cpu-moe), vLLM and SGLang tensor parallel
// over the GPUs. Replaces the plan's speeds for those engines, each with the range measured runs
// show around it; the rule engine keeps its bytes-over-bandwidth figures (and the seed pages').
#include "plan/plan.h"

namespace vc {

void apply_engine_speed(Plan& plan, const Model& model);

}  // namespace vc
