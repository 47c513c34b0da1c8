// Cohere Command R and Aya (model_type cohere, CohereForCausalLM): attention and a gated MLP
// (gate_proj, up_proj, down_proj, no biases) read one LayerNorm in parallel (input_layernorm, a
// weight without a bias: CohereLayerNorm); q, k, v and o_proj with biases only when attention_bias;
// per-head q_norm (heads x head_dim) and k_norm (kv heads x head_dim) weights when use_qk_norm
// (Command R+); a final CohereLayerNorm; the head tied to the embedding (CohereConfig
// tie_word_embeddings=True, which CohereForAI/c4ai-command-r-08-2024's config.json leaves out).
// Read from transformers' models/cohere/modular_cohere.py (CohereLayerNorm, CohereMLP,
// CohereAttention, CohereDecoderLayer).
// Cohere 2 (Command R7B, Command A; model_type cohere2, Cohere2ForCausalLM) has the same decoder
// layer and tensors, with sliding-window attention (sliding_window, 4,096 by default) on the layers
// layer_types names "sliding_attention"; without layer_types, every layer but each
// sliding_window_pattern-th (4 by default) slides, and only the sliding layers rotate by position
// (RoPE); the full ones take none. Read from transformers' models/cohere2/configuration_cohere2.py
// (Cohere2Config.__post_init__) and modular_cohere2.py (Cohere2Attention.forward).
#include <string>
#include <vector>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_cohere(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally, true);  // tied by CohereConfig's default; the final norm a weight, no bias
  const uint64_t hidden = m.hidden;

  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);
  const bool bias = cfg.flag("attention_bias", false);
  const bool qk_norm = cfg.flag("use_qk_norm", false);
  uint64_t attn = checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, bias), bias ? hidden : 0);
  if (qk_norm) attn = checked_add(attn, checked_mul(g.heads + g.kv_heads, g.head_dim));
  add_dense_glu_layers(tally, m, layers, g, width, attn, hidden);  // norms: input_layernorm alone, attention and MLP in parallel
  tally.write_to(m.params, cfg.label() + " geometry (Cohere mapper)");
}

void map_cohere2(ConfigView& cfg) {
  map_cohere(cfg);  // the same tensors; Cohere2Config has no use_qk_norm
  Model& m = cfg.model();
  const uint64_t layers = m.layers.size();
  const std::string defaults = "Cohere2Config's default";
  const uint64_t window = cfg.u64_or("sliding_window", 4096, limits::kWindow, defaults);
  std::vector<bool> sliding(layers, false);
  if (cfg.has("layer_types")) {
    const auto types = read_layer_types(cfg, layers, {"sliding_attention", "full_attention"});
    for (uint64_t i = 0; i < layers; ++i) sliding[i] = types[i] == "sliding_attention";
  } else {
    const uint64_t pattern = cfg.u64_or("sliding_window_pattern", 4, limits::kLayers, defaults + ": every 4th layer full");
    if (pattern == 0) cfg.fail("sliding_window_pattern", "is 0; a positive number is expected");
    for (uint64_t i = 0; i < layers; ++i) sliding[i] = (i + 1) % pattern != 0;
  }
  const GqaGeometry g = read_gqa(cfg, m.hidden);
  // Cohere2Attention rotates Q and K only in its sliding layers: the full layers take no positions.
  for (uint64_t i = 0; i < layers; ++i) {
    if (sliding[i]) m.layers[i].attention = window_attention(g, window);
    else m.layers[i].attention.rotary = false;
  }
}

}  // namespace vc::families
