// Hand-worked splits on a dense GQA model (Llama-3.1-70B's published geometry, built in
// plan_fixtures.h) and an MoE one (kimi-k3 from the catalogue). Every figure below is worked out
// in the comments from the config values; the code under test never sees these numbers.
#include <gtest/gtest.h>

#include "estimate/estimate.h"
#include "plan/footprint.h"
#include "plan/split.h"
#include "plan_fixtures.h"

using namespace vc;
using namespace vc::test;

namespace {

struct Fixture {
  Model model;
  Estimate e;
  Footprint f;
  Fixture(Model m, Scenario s) : model(std::move(m)), e(estimate(model, s)), f(make_footprint(model, e)) {}
};

SplitResult run(const Fixture& fx, const Box& box, SplitMode mode, uint64_t context, uint64_t seqs) {
  SplitInput in;
  in.footprint = &fx.f;
  in.box = &box;
  in.mode = mode;
  in.context = context;
  in.sequences = seqs;
  return split(in);
}

// Llama-3.1-70B in BF16 (2 bytes per parameter), 8K context, one sequence, f16 cache:
constexpr uint64_t kLayerWeights = 2 * (kL70AttentionPerLayer + kL70MlpPerLayer + kL70NormsPerLayer);  // 1,711,308,800
constexpr uint64_t kEmbeddingBytes = 2 * kL70Embedding;                                                // 2,101,346,304
constexpr uint64_t kLayerCache8K = 8ull * (128 + 128) * 2 * 8192;  // 8 kv heads x (K+V) x 2 B x 8,192 = 33,554,432

}  // namespace

TEST(PlanSplit, FootprintAddsUpToTheEstimate) {
  Scenario s;
  s.context = 1048576;
  Fixture k3(kimi_k3(), s);
  uint64_t cache = 0, state = 0, weights = k3.f.embedding + k3.f.output_head + k3.f.first_extras + k3.f.last_extras;
  for (const auto& l : k3.f.layers) {
    cache += l.cache(s.context, 1);
    state += l.state(1);
    weights += l.weights();
  }
  EXPECT_EQ(cache, k3.e.cache_bytes);    // 28,991,029,248 (seed-arithmetic.md)
  EXPECT_EQ(state, k3.e.state_bytes);    // 464,633,856 (llama.cpp f32 layout)
  EXPECT_EQ(weights, k3.e.weights.bytes);
  EXPECT_EQ(k3.f.moe_layers(), 92u);     // first_k_dense_replace = 1 of 93 layers
}

