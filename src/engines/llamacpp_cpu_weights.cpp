#include "engines/llamacpp_cpu_weights.h"

#include <algorithm>
#include <cstdint>

#include "core/checked.h"

namespace vc {

bool llamacpp_repacks(const GgufTensor& t) {
  // ggml-cpu/repack.cpp ggml_repack_get_optimal_repack_type: the AVX2 layouts q4_0_8x8,
  // q4_K_8x8, iq4_nl_8x8 and mxfp4_8x8 need ne[1] % 8 == 0 (Q2_K needs AVX512, Q8_0 ARM).
  static const char* const kTypes[] = {"Q4_0", "Q4_K", "IQ4_NL", "MXFP4"};
  if (std::none_of(std::begin(kTypes), std::end(kTypes), [&](const char* k) { return t.type_name == k; })) return false;
  if (t.ne.size() < 2 || t.ne[1] % 8 != 0) return false;
  // extra_buffer_type::supports_op: MUL_MAT on a 2-D weight, MUL_MAT_ID on a 3-D expert stack.
  // The loader asks with the op the tensor is used in; embeddings are used by GET_ROWS.
  if (t.name.rfind("token_embd", 0) == 0 || t.name.find("per_layer_token_embd") != std::string::npos) return false;
  size_t dims = t.ne.size();
  while (dims > 2 && t.ne[dims - 1] == 1) --dims;
  if (dims == 2) return true;
  return dims == 3 && t.name.find("_exps.") != std::string::npos;
}

LlamaCppCpuWeights llamacpp_cpu_weights(const std::vector<GgufFile>& shards) {
  LlamaCppCpuWeights w;
  for (const auto& f : shards) {
    // llama_model_loader::get_mapping_range: per file, the smallest offset to the largest end of
    // the tensors left in the mapped buffer.
    uint64_t first = UINT64_MAX, last = 0;
    for (const auto& t : f.tensors) {
      if (llamacpp_repacks(t)) {
        // ggml_backend_alloc_ctx_tensors_from_buft: each tensor padded to the CPU buffer's 32-byte alignment.
        w.repack_bytes = checked_add(w.repack_bytes, ceil_div(t.bytes, 32) * 32);
        ++w.repacked_tensors;
        continue;
      }
      first = std::min(first, t.offset);
      last = std::max(last, checked_add(t.offset, t.bytes));
    }
    if (last > first) w.mapped_bytes = checked_add(w.mapped_bytes, last - first);
  }
  return w;
}

}  // namespace vc
