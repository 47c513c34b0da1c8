#pragma once
// The compute graph llama.cpp reserves its buffer for (one ubatch of `tokens`, every token an
// output), rebuilt tensor by tensor for the architectures whose graph we transcribed, so that
// ggml-alloc's packing of it can be replayed (engines/ggml_alloc_replay.h). Each builder follows
// the model's graph code of llama.cpp 80fb11ac (src/models/*.cpp, llama-graph.cpp build_attn,
// build_ffn, build_norm) in the order its nodes run, as ggml-alloc's debug trace of that commit
// lists them (tools/measure-llamacpp, "Reading the allocator's peak").
#include <cstdint>
#include <optional>
#include <string>

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
  // Cache types (-ctk, -ctv): the size of the cache views an attention op reads, which the
  // scheduler copies when the op runs on the other device.
  std::string type_k = "F16", type_v = "F16";
};

// Model::tensors index standing for the output layer's copy of tied token embeddings (no
// output.weight in the file: llama.cpp duplicates token_embd into the output layer's buffer).
constexpr int kTiedOutputWeight = -2;

// Whether ggml-cuda has a flash-attention kernel for these head widths and cache types (fattn.cu
// ggml_cuda_get_best_fattn_kernel: K and V of 40, 64, 72, 80, 96, 112, 128 or 256; the wider MLA
// and 192/320 shapes only under conditions, not claimed here; K and V of one type, F16, Q4_0 or
// Q8_0, in a default build). Where it has none, supports_op says no and the scheduler runs the op
// on the CPU backend.
bool cuda_has_flash_attn_kernel(uint64_t head_k, uint64_t head_v, const std::string& type_k, const std::string& type_v);

// nullopt: this model has a layer or a setting no builder covers (the phase rule answers then).
std::optional<GgmlGraph> llamacpp_graph(const Model& model, const LlamaCppGraphInput& in);

}  // namespace vc
