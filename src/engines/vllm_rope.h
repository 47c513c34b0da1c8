#pragma once
// vLLM's rotary cos/sin tables, which "Model loading took" counts with the weights. Every attention
// layer asks get_rope (vllm/model_executor/layers/rotary_embedding/__init__.py) for its rotary
// embedding; get_rope keeps one instance per (head size, rotary dim, max_position, neox style,
// rope parameters, dtype) in _ROPE_DICT, so the layers share a table. The instance builds its table
// while the model is created on the GPU (RotaryEmbeddingBase.__init__, base.py:
// _compute_cos_sin_cache, then cache.to(dtype), kept as the buffer cos_sin_cache), a table of
// positions x rotary dim values (cos and sin, rotary dim / 2 each), whole on every TP rank:
//   - rotary dim: the head dim x partial_rotary_factor (get_rope: int(head_size x factor)); an MLA
//     layer rotates qk_rope_head_dim (models/deepseek_v2.py);
//   - positions: max_position_embeddings (RotaryEmbedding, Llama3RotaryEmbedding: llama3_rope.py
//     only rescales the frequencies), times the factor for linear and dynamic scaling
//     (linear_scaling_rope.py, dynamic_ntk_scaling_rope.py: "the maximum length after applying
//     the rope scaling is self.max_position_embeddings * self.scaling_factor"), and
//     original_max_position_embeddings x factor for YaRN (get_rope passes original_max_position;
//     yarn_scaling_rope.py: ceil(max_position_embeddings x scaling_factor); DeepSeek's
//     deepseek_scaling_rope.py the same), original + max_position_embeddings for longrope
//     (phi3_long_rope_scaled_rope.py: a short and a long table concatenated); other types as
//     RotaryEmbedding;
//   - dtype: torch's default dtype when the model is built, the model's --dtype (get_rope: "if
//     dtype is None: dtype = torch.get_default_dtype()"), except gpt-oss, whose OAIAttention asks
//     for float32 (models/gpt_oss.py);
//   - Gemma 3 (models/gemma3.py Gemma3Attention): the sliding layers override rope_theta with
//     rope_local_base_freq and the scaling with {"rope_type": "default"}, a second table of
//     max_position_embeddings rows (Model::rope.sliding_own_table).
// The vision towers' own rotary tables (Llama 4's Llama4VisionRotaryEmbedding, Qwen-VL's) are not
// counted, nor a drafter's (with the target's parameters get_rope hands it the target's table).
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace vc {

struct VllmRopeTable {
  uint64_t rotary_dim = 0;
  uint64_t positions = 0;
  uint64_t value_bytes = 0;
  bool sliding = false;  // Gemma 3's sliding layers' table
  uint64_t bytes() const;
};

struct VllmRope {
  std::vector<VllmRopeTable> tables;
  uint64_t bytes = 0;
  std::string formula() const;  // "1,048,576 positions x 256 x 2 B + ..."; empty without tables
};

// The tables the first `layers` layers of `m` build (a pipeline rank: its stage's layers) at
// `value_bytes` a value (--dtype); none without max_position_embeddings.
VllmRope vllm_rope(const Model& m, uint64_t layers, uint64_t value_bytes);

extern const char* const kVllmRopeSource;

}  // namespace vc
