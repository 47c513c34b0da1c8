#pragma once
// The command line that would realise a plan, for llama.cpp, vLLM and SGLang. Flags as each
// engine documents them; where the plan cannot be said in an engine's flags, a note says so.
#include <string>
#include <vector>

#include "plan/plan.h"

namespace vc {

struct EngineCommand {
  std::string engine;  // llamacpp, vllm, sglang
  std::string command;
  std::vector<std::string> notes;
};

// Every engine the plan's devices support (all three when `engine` is generic), else the one asked.
std::vector<EngineCommand> engine_commands(const Plan& plan);

}  // namespace vc
