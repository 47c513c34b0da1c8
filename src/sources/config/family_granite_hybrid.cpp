// IBM Granite 4.0 (model_type granitemoehybrid): layer_types names each layer's mixer, "mamba"
// (a Mamba2 mixer, the Bamba layout) or "attention" (grouped-query attention without positional
// encoding, head_dim = hidden / heads). Every layer then runs a feed-forward: with
// num_local_experts > 0, that many gated experts of intermediate_size (num_experts_per_tok active,
// bias-free router) beside one always-on gated MLP of shared_intermediate_size; with 0 experts
// (the dense H-Micro / H-1B), the shared MLP alone. Two norms per layer. Mamba2 geometry:
// mamba_n_heads x mamba_d_head (= mamba_expand x hidden), mamba_n_groups, mamba_d_state, mamba_d_conv;
// its in/out projections carry biases when mamba_proj_bias. Reference: transformers
// GraniteMoeHybridConfig / modeling_granitemoehybrid (Bamba mixer, GraniteMoeShared MLP).
#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/family_mamba.h"
#include "sources/config/limits.h"

namespace vc::families {
namespace {

Mamba2Geometry read_granite_mamba(ConfigView& cfg, uint64_t hidden) {
  const Mamba2Geometry g = read_mamba2_keys(cfg, "GraniteMoeHybridConfig");
  if (auto expand = cfg.opt_u64("mamba_expand", 64); expand && checked_mul(*expand, hidden) != g.d_inner()) {
    cfg.fail("mamba_expand", fmt::format("is {} but mamba_n_heads x mamba_d_head is {}, not {} x hidden_size {}", *expand, g.d_inner(), *expand, hidden));
  }
  return g;
}

}  // namespace

void map_granite_hybrid(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const auto types = read_layer_types(cfg, layers, {"mamba", "attention"});
  auto uses = [&](const char* kind) { return std::find(types.begin(), types.end(), kind) != types.end(); };

  GqaGeometry g;
  uint64_t attn_p = 0;
  if (uses("attention")) {
    g = read_gqa(cfg, hidden);
    attn_p = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, cfg.flag("attention_bias", false));
  }
  Mamba2Geometry mamba;
  uint64_t mamba_p = 0;
  if (uses("mamba")) {
    mamba = read_granite_mamba(cfg, hidden);
    mamba_p = mamba2_params(hidden, mamba, cfg.flag("mamba_conv_bias", true));
    if (cfg.flag("mamba_proj_bias", false)) {  // in_proj bias (z, xBC, dt) and out_proj bias
      const uint64_t in_proj = checked_add(checked_add(checked_mul(2, mamba.d_inner()), checked_product({2, mamba.groups, mamba.state})), mamba.heads);
      mamba_p = checked_add(mamba_p, checked_add(in_proj, hidden));
    }
  }
  MoeGeometry moe;
  moe.experts = cfg.u64("num_local_experts", limits::kExperts, /*allow_zero=*/true);
  moe.shared_width = cfg.u64("shared_intermediate_size", limits::kWidth);
  if (moe.experts > 0) {
    moe.top_k = cfg.u64("num_experts_per_tok", limits::kExperts);
    moe.expert_width = cfg.u64("intermediate_size", limits::kWidth);
    check_moe(cfg, moe, "num_experts_per_tok");
  }

  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    if (types[il] == "attention") {
      layer.attention = full_attention(g);
      // Position-free in the hybrids: convert_hf_to_gguf writes rope.scaling.finetuned false
      // when the model has Mamba layers, and llama.cpp then neither makes positions nor rotates.
      layer.attention.rotary = !uses("mamba");
      tally.add_always_active(ParamClass::Attention, attn_p);
    } else {
      layer.attention = mamba2_state(mamba);
      tally.add_always_active(ParamClass::Attention, mamba_p);
    }
    layer.feed_forward = glu_feed_forward(tally, hidden, moe.experts > 0, moe, moe.shared_width, false);
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (Granite 4.0 hybrid mapper)");
}

}  // namespace vc::families
