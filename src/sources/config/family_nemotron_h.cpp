// Nemotron-H and Nemotron-3 (model_type nemotron_h): hybrid_override_pattern has one character per
// layer: M = Mamba2 mixer, * = grouped-query attention, - = plain MLP (squared ReLU, up and down
// only), E = MoE of such MLP experts plus a shared one. Every character is its own layer with one
// pre-norm. Mamba2 state per sequence: architectures.md section 7. The configs carry
// "Infinity" (time_step_limit), which parse_config_text accepts.
#include <fmt/format.h>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/family_mamba.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_nemotron_h(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const std::string pattern = cfg.str("hybrid_override_pattern", "");
  if (pattern.size() != layers) {
    cfg.fail("hybrid_override_pattern", fmt::format("has {} characters but num_hidden_layers is {}; one of M, *, -, E per layer is expected", pattern.size(), layers));
  }
  cfg.note_source("hybrid_override_pattern", "hybrid_override_pattern");
  auto uses = [&](char c) { return pattern.find(c) != std::string::npos; };

  GqaGeometry g;
  if (uses('*')) g = read_gqa(cfg, hidden, cfg.has("attention_head_dim") ? "attention_head_dim" : "head_dim");
  const bool attention_bias = cfg.flag("attention_bias", false);
  Mamba2Geometry mamba;
  if (uses('M')) {
    mamba.heads = cfg.u64("mamba_num_heads", limits::kHeads);
    mamba.head_dim = cfg.u64("mamba_head_dim", limits::kStateDim);
    mamba.groups = cfg.u64("n_groups", limits::kHeads);
    mamba.state = cfg.u64("ssm_state_size", limits::kStateDim);
    mamba.kernel = cfg.u64("conv_kernel", 64);
  }
  const bool conv_bias = cfg.flag("use_conv_bias", true);
  const uint64_t mlp_width = uses('-') ? cfg.u64("intermediate_size", limits::kWidth) : 0;
  MoeGeometry moe;
  if (uses('E')) {
    moe.experts = cfg.u64("n_routed_experts", limits::kExperts);
    moe.top_k = cfg.u64("num_experts_per_tok", limits::kExperts);
    moe.expert_width = cfg.u64("moe_intermediate_size", limits::kWidth);
    moe.shared_width = cfg.opt_u64("moe_shared_expert_intermediate_size", limits::kWidth).value_or(0);
    check_moe(cfg, moe, "num_experts_per_tok");
  }

  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    switch (pattern[il]) {
      case 'M':
        layer.attention = mamba2_state(mamba);
        tally.add_always_active(ParamClass::Attention, mamba2_params(hidden, mamba, conv_bias));
        break;
      case '*': {
        layer.attention = full_attention(g);
        layer.attention.rotary = false;  // no RoPE (modeling_nemotron_h; llama.cpp nemotron-h.cpp)
        uint64_t p = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, attention_bias);
        tally.add_always_active(ParamClass::Attention, attention_bias ? checked_add(p, hidden) : p);
        break;
      }
      case '-':
        layer.feed_forward = dense_spec(mlp_width);
        layer.feed_forward.gated = false;  // NemotronHMLP: up_proj, squared ReLU, down_proj
        tally.add_always_active(ParamClass::DenseMlp, mlp2_params(hidden, mlp_width));
        break;
      case 'E': {
        layer.feed_forward = moe_spec(moe);
        layer.feed_forward.gated = false;  // the experts and the shared expert are NemotronHMLP-shaped: up and down
        const uint64_t one = mlp2_params(hidden, moe.expert_width);
        tally.add(ParamClass::RoutedExperts, checked_mul(moe.experts, one), checked_mul(moe.top_k, one));
        if (moe.shared_width) tally.add_always_active(ParamClass::SharedExperts, mlp2_params(hidden, moe.shared_width));
        tally.add_always_active(ParamClass::Router, checked_mul(moe.experts, hidden) + moe.experts);
        break;
      }
      default:
        cfg.fail("hybrid_override_pattern", fmt::format("has '{}' at layer {}; accepted: M (Mamba2), * (attention), - (MLP), E (MoE)", pattern[il], il));
    }
    tally.add_always_active(ParamClass::Norms, hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (Nemotron-H mapper)");
}

}  // namespace vc::families
