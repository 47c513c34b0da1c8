// The rule engine's tok/s carry a range too: its bound (bytes at peak bandwidth, FLOPs at peak
// compute) times the share of that bound published runs reach (data/speed_efficiency.json,
// "rule_ranges"; docs/performance.md, "The rule engine's range"). Bounds worked out by hand.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "plan/plan.h"
#include "plan_fixtures.h"
#include "speed/speed_bound.h"
#include "speed/speed_data.h"
#include "speed/speed_validate.h"

using namespace vc;
using namespace vc::test;

namespace {

MemoryRead memory(const char* backend, uint64_t bandwidth, uint64_t weights, uint64_t cache, double tflops, double flops) {
  MemoryRead m;
  m.name = backend;
  m.backend = backend;
  m.memory = std::string(backend) == "cpu" ? "ram" : "gddr";
  m.bandwidth = bandwidth;
  m.weights_read = weights;
  m.cache_read = cache;
  m.tflops = tflops;
  m.prefill_flops = flops;
  return m;
}

TEST(SpeedBound, DecodeIsEveryByteAtPeakBandwidth) {
  TokenReads t;
  // 0.9 GB + 0.1 GB at 1,000 GB/s = 1 ms; 1 GB at 100 GB/s = 10 ms: 1 / 11 ms = 90.909 tok/s.
  t.memories = {memory("cuda", 1'000'000'000'000, 900'000'000, 100'000'000, 100, 0), memory("cpu", 100'000'000'000, 1'000'000'000, 0, 0, 0)};
  EXPECT_NEAR(bandwidth_bound_tok_s(t), 1.0 / 0.011, 1e-9);
  t.memories[1].bandwidth = 0;  // a memory that is read, at no known rate: no bound
  EXPECT_EQ(bandwidth_bound_tok_s(t), 0);
}

TEST(SpeedBound, PrefillIsFlopsAtPeakOnTheGpusOnly) {
  TokenReads t;
  // 1 TFLOP at 100 TFLOPS = 10 ms, 1 TFLOP at 50 TFLOPS = 20 ms: 1 / 30 ms = 33.33 tok/s.
  t.memories = {memory("cuda", 1, 1, 0, 100, 1e12), memory("cuda", 1, 1, 0, 50, 1e12)};
  EXPECT_NEAR(compute_bound_tok_s(t), 1.0 / 0.03, 1e-9);
  t.offload = true;  // weights in RAM: the rule gives no prefill, so there is no bound to score
  EXPECT_EQ(compute_bound_tok_s(t), 0);
  t.offload = false;
  t.memories.push_back(memory("cpu", 1, 1, 0, 0, 1e9));  // the CPU computes part of the prompt
  EXPECT_EQ(compute_bound_tok_s(t), 0);
}

TEST(SpeedData, RuleRangesAreRequiredAndBounded) {
  const std::string head = R"({"source": "t", "decode": [{"engine": "*", "backend": "*", "memory": "*", "bandwidth_share": 0.5, "layer_us": 1, "moe_layer_us": 1, "source": "t"}],
    "prefill": [{"engine": "*", "backend": "*", "memory": "*", "compute_share": 0.5, "source": "t"}],
    "handoff_us": 1, "tp_allreduce_us": 1, "pcie_share": 1, "cpu_flops_per_ram_byte": 1, "second_socket_gain": 0,
    "ranges": {"decode_on_device": {"low": 1, "high": 1}, "decode_offload": {"low": 1, "high": 1}, "prefill": {"low": 1, "high": 1}})";
  const auto with = [&](const char* on_device) {
    return head + fmt::format(R"(, "rule_ranges": {{"decode_on_device": {}, "decode_offload": {{"low": 0.3, "high": 0.6}}, "prefill": {{"low": 0.1, "high": 0.7}}}}}})", on_device);
  };
  EXPECT_DOUBLE_EQ(SpeedData(with(R"({"low": 0.25, "high": 0.8})")).rule_decode_on_device.low, 0.25);
  EXPECT_THROW(SpeedData(head + "}"), std::exception);                          // no rule_ranges
  EXPECT_THROW(SpeedData(with(R"({"low": 0.9, "high": 0.8})")), std::exception);  // low above high
  EXPECT_THROW(SpeedData(with(R"({"low": 0, "high": 0.8})")), std::exception);    // a share of 0
  EXPECT_THROW(SpeedData(with(R"({"low": 0.5, "high": 3})")), std::exception);    // three times the bound
}

