#pragma once
// What speculative decoding and adapters add beside the target model: a draft model's weights and
// its own KV cache (llama.cpp -md, vLLM/SGLang speculative_config), and LoRA adapter weights
// (llama.cpp --lora). Each is a Line with its formula and source.
#include <string>
#include <vector>

#include "estimate/estimate.h"
#include "sources/companion_files.h"

namespace vc {

// The draft's scenario as llama-server sets it up: one sequence of `draft_context` tokens (-cd;
// 0: the target's context per sequence), its cache at `cache_type` (-ctkd/-ctvd, default f16),
// the draft's own weights.
Scenario draft_scenario(const Scenario& target, uint64_t draft_context, const std::string& cache_type);

// The draft's weights and cache for its scenario (draft_scenario).
std::vector<Line> draft_lines(const Model& draft, const Scenario& draft_scenario);

Line lora_line(const AdapterFile& adapter);

}  // namespace vc
