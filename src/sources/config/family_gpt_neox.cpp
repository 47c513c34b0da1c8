// GPT-NeoX (model_type gpt_neox, GPTNeoXForCausalLM: Pythia, GPT-NeoX-20B): per layer two
// LayerNorms (input_layernorm and post_attention_layernorm, weight and bias, both present whether
// use_parallel_residual runs attention and MLP side by side or one after the other), a fused
// query_key_value of 3 x hidden rows and the output projection "dense" (both with biases unless
// attention_bias is false), a two-matrix MLP dense_h_to_4h / dense_4h_to_h with biases (gelu, no
// gate); a final LayerNorm and an untied output head embed_out without a bias (tie_word_embeddings
// defaults to false). Multi-head attention of hidden / heads per head; rotary on rotary_pct of it
// (no weights, the cache keeps whole heads). Read from transformers' models/gpt_neox/modeling_gpt_neox.py
// (GPTNeoXAttention, GPTNeoXMLP, GPTNeoXLayer, GPTNeoXForCausalLM) and llama.cpp's gptneox tensors
// (attn_qkv, attn_output, ffn_up, ffn_down with biases, two norms with biases).
#include <fmt/format.h>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_gpt_neox(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  m.hidden = cfg.u64("hidden_size", limits::kHidden);
  m.vocab = cfg.u64("vocab_size", limits::kVocab);
  m.tied_embeddings = cfg.flag("tie_word_embeddings", false);  // GPTNeoXConfig default
  const uint64_t hidden = m.hidden;
  tally.add(ParamClass::Embedding, checked_mul(m.vocab, hidden), 0);  // embed_in
  tally_output_head(tally, m);                                        // embed_out
  tally.add_always_active(ParamClass::Norms, 2 * hidden);             // final_layer_norm, weight and bias
  m.max_context = cfg.u64_or("max_position_embeddings", 2048, uint64_t{1} << 34, "transformers GPTNeoXConfig default");
  // rotary_pct (read with the rope, config_rope.cpp) defaults to 0.25 in GPTNeoXConfig.
  if (!cfg.has("rotary_pct") && !cfg.has("partial_rotary_factor")) m.rope.partial_rotary_factor = 0.25;

  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  GqaGeometry g;
  g.heads = cfg.u64("num_attention_heads", limits::kHeads);
  if (hidden % g.heads != 0)
    cfg.fail("num_attention_heads", fmt::format("is {}, which does not divide hidden_size {}; GPT-NeoX heads are hidden_size / num_attention_heads wide",
                                                g.heads, hidden));
  g.kv_heads = g.heads;  // one key and one value head per query head (query_key_value is 3 x hidden rows)
  g.head_dim = hidden / g.heads;
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);
  const bool attention_bias = cfg.flag("attention_bias", true);  // GPTNeoXConfig default
  const uint64_t attn = checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, attention_bias), attention_bias ? hidden : 0);
  const uint64_t mlp = checked_add(mlp2_params(hidden, width), checked_add(width, hidden));  // dense_h_to_4h, dense_4h_to_h and their biases
  // GPTNeoXMLP: dense_h_to_4h, activation, dense_4h_to_h (no gate); input_layernorm and post_attention_layernorm, weight and bias.
  add_non_gated_layers(tally, m, layers, g, width, {attn, mlp, 4 * hidden});
  tally.write_to(m.params, cfg.label() + " geometry (GPT-NeoX mapper)");
}

}  // namespace vc::families
