// `stream`: the seeds' uniform arithmetic for a tier or build, the per-class reads for a native
// mixed-precision checkpoint.
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "estimate/streaming.h"

using namespace vc;

TEST(Streaming, BuildUsesTheSeedArithmetic) {
  // UD-IQ1_S is 594 GB over the derived 2,779,929,154,144 params = 1.709 bits; 104,186,931,808
  // active x 1.709 / 8 = 22.26 GB per token. (Seed 002 divided by the vendor's 2.8T and 104B: 22.06
  // GB; `--bpw 1.7` reproduces its printed figures, below and docs/accuracy.md.)
  StreamEstimate s = stream_for(*Catalogue::builtin().find("kimi-k3"), "UD-IQ1_S", std::nullopt, {5'000'000'000ull});
  EXPECT_NEAR(static_cast<double>(s.bytes_per_token), 22.257e9, 0.001e9);
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
  // An explicit --bpw always wins: 104,186,931,808 derived active x 1.7 / 8.
  EXPECT_EQ(stream_for(k3, "", 1700, {19'000'000'000ull}).bytes_per_token, 22'139'723'009u);
}

TEST(Streaming, UniformBf16CheckpointReadsAllButTheInputEmbedding) {
  // Llama 3.1 8B in BF16: every class is 2 B per parameter, so a token reads the bf16 bytes of
  // every class it touches: all but the input embedding (a lookup).
  const Model& m = *Catalogue::builtin().find("llama-3.1-8b");
  StreamEstimate s = stream_for(m, "", std::nullopt, {1'000'000'000ull});
  // 8,030,261,248 - 128,256 x 4,096 (input embedding) = 7,504,924,672 params x 2 B.
  EXPECT_EQ(s.bytes_per_token, 15'009'849'344u);
}
