// The fallback for a model_type without a dedicated mapper: read it as a plain decoder (every layer
// full grouped-query attention and a gated MLP, or routed experts when the config names an expert
// count) from the keys most Hugging Face configs share. The layer count, hidden size and head count
// are required; every other field that has to be guessed gets a warning naming it, and the
// reading as a whole is flagged, since a hybrid or latent-attention model read this way is wrong.
#include <fmt/format.h>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {
namespace {

// The first present key of `keys`, or nullopt.
std::optional<uint64_t> first_opt(ConfigView& cfg, const std::vector<std::string>& keys, uint64_t max) {
  for (const auto& k : keys) {
    if (cfg.has(k)) return cfg.u64(k, max);
  }
  return std::nullopt;
}

}  // namespace

void map_generic(ConfigView& cfg) {
  Model& m = cfg.model();
  // A latent rank means multi-head latent attention: read as full attention it would be wrong by
  // the ratio of K/V heads to one latent vector, so it is refused rather than guessed.
  if (cfg.has("kv_lora_rank"))
    cfg.fail("kv_lora_rank", fmt::format("declares latent attention (MLA), which the plain-decoder reading cannot model; model_type '{}' has no "
                                         "mapper (MLA types mapped: deepseek_v2, deepseek_v3, deepseek_v32, kimi_k2, kimi_linear, glm_moe_dsa)",
                                         m.architecture.empty() ? "(none)" : m.architecture));
  cfg.warn(fmt::format("model_type '{}' has no dedicated mapper: read as a plain decoder (every layer full attention with a gated "
                       "MLP or routed experts); hybrid, sliding-window or latent-attention layouts are not recognised",
                       m.architecture.empty() ? "(none)" : m.architecture));
  const uint64_t layers = first_u64(cfg, {"num_hidden_layers", "n_layer", "num_layers"}, limits::kLayers);
  m.hidden = first_u64(cfg, {"hidden_size", "n_embd", "d_model"}, limits::kHidden);
  const uint64_t hidden = m.hidden;
  GqaGeometry g;
  g.heads = first_u64(cfg, {"num_attention_heads", "n_head", "num_heads"}, limits::kHeads);
  if (auto kv = first_opt(cfg, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, limits::kHeads)) {
    g.kv_heads = *kv;
  } else {
    g.kv_heads = g.heads;
    cfg.warn(fmt::format("num_key_value_heads: not in the config; guessed {} (one KV head per query head, MHA)", g.kv_heads));
  }
  if (g.kv_heads == 0 || g.kv_heads > g.heads) cfg.fail("num_key_value_heads", fmt::format("is {}; 1 to num_attention_heads ({}) accepted", g.kv_heads, g.heads));
  if (auto hd = cfg.opt_u64("head_dim", limits::kHeadDim); hd && *hd > 0) {
    g.head_dim = *hd;
  } else {
    if (hidden % g.heads != 0) cfg.fail("head_dim", fmt::format("missing, and hidden_size {} is not a multiple of num_attention_heads {}", hidden, g.heads));
    g.head_dim = hidden / g.heads;
    cfg.warn(fmt::format("head_dim: not in the config; guessed {} (hidden_size / num_attention_heads)", g.head_dim));
  }
  uint64_t width = 0;
  if (auto w = first_opt(cfg, {"intermediate_size", "ffn_hidden_size", "n_inner"}, limits::kWidth)) {
    width = *w;
  } else {
    width = checked_mul(4, hidden);
    cfg.warn(fmt::format("intermediate_size: not in the config; guessed {} (4 x hidden_size)", width));
  }
  if (auto v = cfg.opt_u64("vocab_size", limits::kVocab)) {
    m.vocab = *v;
  } else {
    cfg.warn("vocab_size: not in the config; guessed 0, so embeddings are not counted");
  }
  m.tied_embeddings = cfg.flag("tie_word_embeddings", false);
  MoeGeometry moe;
  moe.experts = first_opt(cfg, {"num_experts", "num_local_experts", "n_routed_experts"}, limits::kExperts).value_or(0);
  if (moe.experts > 1) {
    moe.top_k = first_u64(cfg, {"num_experts_per_tok", "num_experts_per_token", "experts_per_token"}, limits::kExperts);
    moe.expert_width = cfg.opt_u64("moe_intermediate_size", limits::kWidth).value_or(width);
    check_moe(cfg, moe, "num_experts_per_tok");
    cfg.warn(fmt::format("experts: {} routed experts of width {} on every layer, {} active; shared experts and dense layers are not recognised",
                         moe.experts, moe.expert_width, moe.top_k));
  }

  ParamTally tally;
  tally.add(ParamClass::Embedding, checked_mul(m.vocab, hidden), 0);
  if (!m.tied_embeddings) tally.add_always_active(ParamClass::OutputHead, checked_mul(m.vocab, hidden));
  tally.add_always_active(ParamClass::Norms, hidden);
  const uint64_t attn = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, false);
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = full_attention(g);
    tally.add_always_active(ParamClass::Attention, attn);
    layer.feed_forward = glu_feed_forward(tally, hidden, moe.experts > 1, moe, width, false);
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (generic fallback reading: see warnings)");
}

}  // namespace vc::families
