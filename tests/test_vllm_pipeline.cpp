// vLLM's pipeline stages: which layers each holds (vllm/distributed/utils.py get_pp_indices) and
// the pool every stage gets, the smallest stage's blocks (vllm/v1/core/kv_cache_utils.py
// get_kv_cache_configs). Worked by hand; the Llama 3.1 8B run is llm-d-planner's published vLLM
// 0.19 log (github.com/jgchn/llm-d-planner, accuracy/results/v0.19.0/logs/
// meta-llama-llama-3-1-8b---h100-80gb--tp1pp4dp1--8192.log).
#include <gtest/gtest.h>

#include "catalogue_entry.h"
#include "core/error.h"
#include "engines/vllm_budget.h"
#include "engines/vllm_pipeline.h"

using namespace vc;
using namespace vc::test;

namespace {

std::vector<uint64_t> layer_counts(uint64_t layers, uint64_t pp) {
  std::vector<uint64_t> out;
  uint64_t next = 0;
  for (const auto& s : vllm_pipeline_stages(layers, pp)) {
    EXPECT_EQ(s.first_layer, next);  // contiguous, first to last
    next += s.layers;
    out.push_back(s.layers);
  }
  EXPECT_EQ(next, layers);
  return out;
}

TEST(VllmPipeline, TheRemainderGoesToTheStagesBeforeTheLast) {
  // get_pp_indices: layers // pp each, then partitions[-i] += 1 for i in 2 .. remainder + 1.
  EXPECT_EQ(layer_counts(32, 4), (std::vector<uint64_t>{8, 8, 8, 8}));
  EXPECT_EQ(layer_counts(33, 4), (std::vector<uint64_t>{8, 8, 9, 8}));   // one extra: the second-to-last stage
  EXPECT_EQ(layer_counts(34, 4), (std::vector<uint64_t>{8, 9, 9, 8}));   // the middle stages, not the first or last
  EXPECT_EQ(layer_counts(35, 4), (std::vector<uint64_t>{9, 9, 9, 8}));   // remainder pp - 1: the first stage too
  EXPECT_EQ(layer_counts(61, 2), (std::vector<uint64_t>{31, 30}));       // two stages: the first takes it
  EXPECT_EQ(layer_counts(94, 1), (std::vector<uint64_t>{94}));
  EXPECT_THROW(vllm_pipeline_stages(4, 5), InputError);
  EXPECT_THROW(vllm_pipeline_stages(4, 0), InputError);
}

// Llama 3.1 8B, PP 4 on H100s of 79.19 GiB at 0.95, vLLM's defaults on such a card (8,192 batched
// tokens, 1,024 sequences). Every stage holds 8 layers (32 / 4), so a token's cache is 8 x 8 KV
// heads x 128 x 2 x 2 B = 32,768 B on each. Rank 0 holds the embedding, the last stage the output
// head and runs the dummy sampler over 1,024 rows of the 128,256-entry vocabulary:
//   weights, last stage: 8 / 32 of the body (6,979,588,096 parameters: 32 layers of 218,112,000
//     and the 4,096 of the final norm) = 1,744,897,024 x 2 B + the head 525,336,576 x 2 B
//     = 3,489,794,048 + 1,050,673,152 = 4,540,467,200 B (+ the rotary tables every rank builds);
//   sampler: 8,192 x 4,096 x 2 B kept + 1,024 x 128,256 x 14.55 B = 67,108,864 + 1,910,911,795.
// So the last stage has less room than rank 0, and its blocks are the pool's: vLLM printed
// 2,257,264 tokens where rank 0's own 69.8 GiB would hold 2,287,200 (ours: 2,261,296 and 2,287,872).
TEST(VllmPipeline, ThePoolIsTheSmallestStagesBlocks) {
  const Model& m = entry("llama-3.1-8b");
  VllmBudgetSettings s;
  s.card_bytes = static_cast<uint64_t>(79.19 * 1073741824.0);
  s.gpu_memory_utilization = 0.95;
  s.weight_bytes = m.native.bytes;
  s.kv.pipeline_parallel = 4;
  const VllmBudget b = vllm_budget(m, s);
  ASSERT_EQ(b.stages.size(), 3u);
  const VllmStageBudget& last = b.stages.back();
  EXPECT_EQ(last.stage, 3u);
  EXPECT_EQ(last.weights, 4'540'467'200u + b.rope.bytes);
  EXPECT_EQ(last.activation, b.moe_workspace + std::max<uint64_t>(b.forward_peak, 67'108'864u + 1'910'911'795u) + (50u << 20));  // + 50 MiB
  EXPECT_EQ(last.non_kv_total, last.weights + last.activation + b.non_torch);
  EXPECT_EQ(last.kv.bytes_per_token, 32'768u);
  EXPECT_EQ(last.kv.num_blocks, (b.requested - last.non_kv_total) / (16 * 32'768));
  EXPECT_LT(last.kv.num_blocks, b.own_blocks);
  EXPECT_EQ(b.kv_stage, 3u);
  EXPECT_EQ(b.kv.tokens, last.kv.num_blocks * 16);
  EXPECT_NEAR(static_cast<double>(b.kv.tokens), 2'257'264.0, 0.002 * 2'257'264);  // the published log, within 0.2%
  // Rank 0 keeps only the smallest stage's blocks of its own cache tensors.
  EXPECT_EQ(b.kv_allocated, last.kv.num_blocks * b.kv.bytes_per_block);
  EXPECT_LT(b.kv_allocated, b.available_kv);
}

}  // namespace
