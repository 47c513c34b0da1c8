// StarCoder2 (model_type starcoder2, Starcoder2ForCausalLM): grouped-query attention with q, k, v
// and o_proj biases, a two-matrix MLP c_fc / c_proj with biases (gelu_pytorch_tanh, no gate), a
// LayerNorm (weight and bias) before attention and one before the MLP, a final LayerNorm, and the
// output head tied to the embedding unless tie_word_embeddings is false (the 3B ties it). use_bias
// (default true) puts a bias on every linear layer. Read from transformers'
// models/starcoder2/modeling_starcoder2.py (Starcoder2Attention, Starcoder2MLP,
// Starcoder2DecoderLayer) and llama.cpp's src/models/starcoder2.cpp (the same tensors).
//
// sliding_window (4,096 in every published StarCoder2 config) is read and said, but every layer
// is counted as full attention: llama.cpp's starcoder2 graph builds one full cache
// (build_attn_inp_kv, no window) and vLLM's paged cache is counted with window layers as full
// (engines/vllm_profile.cpp), so the whole context is what the engines keep.
#include <fmt/format.h>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_starcoder2(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  m.hidden = cfg.u64("hidden_size", limits::kHidden);
  m.vocab = cfg.u64("vocab_size", limits::kVocab);
  m.tied_embeddings = cfg.flag("tie_word_embeddings", true);  // Starcoder2Config: PretrainedConfig's default, true
  const uint64_t hidden = m.hidden;
  tally.add(ParamClass::Embedding, checked_mul(m.vocab, hidden), 0);
  tally_output_head(tally, m);
  tally.add_always_active(ParamClass::Norms, 2 * hidden);  // final LayerNorm, weight and bias
  m.max_context = cfg.u64_or("max_position_embeddings", 4096, uint64_t{1} << 34, "transformers Starcoder2Config default");

  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);
  const bool bias = cfg.flag("use_bias", true);
  if (auto window = cfg.opt_u64("sliding_window", limits::kWindow); window && *window > 0) {
    m.notes.push_back(fmt::format("sliding_window {} read; counted as full attention, as llama.cpp's starcoder2 graph keeps every token "
                                  "(src/models/starcoder2.cpp: build_attn_inp_kv) and vLLM's cache is counted with window layers as full",
                                  *window));
  }
  // q, k, v (+ their biases), o_proj (+ its bias).
  const uint64_t attn = checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, bias), bias ? hidden : 0);
  const uint64_t mlp = checked_add(mlp2_params(hidden, width), bias ? checked_add(width, hidden) : 0);  // c_fc, c_proj
  // Starcoder2MLP: c_fc, activation, c_proj (no gate); input_layernorm and post_attention_layernorm, weight and bias.
  add_non_gated_layers(tally, m, layers, g, width, {attn, mlp, 4 * hidden});
  tally.write_to(m.params, cfg.label() + " geometry (StarCoder2 mapper)");
}

}  // namespace vc::families
