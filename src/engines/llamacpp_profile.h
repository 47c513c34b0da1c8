#pragma once
// What llama.cpp allocates for a model's context (the "context" buffers: KV cache and recurrent
// state, plus the logits output buffer), reproduced rule by rule from its allocation code and
// validated against its own allocations (tests/data/llamacpp/runs.json, tests/data/llamacpp-measured.json). Rules and sources:
// docs/engines.md.
#include <cstdint>
#include <string>
#include <vector>

#include "engines/llamacpp_compute.h"
#include "estimate/estimate.h"
#include "model/model.h"

namespace vc {

// llama_context pads n_ctx (all sequences together) to a multiple of 256 cells and sizes every
// buffer from the padded figure: its memory changes only where -c crosses a multiple of this.
inline constexpr uint64_t kLlamaCppCellPad = 256;

struct LlamaCppSettings {
  uint64_t n_ctx = 4096;     // -c (total over all sequences)
  uint64_t n_seq = 1;        // -np
  uint64_t n_batch = 2048;   // -b
  uint64_t n_ubatch = 512;   // -ub
  bool flash_attn = true;    // -fa on|off (auto: on where the device supports it, as on CPU)
  std::string type_k = "F16";  // -ctk
  std::string type_v = "F16";  // -ctv
  bool swa_full = false;     // --swa-full
  bool kv_unified = false;   // --kv-unified
};

struct LlamaCppMemory {
  uint64_t n_ctx = 0;            // after llama.cpp's padding (kLlamaCppCellPad) (a multiple of 256, and of n_seq x n_ctx_seq)
  uint64_t n_ctx_seq = 0;        // cells per sequence of the full-attention cache
  uint64_t kv_cells = 0;         // per sequence
  uint64_t kv_k_bytes = 0, kv_v_bytes = 0;
  uint64_t swa_cells = 0;        // per sequence, window layers
  uint64_t swa_k_bytes = 0, swa_v_bytes = 0;
  uint64_t rs_cells = 0;
  uint64_t rs_r_bytes = 0, rs_s_bytes = 0;  // conv (R) and recurrent (S) state, f32
  uint64_t output_bytes = 0;     // logits buffer: n_vocab x 4 B per output row
  uint64_t compute_bytes = 0;    // scheduler compute buffer (llamacpp_compute.h)
  // Each layer's KV (full, window, latent) and recurrent state: they live on that layer's device.
  std::vector<uint64_t> layer_kv_bytes;
  std::vector<uint64_t> layer_state_bytes;
  std::vector<Line> lines;
  uint64_t context_bytes() const { return kv_k_bytes + kv_v_bytes + swa_k_bytes + swa_v_bytes + rs_r_bytes + rs_s_bytes; }
};

LlamaCppMemory llamacpp_memory(const Model& model, const LlamaCppSettings& settings);

}  // namespace vc
