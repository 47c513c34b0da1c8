// The tokens audio adds to the context (src/estimate/audio_tokens.cpp), against the arithmetic of
// transformers' Qwen2-Audio, Qwen2.5-Omni and Qwen3-Omni processors worked by hand, and --audio-seconds end to
// end on Qwen2.5-Omni-7B's config.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "estimate/audio_tokens.h"

using namespace vc;

TEST(AudioTokens, TwentyFiveASecondInClipsOfThirtySeconds) {
  // processing_qwen2_audio.py / processing_qwen2_5_omni.py: input_length = (frames - 1) // 2 + 1,
  // tokens = (input_length - 2) // 2 + 1, frames = 100 a second (16 kHz, hop 160), at most 3,000.
  EXPECT_EQ(audio_clip_tokens(3000), 750u);  // (2,999 // 2 + 1 = 1,500 - 2) // 2 + 1 = 750
  EXPECT_EQ(audio_clip_tokens(100), 25u);    // (99 // 2 + 1 = 50 - 2) // 2 + 1 = 25
  EXPECT_EQ(audio_clip_tokens(1500), 375u);  // (1,499 // 2 + 1 = 750 - 2) // 2 + 1 = 375
  EXPECT_EQ(audio_clip_tokens(3), 1u);       // (2 // 2 + 1 = 2 - 2) // 2 + 1 = 1
  EXPECT_EQ(audio_clip_tokens(1), 0u);       // (0 // 2 + 1 = 1 - 2) // 2 + 1: Python's -1 // 2 + 1 = 0
  EXPECT_EQ(audio_clip_tokens(0), 0u);
  // 75 s: two full clips of 750 and one of 15 s (1,500 frames, 375 tokens): 1,875.
  const AudioTokens a = audio_tokens(75);
  EXPECT_EQ(a.clips, 3u);
  EXPECT_EQ(a.tokens, 1'875u);
  EXPECT_NE(a.formula.find("2 clips of 30 s x 750 tokens + one of 15 s"), std::string::npos) << a.formula;
  EXPECT_EQ(audio_tokens(30).tokens, 750u);
  EXPECT_EQ(audio_tokens(30).clips, 1u);
  EXPECT_EQ(audio_tokens(1).tokens, 25u);
}

TEST(AudioTokens, QwenThreeOmniTakesThirteenPerHundredFramesInOneClip) {
  // processing_qwen3_omni_moe.py _get_feat_extract_output_lengths: 13 per whole 100 frames, and for
  // r frames left over feat = (r - 1) // 2 + 1, then ((feat - 1) // 2 + 1 - 1) // 2 + 1.
  EXPECT_EQ(aut_audio_tokens_for_frames(100), 13u);
  EXPECT_EQ(aut_audio_tokens_for_frames(500), 65u);   // 5 x 13
  EXPECT_EQ(aut_audio_tokens_for_frames(150), 20u);   // 13 + (feat 49 // 2 + 1 = 25; (24 // 2) // 2 + 1 = 7)
  EXPECT_EQ(aut_audio_tokens_for_frames(99), 13u);    // feat 98 // 2 + 1 = 50; (49 // 2) // 2 + 1 = 13
  EXPECT_EQ(aut_audio_tokens_for_frames(1), 1u);      // feat 1; (0 // 2) // 2 + 1 = 1
  EXPECT_EQ(aut_audio_tokens_for_frames(0), 0u);      // Python's (0 - 1) // 2 + 1 = 0, then (-1 // 2) // 2 + 1 = 0
  // 2,400 s (40 minutes) stay one clip: 240,000 frames, 31,200 tokens.
  const AudioTokens a = aut_audio_tokens(2400);
  EXPECT_EQ(a.clips, 1u);
  EXPECT_EQ(a.tokens, 31'200u);
  EXPECT_EQ(aut_audio_tokens(0).tokens, 0u);
}

TEST(AudioTokens, AudioSecondsGrowTheContextOfAModelWithAnAudioEncoder) {
  // A Qwen2-Audio-7B config (the published audio_config and Qwen-7B text sizes, as in
  // test_config_tower.cpp): 75 s add 1,875 tokens to the 8K context, so the cache lines hold
  // 8,192 + 1,875 = 10,067 tokens.
  const std::string dir = ::testing::TempDir() + "qwen2-audio";
  std::filesystem::create_directories(dir);
  const nlohmann::json config = nlohmann::json::parse(R"({
    "architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio", "torch_dtype": "bfloat16",
    "text_config": {"model_type": "qwen2", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 156032, "max_position_embeddings": 8192,
      "tie_word_embeddings": false},
    "audio_config": {"model_type": "qwen2_audio_encoder", "d_model": 1280, "encoder_attention_heads": 20, "encoder_ffn_dim": 5120,
      "encoder_layers": 32, "num_mel_bins": 128, "max_source_positions": 1500}})");
  std::ofstream(dir + "/config.json") << config.dump();
  const CliResult r = run_cli("estimate " + dir + "/config.json --context 8192 --audio-seconds 75 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["components"]["audio_tokens"], 1875);
  EXPECT_EQ(j["inputs"]["context_tokens"], 10067);
  EXPECT_EQ(j["components"]["lines"][0]["id"], "audio.tokens");
  EXPECT_EQ(j["components"]["lines"][0]["bytes"], 0);
  // A text-only model has no audio encoder: refused, naming the flag; a bad count too.
  const CliResult text = run_cli("estimate qwen3-8b --audio-seconds 10");
  EXPECT_EQ(text.exit_code, 2) << text.output;
  EXPECT_NE(text.output.find("--audio-seconds"), std::string::npos) << text.output;
  EXPECT_EQ(run_cli("estimate " + dir + "/config.json --audio-seconds lots").exit_code, 2);
  EXPECT_EQ(run_cli("estimate " + dir + "/config.json --audio-seconds 36001").exit_code, 2);
}
