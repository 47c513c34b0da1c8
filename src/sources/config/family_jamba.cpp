// Jamba (model_type jamba): Mamba1 layers with an attention layer wherever
// i % attn_layer_period == attn_layer_offset (8, 4 => layers 4, 12, 20, 28) and an MoE feed-forward
// wherever i % expert_layer_period == expert_layer_offset (2, 1), dense gated MLP elsewhere.
// Exports that list layers_block_type ("attention" / "mamba") are read from that list instead.
// Mamba1 d_inner = mamba_expand * hidden; state per architectures.md section 7. Jamba's mixer also
// normalizes dt, B and C (dt_layernorm, b_layernorm, c_layernorm).
#include <fmt/format.h>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/family_mamba.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_jamba(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);

  std::vector<bool> attention(layers, false);
  if (cfg.has("layers_block_type")) {
    auto types = cfg.str_list("layers_block_type", limits::kLayers);
    if (types.size() != layers) cfg.fail("layers_block_type", fmt::format("has {} entries but num_hidden_layers is {}", types.size(), layers));
    for (uint64_t i = 0; i < layers; ++i) {
      if (types[i] != "attention" && types[i] != "mamba") cfg.fail("layers_block_type", fmt::format("holds '{}'; accepted: attention, mamba", types[i]));
      attention[i] = types[i] == "attention";
    }
  } else {
    const uint64_t period = cfg.u64_or("attn_layer_period", 8, limits::kLayers, "transformers JambaConfig default");
    const uint64_t offset = cfg.u64_or("attn_layer_offset", 4, limits::kLayers, "transformers JambaConfig default");
    if (period == 0) cfg.fail("attn_layer_period", "is 0; a positive number is expected");
    for (uint64_t i = 0; i < layers; ++i) attention[i] = i % period == offset;
  }
  const uint64_t expert_period = cfg.u64_or("expert_layer_period", 2, limits::kLayers, "transformers JambaConfig default");
  const uint64_t expert_offset = cfg.u64_or("expert_layer_offset", 1, limits::kLayers, "transformers JambaConfig default");
  if (expert_period == 0) cfg.fail("expert_layer_period", "is 0; a positive number is expected");
  MoeGeometry moe;
  moe.experts = cfg.u64_or("num_experts", 1, limits::kExperts, "no experts");
  moe.top_k = moe.experts > 1 ? cfg.u64("num_experts_per_tok", limits::kExperts) : 1;
  moe.expert_width = width;
  check_moe(cfg, moe, "num_experts_per_tok");

  Mamba1Geometry mamba;
  mamba.d_inner = checked_mul(cfg.u64_or("mamba_expand", 2, 64, "transformers JambaConfig default"), hidden);
  mamba.state = cfg.u64_or("mamba_d_state", 16, limits::kStateDim, "transformers JambaConfig default");
  mamba.kernel = cfg.u64_or("mamba_d_conv", 4, 64, "transformers JambaConfig default");
  mamba.dt_rank = cfg.u64_or("mamba_dt_rank", (hidden + 15) / 16, limits::kHidden, "transformers JambaConfig 'auto': ceil(hidden / 16)");
  const bool conv_bias = cfg.flag("mamba_conv_bias", true);
  const uint64_t mamba_p = checked_add(mamba1_params(hidden, mamba, conv_bias), mamba.dt_rank + 2 * mamba.state);  // dt/B/C norms
  const uint64_t attn_p = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, false);

  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    if (attention[il]) {
      layer.attention = full_attention(g);
      layer.attention.rotary = false;  // no positional encoding (modeling_jamba; llama.cpp jamba.cpp)
      tally.add_always_active(ParamClass::Attention, attn_p);
    } else {
      layer.attention = mamba1_state(mamba);
      tally.add_always_active(ParamClass::Attention, mamba_p);
    }
    layer.feed_forward = glu_feed_forward(tally, hidden, moe.experts > 1 && il % expert_period == expert_offset, moe, width, false);
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (Jamba mapper)");
}

}  // namespace vc::families
