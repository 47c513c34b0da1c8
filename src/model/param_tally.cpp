#include "model/param_tally.h"

#include "core/checked.h"

namespace vc {

void ParamTally::add(ParamClass c, uint64_t total, uint64_t active) {
  if (total || !active) by_class_[c] = checked_add(by_class_[c], total);  // a tied head adds no stored class
  if (active) active_by_class_[c] = checked_add(active_by_class_[c], active);
  total_ = checked_add(total_, total);
  active_ = checked_add(active_, active);
  if (in_layer_) layer_[c] = checked_add(layer_[c], total);
}

void ParamTally::begin_layer() {
  in_layer_ = true;
  layer_.clear();
}

std::map<ParamClass, uint64_t> ParamTally::end_layer() {
  in_layer_ = false;
  return std::move(layer_);
}

void ParamTally::write_to(Params& params, const std::string& source) const {
  params.by_class = by_class_;
  params.active_by_class = active_by_class_;
  params.derived_total = total_;
  params.derived_active = active_;
  params.derived_source = source;
}

uint64_t glu_params(uint64_t in, uint64_t width) { return checked_product({3, in, width}); }

uint64_t mlp2_params(uint64_t in, uint64_t width) { return checked_product({2, in, width}); }

uint64_t gqa_params(uint64_t hidden, uint64_t heads, uint64_t kv_heads, uint64_t head_dim_k, uint64_t head_dim_v, bool qkv_bias) {
  uint64_t q = checked_product({hidden, heads, head_dim_k});
  uint64_t k = checked_product({hidden, kv_heads, head_dim_k});
  uint64_t v = checked_product({hidden, kv_heads, head_dim_v});
  uint64_t o = checked_product({heads, head_dim_v, hidden});
  uint64_t n = checked_add(checked_add(q, k), checked_add(v, o));
  if (qkv_bias) n = checked_add(n, heads * head_dim_k + kv_heads * (head_dim_k + head_dim_v));
  return n;
}

uint64_t mla_params(uint64_t hidden, uint64_t heads, uint64_t q_lora_rank, uint64_t kv_lora_rank,
                    uint64_t qk_nope, uint64_t qk_rope, uint64_t v_head_dim) {
  const uint64_t q_head = qk_nope + qk_rope;
  uint64_t q = q_lora_rank > 0
                   ? checked_add(checked_add(checked_mul(hidden, q_lora_rank), q_lora_rank),  // q_a + norm
                                 checked_product({q_lora_rank, heads, q_head}))                // q_b
                   : checked_product({hidden, heads, q_head});
  uint64_t kv_a = checked_add(checked_mul(hidden, kv_lora_rank + qk_rope), kv_lora_rank);  // + kv_a norm
  uint64_t kv_b = checked_product({kv_lora_rank, heads, qk_nope + v_head_dim});
  uint64_t o = checked_product({heads, v_head_dim, hidden});
  return checked_add(checked_add(q, kv_a), checked_add(kv_b, o));
}

}  // namespace vc
