#include "plan/footprint.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/units.h"
#include "estimate/streaming.h"
#include "model/layer_memory.h"

namespace vc {
namespace {

// Splits `total` in proportion to `weights` exactly: cumulative floors, so the parts sum to total.
std::vector<uint64_t> spread(uint64_t total, const std::vector<uint64_t>& weights) {
  u128 sum = 0;
  for (uint64_t w : weights) sum += w;
  std::vector<uint64_t> out(weights.size(), 0);
  if (sum == 0) return out;
  u128 cum = 0;
  uint64_t given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    cum += weights[i];
    const uint64_t upto = static_cast<uint64_t>(static_cast<u128>(total) * cum / sum);
    out[i] = upto - given;
    given = upto;
  }
  return out;
}

bool has_mixer(const LayerConfig& l) {
  return l.attention.kind != AttentionKind::None || (l.parallel_mixer && l.parallel_mixer->kind != AttentionKind::None);
}

}  // namespace

uint64_t LayerFootprint::weights() const { return checked_add(checked_add(checked_add(attention, dense), checked_add(shared, routed)), other); }

uint64_t LayerFootprint::cache(uint64_t context, uint64_t sequences) const {
  const uint64_t tokens = window ? std::min(context, window) : context;
  return checked_product({cache_per_token, tokens, sequences});
}

uint64_t LayerFootprint::state(uint64_t sequences) const { return checked_mul(state_per_seq, sequences); }

uint64_t Footprint::routed_total() const {
  uint64_t t = 0;
  for (const auto& l : layers) t = checked_add(t, l.routed);
  return t;
}

uint64_t Footprint::moe_layers() const {
  uint64_t n = 0;
  for (const auto& l : layers) n += l.experts ? 1 : 0;
  return n;
}

