#pragma once
// What the user asks about: a weights tier, context, concurrent sequences, cache and state dtypes,
// runtime overhead, and the latent-cache budget. Defaults are the seeds' (8K, one sequence,
// 16-bit cache, f32 recurrent state, 15% overhead).
#include <cstdint>
#include <optional>
#include <string>

#include "engines/engine_kind.h"
#include "model/layer_memory.h"

namespace vc {

const char* to_string(StateLayout layout);
StateLayout parse_state_layout(const std::string& text, const std::string& subject);

struct Scenario {
  std::string quant;                 // "" = native checkpoint; a tier (Q4_K_M, FP8) or a build name
  uint64_t context = 8192;           // tokens per sequence
  uint64_t sequences = 1;            // concurrent sequences
  std::string cache_dtype = "F16";   // a storage type from the quant table
  StateLayout state_layout = StateLayout::F32;
  uint32_t overhead_bp = 1500;       // basis points of (weights + cache + state)
  uint64_t overhead_fixed = 0;       // bytes added on top
  std::optional<uint64_t> latent_values;  // overrides latent + rope + index values per latent layer
  EngineKind engine = EngineKind::Rule;  // whose allocations answer (src/engines/engine.h); rule: the percentage rule
  // A pasted llama.cpp command without -c (or -c 0) and no --context: the context each model was
  // trained with, settled per model by resolve_context_from_model (engines/engine.h).
  bool context_from_model = false;
};

}  // namespace vc
