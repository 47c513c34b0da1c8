// vLLM's data parallel with expert parallel: rank 0's routed experts (src/engines/vllm_data_parallel.cpp),
// worked by hand from the published config.json values of each model.
#include <gtest/gtest.h>

#include "catalogue_entry.h"
#include "engines/vllm_data_parallel.h"

using namespace vc;
using vc::test::entry;

// Qwen3-30B-A3B over 3 ranks: 128 experts do not divide, so determine_expert_map gives the first
// 128 % 3 = 2 ranks 43 and the last 42; rank 0 holds 43 of 128 of the 48 layers' routed experts
// (48 x 128 x 3 x 2,048 x 768 = 28,991,029,248 parameters, 2 B each in BF16): 57,982,058,496 B x
// 43 / 128 = 19,478,347,776 B; one rank holds one expert a layer fewer.
TEST(VllmDataParallel, ExpertsThatDoNotDivideGiveTheFirstRanksOneMore) {
  const Model& m = entry("qwen3-30b-a3b");
  const VllmExpertShard s = vllm_expert_shard(m, 61'064'245'248u, 3);
  EXPECT_EQ(s.experts, 128u);
  EXPECT_EQ(s.local_experts, 43u);
  EXPECT_EQ(s.lighter_ranks, 1u);
  EXPECT_EQ(s.routed_bytes, 57'982'058'496u);
  EXPECT_EQ(s.rank_routed, 19'478'347'776u);
  EXPECT_NE(vllm_data_parallel_note(3, s).find("1 of the 3 ranks hold one expert a layer fewer"), std::string::npos);
}

// DeepSeek-V3 (deepseek-ai/DeepSeek-V3 config.json: 61 layers, the first 3 dense, 256 experts of
// width 2,048, hidden 7,168; FP8 with a 4 B scale per 128 x 128 block) over 8 ranks: the 58 MoE
// layers' experts, 58 x 256 x 3 x 7,168 x 2,048 = 653,908,770,816 parameters at 1 + 4 / 16,384 B =
// 654,068,416,512 B (the MTP layer's are not built: mtp_weight_bytes); rank 0 holds 32 of 256:
// 81,758,552,064 B.
TEST(VllmDataParallel, DeepSeekV3SplitsItsDecoderExperts) {
  const Model& m = entry("deepseek-v3");
  const VllmExpertShard s = vllm_expert_shard(m, m.native.bytes, 8);
  EXPECT_EQ(s.experts, 256u);
  EXPECT_EQ(s.local_experts, 32u);
  EXPECT_EQ(s.lighter_ranks, 0u);
  EXPECT_EQ(s.routed_bytes, 654'068'416'512u);
  EXPECT_EQ(s.rank_routed, 81'758'552'064u);
}

// A dense model has no routed experts: each DP rank is a whole replica.
TEST(VllmDataParallel, DenseModelIsReplicated) {
  const VllmExpertShard s = vllm_expert_shard(entry("qwen3-32b"), 65'535'000'000u, 2);
  EXPECT_EQ(s.experts, 0u);
  EXPECT_EQ(s.rank_routed, 0u);
  EXPECT_NE(vllm_data_parallel_note(2, s).find("whole replica"), std::string::npos);
}
