// The seed lines about hardware, through `plan` (shared/reference/seed-arithmetic.md):
// 13 x H200 = 1,833 GB only just holds kimi-k3's ~1,829 GB full-context total in aggregate;
// 8 x 80 GB is short; two nodes of eight 192 GB cards clear it.
#include <gtest/gtest.h>

#include "plan/plan.h"
#include "plan_fixtures.h"

using namespace vc;
using namespace vc::test;

namespace {
Scenario full_context() {
  Scenario s;  // seed 002: native weights, 1M context, one sequence, 15% overhead, f32 state
  s.context = 1048576;
  return s;
}
}  // namespace

TEST(PlanSeeds, ThirteenH200HoldKimiK3InAggregateButNotPerCard) {
  const Plan p = make_plan(kimi_k3(), full_context(), box_of("H200x13"), PlanOptions{});
  // seed 002: total 1,829.0 GB; 13 x 141 GB = 1,833 GB.
  EXPECT_NEAR(static_cast<double>(p.estimate.total_bytes) / 1e9, 1829.0, 0.05);
  EXPECT_EQ(p.aggregate_capacity, 1'833'000'000'000u);
  EXPECT_TRUE(p.aggregate_fits);
  // Per card it does not: 93 layers over 13 cards puts 8 layers on some card (13 x 7 = 91 < 93),
  // and 8 of K3's ~16.9 GB layers plus 15% is ~155 GB > 141 GB.
  ASSERT_TRUE(p.split);
  EXPECT_FALSE(p.fits_on_devices);
  const DeviceShare& b = p.split->devices[p.split->busiest];
  EXPECT_GT(b.total, 141'000'000'000u);
  EXPECT_FALSE(b.fits());
  EXPECT_NE(p.verdict.find("not per device"), std::string::npos) << p.verdict;
  // Every weight byte is placed exactly once.
  uint64_t weights = 0;
  for (const auto& d : p.split->devices) weights += d.weights;
  EXPECT_EQ(weights, 1'560'936'091'448u);
}

TEST(PlanSeeds, TensorParallelOnThirteenH200ReplicatesTheLatentCache) {
  PlanOptions o;
  o.split = SplitMode::Tensor;
  const Plan p = make_plan(kimi_k3(), full_context(), box_of("H200x13"), o);
  ASSERT_TRUE(p.split);
  EXPECT_TRUE(p.split->latent_replicated);
  // vLLM keeps the whole MLA cache on every TP rank: 24 layers x 576 values x 2 B x 1,048,576
  // tokens = 28,991,029,248 B on each of the 13 (seed-arithmetic.md: 27,648 B/token).
  for (const auto& d : p.split->devices) EXPECT_EQ(d.cache, 28'991'029'248u);
  EXPECT_FALSE(p.fits_on_devices);  // 1,561 / 13 = 120 GB of weights + 29 GB of cache, + 15% > 141
}

TEST(PlanSeeds, EightEightyGigabyteCardsAreShort) {
  const Plan p = make_plan(kimi_k3(), full_context(), box_of("H100-SXMx8"), PlanOptions{});
  EXPECT_EQ(p.aggregate_capacity, 640'000'000'000u);  // 8 x 80 GB
  EXPECT_FALSE(p.aggregate_fits);
  EXPECT_FALSE(p.fits_on_devices);
  // 1,828.95 - 640 = 1,188.95 GB short.
  EXPECT_NEAR(static_cast<double>(p.estimate.total_bytes - p.aggregate_capacity) / 1e9, 1188.95, 0.01);
}

TEST(PlanSeeds, TwoNodesOfEightB200ClearTheFullContextTotal) {
  for (SplitMode mode : {SplitMode::Layer, SplitMode::Tensor}) {
    PlanOptions o;
    o.split = mode;
    const Plan p = make_plan(kimi_k3(), full_context(), box_of("B200x8", 2), o);
    EXPECT_EQ(p.aggregate_capacity, 3'072'000'000'000u);  // seed 000: 2 x 8 x 192 = 3,072 GB
    EXPECT_TRUE(p.aggregate_fits);
    EXPECT_TRUE(p.fits_on_devices) << to_string(mode) << ": " << p.verdict;
    EXPECT_EQ(p.split->devices.size(), 16u);
  }
}
