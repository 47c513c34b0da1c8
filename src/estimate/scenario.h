#pragma once
// What the user asks about: a weights tier, context, concurrent sequences, cache and state dtypes,
// runtime overhead, and the latent-cache budget. Defaults are the seeds' (8K, one sequence,
// 16-bit cache, f32 recurrent state, 15% overhead).
#include <cstdint>
#include <optional>
#include <string>

namespace vc {

// How recurrent (linear-attention / Mamba) state is stored: the engines differ.
enum class StateLayout {
  F32,    // matrix and conv state in f32 (llama.cpp: type_r = type_s = F32)
  Mixed,  // matrix in f32, conv state in the 16-bit model dtype (vLLM's default for KDA/GDN)
  F16,    // both 16-bit (SGLang --mamba-ssm-dtype bfloat16)
};
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
  std::string engine = "generic";    // generic (the seeds' arithmetic), llamacpp, vllm: engine lines added
};

}  // namespace vc
