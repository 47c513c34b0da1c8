#pragma once
// Adds up parameters by class, total and active per token, as a mapper walks a model's layers.
// The formulas for common blocks live here so each family mapper only says which blocks it has.
#include <cstdint>

#include "model/model.h"

namespace vc {

class ParamTally {
 public:
  // `active` is what one token touches (kActiveConvention): the input embedding is a lookup (0
  // active), routed experts count k of n, a tied output head is active though stored once.
  void add(ParamClass c, uint64_t total, uint64_t active);
  void add_always_active(ParamClass c, uint64_t n) { add(c, n, n); }
  // A mapper brackets each decoder layer's adds: they count in the totals and are kept on the layer
  // (LayerConfig::params), so nothing downstream guesses a layer's share back.
  void begin_layer();
  std::map<ParamClass, uint64_t> end_layer();
  // Finishes Model::params (by_class, derived_total, derived_active, derived_source).
  void write_to(Params& params, const std::string& source) const;
  uint64_t total() const { return total_; }
  uint64_t active() const { return active_; }

 private:
  std::map<ParamClass, uint64_t> by_class_;
  std::map<ParamClass, uint64_t> active_by_class_;
  uint64_t total_ = 0;
  uint64_t active_ = 0;
  bool in_layer_ = false;
  std::map<ParamClass, uint64_t> layer_;
};

// Gated (SwiGLU-style) feed-forward: gate, up, down = 3 * in * width.
uint64_t glu_params(uint64_t in, uint64_t width);
// Plain two-matrix MLP (up, down), e.g. Nemotron-H's squared-ReLU MLP.
uint64_t mlp2_params(uint64_t in, uint64_t width);
// q, k, v, o projections of grouped-query attention (plus biases when `qkv_bias`).
uint64_t gqa_params(uint64_t hidden, uint64_t heads, uint64_t kv_heads, uint64_t head_dim_k, uint64_t head_dim_v, bool qkv_bias);
// Multi-head latent attention: q (direct or through q_lora), kv_a (latent+rope), kv_b, o, norms.
uint64_t mla_params(uint64_t hidden, uint64_t heads, uint64_t q_lora_rank, uint64_t kv_lora_rank,
                    uint64_t qk_nope, uint64_t qk_rope, uint64_t v_head_dim);

}  // namespace vc
