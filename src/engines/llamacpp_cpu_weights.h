#pragma once
// What llama.cpp's CPU backend holds for a GGUF model's weights: the memory-mapped span of the
// file (CPU_Mapped) and the repacked copies it makes of the weights its AVX2 matrix kernels read
// in interleaved blocks (CPU_REPACK). A repacked tensor leaves the mapped span, but the span runs
// from the first to the last tensor still mapped, so gaps in between stay mapped. Rules and
// sources: docs/engines.md ("CPU model buffer").
#include <cstdint>
#include <string>

#include <vector>

#include "engines/llamacpp_placement.h"
#include "model/model.h"
#include "sources/gguf/gguf_file.h"

namespace vc {

struct LlamaCppCpuWeights {
  uint64_t mapped_bytes = 0;      // CPU_Mapped: per file, last mapped tensor's end - first one's start
  uint64_t repack_bytes = 0;      // CPU_REPACK: repacked tensors, each padded to 32 bytes
  uint64_t repacked_tensors = 0;
  uint64_t total() const { return mapped_bytes + repack_bytes; }
};

// Whether llama.cpp (CPU backend, x86 with AVX2) repacks this tensor: a Q4_0, Q4_K, IQ4_NL or MXFP4
// matrix with a multiple of 8 rows that a matrix multiplication reads (2-D weights, 3-D expert
// stacks); never the token embedding, which is read by row lookups.
bool llamacpp_repacks(const std::string& name, const std::string& type, const std::vector<uint64_t>& ne);
bool llamacpp_repacks(const GgufTensor& t);

// From the GGUF headers (every file of a split set, in order): each tensor's type, shape and offset.
LlamaCppCpuWeights llamacpp_cpu_weights(const std::vector<GgufFile>& shards);

// CPU_REPACK of the weights a placement leaves on the CPU backend (-ngl below the layer count,
// -ot ...=CPU, no GPU). A GGUF model's tensors by their type and shape; a catalogue model's
// synthesized tensors by the recipe llama-quantize follows for the tier (llama_tensor_get_type):
// Q4_0 stores every matrix in Q4_0; IQ4_NL too, but attn_v goes to Q5_K when there are 4 or more
// query heads per KV head and ffn_down to Q5_K in the first eighth of the layers; Q4_K_M raises
// attn_v and ffn_down to Q6_K in the layers use_more_bits picks; Q4_K_S raises ffn_down in the
// first eighth of the layers and attn_v in the first four to Q5_K; models with 8 experts keep
// attn_v at Q8_0 and attn_output at Q5_K; MXFP4 checkpoints hold only the routed experts in MXFP4.
// The output layer (Q6_K), embeddings (row lookups), norms and routers are never repacked.
struct HostRepack {
  uint64_t bytes = 0;        // each repacked tensor padded to 32 bytes
  uint64_t source_bytes = 0; // the same tensors as the file stores them (the copies' originals)
  uint64_t tensors = 0;
  bool from_recipe = false;  // synthesized tensors: shares from the tier's recipe
  bool unknown_recipe = false;  // synthesized tensors on the host at a tier whose recipe is not modelled
};
HostRepack llamacpp_host_repack(const Model& model, const std::vector<HostTensor>& host_tensors, const std::string& tier);

}  // namespace vc