Footprint make_footprint(const Model& model, const Estimate& e) {
  Footprint f;
  f.weights_total = e.weights.bytes;
  f.overhead_bp = e.scenario.overhead_bp;
  f.layers.resize(model.layers.size());

  // Weights: the tier's bytes spread over parameter classes, then over the layers that hold them.
  // The native checkpoint is spread by its bytes per class where known (K3: bf16 attention beside
  // MXFP4 experts); any other tier is one effective bits-per-parameter for the whole model.
  const bool by_native_bytes = e.weights.kind == TierKind::Native && !model.native.bytes_by_class.empty();
  std::vector<ParamClass> classes;
  std::vector<uint64_t> class_params;
  std::vector<uint64_t> class_shares;
  for (const auto& [c, n] : model.params.by_class) {
    classes.push_back(c);
    class_params.push_back(n);
    auto it = model.native.bytes_by_class.find(c);
    // A class the checkpoint's table lacks (a vision tower added from the facts) counts as bf16.
    class_shares.push_back(by_native_bytes ? (it != model.native.bytes_by_class.end() ? it->second : checked_mul(n, 2)) : n);
  }
  const std::vector<uint64_t> class_bytes = spread(f.weights_total, class_shares);

  const std::size_t n = model.layers.size();
  if (std::all_of(class_params.begin(), class_params.end(), [](uint64_t c) { return c == 0; })) {
    // No parameter classes (a source that only knows the total): the weights spread evenly over
    // the layers, or all on the first device for a model without layers.
    const std::vector<uint64_t> parts = spread(f.weights_total, std::vector<uint64_t>(n, 1));
    for (std::size_t i = 0; i < n; ++i) f.layers[i].other = parts[i];
    if (n == 0) f.first_extras = f.weights_total;
  }
  // Each layer's share of a class: its own parameters of that class where the source gave them
  // (the mapper's geometry or the GGUF tensors); else a shape-based guess.
  const bool per_layer_params = std::any_of(model.layers.begin(), model.layers.end(), [](const LayerConfig& l) { return !l.params.empty(); });
  auto weights_for = [&](ParamClass c) {
    std::vector<uint64_t> w(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const LayerConfig& l = model.layers[i];
      if (per_layer_params) {
        auto it = l.params.find(c);
        w[i] = it == l.params.end() ? 0 : it->second;
        continue;
      }
      const FeedForwardSpec& ff = l.feed_forward;
      switch (c) {
        case ParamClass::Attention: w[i] = has_mixer(l) ? 1 : 0; break;
        case ParamClass::DenseMlp: w[i] = ff.kind == FeedForwardKind::Dense ? ff.dense_width : 0; break;
        case ParamClass::RoutedExperts: w[i] = ff.kind == FeedForwardKind::MoE ? uint64_t{ff.experts} * ff.expert_width : 0; break;
        case ParamClass::SharedExperts: w[i] = ff.kind == FeedForwardKind::MoE ? ff.shared_width : 0; break;
        case ParamClass::Router: w[i] = ff.kind == FeedForwardKind::MoE ? ff.experts : 0; break;
        case ParamClass::Norms: w[i] = 1; break;
        default: break;
      }
    }
    return w;
  };
  for (std::size_t ci = 0; ci < classes.size(); ++ci) {
    const ParamClass c = classes[ci];
    const uint64_t bytes = class_bytes[ci];
    switch (c) {
      case ParamClass::Embedding: f.embedding = checked_add(f.embedding, bytes); continue;
      case ParamClass::OutputHead: f.output_head = checked_add(f.output_head, bytes); continue;
      case ParamClass::Mtp: f.last_extras = checked_add(f.last_extras, bytes); continue;
      case ParamClass::Vision:
      case ParamClass::Other: f.first_extras = checked_add(f.first_extras, bytes); continue;
      default: break;
    }
    const std::vector<uint64_t> w = weights_for(c);
    const std::vector<uint64_t> parts = spread(bytes, w);
    uint64_t placed = 0;
    for (std::size_t i = 0; i < n; ++i) {
      LayerFootprint& lf = f.layers[i];
      uint64_t& slot = c == ParamClass::Attention ? lf.attention : c == ParamClass::DenseMlp ? lf.dense : c == ParamClass::RoutedExperts ? lf.routed
                     : c == ParamClass::SharedExperts ? lf.shared : lf.other;
      slot = checked_add(slot, parts[i]);
      placed = checked_add(placed, parts[i]);
    }
    f.first_extras = checked_add(f.first_extras, bytes - placed);  // a class no layer holds
  }

  // Cache and state per layer from the one per-layer accessor (model/layer_memory.h).
  CacheLayout cache = uniform_cache(cache_type(e.scenario.cache_dtype, "--cache-dtype"));
  cache.latent_values = e.scenario.latent_values;
  for (std::size_t i = 0; i < n; ++i) {
    const LayerConfig& l = model.layers[i];
    LayerFootprint& lf = f.layers[i];
    lf.cache_per_token = token_cache_bytes(l, cache).total();
    lf.state_per_seq = state_bytes(l, e.scenario.state_layout).total();
    lf.kind = l.attention.kind;
    lf.window = l.attention.kind == AttentionKind::SlidingWindow ? l.attention.window : 0;
    lf.kv_heads = l.attention.kv_heads;
    if (l.feed_forward.kind == FeedForwardKind::MoE) {
      lf.experts = l.feed_forward.experts;
      lf.experts_per_token = l.feed_forward.experts_per_token;
    }
  }

  // Bytes read per token. Native mixed precision: each class at its own bytes, k of n routed
  // experts (estimate/streaming.h). Otherwise the vendor's active / total ratio on the weights (as
  // `stream` does), with the routed experts' part in proportion to their derived active parameters.
  const uint64_t total_params = model.params.total();
  if (by_native_bytes) {
    const NativeReads reads = native_reads_per_token(model);
    f.active_bytes = mul_div_round(reads.per_token, f.weights_total, model.native.bytes);
    f.routed_active_bytes = mul_div_round(reads.routed, f.weights_total, model.native.bytes);
  } else {
    f.active_bytes = total_params ? mul_div_round(f.weights_total, model.params.active(), total_params) : f.weights_total;
    u128 derived_active = 0, routed_active = 0;
    for (const auto& [c, count] : model.params.by_class) {
      if (c == ParamClass::Embedding || c == ParamClass::Vision || c == ParamClass::Mtp || c == ParamClass::Other) continue;
      if (c == ParamClass::RoutedExperts) {
        for (const auto& l : model.layers) {
          if (l.feed_forward.kind != FeedForwardKind::MoE || !l.feed_forward.experts) continue;
          routed_active += static_cast<u128>(count) * l.feed_forward.experts_per_token / l.feed_forward.experts;
          break;  // one layer's k / n stands for all (the share is the same in every MoE layer)
        }
      } else {
        derived_active += count;
      }
    }
    derived_active += routed_active;
    f.routed_active_bytes = derived_active ? static_cast<uint64_t>(static_cast<u128>(f.active_bytes) * routed_active / derived_active) : 0;
  }
  f.rule = by_native_bytes
               ? fmt::format("weights spread over parameter classes by the native checkpoint's bytes per class ({}); per token {} of {} parameters read ({})",
                             model.native.note, format_params(model.params.active()), format_params(total_params), model.params.active_source())
               : fmt::format("weights spread over parameter classes at one effective {:.2f} bits per parameter; per token {} of {} parameters read ({})",
                             e.weights.effective_bits, format_params(model.params.active()), format_params(total_params), model.params.active_source());
  return f;
}

}  // namespace vc
