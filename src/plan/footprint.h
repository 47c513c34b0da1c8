#pragma once
// A model's memory laid out layer by layer, so it can be split across devices and tiers: the
// weights of each layer by kind (attention, dense MLP, shared experts, routed experts, the rest),
// the global tensors (embeddings, output head, vision, MTP), and per layer the cache bytes per
// token and the recurrent state per sequence. Computed once per model and dtype choice; a context
// or sequence count is then plain arithmetic, which is what keeps the solvers exact and fast.
#include <cstdint>
#include <string>
#include <vector>

#include "estimate/estimate.h"

namespace vc {

struct LayerFootprint {
  // Weight bytes resident for this layer.
  uint64_t attention = 0;
  uint64_t dense = 0;
  uint64_t shared = 0;
  uint64_t routed = 0;
  uint64_t other = 0;  // router, norms
  // Cache: bytes per token per sequence (K+V or latent), kept for min(context, window) tokens.
  uint64_t cache_per_token = 0;
  uint64_t window = 0;  // 0: grows with the whole context
  uint64_t state_per_seq = 0;
  AttentionKind kind = AttentionKind::None;
  uint32_t kv_heads = 0;      // Full / SlidingWindow: what tensor parallelism divides
  uint32_t experts = 0;       // routed experts of this layer (0: not MoE)
  uint32_t experts_per_token = 0;

  uint64_t weights() const;
  uint64_t cache(uint64_t context, uint64_t sequences) const;
  uint64_t state(uint64_t sequences) const;
};

struct Footprint {
  std::vector<LayerFootprint> layers;
  uint64_t embedding = 0;    // input embeddings: first device (a lookup: not read per token)
  uint64_t output_head = 0;  // last device
  uint64_t first_extras = 0; // vision tower and anything unclassed: first device, not read per token
  uint64_t last_extras = 0;  // MTP layers: last device, not read per token
  uint64_t weights_total = 0;   // equals the estimate's weights bytes
  // Weight bytes one token reads: the vendor's active / total ratio applied to the weights, the
  // same rule as `stream` (seed 002: 104B x 1.7 / 8 = 22.1 GB).
  uint64_t active_bytes = 0;
  uint64_t routed_active_bytes = 0;  // of which routed experts
  uint32_t overhead_bp = 0;
  std::string rule;  // how the weights were spread, for --explain

  uint64_t routed_total() const;
  uint64_t moe_layers() const;
};

// `e` is the estimate of the same model and scenario (weights tier, dtypes, overhead).
Footprint make_footprint(const Model& model, const Estimate& e);

}  // namespace vc
