// Speculative decoding in the speed model (src/speed/speculative.h): tokens per verification step,
// the head drafter's cost and the decode speed, all worked out by hand below; the inputs that ask
// for it (spec-* and a pasted llama.cpp command) and what they refuse.
#include <gtest/gtest.h>

#include "core/error.h"
#include "engines/engine_run.h"
#include "plan/box_inputs.h"
#include "speed/speculative.h"
#include "speed/speculative_verify.h"

namespace vc {
namespace {

TEST(Speculative, TokensPerStepFollowTheGeometricSeries) {
  // E = (1 - a^(k+1)) / (1 - a): a = 0.85, k = 1 -> 1 + 0.85 = 1.85 (DeepSeek-V3's MTP: ~1.8x).
  EXPECT_NEAR(tokens_per_step(0.85, 1), 1.85, 1e-12);
  // a = 0.5, k = 3 -> 1 + 0.5 + 0.25 + 0.125 = 1.875.
  EXPECT_NEAR(tokens_per_step(0.5, 3), 1.875, 1e-12);
  // Every drafted token accepted: k + 1.
  EXPECT_NEAR(tokens_per_step(1.0, 4), 5.0, 1e-12);
}

TEST(Speculative, DecodeIsTokensPerStepOverDraftsPlusOneVerify) {
  SpeedEstimate target;
  target.seconds = 0.020;  // 50 tok/s
  target.tok_s = 50;
  target.low = 40;
  target.high = 60;
  SpeculativeSettings s;
  s.method = "draft";
  s.draft_model = "qwen3-0.6b";
  s.tokens = 2;
  s.acceptance = 0.7;
  // E = 1 + 0.7 + 0.49 = 2.19 tokens per step; a step = 2 x 2 ms + 20 ms = 24 ms -> 91.25 tok/s.
  const SpeedEstimate e = speculative_decode(target, 0.002, s);
  EXPECT_NEAR(e.tok_s, 2.19 / 0.024, 1e-9);
  EXPECT_NEAR(e.tok_s, 91.25, 1e-9);
  // The range scales with the estimate: x 91.25 / 50.
  EXPECT_NEAR(e.low, 40 * 91.25 / 50, 1e-9);
  EXPECT_NEAR(e.high, 60 * 91.25 / 50, 1e-9);
  EXPECT_NE(e.formula.find("2.19"), std::string::npos);
  EXPECT_NE(e.assumption.find("0.70"), std::string::npos);
  EXPECT_NE(e.source.find("arxiv.org/abs/2211.17192"), std::string::npos);
}

TEST(Speculative, MtpDefaultsToDeepSeekV3sAcceptanceAndOthersNeedOne) {
  SpeculativeSettings mtp;
  mtp.method = "mtp";
  mtp.tokens = 1;
  const auto [a, source] = speculative_acceptance(mtp);
  EXPECT_DOUBLE_EQ(a, 0.85);  // DeepSeek-V3 Technical Report 5.4.3: 85-90%, the low end
  EXPECT_NE(source.find("2412.19437"), std::string::npos);
  SpeculativeSettings eagle = mtp;
  eagle.method = "eagle";
  EXPECT_THROW(speculative_acceptance(eagle), InputError);
  eagle.acceptance = 1.5;
  EXPECT_THROW(speculative_acceptance(eagle), InputError);
  SpeedEstimate target;
  target.seconds = 0.01;
  target.tok_s = 100;
  SpeculativeSettings none = mtp;
  none.tokens = 0;
  EXPECT_THROW(speculative_decode(target, 0.001, none), InputError);
  none.tokens = 1;
  none.method = "medusa";
  EXPECT_THROW(speculative_decode(target, 0.001, none), InputError);
}

TEST(Speculative, AHeadDrafterCostsOneLayerAndTheHead) {
  // 1,250 MB read per token over 4 layers with a 50 MB head: a layer is (1,250 - 50) / 4 = 300 MB,
  // so a drafted token costs (300 + 50) / 1,250 = 0.28 of the target's 10 ms step.
  TokenReads t;
  t.layers = 4;
  MemoryRead gpu;
  gpu.weights_read = 1'000'000'000;
  MemoryRead ram;
  ram.weights_read = 250'000'000;
  t.memories = {gpu, ram};
  SpeedEstimate target;
  target.seconds = 0.010;
  EXPECT_NEAR(head_draft_seconds(target, t, 50'000'000), 0.0028, 1e-12);
}

TEST(Speculative, AnMoeVerifyReadsTheUnionOfThePositionsExperts) {
  // 4 MoE layers of 8 experts (800 MB routed, k = 2): one token reads 200 MB of each. Three
  // positions pick on average 8 x (1 - (6/8)^3) = 4.625 distinct experts, 2.3125x one token's, so
  // each layer reads 1.3125 x 200 MB more: 1,050 MB over 1,250 MB read per token -> x 1.84.
  Footprint f;
  for (int i = 0; i < 4; ++i) {
    LayerFootprint l;
    l.routed = 800'000'000;
    l.experts = 8;
    l.experts_per_token = 2;
    f.layers.push_back(l);
  }
  TokenReads t;
  t.layers = 4;
  MemoryRead gpu;
  gpu.weights_read = 1'250'000'000;
  t.memories = {gpu};
  SpeedEstimate target;
  target.seconds = 0.010;
  target.tok_s = 100;
  const SpeedEstimate v = verify_step(target, f, t, 3);
  EXPECT_NEAR(v.seconds, 0.0184, 1e-12);
  EXPECT_DOUBLE_EQ(v.tok_s, 100);  // the plain step's, for the gain
  // One position reads one token's experts: no change; a dense model: none either.
  EXPECT_NEAR(verify_step(target, f, t, 1).seconds, 0.010, 1e-15);
  EXPECT_NEAR(verify_step(target, Footprint{}, t, 3).seconds, 0.010, 1e-15);
}

TEST(SpeculativeInputs, FlagsVllmConfigAndAPastedCommandAskForIt) {
  BoxInputs in;
  std::optional<EngineRun> none;
  EXPECT_FALSE(speculative_inputs(in, none));  // nothing asks: the plain speed
  in.spec_config = R"({"method":"deepseek_mtp","num_speculative_tokens":3})";
  auto s = speculative_inputs(in, none);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->method, "mtp");
  EXPECT_EQ(s->tokens, 3u);
  in.spec_acceptance = "0.6";
  EXPECT_DOUBLE_EQ(*speculative_inputs(in, none)->acceptance, 0.6);
  in = BoxInputs{};
  std::optional<EngineRun> cmd = parse_engine_command("llama-server -m glm.gguf --spec-type draft-mtp --spec-draft-n-max 2");
  s = speculative_inputs(in, cmd);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->method, "mtp");
  EXPECT_EQ(s->tokens, 2u);
  // A pasted -md names a file, not a catalogue model: a note, the plain speed.
  cmd = parse_engine_command("llama-server -m big.gguf -md small.gguf --draft-max 8");
  EXPECT_FALSE(speculative_inputs(in, cmd));
  EXPECT_NE(cmd->notes.back().find("--spec-draft"), std::string::npos);
}

