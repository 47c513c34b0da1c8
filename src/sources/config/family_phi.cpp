// Phi-1, Phi-1.5 and Phi-2 (model_type phi, PhiForCausalLM): one LayerNorm a layer (weight and
// bias) feeding attention and the MLP in parallel; q, k, v and the output projection ("dense")
// with biases; a two-matrix MLP fc1 / fc2 with biases (gelu_new); a final LayerNorm; an untied
// output head with a bias. q/k LayerNorms when qk_layernorm. Rotary on partial_rotary_factor of
// the head (no weights). Read from transformers' models/phi/modeling_phi.py (PhiAttention, PhiMLP,
// PhiDecoderLayer, PhiForCausalLM).
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_phi(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  m.hidden = cfg.u64("hidden_size", limits::kHidden);
  m.vocab = cfg.u64("vocab_size", limits::kVocab);
  m.tied_embeddings = cfg.flag("tie_word_embeddings", false);
  const uint64_t hidden = m.hidden;
  tally.add(ParamClass::Embedding, checked_mul(m.vocab, hidden), 0);
  tally_output_head(tally, m);
  if (!m.tied_embeddings) tally.add_always_active(ParamClass::OutputHead, m.vocab);  // lm_head's bias
  tally.add_always_active(ParamClass::Norms, 2 * hidden);                           // final LayerNorm
  m.max_context = cfg.u64_or("max_position_embeddings", 2048, uint64_t{1} << 34, "transformers PhiConfig default");

  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);
  const bool qk_norms = cfg.flag("qk_layernorm", false);
  // q, k, v with biases, dense with its bias; q/k LayerNorms over the head dim when asked.
  const uint64_t attn = checked_add(checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, true), hidden),
                                    qk_norms ? 4 * g.head_dim : 0);
  const uint64_t mlp = checked_add(mlp2_params(hidden, width), checked_add(width, hidden));  // fc1, fc2 and their biases
  // PhiMLP: fc1, activation, fc2 (no gate); input_layernorm, weight and bias.
  add_non_gated_layers(tally, m, layers, g, width, {attn, mlp, 2 * hidden});
  tally.write_to(m.params, cfg.label() + " geometry (Phi mapper)");
}

}  // namespace vc::families
