// The solvers: largest context at N sequences and most sequences at a context, by binary search
// over exact per-device figures. Hand-worked on Llama-3.1-70B's geometry (plan_fixtures.h) in
// BF16 over two H200 (141,000,000,000 B each), layer split 40 + 40, overhead 15%.
#include <gtest/gtest.h>

#include "plan/plan.h"
#include "plan_fixtures.h"

using namespace vc;
using namespace vc::test;

namespace {
// Card 1 holds 40 layers + embeddings + final norm = 70,553,714,688 B of weights and, per token
// of one sequence, 40 layers x 8 kv heads x 256 values x 2 B = 163,840 B of cache. It fits while
// base + round(15% of base) <= 141e9, base = 70,553,714,688 + 163,840 x tokens.
constexpr uint64_t kCard1Weights = 70'553'714'688;
}  // namespace

TEST(PlanSolvers, LargestContextOnTwoH200) {
  const Model m = llama_70b();
  const Estimate e = estimate(m, Scenario{});
  const Footprint f = make_footprint(m, e);
  const Box box = box_of("H200x2");
  EXPECT_EQ(split(SplitInput{&f, &box, SplitMode::Layer, 8192, 1, 0}).devices[0].weights, kCard1Weights);
  // (141e9 / 1.15 - 70,553,714,688) / 163,840 = 317,718.6: 317,718 tokens give a total of
  // 140,999,926,579 B; 317,719 give 141,000,114,995 B.
  EXPECT_EQ(solve_max_context(f, box, PlanOptions{}, 1, uint64_t{1} << 22, false), 317'718u);
  EXPECT_TRUE(fits_on_devices(f, box, PlanOptions{}, 317'718, 1));
  EXPECT_FALSE(fits_on_devices(f, box, PlanOptions{}, 317'719, 1));
  // The model's own limit caps it: max_position_embeddings 131,072.
  EXPECT_EQ(solve_max_context(f, box, PlanOptions{}, 1, m.max_context, false), 131'072u);
}

TEST(PlanSolvers, MostSequencesAtEightK) {
  const Model m = llama_70b();
  const Estimate e = estimate(m, Scenario{});
  const Footprint f = make_footprint(m, e);
  // Per sequence at 8,192 tokens card 1 keeps 163,840 x 8,192 = 1,342,177,280 B:
  // (141e9 / 1.15 - 70,553,714,688) / 1,342,177,280 = 38.78 -> 38 sequences.
  EXPECT_EQ(solve_max_sequences(f, box_of("H200x2"), PlanOptions{}, 8192, false), 38u);
  // One H200 cannot hold 141 GB of weights plus 15%: nothing fits.
  EXPECT_EQ(solve_max_sequences(f, box_of("H200"), PlanOptions{}, 8192, false), 0u);
  EXPECT_EQ(solve_max_context(f, box_of("H200"), PlanOptions{}, 1, 131072, false), 0u);
}
