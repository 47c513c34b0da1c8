// Every figure of the two seed pages (shared/seeds/), computed by the library and compared at the
// precision each page prints. Derivations: shared/reference/seed-arithmetic.md.
//   Seed 002 ("How Much VRAM Does Kimi K3.1 Pro Need?"): K3's verified numbers. Latent cache 576
//     values per layer (what engines store), 16-bit; recurrent state in f32 (0.465 GB); overhead 15%.
//   Seed 000 ("Kimi K3.1 Pro VRAM requirements at Q4 and 1M context"): a latent budget of 1,024
//     values, state with a 16-bit conv (0.449 GB), overhead unstated: 10% reproduces it within 0.5%.
#include <gtest/gtest.h>

#include <cmath>

#include "catalogue/catalogue.h"
#include "estimate/estimate.h"
#include "estimate/ladder.h"
#include "estimate/streaming.h"
#include "estimate/sweep.h"

using namespace vc;

namespace {

constexpr uint64_t K8 = 8192;
constexpr uint64_t K32 = 32768;
constexpr uint64_t M1 = 1048576;

const Model& model(const char* id) {
  const Model* m = Catalogue::builtin().find(id);
  if (!m) throw std::runtime_error(std::string("catalogue lacks ") + id);
  return *m;
}

// Decimal GB rounded to `decimals` places, as the pages print them.
double gb(uint64_t bytes, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(static_cast<double>(bytes) / 1e9 * scale) / scale;
}

Scenario seed002(uint64_t context) {
  Scenario s;
  s.context = context;
  return s;  // defaults: native weights, f16 cache, f32 state, 15% overhead
}

Scenario seed000(uint64_t context, uint64_t seqs = 1) {
  Scenario s;
  s.context = context;
  s.sequences = seqs;
  s.latent_values = 1024;
  s.state_layout = StateLayout::Mixed;
  s.overhead_bp = 1000;
  return s;
}

}  // namespace

// ---- Seed 002: the at-a-glance table ----

TEST(Seed002, WeightsAreTheMeasuredNativeFiles) {
  Estimate e = estimate(model("kimi-k3"), seed002(K8));
  EXPECT_EQ(gb(e.weights.bytes, 0), 1561);  // "Weights, native MXFP4 (measured for K3) | 1,561 GB"
  EXPECT_EQ(e.weights.tier, "native MXFP4");
}

TEST(Seed002, CacheIncludingStateAt8KAnd1M) {
  Estimate at8k = estimate(model("kimi-k3"), seed002(K8));
  Estimate at1m = estimate(model("kimi-k3"), seed002(M1));
  // 24 x 576 x 2 B = 27,648 B/token; state 69 x (1,572,864 + 110,592) x 4 B = 464,633,856 B.
  EXPECT_EQ(at8k.cache_bytes, 27648ull * K8);
  EXPECT_EQ(at8k.state_bytes, 464633856ull);
  EXPECT_EQ(gb(at8k.context_bytes(), 1), 0.7);   // "KV cache | 0.7 GB"
  EXPECT_EQ(gb(at1m.context_bytes(), 1), 29.5);  // "| 29.5 GB"
  EXPECT_EQ(at1m.state_bytes, at8k.state_bytes) << "state does not grow with context";
}

TEST(Seed002, OverheadAndResidentTotals) {
  Estimate at8k = estimate(model("kimi-k3"), seed002(K8));
  Estimate at1m = estimate(model("kimi-k3"), seed002(M1));
  EXPECT_EQ(gb(at8k.overhead_bytes, 0), 234);   // "~234 GB"
  EXPECT_EQ(gb(at1m.overhead_bytes, 0), 239);   // "~239 GB"
  EXPECT_EQ(gb(at8k.total_bytes, 0), 1796);     // "~1,796 GB"
  EXPECT_EQ(gb(at1m.total_bytes, 0), 1829);     // "~1,829 GB"
  // "a million-token context that costs under 2% of the bill"
  EXPECT_LT(at1m.verdict.context_share_bp, 200u);
}

