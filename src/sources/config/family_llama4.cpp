// Llama 4 (model_type llama4 wrapping llama4_text, or llama4_text alone; transformers
// models/llama4/configuration_llama4.py and modeling_llama4.py): grouped-query attention whose
// layers that use RoPE attend within chunks of attention_chunk_size tokens (8,192) and whose NoPE
// layers (every no_rope_layer_interval-th, 4) attend to everything; layer_types says which when
// present. moe_layers (else every interleave_moe_layer_step-th layer) hold num_local_experts
// experts of intermediate_size, top num_experts_per_tok, plus one shared expert of the same width;
// the other layers a dense MLP of intermediate_size_mlp. Q/K are L2-normed without weights.
// A chunked layer keeps at most a chunk plus a batch of keys, as a sliding window does: llama.cpp
// caches it as a window (src/models/llama4.cpp, LLAMA_SWA_TYPE_CHUNKED) and vLLM as chunked local
// attention (vllm/v1/kv_cache_interface.py ChunkedLocalAttentionSpec). The vision tower is read by
// config_tower.cpp. Checked: meta-llama/Llama-4-Scout-17B-16E's text model comes to 107,769,861,120
// parameters, the Hub's 108,641,793,536 less the tower's 871,932,416.
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_llama4(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t dense_width = cfg.u64("intermediate_size_mlp", limits::kWidth);
  MoeGeometry moe;
  moe.experts = cfg.u64("num_local_experts", limits::kExperts);
  moe.top_k = cfg.u64("num_experts_per_tok", limits::kExperts);
  moe.expert_width = cfg.u64("intermediate_size", limits::kWidth);
  moe.shared_width = moe.expert_width;  // Llama4TextMoe.shared_expert: one MLP of intermediate_size
  check_moe(cfg, moe, "num_experts_per_tok");

  // Which layers are MoE: moe_layers, else every interleave_moe_layer_step-th (transformers default).
  std::vector<bool> sparse(layers, false);
  if (const nlohmann::json* list = cfg.raw("moe_layers"); list && list->is_array()) {
    for (uint64_t il : cfg.u64_list(*list, "moe_layers", layers, layers - 1)) sparse[il] = true;
  } else {
    const uint64_t step = cfg.u64_or("interleave_moe_layer_step", 1, limits::kLayers, "transformers Llama4TextConfig default: every layer MoE");
    for (uint64_t il = 0; il < layers; ++il) sparse[il] = (il + 1) % step == 0;
  }

  // Which layers attend within chunks: layer_types, else the layers that use RoPE.
  const std::optional<uint64_t> chunk = cfg.opt_u64("attention_chunk_size", limits::kWindow);
  std::vector<bool> chunked(layers, false);
  if (chunk) {
    if (cfg.has("layer_types")) {
      const auto types = read_layer_types(cfg, layers, {"chunked_attention", "full_attention"});
      for (uint64_t il = 0; il < layers; ++il) chunked[il] = types[il] == "chunked_attention";
    } else if (const nlohmann::json* rope = cfg.raw("no_rope_layers"); rope && rope->is_array() && !rope->empty()) {
      const auto uses_rope = cfg.u64_list(*rope, "no_rope_layers", layers, 1);
      if (uses_rope.size() != layers) cfg.fail("no_rope_layers", "has " + std::to_string(uses_rope.size()) + " entries; one per layer expected");
      for (uint64_t il = 0; il < layers; ++il) chunked[il] = uses_rope[il] != 0;
    } else {
      const uint64_t interval = cfg.u64_or("no_rope_layer_interval", 4, limits::kLayers, "transformers Llama4TextConfig default: every 4th layer NoPE");
      for (uint64_t il = 0; il < layers; ++il) chunked[il] = (il + 1) % interval != 0;
    }
  } else {
    cfg.warn("attention_chunk_size is absent or null: every layer is counted as full attention");
  }

  const uint64_t attn = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, cfg.flag("attention_bias", false));
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = chunked[il] ? window_attention(g, *chunk) : full_attention(g);
    tally.add_always_active(ParamClass::Attention, attn);
    layer.feed_forward = glu_feed_forward(tally, hidden, sparse[il], moe, dense_width, false);
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (Llama 4 mapper)");
}

}  // namespace vc::families
