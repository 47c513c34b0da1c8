#include "engines/vllm_graphs.h"

#include <algorithm>
#include <cstddef>
#include <set>

#include "core/checked.h"
#include "engines/vllm_pipeline.h"

namespace vc {

VllmGraphCapture vllm_graph_sizes(uint64_t max_num_seqs, uint64_t max_num_batched_tokens, uint64_t decode_query_len) {
  const uint64_t q = std::max<uint64_t>(decode_query_len, 1);
  const uint64_t largest = std::min({checked_product({2, max_num_seqs, q}), uint64_t{512}, max_num_batched_tokens});
  std::set<uint64_t> sizes;  // rounded up to multiples of q, each once
  auto add = [&](uint64_t size) {
    if (size > largest) return;
    if (const uint64_t rounded = ceil_div(size, q) * q; rounded <= largest) sizes.insert(rounded);
  };
  for (uint64_t size : {1, 2, 4}) add(size);
  for (uint64_t size = 8; size < 256; size += 8) add(size);
  for (uint64_t size = 256; size <= 512; size += 16) add(size);
  if (sizes.empty() && q <= largest) sizes.insert(q);
  VllmGraphCapture g;
  for (uint64_t size : sizes) {
    ++g.sizes;
    if (size <= checked_mul(max_num_seqs, q)) ++g.full_sizes;
  }
  return g;
}

VllmGraphCapture vllm_graph_capture(const Model& target, uint64_t pp, const Model* drafter, uint64_t max_num_seqs,
                                    uint64_t max_num_batched_tokens, uint64_t decode_query_len) {
  VllmGraphCapture g = vllm_graph_sizes(max_num_seqs, max_num_batched_tokens, decode_query_len);
  auto count = [&](const Model& m, uint64_t n) {
    g.layers = checked_add(g.layers, n);
    const auto end = m.layers.begin() + static_cast<std::ptrdiff_t>(n);
    const auto moe = std::count_if(m.layers.begin(), end, [](const LayerConfig& l) { return l.feed_forward.kind == FeedForwardKind::MoE; });
    g.moe_layers = checked_add(g.moe_layers, static_cast<uint64_t>(moe));
  };
  count(target, vllm_pipeline_stages(target.layers.size(), std::max<uint64_t>(pp, 1)).front().layers);  // rank 0's stage
  if (drafter) count(*drafter, drafter->layers.size());
  return g;
}

uint64_t vllm_cuda_graphs(const VllmGraphCapture& g) {
  const uint64_t per_size = checked_add(checked_mul(g.layers, kVllmGraphLayer), checked_mul(g.moe_layers, kVllmGraphMoeLayer));
  return checked_add(kVllmGraphPool, checked_mul(checked_add(g.sizes, g.full_sizes), per_size));
}

}  // namespace vc
