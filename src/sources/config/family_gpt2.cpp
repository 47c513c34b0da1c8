// GPT-2 (model_type gpt2, GPT2LMHeadModel) and GPT-BigCode (model_type gpt_bigcode,
// GPTBigCodeForCausalLM: SantaCoder, StarCoder, Granite Code 20B / 34B). Per layer ln_1, a fused
// c_attn, its output projection c_proj, ln_2, and a two-matrix MLP c_fc / c_proj of n_inner
// (absent or null: 4 x n_embd; gelu, no gate), every linear layer and LayerNorm with a bias; learned
// absolute positions wpe (n_positions x n_embd, a lookup like the token embedding wte, no rotary);
// a final ln_f; the output head tied to wte (tie_word_embeddings, default true). GPT-2's c_attn is
// 3 x n_embd wide (multi-head); GPT-BigCode's, with multi_query (its default), n_embd + 2 x head_dim:
// one key and one value head. Read from transformers' models/gpt2/modeling_gpt2.py (GPT2Attention,
// GPT2MLP, GPT2Block, GPT2Model) and models/gpt_bigcode/modeling_gpt_bigcode.py
// (GPTBigCodeAttention: kv_heads = 1 if multi_query else num_heads), and llama.cpp's gpt2 and
// starcoder tensors (token_embd, position_embd, attn_qkv, attn_output, ffn_up, ffn_down with biases).
// GPT2Config names the geometry n_embd, n_layer, n_head and n_positions; its attribute_map also
// accepts hidden_size, num_hidden_layers, num_attention_heads and max_position_embeddings.
#include <fmt/format.h>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {
namespace {

void map_gpt2_layout(ConfigView& cfg, bool bigcode) {
  Model& m = cfg.model();
  ParamTally tally;
  m.hidden = first_u64(cfg, {"n_embd", "hidden_size"}, limits::kHidden);
  m.vocab = cfg.u64("vocab_size", limits::kVocab);
  m.tied_embeddings = cfg.flag("tie_word_embeddings", true);  // GPT2LMHeadModel / GPTBigCodeForCausalLM tie lm_head to wte
  const uint64_t hidden = m.hidden;
  const uint64_t positions = first_u64(cfg, {"n_positions", "max_position_embeddings"}, uint64_t{1} << 24);
  m.max_context = positions;
  // wte and wpe: lookups, one row each a token.
  tally.add(ParamClass::Embedding, checked_add(checked_mul(m.vocab, hidden), checked_mul(positions, hidden)), 0);
  tally_output_head(tally, m);
  tally.add_always_active(ParamClass::Norms, 2 * hidden);  // ln_f, weight and bias

  const uint64_t layers = first_u64(cfg, {"n_layer", "num_hidden_layers"}, limits::kLayers);
  GqaGeometry g;
  g.heads = first_u64(cfg, {"n_head", "num_attention_heads"}, limits::kHeads);
  if (hidden % g.heads != 0)
    cfg.fail("n_head", fmt::format("is {}, which does not divide n_embd {}; heads are n_embd / n_head wide", g.heads, hidden));
  g.head_dim = hidden / g.heads;
  g.kv_heads = bigcode && cfg.flag("multi_query", true) ? 1 : g.heads;
  const uint64_t width = cfg.u64_or("n_inner", checked_mul(4, hidden), limits::kWidth, "absent or null: 4 x n_embd (GPT2MLP / GPTBigCodeMLP)");
  if (width == 0) cfg.fail("n_inner", "is 0; a positive width, or null for 4 x n_embd, is expected");

  // c_attn (q, k, v with biases) and c_proj (with its bias); c_fc and the MLP's c_proj with theirs.
  const uint64_t attn = checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, true), hidden);
  const uint64_t mlp = checked_add(mlp2_params(hidden, width), checked_add(width, hidden));
  // c_fc, activation, c_proj (no gate); ln_1 and ln_2, weight and bias; learned absolute positions (wpe), no rotary.
  add_non_gated_layers(tally, m, layers, g, width, {attn, mlp, 4 * hidden, false});
  tally.write_to(m.params, cfg.label() + (bigcode ? " geometry (GPT-BigCode mapper)" : " geometry (GPT-2 mapper)"));
}

}  // namespace

void map_gpt2(ConfigView& cfg) { map_gpt2_layout(cfg, false); }
void map_gpt_bigcode(ConfigView& cfg) { map_gpt2_layout(cfg, true); }

}  // namespace vc::families