TEST(SpeedValidate, TheRuleIsScoredAtItsEfficiencyAndItsRange) {
  const SpeedData data(SpeedData::builtin());
  std::vector<SpeedRow> rows(3);
  for (auto& r : rows) r.group = "decode on device", r.part = "fitted";
  rows[0].bound_share = 0.6;   // at 60%: measured / estimate = 1.0, inside 0.8-1.25
  rows[1].bound_share = 0.3;   // 0.5, outside the band
  rows[2].bound_share = 0;     // no bound (a drafter, an unknown bandwidth): not scored
  const auto s = summarize_rule_speed(rows, 0.6, 0.4, data);
  EXPECT_EQ(s[0].group, "decode on device");
  EXPECT_EQ(s[0].cases, 2u);
  EXPECT_EQ(s[0].met, 1u);
  EXPECT_DOUBLE_EQ(s[0].median_ratio, (1.0 + 0.5) / 2);
  // Inside the printed range when the share lies between the range's low and high shares.
  const auto& r = data.rule_decode_on_device;
  EXPECT_EQ(s[0].inside_range, (r.low <= 0.6 && 0.6 <= r.high ? 1u : 0u) + (r.low <= 0.3 && 0.3 <= r.high ? 1u : 0u));
}

// Llama 3.1 70B BF16 on two H200s (4.8 TB/s each), layer split, 8K context, one sequence: the
// stages read in turn 2 x 69,503,033,344 active parameters = 139,006,066,688 B of weights and
// 80 layers x 2 x 8 heads x 128 x 2 B x 8,192 = 2,684,354,560 B of cache, so the bound is
// 4.8e12 / 141,690,421,248 = 33.877 tok/s.
TEST(RuleSpeedRange, DecodeOnTheGpusCarriesTheSharePublishedRunsReach) {
  const Model m = llama_70b();
  PlanOptions o;
  const Plan p = make_plan(m, Scenario{}, box_of("H200x2"), o);
  ASSERT_TRUE(p.fits_on_devices) << p.verdict;
  EXPECT_NEAR(p.decode.upper_tok_s, 4.8e12 / 141'690'421'248.0, 1e-6);
  EXPECT_NEAR(p.decode.expected_tok_s, 0.6 * p.decode.upper_tok_s, 1e-9);
  const auto& r = SpeedData::builtin().rule_decode_on_device;
  EXPECT_NEAR(p.decode.low_tok_s, r.low * p.decode.upper_tok_s, 1e-9);
  EXPECT_NEAR(p.decode.high_tok_s, r.high * p.decode.upper_tok_s, 1e-9);
  EXPECT_NE(p.decode.assumption.find("of the upper bound"), std::string::npos) << p.decode.assumption;
  // --efficiency moves the estimate, not what measured runs reach.
  o.efficiency_bp = 9000;
  const Plan fast = make_plan(m, Scenario{}, box_of("H200x2"), o);
  EXPECT_NEAR(fast.decode.expected_tok_s, 0.9 * p.decode.upper_tok_s, 1e-9);
  EXPECT_DOUBLE_EQ(fast.decode.low_tok_s, p.decode.low_tok_s);
  EXPECT_DOUBLE_EQ(fast.decode.high_tok_s, p.decode.high_tok_s);
  // Prefill: its compute bound times the prefill shares.
  const auto& pr = SpeedData::builtin().rule_prefill;
  ASSERT_GT(p.prefill.upper_tok_s, 0);
  EXPECT_NEAR(p.prefill.low_tok_s, pr.low * p.prefill.upper_tok_s, 1e-9);
  EXPECT_NEAR(p.prefill.high_tok_s, pr.high * p.prefill.upper_tok_s, 1e-9);
}

TEST(RuleSpeedRange, OffloadCarriesTheOffloadShareAndNoPrefill) {
  const Model m = llama_70b();
  Box box = box_of("RTX 4090");
  box.ram_bytes = 256'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  const Plan p = make_plan(m, Scenario{}, box, PlanOptions{});
  ASSERT_FALSE(p.fits_on_devices);
  ASSERT_TRUE(p.offload && p.offload->fits) << p.verdict;
  const auto& r = SpeedData::builtin().rule_decode_offload;
  EXPECT_NEAR(p.decode.low_tok_s, r.low * p.decode.upper_tok_s, 1e-9);
  EXPECT_NEAR(p.decode.high_tok_s, r.high * p.decode.upper_tok_s, 1e-9);
  EXPECT_EQ(p.prefill.expected_tok_s, 0);  // compute on the GPU says nothing of weights in RAM
  // The verdict quotes the estimate with its range.
  EXPECT_NE(p.verdict.find(fmt::format("With offload to RAM: about {:.2f} tok/s (estimate, likely {:.2f}-{:.2f})", p.decode.expected_tok_s, p.decode.low_tok_s,
                                       p.decode.high_tok_s)),
            std::string::npos)
      << p.verdict;
}

}  // namespace
