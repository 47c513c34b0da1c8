// GLM-4.5 / 4.6 / 4.7 (model_type glm4_moe): grouped-query attention (96 query heads, 8 KV heads,
// head_dim 128, q/k/v biases, optional q/k norms), first_k_dense_replace dense layers, then
// n_routed_experts gated experts with n_shared_experts shared ones and a noaux_tc router (score
// bias per expert). num_nextn_predict_layers MTP layers are counted as Mtp, not as layers.
// Reference: architectures.md sections 1 and 8 (DeepSeek/GLM column); transformers Glm4MoeConfig.
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_glm4_moe(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const bool qkv_bias = cfg.flag("attention_bias", true);
  const bool qk_norm = cfg.flag("use_qk_norm", false);
  const uint64_t dense_width = cfg.u64("intermediate_size", limits::kWidth);
  const uint64_t first_dense = cfg.opt_u64("first_k_dense_replace", limits::kLayers).value_or(0);
  MoeGeometry moe;
  moe.experts = cfg.u64("n_routed_experts", limits::kExperts);
  moe.top_k = cfg.u64("num_experts_per_tok", limits::kExperts);
  moe.expert_width = cfg.u64("moe_intermediate_size", limits::kWidth);
  moe.shared_width = checked_mul(cfg.opt_u64("n_shared_experts", 64).value_or(0), moe.expert_width);
  check_moe(cfg, moe, "num_experts_per_tok");

  uint64_t attn = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, qkv_bias);
  if (qk_norm) attn = checked_add(attn, 2 * g.head_dim);
  auto layer_params = [&](ParamTally& t, uint64_t il) {
    t.add_always_active(ParamClass::Attention, attn);
    if (il >= first_dense) tally_glu_moe(t, hidden, moe, true);
    else t.add_always_active(ParamClass::DenseMlp, glu_params(hidden, dense_width));
    t.add_always_active(ParamClass::Norms, 2 * hidden);
  };
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = full_attention(g);
    layer.feed_forward = il >= first_dense ? moe_spec(moe) : dense_spec(dense_width);
    layer_params(tally, il);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  // MTP: one more decoder layer + eh_proj (2h -> h), enorm, hnorm, shared-head norm, and, where the
  // checkpoint stores them, the layer's own embed_tokens and shared_head.head copies: GLM-4.5,
  // 4.5-Air and 4.7 do (DeepSeek-V3's layout), GLM-4.6 does not (vLLM PR #27597), a per-entry fact.
  const uint64_t mtp = cfg.opt_u64("num_nextn_predict_layers", limits::kLayers).value_or(0);
  const uint64_t copied = mtp_copied_vocab(cfg, mtp, true,
                                           "GLM-4.5's layout (its checkpoint stores model.layers.92.embed_tokens and shared_head.head: "
                                           "https://github.com/vllm-project/vllm/pull/27597); GLM-4.6's does not, so a checkpoint may differ");
  tally_mtp_layers(tally, mtp, hidden, 3, [&](ParamTally& t, uint64_t i) { layer_params(t, layers + i); }, copied);
  tally.write_to(m.params, cfg.label() + " geometry (GLM-4 MoE mapper)");
}

}  // namespace vc::families
