// `stream`: the seeds' uniform arithmetic for a tier or build, the per-class reads for a native
// mixed-precision checkpoint.
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "estimate/streaming.h"

using namespace vc;

TEST(Streaming, BuildUsesTheSeedArithmetic) {
  // Seed 002: UD-IQ1_S is 594 GB over 2.8T params = 1.697 bits; 104B active read 22.06 GB per token.
  StreamEstimate s = stream_for(*Catalogue::builtin().find("kimi-k3"), "UD-IQ1_S", std::nullopt, {5'000'000'000ull});
  EXPECT_NEAR(static_cast<double>(s.bytes_per_token), 22.06e9, 0.01e9);
  EXPECT_EQ(s.formula, "tok/s = bandwidth / (active params × bits / 8)");
}

TEST(Streaming, NativeMixedPrecisionReadsEachClassAtItsOwnBytes) {
  // K3 native: ~136.96 GB per token from the per-class table (test_plan_split.cpp), scaled to the
  // measured 1,560.94 GB checkpoint: ~137.05 GB, 4.4x more bytes per parameter than the 4.46-bit average.
  const Model& k3 = *Catalogue::builtin().find("kimi-k3");
  StreamEstimate s = stream_for(k3, "", std::nullopt, {19'000'000'000ull});
  EXPECT_NEAR(static_cast<double>(s.bytes_per_token), 137.05e9, 0.1e9);
  EXPECT_NE(s.formula.find("each always-active class"), std::string::npos);
  EXPECT_EQ(stream_for(k3, "native", std::nullopt, {19'000'000'000ull}).bytes_per_token, s.bytes_per_token);
  // An explicit --bpw always wins: 104B x 1.7 / 8.
  EXPECT_EQ(stream_for(k3, "", 1700, {19'000'000'000ull}).bytes_per_token, 22'100'000'000u);
}

TEST(Streaming, UniformBf16CheckpointReadsAllButTheInputEmbedding) {
  // Llama 3.1 8B in BF16: every class is 2 B per parameter, so a token reads the bf16 bytes of
  // every class it touches: all but the input embedding (a lookup).
  const Model& m = *Catalogue::builtin().find("llama-3.1-8b");
  StreamEstimate s = stream_for(m, "", std::nullopt, {1'000'000'000ull});
  // 8,030,261,248 - 128,256 x 4,096 (input embedding) = 7,504,924,672 params x 2 B.
  EXPECT_EQ(s.bytes_per_token, 15'009'849'344u);
}
