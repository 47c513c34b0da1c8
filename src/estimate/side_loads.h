#pragma once
// What speculative decoding and adapters add beside the target model: a draft model's weights and
// its own KV cache (llama.cpp -md, vLLM/SGLang speculative_config), and LoRA adapter weights
// (llama.cpp --lora). Each is a Line with its formula and source.
#include <string>
#include <vector>

#include "estimate/estimate.h"
#include "sources/companion_files.h"

namespace vc {

// The draft's weights and cache for the target's scenario (same tokens and sequences; llama.cpp
// keeps the draft's cache in f16 unless -ctkd/-ctvd say otherwise).
std::vector<Line> draft_lines(const Model& draft, const Scenario& target);

Line lora_line(const AdapterFile& adapter);

}  // namespace vc
