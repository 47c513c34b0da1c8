// Expert parallelism at one sequence (speed/expert_balance.h, speed/token_reads.h): the busiest
// rank's expected share of a token's experts, worked by hand, and what a vLLM / SGLang rank reads.
#include <gtest/gtest.h>

#include "catalogue_entry.h"
#include "core/error.h"
#include "estimate/estimate.h"
#include "plan/footprint.h"
#include "plan/hardware.h"
#include "speed/expert_balance.h"
#include "speed/token_reads.h"

using namespace vc;
using namespace vc::test;

namespace {

TEST(ExpertBalance, BusiestRankByHand) {
  // 8 experts over 4 ranks (2 each), 2 picked: both on one rank with probability 4 x C(2,2) /
  // C(8,2) = 4 / 28, so E[max] = 1 + 4/28.
  EXPECT_NEAR(expected_busiest_rank_experts(8, 2, 4), 1.0 + 4.0 / 28.0, 1e-12);
  // 5 experts over 2 ranks (3 and 2, the first rank one more), 2 picked: one on each with
  // probability 3 x 2 / C(5,2) = 6 / 10, so E[max] = 1 + 4/10.
  EXPECT_NEAR(expected_busiest_rank_experts(5, 2, 2), 1.4, 1e-12);
  EXPECT_DOUBLE_EQ(expected_busiest_rank_experts(128, 8, 1), 8.0);  // one rank holds them all
  EXPECT_DOUBLE_EQ(expected_busiest_rank_experts(128, 1, 8), 1.0);  // one expert: one rank
  EXPECT_DOUBLE_EQ(expected_busiest_rank_experts(4, 4, 4), 1.0);    // every rank one expert, all picked
  // Qwen3-30B-A3B (8 of 128) over 4 GPUs: more than the mean 2, at most 8.
  const double q = expected_busiest_rank_experts(128, 8, 4);
  EXPECT_GT(q, 2.0);
  EXPECT_LT(q, 8.0);
}

TEST(ExpertBalance, AnExpertParallelRankReadsItsAttentionAndTheBusiestShare) {
  const Model& m = entry("qwen3-30b-a3b");
  Scenario sc;
  sc.quant = "BF16";
  const Estimate e = estimate(m, sc);
  const Footprint f = make_footprint(m, e);
  Box box;
  box.gpus = parse_gpus("H200x4", "--gpu");
  SpeedSettings s;
  s.engine = "vllm";
  s.tensor_parallel = 1;
  s.expert_parallel = 4;
  const TokenReads ep = token_reads(m, f, box, s);
  uint64_t fixed = 0, routed = 0;
  for (const auto& l : f.layers) {
    fixed += l.attention + l.dense + l.shared + l.other;
    routed += static_cast<uint64_t>(expected_busiest_rank_experts(l.experts, l.experts_per_token, 4) * static_cast<double>(l.routed) / static_cast<double>(l.experts));
  }
  const uint64_t head = m.tied_embeddings && f.output_head == 0 ? f.embedding : f.output_head;
  EXPECT_EQ(ep.memories.at(0).weights_read, fixed + head + routed);
  EXPECT_NE(ep.placement.find("expert parallel"), std::string::npos) << ep.placement;
  // Without expert parallelism, TP 4: a quarter of everything, the k experts' slices included.
  s.tensor_parallel = 4;
  s.expert_parallel = 1;
  const TokenReads tp = token_reads(m, f, box, s);
  EXPECT_LT(tp.memories.at(0).weights_read, ep.memories.at(0).weights_read);
  s.expert_parallel = 5;  // more ranks than the box has
  EXPECT_THROW(token_reads(m, f, box, s), InputError);
}

}  // namespace