TEST(PlanSplit, LlamaLayerSplitOnTwoCardsIsFortyLayersEach) {
  Fixture l70(llama_70b(), Scenario{});
  EXPECT_EQ(l70.e.weights.bytes, 141'107'412'992u);  // 2 x 70,553,706,496
  const SplitResult r = run(l70, box_of("H200x2"), SplitMode::Layer, 8192, 1);
  ASSERT_EQ(r.devices.size(), 2u);
  // Per layer 1,711,308,800 B weights + 33,554,432 B cache; the halfway mark falls between
  // layer 40 and 41 (embeddings and head weigh the same on either end), so 40 + 40.
  EXPECT_EQ(r.devices[0].holds, "embeddings, layers 1-40");
  EXPECT_EQ(r.devices[1].holds, "layers 41-80, output head");
  // Device 1: 40 layers + embeddings + the final norm (8,192 params x 2 B) = 70,553,714,688 B.
  EXPECT_EQ(r.devices[0].weights, 40 * kLayerWeights + kEmbeddingBytes + 2 * kL70FinalNorm);
  EXPECT_EQ(r.devices[0].weights, 70'553'714'688u);
  EXPECT_EQ(r.devices[1].weights, 70'553'698'304u);  // 40 layers + output head
  EXPECT_EQ(r.devices[0].cache, 40 * kLayerCache8K);  // 1,342,177,280
  // Overhead 15% of (70,553,714,688 + 1,342,177,280) = 10,784,383,795.2 -> 10,784,383,795.
  EXPECT_EQ(r.devices[0].overhead, 10'784'383'795u);
  EXPECT_EQ(r.devices[0].total, 82'680'275'763u);
  EXPECT_TRUE(r.all_fit);  // 82.7 GB of 141 GB
}

TEST(PlanSplit, LlamaPipelineOnFourCardsPutsFewerLayersBesideTheEmbeddings) {
  Fixture l70(llama_70b(), Scenario{});
  const SplitResult r = run(l70, box_of("A100-80GBx4"), SplitMode::Pipeline, 8192, 1);
  ASSERT_EQ(r.devices.size(), 4u);
  EXPECT_EQ(r.pp, 4u);
  // Quarter of the total = 20 layers + (2 x 2.1 GB) / 4; the first card carries 2.1 GB of
  // embeddings, so layer 20's midpoint (2.1 + 19.5 x 1.745 = 36.1 GB) passes the 35.96 GB mark: 19 layers.
  EXPECT_EQ(r.devices[0].holds, "embeddings, layers 1-19");
  EXPECT_EQ(r.devices[3].holds.substr(r.devices[3].holds.size() - 11), "output head");
}

TEST(PlanSplit, LlamaTensorParallelEightDividesKvHeads) {
  Fixture l70(llama_70b(), Scenario{});
  const SplitResult r = run(l70, box_of("H100-SXMx8"), SplitMode::Tensor, 8192, 1);
  EXPECT_EQ(r.tp, 8u);
  EXPECT_FALSE(r.kv_replicated);
  EXPECT_EQ(r.kv_heads_per_rank, 1u);  // 8 kv heads / TP 8
  for (const auto& d : r.devices) {
    EXPECT_EQ(d.weights, 17'638'426'624u);    // 141,107,412,992 / 8
    EXPECT_EQ(d.cache, 80 * kLayerCache8K / 8);  // 335,544,320
  }
}

TEST(PlanSplit, LlamaTensorParallelSixteenReplicatesKvHeads) {
  Fixture l70(llama_70b(), Scenario{});
  const SplitResult r = run(l70, box_of("H100-SXMx16"), SplitMode::Tensor, 8192, 1);
  EXPECT_EQ(r.tp, 16u);
  EXPECT_TRUE(r.kv_replicated);
  EXPECT_EQ(r.kv_heads_per_rank, 1u);  // 8 kv heads < 16 ranks: each rank keeps one
  uint64_t cache_sum = 0;
  for (const auto& d : r.devices) {
    EXPECT_EQ(d.weights, 8'819'213'312u);        // 141,107,412,992 / 16
    EXPECT_EQ(d.cache, 80 * kLayerCache8K / 8);  // one of 8 heads: still 335,544,320, not half of it
    cache_sum += d.cache;
  }
  EXPECT_EQ(cache_sum, 2 * 80 * kLayerCache8K);  // twice the model's cache across the group
}

TEST(PlanSplit, KimiExpertParallelDividesExpertsAndSequences) {
  Fixture k3(kimi_k3(), Scenario{});
  const SplitResult r = run(k3, box_of("B200x8"), SplitMode::Expert, 8192, 8);
  EXPECT_EQ(r.ep, 8u);
  EXPECT_EQ(r.dp, 8u);
  // 896 experts / 8 ranks = 112 per rank per layer: each rank holds 1/8 of every MoE layer's
  // routed bytes, and all of everything else (data-parallel attention).
  uint64_t expected = k3.f.embedding + k3.f.first_extras + k3.f.output_head + k3.f.last_extras;
  for (const auto& l : k3.f.layers) expected += l.attention + l.dense + l.shared + l.other + (l.routed + 7) / 8;
  for (const auto& d : r.devices) {
    EXPECT_EQ(d.weights, expected);
    // 8 sequences over 8 ranks: one each, 24 x 27,648 B/token... = 27,648 x 8,192 = 226,492,416 B.
    EXPECT_EQ(d.cache, 226'492'416u);
  }
}

TEST(PlanSplit, KimiTensorExpertOnSixteen) {
  Fixture k3(kimi_k3(), Scenario{});
  const SplitResult r = run(k3, box_of("B200x16"), SplitMode::TensorExpert, 8192, 1);
  EXPECT_EQ(r.tp, 16u);
  EXPECT_EQ(r.ep, 16u);
  EXPECT_TRUE(r.latent_replicated);
  // 896 / 16 = 56 experts per rank; the latent cache whole on each: 27,648 x 8,192 = 226,492,416;
  // KDA state divided: 464,633,856 / 16 per layer group, ceil per layer.
  for (const auto& d : r.devices) {
    EXPECT_EQ(d.cache, 226'492'416u);
    EXPECT_NEAR(static_cast<double>(d.state), 464'633'856.0 / 16, 69.0);
  }
}

// A mixed-precision native checkpoint is placed and read by its bytes per class, not by one
// average bits-per-parameter (reference/configs/README.md, Kimi-K3 geometry).
TEST(PlanSplit, NativeKimiK3IsSpreadByBytesPerClass) {
  const vc::Model& k3 = *vc::Catalogue::builtin().find("kimi-k3");
  vc::Scenario s;
  s.context = 1048576;
  const vc::Footprint f = vc::make_footprint(k3, vc::estimate(k3, s));
  // Per token: the always-active classes in bf16 (104.19B active - 48.62B routed active = 55.57B
  // params incl. the output head, x 2 B = 111.1 GB) plus 16 of 896 routed experts in MXFP4
  // (2,722,740,830,208 x 16/896 x 4.25/8 = 25.83 GB): about 136.96 GB, against 58.0 GB if the
  // 1,560.94 GB were spread at 4.46 bits over the 104B active parameters.
  EXPECT_NEAR(static_cast<double>(f.active_bytes), 136.96e9, 136.96e9 * 0.005);
  EXPECT_NEAR(static_cast<double>(f.routed_active_bytes), 25.83e9, 25.83e9 * 0.005);
  // Layer 0 is the dense bf16 MLP (33,792 wide): 3 x 7,168 x 33,792 x 2 B = 1.45 GB.
  EXPECT_NEAR(static_cast<double>(f.layers[0].dense), 1.4533e9, 1.4533e9 * 0.005);
}
