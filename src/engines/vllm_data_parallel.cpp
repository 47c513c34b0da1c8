// vLLM's data parallel with expert parallel: rank 0's share of the routed experts (vllm_data_parallel.h).
#include "engines/vllm_data_parallel.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/units.h"
#include "engines/serving_dtype.h"

namespace vc {

namespace {

uint64_t class_of(const std::map<ParamClass, uint64_t>& m, ParamClass c) {
  const auto it = m.find(c);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

VllmExpertShard vllm_expert_shard(const Model& m, uint64_t loaded_bytes, uint64_t ranks) {
  VllmExpertShard s;
  s.ranks = std::max<uint64_t>(1, ranks);
  s.loaded_bytes = loaded_bytes;
  // Rank 0's routed parameters: per MoE layer, local / experts of the layer's routed experts.
  u128 routed_params = 0, rank_params = 0;
  for (const auto& l : m.layers) {
    const FeedForwardSpec& f = l.feed_forward;
    if (f.kind != FeedForwardKind::MoE || f.experts == 0) continue;
    const uint64_t experts = f.experts, local = experts / s.ranks + (experts % s.ranks ? 1 : 0);
    const uint64_t p = class_of(l.params, ParamClass::RoutedExperts);
    routed_params += p;
    rank_params += static_cast<u128>(p) * local / experts;
    if (experts > s.experts) {
      s.experts = experts;
      s.local_experts = local;
      s.lighter_ranks = experts % s.ranks ? s.ranks - experts % s.ranks : 0;
    }
  }
  if (routed_params == 0) return s;
  // Their bytes: the routed class the reader read, as the checkpoint is loaded (loaded_share_bytes).
  const auto stored = m.native.bytes_by_class.find(ParamClass::RoutedExperts);
  const u128 routed = loaded_share_bytes(m, loaded_bytes, stored == m.native.bytes_by_class.end() ? 0 : stored->second, static_cast<uint64_t>(routed_params));
  s.routed_bytes = static_cast<uint64_t>(routed);
  s.rank_routed = static_cast<uint64_t>(routed * rank_params / routed_params);
  return s;
}

uint64_t vllm_max_num_seqs_for(uint64_t sequences, uint64_t data_parallel) { return ceil_div(sequences, std::max<uint64_t>(1, data_parallel)); }

std::string vllm_data_parallel_note(uint64_t ranks, const VllmExpertShard& shard) {
  if (!shard.experts)
    return fmt::format("data parallel {0}: the model has no routed experts, so each of the {0} ranks is a whole replica (tensor parallel 1) with its "
                       "own scheduler and KV cache, for the sequences sent to it",
                       ranks);
  std::string experts = fmt::format("{} of the {} routed experts of each MoE layer ({} B of {} B)", shard.local_experts, shard.experts,
                                    format_count(shard.rank_routed), format_count(shard.routed_bytes));
  if (shard.lighter_ranks)
    experts += fmt::format("; {} of the {} ranks hold one expert a layer fewer than rank 0, shown here", shard.lighter_ranks, ranks);
  return fmt::format("data parallel {0} with expert parallel: each of the {0} ranks is its own vLLM engine (tensor parallel 1) with attention, "
                     "embeddings, output head, dense layers and shared experts whole, {1}, its own scheduler (max_num_seqs and "
                     "max_num_batched_tokens are a rank's) and its own KV cache with every KV head, for the sequences sent to it; the "
                     "MoE layers work on the {0} ranks' tokens gathered (vLLM's default all2all backend, allgather_reducescatter)",
                     ranks, experts);
}

}  // namespace vc
