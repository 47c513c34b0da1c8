// Mixtral (model_type mixtral): Mistral's attention with every MLP replaced by num_local_experts
// gated experts of intermediate_size, num_experts_per_tok active, a bias-free router; no shared
// expert. sliding_window null (8x7B v0.1) means full attention. Reference: architectures.md
// sections 1 and 8 (Mixtral column).
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_mixtral(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const auto window = cfg.opt_u64("sliding_window", limits::kWindow);
  MoeGeometry moe;
  moe.experts = cfg.u64("num_local_experts", limits::kExperts);
  moe.top_k = cfg.u64("num_experts_per_tok", limits::kExperts);
  moe.expert_width = cfg.u64("intermediate_size", limits::kWidth);
  check_moe(cfg, moe, "num_experts_per_tok");

  const uint64_t attn = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, false);
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = window && *window > 0 ? window_attention(g, *window) : full_attention(g);
    layer.feed_forward = moe_spec(moe);
    tally.add_always_active(ParamClass::Attention, attn);
    tally_glu_moe(tally, hidden, moe, false);
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (Mixtral mapper)");
}

}  // namespace vc::families
