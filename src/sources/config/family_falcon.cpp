// Falcon (model_type falcon, FalconForCausalLM: Falcon-7B / 40B / 180B, Falcon-RW; and the first
// configs' RefinedWeb / RefinedWebModel, RWForCausalLM). Per layer a
// fused query_key_value and the output projection "dense", a two-matrix MLP dense_h_to_4h /
// dense_4h_to_h of ffn_hidden_size (default 4 x hidden; gelu, no gate), every linear layer with a
// bias only when `bias` is true (false in Falcon-7B, 40B and 180B); a final LayerNorm; the output
// head tied to the word embeddings (tie_word_embeddings, default true). The layout of the keys and
// values follows two flags, read from transformers' models/falcon/modeling_falcon.py (FalconAttention,
// FalconMLP, FalconDecoderLayer):
//   new_decoder_architecture (40B, 180B): num_kv_heads key/value heads, q/k/v rows
//     (heads + 2 x num_kv_heads) x head_dim; two LayerNorms (ln_attn, ln_mlp) unless
//     num_ln_in_parallel_attn is 1.
//   else multi_query (7B): one key/value head, hidden + 2 x head_dim rows; else 3 x hidden rows.
//   parallel_attn (default true): attention and MLP read one LayerNorm (input_layernorm); without
//     it a second, post_attention_layernorm.
// head_dim is hidden / heads. ALiBi (alibi: true) replaces rotary positions, without weights.
// transformers' cache keeps the new architecture's keys broadcast to every query head; llama.cpp
// (src/models/falcon.cpp, n_head_kv) and vLLM (models/falcon.py, total_num_kv_heads) keep
// num_kv_heads, which is what is counted here.
#include <fmt/format.h>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_falcon(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  // Falcon's first configs (RefinedWeb) named the geometry n_embed, n_layer, n_head and n_head_kv;
  // FalconConfig still reads n_embed.
  m.hidden = first_u64(cfg, {"hidden_size", "n_embed"}, limits::kHidden);
  m.vocab = cfg.u64("vocab_size", limits::kVocab);
  m.tied_embeddings = cfg.flag("tie_word_embeddings", true);  // FalconForCausalLM ties lm_head to word_embeddings
  const uint64_t hidden = m.hidden;
  tally.add(ParamClass::Embedding, checked_mul(m.vocab, hidden), 0);
  tally_output_head(tally, m);
  tally.add_always_active(ParamClass::Norms, 2 * hidden);  // ln_f, weight and bias
  m.max_context = cfg.u64_or("max_position_embeddings", 2048, uint64_t{1} << 34, "transformers FalconConfig default");

  const uint64_t layers = first_u64(cfg, {"num_hidden_layers", "n_layer"}, limits::kLayers);
  GqaGeometry g;
  g.heads = first_u64(cfg, {"num_attention_heads", "n_head"}, limits::kHeads);
  if (hidden % g.heads != 0)
    cfg.fail("num_attention_heads", fmt::format("is {}, which does not divide hidden_size {}; Falcon heads are hidden_size / num_attention_heads "
                                                "wide (FalconAttention refuses otherwise)", g.heads, hidden));
  g.head_dim = hidden / g.heads;
  // The RefinedWeb-era model types (RefinedWebModel: Falcon-7B; RefinedWeb: Falcon-40B) as vLLM
  // reads them (vllm/transformers_utils/configs/falcon.py RWConfig, registered for both names):
  // parallel_attn false and n_head_kv 1 when absent, and the new decoder architecture for a hidden
  // size of 8,192 ("Hack for falcon-40b"), whose first config did not say so.
  const std::string type = cfg.str("model_type", "falcon");
  const bool refined_web = type == "RefinedWeb" || type == "RefinedWebModel";
  const bool new_arch = cfg.flag("new_decoder_architecture", false) || (refined_web && hidden == 8192);
  const bool multi_query = cfg.flag("multi_query", true);
  const bool parallel = cfg.flag("parallel_attn", !refined_web);
  const bool bias = cfg.flag("bias", false);
  const bool alibi = cfg.flag("alibi", false);
  if (new_arch) {
    const char* key = cfg.has("num_kv_heads") || !cfg.has("n_head_kv") ? "num_kv_heads" : "n_head_kv";
    g.kv_heads = refined_web ? cfg.u64_or(key, 1, limits::kHeads, "vLLM's RWConfig: absent means 1")
                             : cfg.u64_or(key, g.heads, limits::kHeads, "FalconConfig: absent means num_attention_heads");
    if (g.kv_heads == 0 || g.heads % g.kv_heads != 0)
      cfg.fail(key, fmt::format("is {}; a divisor of num_attention_heads ({}) is expected", g.kv_heads, g.heads));
  } else {
    g.kv_heads = multi_query ? 1 : g.heads;  // FalconAttention: 1 with multi_query, else 3 x hidden rows
  }
  uint64_t norms_per_layer = 1;  // input_layernorm
  if (!parallel) {
    norms_per_layer = 2;  // input_layernorm and post_attention_layernorm
  } else if (new_arch) {
    const uint64_t n = cfg.u64_or("num_ln_in_parallel_attn", 2, 2, "FalconDecoderLayer: 2 with new_decoder_architecture");
    if (n == 0) cfg.fail("num_ln_in_parallel_attn", "is 0; 1 (input_layernorm) or 2 (ln_attn and ln_mlp) accepted");
    norms_per_layer = n;  // ln_attn and ln_mlp, or input_layernorm alone
  }
  const uint64_t width = cfg.u64_or("ffn_hidden_size", checked_mul(4, hidden), limits::kWidth, "FalconConfig default: 4 x hidden_size");
  if (width == 0) cfg.fail("ffn_hidden_size", "is 0; a positive width is expected");

  const uint64_t attn = checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, bias), bias ? hidden : 0);
  const uint64_t mlp = checked_add(mlp2_params(hidden, width), bias ? checked_add(width, hidden) : 0);
  // FalconMLP: dense_h_to_4h, gelu, dense_4h_to_h (no gate); its LayerNorms, weight and bias; ALiBi in place of rotary when alibi.
  add_non_gated_layers(tally, m, layers, g, width, {attn, mlp, checked_product({norms_per_layer, 2, hidden}), !alibi});
  tally.write_to(m.params, cfg.label() + " geometry (Falcon mapper)");
}

}  // namespace vc::families
