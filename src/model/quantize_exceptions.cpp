#include "model/quantize_exceptions.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/checked.h"

namespace vc {
namespace {

uint64_t class_params(const std::map<ParamClass, uint64_t>& by_class, ParamClass c) {
  auto it = by_class.find(c);
  return it == by_class.end() ? 0 : it->second;
}

// The llama.cpp block size the output rule tests the hidden size against (QK_K).
constexpr uint64_t kSuperBlock = 256;

// A feed-forward class of `n` parameters whose down projection reads `width` values per row and
// holds hidden x width of them (per expert x copies); the rest (up, gate) reads the hidden state.
uint64_t feed_forward_share(uint64_t n, uint64_t hidden, uint64_t width, uint64_t copies, uint64_t block) {
  const uint64_t down = std::min(n, checked_product({hidden, width, copies}));
  uint64_t share = 0;
  if (hidden % block) share = checked_add(share, n - down);
  if (width % block) share = checked_add(share, down);
  return share;
}

// Attention of `n` parameters: the output projection reads heads x value width per row; q, k and v
// read the hidden state. Without the head count, all of it counts as reading the hidden state.
uint64_t attention_share(uint64_t n, uint64_t hidden, const AttentionSpec& a, uint64_t block) {
  const bool grouped = a.kind == AttentionKind::Full || a.kind == AttentionKind::SlidingWindow;
  if (!grouped || a.query_heads == 0 || a.head_dim_v == 0) return hidden % block ? n : 0;
  const uint64_t o_width = checked_mul(a.query_heads, a.head_dim_v);
  const uint64_t o = std::min(n, checked_mul(o_width, hidden));
  uint64_t share = 0;
  if (hidden % block) share = checked_add(share, n - o);
  if (o_width % block) share = checked_add(share, o);
  return share;
}

// Tiers llama-quantize writes: its mixes and the block types it quantizes to.
bool quantized_by_llamacpp(const QuantFormat& tier) {
  static constexpr std::array<std::string_view, 5> kLegacy = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "IQ4_NL"};
  return tier.is_mix || !tier.row_fallback.empty() || std::find(kLegacy.begin(), kLegacy.end(), tier.name) != kLegacy.end();
}

}  // namespace

uint64_t QuantizeExceptions::params() const { return checked_add(row_fallback_params, output_params); }

uint64_t row_fallback_params(const Model& model, uint64_t block) {
  if (block <= 1 || model.hidden == 0) return 0;
  const uint64_t hidden = model.hidden;
  uint64_t n_params = 0;
  if (hidden % block && !model.tied_embeddings) n_params = class_params(model.params.by_class, ParamClass::Embedding);
  for (const LayerConfig& layer : model.layers) {
    const FeedForwardSpec& ff = layer.feed_forward;
    for (const auto& [c, n] : layer.params) {
      uint64_t share = 0;
      switch (c) {
        case ParamClass::Attention:
          share = layer.parallel_mixer && hidden % block ? n : attention_share(n, hidden, layer.attention, block);
          break;
        case ParamClass::DenseMlp: share = feed_forward_share(n, hidden, ff.dense_width, 1, block); break;
        case ParamClass::RoutedExperts: share = feed_forward_share(n, hidden, ff.expert_width, ff.experts, block); break;
        case ParamClass::SharedExperts: share = feed_forward_share(n, hidden, ff.shared_width, 1, block); break;
        default: break;  // norms and routers stay unquantized
      }
      n_params = checked_add(n_params, share);
    }
  }
  return n_params;
}

std::string output_layer_type(const QuantFormat& tier, uint64_t hidden) {
  if (!quantized_by_llamacpp(tier)) return "";
  if (hidden % kSuperBlock) return "Q8_0";  // "nx % qk_k != 0", or Q6_K's own row fallback
  if (tier.is_mix) return "";               // the measured average holds its output layer
  static constexpr std::array<std::string_view, 6> kLowBitIq = {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS"};
  if (std::find(kLowBitIq.begin(), kLowBitIq.end(), tier.name) != kLowBitIq.end()) return "Q5_K";
  return tier.name == "Q6_K" ? "" : "Q6_K";
}

QuantizeExceptions quantize_exceptions(const Model& model, const QuantFormat& tier) {
  QuantizeExceptions q;
  if (!tier.row_fallback.empty()) {
    q.row_fallback_params = row_fallback_params(model, tier.row_block);
    if (q.row_fallback_params) q.row_fallback_type = tier.row_fallback;
  }
  q.output_type = output_layer_type(tier, model.hidden);
  if (!q.output_type.empty()) {
    q.output_params = class_params(model.params.by_class, ParamClass::OutputHead);
    if (model.tied_embeddings) q.output_params = checked_add(q.output_params, class_params(model.params.by_class, ParamClass::Embedding));
    if (q.output_params == 0) q.output_type.clear();
  }
  return q;
}

}  // namespace vc
