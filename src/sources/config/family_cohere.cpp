// Cohere Command R and Aya (model_type cohere, CohereForCausalLM): attention and a gated MLP
// (gate_proj, up_proj, down_proj, no biases) read one LayerNorm in parallel (input_layernorm, a
// weight without a bias: CohereLayerNorm); q, k, v and o_proj with biases only when attention_bias;
// per-head q_norm (heads x head_dim) and k_norm (kv heads x head_dim) weights when use_qk_norm
// (Command R+); a final CohereLayerNorm; the head tied to the embedding (CohereConfig
// tie_word_embeddings=True, which CohereForAI/c4ai-command-r-08-2024's config.json leaves out).
// Read from transformers' models/cohere/modular_cohere.py (CohereLayerNorm, CohereMLP,
// CohereAttention, CohereDecoderLayer).
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

}  // namespace vc::families
