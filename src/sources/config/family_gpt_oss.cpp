// gpt-oss (model_type gpt_oss): layer_types alternates sliding_attention (window sliding_window,
// 128) and full_attention; grouped-query attention with biases on q/k/v/o and one learned sink
// logit per head; num_local_experts gated experts of intermediate_size with biases, k active;
// router with bias. The MXFP4 quantization_config covers the experts only (native_checkpoint.cpp).
// Reference: architectures.md sections 2, 8 and 9.
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_gpt_oss(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t window = cfg.u64("sliding_window", limits::kWindow);
  MoeGeometry moe;
  moe.experts = cfg.u64("num_local_experts", limits::kExperts);
  moe.top_k = first_u64(cfg, {"num_experts_per_tok", "experts_per_token"}, limits::kExperts);
  moe.expert_width = cfg.u64("intermediate_size", limits::kWidth);
  check_moe(cfg, moe, "num_experts_per_tok");
  std::vector<std::string> types;
  if (cfg.has("layer_types")) {
    types = read_layer_types(cfg, layers, {"sliding_attention", "full_attention"});
  } else {  // the released configs list them; older ones alternate, sliding first
    cfg.warn("layer_types: not in the config; assumed sliding on even layers, full on odd (gpt-oss release pattern)");
    for (uint64_t i = 0; i < layers; ++i) types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  }

  // q/k/v/o with all biases, plus one sink per query head.
  const uint64_t attn = checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, true), hidden + g.heads);
  // One expert: gate_up [h, 2w] + bias 2w, down [w, h] + bias h.
  const uint64_t one_expert = checked_add(glu_params(hidden, moe.expert_width), 2 * moe.expert_width + hidden);
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = types[il] == "sliding_attention" ? window_attention(g, window) : full_attention(g);
    layer.feed_forward = moe_spec(moe);
    tally.add_always_active(ParamClass::Attention, attn);
    tally.add(ParamClass::RoutedExperts, checked_mul(moe.experts, one_expert), checked_mul(moe.top_k, one_expert));
    tally.add_always_active(ParamClass::Router, checked_mul(moe.experts, hidden) + moe.experts);
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (gpt-oss mapper)");
}

}  // namespace vc::families
