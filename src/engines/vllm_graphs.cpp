#include "engines/vllm_graphs.h"

#include <algorithm>
#include <cstddef>

#include "core/checked.h"

namespace vc {

VllmGraphCapture vllm_graph_sizes(uint64_t max_num_seqs, uint64_t max_num_batched_tokens) {
  const uint64_t largest = std::min({checked_mul(2, max_num_seqs), uint64_t{512}, max_num_batched_tokens});
  VllmGraphCapture g;
  auto add = [&](uint64_t size) {
    if (size > largest) return;
    ++g.sizes;
    if (size <= max_num_seqs) ++g.full_sizes;
  };
  for (uint64_t size : {1, 2, 4}) add(size);
  for (uint64_t size = 8; size < 256; size += 8) add(size);
  for (uint64_t size = 256; size <= 512; size += 16) add(size);
  return g;
}

VllmGraphCapture vllm_graph_capture(const Model& target, uint64_t pp, const Model* drafter, uint64_t max_num_seqs,
                                    uint64_t max_num_batched_tokens) {
  VllmGraphCapture g = vllm_graph_sizes(max_num_seqs, max_num_batched_tokens);
  auto count = [&](const Model& m, uint64_t n) {
    g.layers = checked_add(g.layers, n);
    const auto end = m.layers.begin() + static_cast<std::ptrdiff_t>(n);
    const auto moe = std::count_if(m.layers.begin(), end, [](const LayerConfig& l) { return l.feed_forward.kind == FeedForwardKind::MoE; });
    g.moe_layers = checked_add(g.moe_layers, static_cast<uint64_t>(moe));
  };
  count(target, std::min<uint64_t>(ceil_div(target.layers.size(), std::max<uint64_t>(pp, 1)), target.layers.size()));
  if (drafter) count(*drafter, drafter->layers.size());
  return g;
}

uint64_t vllm_cuda_graphs(const VllmGraphCapture& g) {
  const uint64_t per_size = checked_add(checked_mul(g.layers, kVllmGraphLayer), checked_mul(g.moe_layers, kVllmGraphMoeLayer));
  return checked_add(kVllmGraphPool, checked_mul(checked_add(g.sizes, g.full_sizes), per_size));
}

}  // namespace vc
