#pragma once
// llama.cpp's compute buffer: the scheduler reserves one graph at the worst-case batch (n_ubatch
// tokens, every one an output, attending to the whole cache) and ggml-alloc packs its
// intermediate tensors, freeing each after its last use. The buffer is the peak of what is alive
// at once. We model it as inputs that live all along (token ids, positions, the attention
// masks) plus the largest of the per-token working sets of the graph's phases. Fitted to and
// validated against tests/data/llamacpp/runs.json and tests/data/llamacpp-measured.json (compute bytes);
// the rule and its limits: docs/engines.md.
#include <cstdint>
#include <string>

#include "engines/llamacpp_graph.h"
#include "model/model.h"

namespace vc {

struct LlamaCppComputeInput {
  uint64_t n_ctx = 4096;          // as asked (-c)
  uint64_t n_ctx_padded = 4096;   // after llama.cpp's padding (LlamaCppMemory::n_ctx)
  uint64_t n_seq = 1;
  uint64_t n_batch = 2048;
  uint64_t n_ubatch = 512;
  bool flash_attn = true;
  bool kv_unified = false;
  uint64_t kv_cells = 0;   // cells per stream of the full-attention cache (n_ctx_seq)
  uint64_t swa_cells = 0;  // cells per stream of the window cache (0: none)
  bool k_quantized = false;  // -ctk is a block type (q8_0, q4_0, ...): llama.cpp may rotate K
  bool v_quantized = false;  // -ctv likewise
};

struct LlamaCppCompute {
  uint64_t tokens = 0;          // the ubatch the graph is reserved for: min(n_ubatch, n_batch, n_ctx), a multiple of n_seq
  uint64_t latent_bytes = 0;    // MLA without flash attention: an f16 copy of the latent rows of the whole cache
  uint64_t mask_bytes = 0;      // KQ masks (full and window), alive for the whole graph
  uint64_t scores_bytes = 0;    // without flash attention: the f32 KQ scores of one layer
  uint64_t phase_bytes = 0;     // the largest phase: working set x tokens (+ scores for attention)
  std::string phase;            // which phase is the largest: "attention", "feed-forward", ...
  uint64_t graph_tensors = 0;   // > 0: the buffer is a replay of ggml-alloc over a graph of this many tensors
  uint64_t bytes = 0;           // the compute buffer
};

LlamaCppCompute llamacpp_compute(const Model& model, const LlamaCppComputeInput& in);

// The ubatch llama.cpp reserves its graph for (tokens, sequences, outputs, cache cells, the
// rotation of a quantized cache), as llamacpp_compute replays it.
LlamaCppGraphInput llamacpp_graph_input(const Model& model, const LlamaCppComputeInput& in);

}  // namespace vc
