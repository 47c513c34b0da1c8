// The verdict changes with the case: small models fit a consumer card, long contexts with many
// sequences are cache-bound, 2.8T models are multi-node. Figures worked by hand below.
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "estimate/estimate.h"

using namespace vc;

TEST(Verdict, Llama8BAt8KFitsOneConsumerCard) {
  Scenario s;  // 8K, one sequence, f16 cache, 15% overhead
  Estimate e = estimate(*Catalogue::builtin().find("llama-3.1-8b"), s);
  // Weights: 8,030,261,248 params x 2 B (BF16) = 16,060,522,496 B.
  EXPECT_EQ(e.weights.bytes, 16'060'522'496ull);
  // Cache: 32 layers x 8 kv heads x 256 values x 2 B = 131,072 B/token x 8,192 = 1,073,741,824 B.
  EXPECT_EQ(e.cache_bytes, 1'073'741'824ull);
  // Overhead 15% x 17,134,264,320 = 2,570,139,648; total 19,704,403,968.
  EXPECT_EQ(e.total_bytes, 19'704'403'968ull);
  EXPECT_EQ(e.verdict.headline, "This fits on one 24 GB consumer card.");
  EXPECT_EQ(e.verdict.cards[0].cards, 1u);
}

TEST(Verdict, LongContextManySequencesIsCacheBound) {
  Scenario s;
  s.context = 131072;
  s.sequences = 8;
  Estimate e = estimate(*Catalogue::builtin().find("llama-3.1-8b"), s);
  // Cache: 131,072 B/token x 131,072 tokens x 8 = 137,438,953,472 B, far above 16 GB of weights.
  EXPECT_EQ(e.cache_bytes, 137'438'953'472ull);
  EXPECT_EQ(e.verdict.dominant, "cache");
  EXPECT_NE(e.verdict.text.find("The cache dominates"), std::string::npos) << e.verdict.text;
}

TEST(Verdict, RecurrentStateScalesWithSequencesOnly) {
  Scenario a;
  a.sequences = 64;
  Scenario b = a;
  b.context = 4 * a.context;
  const Model& m = *Catalogue::builtin().find("kimi-k3");
  EXPECT_EQ(estimate(m, a).state_bytes, 64ull * 464'633'856);  // 64 sequences x 464.6 MB
  EXPECT_EQ(estimate(m, a).state_bytes, estimate(m, b).state_bytes);
}
