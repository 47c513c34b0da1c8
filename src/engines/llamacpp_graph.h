#pragma once
// The compute graph llama.cpp reserves its buffer for (one ubatch of `tokens`, every token an
// output), rebuilt tensor by tensor for the architectures whose graph we transcribed, so that
// ggml-alloc's packing of it can be replayed (engines/ggml_alloc_replay.h). Each builder follows
// the model's graph code of llama.cpp 80fb11ac (src/models/*.cpp, llama-graph.cpp build_attn,
// build_ffn, build_norm) in the order its nodes run, as ggml-alloc's debug trace of that commit
// lists them (tools/measure-llamacpp, "Reading the allocator's peak").
#include <cstdint>
#include <optional>

#include "engines/ggml_alloc_replay.h"
#include "model/model.h"

namespace vc {

struct LlamaCppGraphInput {
  uint64_t tokens = 512;    // the reserved ubatch
  uint64_t seqs = 1;        // sequences in it (one stream each)
  uint64_t outputs = 512;   // rows of logits: the ubatch before it was rounded up to the sequences
  uint64_t kv_cells = 0;    // cells per stream of the full-attention cache
  uint64_t swa_cells = 0;   // cells per stream of the window cache
  bool flash_attn = true;
  bool kv_unified = false;  // one cache stream for every sequence (else one stream each)
  // Side of the Hadamard matrix a quantized K (V) cache is rotated with (llama-kv-cache.cpp
  // attn_rot_k / attn_rot_v), 0: not rotated.
  uint64_t k_rotation = 0, v_rotation = 0;
};

// nullopt: this model has a layer or a setting no builder covers (the phase rule answers then).
std::optional<GgmlGraph> llamacpp_graph(const Model& model, const LlamaCppGraphInput& in);

}  // namespace vc