TEST(SpeculativeInputs, WhatIsMissingOrWrongIsNamed) {
  std::optional<EngineRun> none;
  BoxInputs in;
  in.spec_method = "draft";
  in.spec_draft = "qwen3-0.6b";
  EXPECT_THROW(speculative_inputs(in, none), InputError);  // no --spec-tokens
  in.spec_tokens = "4";
  EXPECT_THROW(speculative_inputs(in, none), InputError);  // no --spec-acceptance
  in.spec_acceptance = "0.7";
  EXPECT_TRUE(speculative_inputs(in, none));
  in.spec_method = "lookahead";
  EXPECT_THROW(speculative_inputs(in, none), InputError);
  in = BoxInputs{};
  in.spec_tokens = "2";
  EXPECT_THROW(speculative_inputs(in, none), InputError);  // tokens without a method
  in = BoxInputs{};
  in.spec_config = "{method: mtp}";
  EXPECT_THROW(speculative_inputs(in, none), InputError);
  in.spec_config = R"({"method":"ngram","num_speculative_tokens":3})";
  EXPECT_THROW(speculative_inputs(in, none), InputError);
  in = BoxInputs{};
  in.spec_method = "mtp";
  in.spec_acceptance = "0";
  EXPECT_THROW(speculative_inputs(in, none), InputError);
}

}  // namespace
}  // namespace vc