TEST(Seed002, K31ProWithEngineLatentWidthMatchesK3) {
  // The page's table is K3's numbers, "which K3.1 Pro is expected to inherit": K3.1 Pro with the
  // 576 values engines store for K3 gives the same totals.
  Scenario s = seed002(M1);
  s.latent_values = 576;
  EXPECT_EQ(estimate(model("kimi-k3.1-pro"), s).total_bytes, estimate(model("kimi-k3"), seed002(M1)).total_bytes);
}

TEST(Seed002, HigherTiersClampToTheNativeSize) {
  // "Q4_K_M's 4.85 and even Q8_0's 8.5 clamp down to the native figure"
  for (const char* tier : {"Q4_K_M", "Q8_0"}) {
    Scenario s = seed002(K8);
    s.quant = tier;
    Estimate e = estimate(model("kimi-k3"), s);
    EXPECT_TRUE(e.weights.clamped) << tier;
    EXPECT_EQ(gb(e.weights.bytes, 0), 1561) << tier;
    EXPECT_EQ(gb(e.total_bytes, 0), 1796) << "the residency total stays near 1,796 GB whichever tier";
  }
  // The arithmetic before the clamp runs on the derived 2.7799T (test_kimi_geometry: 2.7795T text
  // + 0.447B vision): x 4.85 / 8 = 1,685.3 GB; x 8.5 / 8 = 2,953.7 GB. The page's 2.8T gave 1,697.5
  // and 2,975 GB (docs/accuracy.md); both clamp to the same native 1,561 GB.
  EXPECT_NEAR(static_cast<double>(resolve_weights(model("kimi-k3"), "Q4_K_M").unclamped) / 1e9, 1685.3, 0.5);
  EXPECT_NEAR(static_cast<double>(resolve_weights(model("kimi-k3"), "Q8_0").unclamped) / 1e9, 2953.7, 0.5);
}

TEST(Seed002, Fp8AndBf16DownloadArithmetic) {
  // "FP8 arithmetic says about 2.8 TB, BF16 about 5.6 TB" (straight parameter arithmetic).
  EXPECT_EQ(std::round(static_cast<double>(resolve_weights(model("kimi-k3.1-pro"), "FP8").unclamped) / 1e11) / 10, 2.8);
  // 2.78T x 16 / 8 = 5.56 TB, printed to one decimal as the page does.
  EXPECT_EQ(std::round(static_cast<double>(resolve_weights(model("kimi-k3.1-pro"), "BF16").unclamped) / 1e11) / 10, 5.6);
}

TEST(Seed002, EffectiveBitsPerParameter) {
  // "1.561 TB ... 4.46 bits per parameter": the page divided by the vendor's 2.8T (1,560.94e9 x 8 /
  // 2.8e12); over the derived 2.7799T the same files are 4.49 bits. Both are printed.
  EXPECT_EQ(std::round(resolve_weights(model("kimi-k3"), "").effective_bits * 100) / 100, 4.49);
  const Estimate e = estimate(model("kimi-k3"), seed002(K8));
  EXPECT_NE(e.lines[0].formula.find("4.49 effective bits per parameter over 2.78T params; 4.46 over the vendor's 2.8T"), std::string::npos)
      << e.lines[0].formula;
}

