// Qwen2 and Qwen3, dense and MoE (model_type qwen2, qwen2_moe, qwen3, qwen3_moe): grouped-query
// attention with an explicit head_dim (Qwen3-32B: 128, not hidden/heads = 80), q/k RMSNorms of
// head_dim each in Qwen3, q/k/v biases in Qwen2. MoE configs (num_experts > 0) make a layer sparse
// unless it is listed in mlp_only_layers or (i + 1) % decoder_sparse_step != 0; a gated shared
// expert (shared_expert_intermediate_size, Qwen2-MoE) when present. Qwen2's optional window covers
// layers from max_window_layers on. Reference: architectures.md sections 1 and 8 (Qwen3 column);
// transformers Qwen2Config / Qwen3MoeConfig.
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {
namespace {

void map_qwen(ConfigView& cfg, bool qwen3) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t dense_width = cfg.u64("intermediate_size", limits::kWidth);
  const bool qkv_bias = cfg.flag("attention_bias", !qwen3);
  const bool windowed = cfg.flag("use_sliding_window", false);
  const uint64_t window = windowed ? cfg.u64("sliding_window", limits::kWindow) : 0;
  const uint64_t window_from = windowed ? cfg.u64_or("max_window_layers", 0, limits::kLayers, "window on every layer") : layers;

  MoeGeometry moe;
  moe.experts = cfg.opt_u64("num_experts", limits::kExperts).value_or(0);
  std::vector<bool> sparse(layers, false);
  if (moe.experts > 0) {
    moe.top_k = cfg.u64("num_experts_per_tok", limits::kExperts);
    moe.expert_width = cfg.u64("moe_intermediate_size", limits::kWidth);
    moe.shared_width = cfg.opt_u64("shared_expert_intermediate_size", limits::kWidth).value_or(0);
    check_moe(cfg, moe, "num_experts_per_tok");
    sparse = qwen_moe_layers(cfg, layers);
  }

  uint64_t attn = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, qkv_bias);
  if (qwen3) attn = checked_add(attn, 2 * g.head_dim);  // q_norm, k_norm
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = windowed && il >= window_from ? window_attention(g, window) : full_attention(g);
    tally.add_always_active(ParamClass::Attention, attn);
    layer.feed_forward = glu_feed_forward(tally, hidden, sparse[il], moe, dense_width, false);
    if (sparse[il] && moe.shared_width) tally.add_always_active(ParamClass::Router, hidden);  // shared_expert_gate
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + (qwen3 ? " geometry (Qwen3 mapper)" : " geometry (Qwen2 mapper)"));
}

}  // namespace

void map_qwen2(ConfigView& cfg) { map_qwen(cfg, false); }
void map_qwen3(ConfigView& cfg) { map_qwen(cfg, true); }

}  // namespace vc::families
