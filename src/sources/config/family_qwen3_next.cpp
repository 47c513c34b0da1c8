// Qwen3-Next and Qwen3.5 (model_type qwen3_next, qwen3_5_moe, qwen3_5 and their *_text inner
// configs): Gated DeltaNet linear-attention layers with a fixed recurrent state, and full GQA layers
// (head_dim 256, a sigmoid output gate that doubles q_proj, q/k norms) where layer_types says
// "full_attention" or, without that list, every full_attention_interval-th layer ((i + 1) % n == 0).
// Feed-forward: routed experts plus one gated shared expert, or dense when num_experts is absent.
// MTP layers (mtp_num_hidden_layers) ship in the checkpoint but do not decode: counted as Mtp.
// Formulas: reference/architectures.md sections 6 and 8; transformers Qwen3NextConfig.
#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_qwen3_next(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const bool output_gate = cfg.flag("attn_output_gate", true);  // Qwen3-Next always gates

  // Gated DeltaNet geometry.
  const uint64_t k_heads = cfg.u64("linear_num_key_heads", limits::kHeads);
  const uint64_t k_dim = cfg.u64("linear_key_head_dim", limits::kStateDim);
  const uint64_t v_heads = cfg.u64("linear_num_value_heads", limits::kHeads);
  const uint64_t v_dim = cfg.u64("linear_value_head_dim", limits::kStateDim);
  const uint64_t kernel = cfg.u64("linear_conv_kernel_dim", 64);

  std::vector<bool> full(layers, false);
  if (cfg.has("layer_types")) {
    auto types = read_layer_types(cfg, layers, {"linear_attention", "full_attention"});
    for (uint64_t i = 0; i < layers; ++i) full[i] = types[i] == "full_attention";
  } else {
    const uint64_t interval = cfg.u64_or("full_attention_interval", 4, limits::kLayers, "Qwen3-Next default");
    for (uint64_t i = 0; i < layers; ++i) full[i] = (i + 1) % interval == 0;
  }

  MoeGeometry moe;
  moe.experts = cfg.opt_u64("num_experts", limits::kExperts).value_or(0);
  std::vector<bool> sparse(layers, false);
  uint64_t dense_width = 0;
  if (moe.experts > 0) {
    moe.top_k = cfg.u64("num_experts_per_tok", limits::kExperts);
    moe.expert_width = cfg.u64("moe_intermediate_size", limits::kWidth);
    moe.shared_width = cfg.opt_u64("shared_expert_intermediate_size", limits::kWidth).value_or(0);
    check_moe(cfg, moe, "num_experts_per_tok");
    sparse = qwen_moe_layers(cfg, layers);
  }
  if (moe.experts == 0 || std::find(sparse.begin(), sparse.end(), false) != sparse.end()) {
    dense_width = cfg.u64("intermediate_size", limits::kWidth);
  }

  // Full layer: q (doubled by the output gate), k, v, o, q_norm, k_norm.
  uint64_t attn_full = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, false);
  if (output_gate) attn_full = checked_add(attn_full, checked_product({hidden, g.heads, g.head_dim}));
  attn_full = checked_add(attn_full, 2 * g.head_dim);
  // Linear layer: in_proj for q, k, v and the z gate; b and a projections (one per value head);
  // depthwise conv over q, k, v; dt_bias and A_log; gated norm over v_dim; out_proj.
  const uint64_t key_width = checked_product({2, k_heads, k_dim});
  const uint64_t value_width = checked_mul(v_heads, v_dim);
  const uint64_t conv_dim = checked_add(key_width, value_width);
  uint64_t attn_linear = checked_mul(hidden, checked_add(key_width, 2 * value_width));
  attn_linear = checked_add(attn_linear, checked_product({hidden, 2, v_heads}));
  attn_linear = checked_add(attn_linear, checked_mul(conv_dim, kernel));
  attn_linear = checked_add(attn_linear, 2 * v_heads + v_dim);
  attn_linear = checked_add(attn_linear, checked_mul(value_width, hidden));

  auto ffn_params = [&](ParamTally& t, bool is_sparse) {
    if (is_sparse) {
      tally_glu_moe(t, hidden, moe, false);
      if (moe.shared_width) t.add_always_active(ParamClass::Router, hidden);  // shared_expert_gate
    } else {
      t.add_always_active(ParamClass::DenseMlp, glu_params(hidden, dense_width));
    }
  };

  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    AttentionSpec& a = layer.attention;
    if (full[il]) {
      a = full_attention(g);
      a.output_gate = output_gate;
      tally.add_always_active(ParamClass::Attention, attn_full);
    } else {
      a.kind = AttentionKind::LinearState;
      a.state_family = StateFamily::GatedDeltaNet;
      a.state_values = checked_product({v_heads, v_dim, k_dim});
      a.conv_values = checked_mul(kernel - 1, conv_dim);
      a.mixer_heads = static_cast<uint32_t>(v_heads);  // bounded by the readers (limits.h)
      a.mixer_head_dim = static_cast<uint32_t>(v_dim);
      a.mixer_key_heads = static_cast<uint32_t>(k_heads);
      a.mixer_key_dim = static_cast<uint32_t>(k_dim);
      a.conv_kernel = static_cast<uint32_t>(kernel);
      tally.add_always_active(ParamClass::Attention, attn_linear);
    }
    layer.feed_forward = sparse[il] ? moe_spec(moe) : dense_spec(dense_width);
    ffn_params(tally, sparse[il]);
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }

  // MTP: a full-attention layer with the same feed-forward, fc (2h -> h) and three norms.
  const uint64_t mtp = cfg.opt_u64("mtp_num_hidden_layers", limits::kLayers).value_or(cfg.opt_u64("num_nextn_predict_layers", limits::kLayers).value_or(0));
  tally_mtp_layers(tally, mtp, hidden, 5, [&](ParamTally& t, uint64_t) {
    t.add_always_active(ParamClass::Attention, attn_full);
    ffn_params(t, moe.experts > 0);
  });
  tally.write_to(m.params, cfg.label() + " geometry (Qwen3-Next mapper)");
}

}  // namespace vc::families