TEST(Seed002, ScaleLines) {
  Estimate at8k = estimate(model("kimi-k3"), seed002(K8));
  Estimate at1m = estimate(model("kimi-k3"), seed002(M1));
  // "Thirteen H200s at 141 GB each is 1,833 GB, and that pool only holds the model"
  EXPECT_EQ(at1m.verdict.cards[2].card_bytes, 141'000'000'000u);
  EXPECT_EQ(at1m.verdict.cards[2].cards, 13u);
  EXPECT_GE(13 * 141'000'000'000ull, at1m.total_bytes);
  EXPECT_LT(13 * 141'000'000'000ull - at1m.total_bytes, 5'000'000'000ull) << "only just";
  // "On 24 GB consumer cards you are counting to 75"
  EXPECT_EQ(at8k.verdict.cards[0].card_bytes, 24'000'000'000u);
  EXPECT_EQ(at8k.verdict.cards[0].cards, 75u);
}

TEST(Seed002, BuildLadderWithOverhead) {
  auto rows = build_ladder(model("kimi-k3"), 1500);
  auto find = [&](const char* name) {
    for (const auto& r : rows) if (r.build->name == name) return r;
    throw std::runtime_error(name);
  };
  // "About 683 GB pooled with overhead; 6 x 128 GB unified, or 4 B200s (768 GB)"
  EXPECT_EQ(gb(find("UD-IQ1_S").with_overhead, 0), 683);
  EXPECT_EQ(find("UD-IQ1_S").options[0].cards, 6u);
  EXPECT_EQ(find("UD-IQ1_S").options[1].cards, 4u);
  // "768 GB stops being enough once the ~15% overhead is counted (about 818 GB)"
  EXPECT_EQ(gb(find("UD-IQ2_XXS").with_overhead, 0), 818);
  EXPECT_GT(find("UD-IQ2_XXS").with_overhead, 768'000'000'000u);
  // "About 990 GB with overhead; 8 x 128 GB (1,024 GB)"
  EXPECT_EQ(gb(find("UD-Q2_K_XL").with_overhead, 0), 990);
  EXPECT_EQ(find("UD-Q2_K_XL").options[0].cards, 8u);
  // "About 1,735 GB with overhead; 14 x 128 GB (1,792 GB), or 13 x H200 (1,833 GB)"
  EXPECT_EQ(gb(find("UD-Q4_K_XL").with_overhead, 0), 1735);
  EXPECT_EQ(find("UD-Q4_K_XL").options[0].cards, 14u);
  EXPECT_EQ(find("UD-Q4_K_XL").options[2].cards, 13u);
  // "UD-Q1_0 at 466 GB, UD-TQ1_0 at 509 GB and UD-TQ2_0 at 552 GB"
  EXPECT_EQ(gb(find("UD-Q1_0").build->bytes, 0), 466);
  EXPECT_EQ(gb(find("UD-TQ1_0").build->bytes, 0), 509);
  EXPECT_EQ(gb(find("UD-TQ2_0").build->bytes, 0), 552);
}

TEST(Seed002, BuildAsTierUsesItsMeasuredBytes) {
  Scenario s = seed002(K8);
  s.quant = "UD-IQ1_S";
  Estimate e = estimate(model("kimi-k3"), s);
  EXPECT_EQ(e.weights.kind, TierKind::Build);
  EXPECT_EQ(e.weights.bytes, 594'000'000'000u);  // "UD-IQ1_S | 594 GB"
  // 594 GB over 2.78T params (2.8T on the page) is the "1-bit class average of about 1.7 bits per weight".
  EXPECT_EQ(std::round(e.weights.effective_bits * 10) / 10, 1.7);
}

TEST(Seed002, StreamingArithmetic) {
  // "104B active parameters at about 1.7 bits per weight means one token reads roughly 22 GB,
  //  about 0.23 tok/s from an SSD at 5 GB/s and about 0.86 tok/s from RAM at 19 GB/s"
  StreamEstimate s = stream_estimate(model("kimi-k3.1-pro"), 1700, {5'000'000'000ull, 19'000'000'000ull});
  // The derived ~104.2B active (test_kimi_geometry: 104.19B) x 1.7 / 8 = 22.1 GB; the page's 104B gave 22.10.
  EXPECT_NEAR(static_cast<double>(s.bytes_per_token) / 1e9, 22.1, 0.1);
  EXPECT_EQ(std::round(s.rates[0].tokens_per_s * 100) / 100, 0.23);
  EXPECT_EQ(std::round(s.rates[1].tokens_per_s * 100) / 100, 0.86);
}

// ---- Seed 000 ----

TEST(Seed000, RecurrentStateGrowsWithSequencesNotContext) {
  // "That state adds up to 0.45 GB at batch one": 69 x (221,184 + 6,291,456) B = 449,372,160 B.
  Estimate one = estimate(model("kimi-k3.1-pro"), seed000(K32, 1));
  Estimate two = estimate(model("kimi-k3.1-pro"), seed000(K32, 2));
  Estimate long_ctx = estimate(model("kimi-k3.1-pro"), seed000(M1, 1));
  EXPECT_EQ(one.state_bytes, 449'372'160u);
  EXPECT_EQ(gb(one.state_bytes, 2), 0.45);
  EXPECT_EQ(two.state_bytes, 2 * one.state_bytes);
  EXPECT_EQ(long_ctx.state_bytes, one.state_bytes);
}

TEST(Seed000, LatentCacheAtTheBudget) {
  // "At 1,048,576 tokens the cache is 51.5 GB. At 32K it shrinks to 1.61 GB"
  EXPECT_EQ(gb(estimate(model("kimi-k3.1-pro"), seed000(M1)).cache_bytes, 1), 51.5);
  EXPECT_EQ(gb(estimate(model("kimi-k3.1-pro"), seed000(K32)).cache_bytes, 2), 1.61);
  // 24 x 1,024 x 2 B x 1,048,576 exactly.
  EXPECT_EQ(estimate(model("kimi-k3.1-pro"), seed000(M1)).cache_bytes, 24ull * 1024 * 2 * M1);
}

TEST(Seed000, ConfigImpliesSevenHundredFourValues) {
  // "The config implies 704 values (512 latent, 64 rope and 128 index)"
  Scenario s = seed002(K32);
  Estimate e = estimate(model("kimi-k3.1-pro"), s);
  EXPECT_EQ(e.latent_values_implied, 704u);
  EXPECT_EQ(e.cache_bytes, 24ull * 704 * 2 * K32) << "default is what the config implies";
  EXPECT_EQ(estimate(model("kimi-k3"), s).latent_values_implied, 576u) << "K3 has no index keys";
}

TEST(Seed000, TotalAt32KAndTheSaving) {
  Estimate at32k = estimate(model("kimi-k3.1-pro"), seed000(K32));
  // "the total to 1715 GB": the page's overhead is unstated; 10% reproduces it within 0.5%.
  EXPECT_NEAR(static_cast<double>(at32k.total_bytes) / 1e9, 1715.0, 1715.0 * 0.005);
  // "a saving of 55 GB" (1M -> 32K), through sweep.
  auto rows = sweep(model("kimi-k3.1-pro"), seed000(M1), {M1, K32});
  EXPECT_EQ(gb(static_cast<uint64_t>(rows[1].saving_vs_previous), 0), 55);
}

TEST(Seed000, Verdict) {
  Estimate at1m = estimate(model("kimi-k3.1-pro"), seed000(M1));
  const Verdict& v = at1m.verdict;
  // "Eight cards of 80 GB give 640 GB in total, which is well short of this estimate."
  EXPECT_EQ(v.common_box_bytes, 640'000'000'000u);
  EXPECT_GT(v.common_box_shortfall, 0);
  // "The page's total takes 23 cards of 80 GB or 10 cards of 192 GB before sharding overhead."
  EXPECT_EQ(v.cards[1].cards, 23u);
  EXPECT_EQ(v.cards[3].cards, 10u);
  // "Two nodes of eight 192 GB cards offer 3072 GB, which clears the full context estimate"
  EXPECT_EQ(v.cards[3].nodes, 2u);
  EXPECT_GE(2 * 8 * 192'000'000'000ull, at1m.total_bytes);
  EXPECT_EQ(v.headline, "Treat this as a multi-node model.");
  EXPECT_NE(v.text.find("3,072 GB"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("busiest shard"), std::string::npos);
  // "Lowering context won't change that plan": the weights dominate.
  EXPECT_EQ(v.dominant, "weights");
  EXPECT_NE(v.text.find("lowering context won't change the plan"), std::string::npos) << v.text;
}

TEST(Seed000, CompareK3AndK31ProInTheSameScenario) {
  // Both models in the page's scenario. The page's "1781 GB" for K3 is not reproducible from its
  // stated inputs (seed-arithmetic.md): with the same budget both carry the same cache, and K3.1
  // Pro's index keys only matter when the config-implied width is used.
  Estimate k3 = estimate(model("kimi-k3"), seed000(K32));
  Estimate k31 = estimate(model("kimi-k3.1-pro"), seed000(K32));
  EXPECT_EQ(k3.total_bytes, k31.total_bytes);
  Estimate k3_implied = estimate(model("kimi-k3"), seed002(K32));
  Estimate k31_implied = estimate(model("kimi-k3.1-pro"), seed002(K32));
  EXPECT_EQ(k31_implied.cache_bytes - k3_implied.cache_bytes, 24ull * 128 * 2 * K32) << "index keys: 24 layers x 128 x 2 B per token";
}
