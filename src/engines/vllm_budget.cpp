#include "engines/vllm_budget.h"

#include <algorithm>
#include <cmath>

#include "core/checked.h"
#include "core/error.h"

namespace vc {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

// Widest feed-forward a token passes through on one rank (MoE: the routed experts it uses + shared).
uint64_t ffn_width(const Model& m) {
  uint64_t w = 0;
  for (const auto& l : m.layers) {
    const auto& f = l.feed_forward;
    w = std::max(w, f.kind == FeedForwardKind::Dense ? f.dense_width : uint64_t{f.experts_per_token} * f.expert_width + f.shared_width);
  }
  return w;
}

}  // namespace

VllmBudget vllm_budget(const Model& model, const VllmBudgetSettings& s) {
  if (!(s.gpu_memory_utilization > 0 && s.gpu_memory_utilization <= 1)) throw InputError("--gpu-memory-utilization", "must be above 0 and at most 1");
  if (s.card_bytes == 0) throw InputError("--gpu", "vLLM's budget needs the card's memory");
  if (s.max_num_batched_tokens == 0 || s.max_num_batched_tokens > (1u << 22)) throw InputError("--max-num-batched-tokens", "must be from 1 to 4,194,304");
  VllmBudget b;
  b.requested = static_cast<uint64_t>(std::floor(s.gpu_memory_utilization * static_cast<double>(s.card_bytes)));
  const uint64_t ranks = checked_mul(s.kv.tensor_parallel, s.kv.pipeline_parallel);
  b.weights = ceil_div(s.weight_bytes, ranks);
  // Profile run: max_num_batched_tokens tokens in 16-bit; alive at the peak about four copies of
  // the feed-forward width on this rank (gate/up output, activation) and sixteen of the hidden
  // size (residual, norms, attention in/out). Fitted on Llama 3.1 8B (1.89 GiB printed, 1.875 ours);
  // uncertain for other families (docs/accuracy.md lists the misses).
  const uint64_t per_token = checked_add(checked_mul(4, ffn_width(model) / s.kv.tensor_parallel), checked_mul(16, model.hidden));
  b.activation = checked_product({s.max_num_batched_tokens, per_token, 2});
  // Non-torch memory: CUDA context and allocator slack, 0.25 GiB on one GPU; with tensor
  // parallelism NCCL's buffers add about 1.85 GiB (2.07-2.21 GiB printed at TP 2-4).
  b.non_torch = s.kv.tensor_parallel > 1 ? kGiB * 21 / 10 : kGiB / 4;
  b.non_kv_total = checked_add(checked_add(b.weights, b.activation), b.non_torch);
  b.available_kv = b.requested > b.non_kv_total ? b.requested - b.non_kv_total : 0;
  VllmSettings kv = s.kv;
  kv.available_kv_bytes = b.available_kv;
  if (b.available_kv) b.kv = vllm_kv(model, kv);
  return b;
}

}  // namespace vc
