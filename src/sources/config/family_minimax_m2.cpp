// MiniMax-M2 / M2.5 (model_type minimax_m2): grouped-query attention on every layer (48 query heads,
// 8 KV heads, head_dim 128) with per-layer q/k RMSNorms over the whole projection
// (qk_norm_type "per_layer"), num_local_experts gated experts of intermediate_size with a routing
// bias, no shared expert unless shared_intermediate_size > 0. The MTP modules the config names
// (num_mtp_modules) are not counted: the config does not give their geometry.
// Reference: architectures.md sections 1 and 8 (MiniMax column).
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_minimax_m2(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const bool qk_norm = cfg.flag("use_qk_norm", false);
  const bool per_layer_norm = cfg.str("qk_norm_type", "per_layer") == "per_layer";
  MoeGeometry moe;
  moe.experts = cfg.u64("num_local_experts", limits::kExperts);
  moe.top_k = cfg.u64("num_experts_per_tok", limits::kExperts);
  moe.expert_width = cfg.u64("intermediate_size", limits::kWidth);
  moe.shared_width = cfg.opt_u64("shared_intermediate_size", limits::kWidth).value_or(0);
  check_moe(cfg, moe, "num_experts_per_tok");
  const bool router_bias = cfg.flag("use_routing_bias", false);

  uint64_t attn = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, false);
  if (qk_norm) {
    attn = checked_add(attn, per_layer_norm ? checked_mul(g.heads + g.kv_heads, g.head_dim) : 2 * g.head_dim);
  }
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = full_attention(g);
    layer.feed_forward = moe_spec(moe);
    tally.add_always_active(ParamClass::Attention, attn);
    tally_glu_moe(tally, hidden, moe, router_bias);
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  if (cfg.opt_u64("num_mtp_modules", limits::kLayers).value_or(0) > 0) {
    cfg.model().notes.push_back("MTP modules named in config.json (num_mtp_modules) are not counted in the parameters: their geometry is not given");
  }
  tally.write_to(m.params, cfg.label() + " geometry (MiniMax-M2 mapper)");
}

}  // namespace vc::families
