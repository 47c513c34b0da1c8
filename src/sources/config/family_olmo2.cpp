// OLMo 2 (model_type olmo2, Olmo2ForCausalLM): Llama's projections and gated MLP without biases
// (attention_bias, default false, puts them on q, k, v and o), RMS norms after attention and after
// the MLP (post_attention_layernorm, post_feedforward_layernorm; none before), and q_norm / k_norm
// over the whole query (heads x head_dim) and key (kv heads x head_dim) projections; a final norm;
// an untied head (Olmo2Config tie_word_embeddings=False). Read from transformers'
// models/olmo2/modular_olmo2.py (Olmo2Attention, Olmo2DecoderLayer).
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_olmo2(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally, false);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);
  const bool bias = cfg.flag("attention_bias", false);
  const uint64_t attn = checked_add(checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, bias), bias ? hidden : 0),
                                    checked_mul(g.heads + g.kv_heads, g.head_dim));  // + q_norm and k_norm
  add_dense_glu_layers(tally, m, layers, g, width, attn, 2 * hidden);  // norms: post_attention_layernorm, post_feedforward_layernorm
  tally.write_to(m.params, cfg.label() + " geometry (OLMo 2 mapper)");
}

}  // namespace vc::families
