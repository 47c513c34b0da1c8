#include "sources/config/family_common.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "sources/config/limits.h"

namespace vc::families {

namespace {

void check_kv_heads(ConfigView& cfg, const GqaGeometry& g) {
  if (g.kv_heads == 0 || g.kv_heads > g.heads || g.heads % g.kv_heads != 0) {
    cfg.fail("num_key_value_heads", fmt::format("is {}; a divisor of num_attention_heads ({}) is expected", g.kv_heads, g.heads));
  }
}

}  // namespace

GqaGeometry read_gqa(ConfigView& cfg, uint64_t hidden, const std::string& head_dim_key) {
  GqaGeometry g;
  g.heads = cfg.u64("num_attention_heads", limits::kHeads);
  g.kv_heads = cfg.u64_or("num_key_value_heads", g.heads, limits::kHeads, "absent means one KV head per query head (MHA)");
  check_kv_heads(cfg, g);
  if (hidden % g.heads != 0 && !cfg.has(head_dim_key)) {
    cfg.fail(head_dim_key, fmt::format("missing, and hidden_size {} is not a multiple of num_attention_heads {}", hidden, g.heads));
  }
  g.head_dim = cfg.u64_or(head_dim_key, hidden / g.heads, limits::kHeadDim, "absent means hidden_size / num_attention_heads");
  if (g.head_dim == 0) cfg.fail(head_dim_key, "is 0; a positive number is expected");
  return g;
}

GqaGeometry read_gqa_or(ConfigView& cfg, const GqaGeometry& defaults, const std::string& why) {
  GqaGeometry g;
  g.heads = cfg.u64_or("num_attention_heads", defaults.heads, limits::kHeads, why);
  g.kv_heads = cfg.u64_or("num_key_value_heads", defaults.kv_heads, limits::kHeads, why);
  check_kv_heads(cfg, g);
  g.head_dim = cfg.u64_or("head_dim", defaults.head_dim, limits::kHeadDim, why);
  if (g.head_dim == 0) cfg.fail("head_dim", "is 0; a positive number is expected");
  return g;
}

AttentionSpec full_attention(const GqaGeometry& g) {
  AttentionSpec a;
  a.kind = AttentionKind::Full;
  a.kv_heads = static_cast<uint32_t>(g.kv_heads);
  a.query_heads = static_cast<uint32_t>(g.heads);
  a.head_dim_k = static_cast<uint32_t>(g.head_dim);
  a.head_dim_v = static_cast<uint32_t>(g.head_dim);
  return a;
}

AttentionSpec latent_attention(uint64_t heads, uint64_t q_lora, uint64_t kv_lora, uint64_t nope, uint64_t rope, uint64_t v_dim) {
  AttentionSpec a;
  a.kind = AttentionKind::Latent;
  a.latent_rank = static_cast<uint32_t>(kv_lora);
  a.query_heads = static_cast<uint32_t>(heads);
  a.rope_dim = static_cast<uint32_t>(rope);
  a.query_rank = static_cast<uint32_t>(q_lora);
  a.nope_dim = static_cast<uint32_t>(nope);
  a.value_dim = static_cast<uint32_t>(v_dim);
  return a;
}

AttentionSpec window_attention(const GqaGeometry& g, uint64_t window) {
  AttentionSpec a = full_attention(g);
  a.kind = AttentionKind::SlidingWindow;
  a.window = window;
  return a;
}

void read_embeddings(ConfigView& cfg, ParamTally& tally, bool tied_default) {
  Model& m = cfg.model();
  m.hidden = cfg.u64("hidden_size", limits::kHidden);
  m.vocab = cfg.u64("vocab_size", limits::kVocab);
  m.tied_embeddings = cfg.flag("tie_word_embeddings", tied_default);
  tally.add(ParamClass::Embedding, checked_mul(m.vocab, m.hidden), 0);
  tally_output_head(tally, m);
  tally.add_always_active(ParamClass::Norms, m.hidden);
}

void tally_output_head(ParamTally& tally, const Model& m) {
  // A tied head is stored once (as the embedding) but decode reads all of it: active, not total.
  if (!m.tied_embeddings) tally.add_always_active(ParamClass::OutputHead, checked_mul(m.vocab, m.hidden));
  else tally.add(ParamClass::OutputHead, 0, checked_mul(m.vocab, m.hidden));
}

uint64_t first_u64(ConfigView& cfg, const std::vector<std::string>& keys, uint64_t max) {
  for (const auto& k : keys) {
    if (cfg.has(k)) return cfg.u64(k, max);
  }
  std::string names;
  for (const auto& k : keys) names += (names.empty() ? "" : " or ") + k;
  cfg.fail(names, "missing; this architecture needs one of them");
}

void check_moe(ConfigView& cfg, const MoeGeometry& g, const std::string& top_k_key) {
  if (g.top_k > g.experts) cfg.fail(top_k_key, fmt::format("is {} but there are only {} experts", g.top_k, g.experts));
}

FeedForwardSpec moe_spec(const MoeGeometry& g) {
  FeedForwardSpec f;
  f.kind = FeedForwardKind::MoE;
  f.experts = static_cast<uint32_t>(g.experts);
  f.experts_per_token = static_cast<uint32_t>(g.top_k);
  f.expert_width = g.expert_width;
  f.shared_width = g.shared_width;
  return f;
}

FeedForwardSpec dense_spec(uint64_t width) {
  FeedForwardSpec f;
  f.kind = FeedForwardKind::Dense;
  f.dense_width = width;
  return f;
}

void add_dense_glu_layers(ParamTally& tally, Model& m, uint64_t layers, const GqaGeometry& g, uint64_t width, uint64_t attention, uint64_t norms) {
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = full_attention(g);
    tally.add_always_active(ParamClass::Attention, attention);
    layer.feed_forward = glu_feed_forward(tally, m.hidden, false, MoeGeometry{}, width, false);
    tally.add_always_active(ParamClass::Norms, norms);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
}

void add_non_gated_layers(ParamTally& tally, Model& m, uint64_t layers, const GqaGeometry& g, uint64_t width, const NonGatedLayer& each) {
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = full_attention(g);
    layer.attention.rotary = each.rotary;
    layer.feed_forward = dense_spec(width);
    layer.feed_forward.gated = false;
    tally.add_always_active(ParamClass::Attention, each.attention);
    tally.add_always_active(ParamClass::DenseMlp, each.mlp);
    tally.add_always_active(ParamClass::Norms, each.norms);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
}

void tally_glu_moe(ParamTally& tally, uint64_t hidden, const MoeGeometry& g, bool router_bias) {
  const uint64_t one = glu_params(hidden, g.expert_width);
  tally.add(ParamClass::RoutedExperts, checked_mul(g.experts, one), checked_mul(g.top_k, one));
  if (g.shared_width) tally.add_always_active(ParamClass::SharedExperts, glu_params(hidden, g.shared_width));
  tally.add_always_active(ParamClass::Router, checked_add(checked_mul(g.experts, hidden), router_bias ? g.experts : 0));
}

FeedForwardSpec glu_feed_forward(ParamTally& tally, uint64_t hidden, bool sparse, const MoeGeometry& moe, uint64_t dense_width,
                                 bool router_bias) {
  if (sparse) {
    tally_glu_moe(tally, hidden, moe, router_bias);
    return moe_spec(moe);
  }
  tally.add_always_active(ParamClass::DenseMlp, glu_params(hidden, dense_width));
  return dense_spec(dense_width);
}

void tally_mtp_layers(ParamTally& tally, uint64_t count, uint64_t hidden, uint64_t norms,
                      const std::function<void(ParamTally&, uint64_t)>& decoder_layer, uint64_t copied_vocab) {
  for (uint64_t i = 0; i < count; ++i) {
    ParamTally layer;
    decoder_layer(layer, i);
    const uint64_t glue = checked_add(checked_product({2, hidden, hidden}), checked_mul(norms, hidden));
    const uint64_t copies = checked_product({2, copied_vocab, hidden});
    tally.add(ParamClass::Mtp, checked_add(checked_add(layer.total(), glue), copies), 0);
  }
}

uint64_t mtp_copied_vocab(ConfigView& cfg, uint64_t count, bool family_default, const std::string& why) {
  if (count == 0) return 0;
  Model& m = cfg.model();
  const auto& fact = cfg.stored().mtp_embedding_and_head_copies;
  const bool stored = fact ? fact->value : family_default;
  m.provenance["params.mtp copies"] = fmt::format("{} x 2 x {} x {} (each MTP layer's own embed_tokens and shared_head.head): {}; {}", count, m.vocab,
                                                  m.hidden, stored ? "stored, counted" : "not stored, not counted", fact ? fact->source : why);
  if (!stored) return 0;
  m.params.mtp_copies = checked_product({count, 2, m.vocab, m.hidden});
  return m.vocab;
}

std::vector<bool> qwen_moe_layers(ConfigView& cfg, uint64_t layers) {
  std::vector<bool> moe(layers, true);
  const uint64_t step = cfg.u64_or("decoder_sparse_step", 1, limits::kLayers, "Qwen MoE default: every layer sparse");
  if (step == 0) cfg.fail("decoder_sparse_step", "is 0; a positive number is expected");
  for (uint64_t i = 0; i < layers; ++i) moe[i] = (i + 1) % step == 0;
  if (const auto* list = cfg.raw("mlp_only_layers")) {
    for (uint64_t l : cfg.u64_list(*list, "mlp_only_layers", limits::kLayers, limits::kLayers)) {
      if (l >= layers) cfg.fail("mlp_only_layers", fmt::format("lists layer {}; layers are numbered 0 to {}", l, layers - 1));
      moe[l] = false;
    }
  }
  return moe;
}

std::vector<std::string> read_layer_types(ConfigView& cfg, uint64_t count, const std::vector<std::string>& accepted, const std::string& key) {
  auto types = cfg.str_list(key, limits::kLayers);
  if (types.size() != count) cfg.fail(key, fmt::format("has {} entries but num_hidden_layers is {}", types.size(), count));
  for (const auto& t : types) {
    if (std::find(accepted.begin(), accepted.end(), t) == accepted.end()) {
      std::string names;
      for (const auto& a : accepted) names += (names.empty() ? "" : ", ") + a;
      cfg.fail(key, fmt::format("holds '{}'; accepted: {}", t, names));
    }
  }
  return types;
}

}  // namespace vc::families
