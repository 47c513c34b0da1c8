// The tokens audio adds to the context (src/estimate/audio_tokens.cpp), against the arithmetic of
// transformers' Qwen2-Audio, Qwen2.5-Omni and Qwen3-Omni processors worked by hand, and --audio-seconds end to
// end on Qwen2.5-Omni-7B's config; vLLM's profile of Qwen2-Audio's encoder on its dummy batch of
// 30 s clips (src/engines/vllm_audio_encoder.cpp), worked by hand from vLLM's qwen2_audio.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "engines/vllm_audio_encoder.h"
#include "engines/vllm_budget.h"
#include "engines/vllm_encoder.h"
#include "engines/vllm_tower_skip.h"
#include "estimate/estimate.h"
#include "estimate/audio_tokens.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_tower.h"
#include "engine_line.h"

using namespace vc;

namespace {

// Qwen/Qwen2-Audio-7B's published audio_config with its Qwen-7B text sizes (as in test_config_tower.cpp).
nlohmann::json qwen2_audio_7b() {
  return nlohmann::json::parse(R"({
    "architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio", "torch_dtype": "bfloat16",
    "text_config": {"model_type": "qwen2", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 156032, "max_position_embeddings": 8192,
      "tie_word_embeddings": false},
    "audio_config": {"model_type": "qwen2_audio_encoder", "d_model": 1280, "encoder_attention_heads": 20, "encoder_ffn_dim": 5120,
      "encoder_layers": 32, "num_mel_bins": 128, "max_source_positions": 1500}})");
}

}  // namespace

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
  const nlohmann::json config = qwen2_audio_7b();
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

TEST(AudioTokens, TheAudioEncodersGeometryIsRecordedForTheEngines) {
  const Model m = model_from_config(qwen2_audio_7b(), "config.json");
  const std::optional<AudioEncoderSpec>& a = m.audio_encoder;
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, "Qwen2-Audio");
  EXPECT_EQ(a->hidden, 1280u);
  EXPECT_EQ(a->ffn, 5120u);
  EXPECT_EQ(a->layers, 32u);
  EXPECT_EQ(a->mel_bins, 128u);
  EXPECT_EQ(a->positions, 1500u);
  EXPECT_EQ(a->text_hidden, 4096u);
  EXPECT_FALSE(model_from_config(nlohmann::json::parse(R"({"model_type": "qwen2", "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000})"), "config.json").audio_encoder);
}

TEST(AudioTokens, VllmProfilesQwen2AudiosEncoderOnADummyBatchOfClips) {
  const Model m = model_from_config(qwen2_audio_7b(), "config.json");
  // vLLM serve defaults on an 80 GB card: 8,192 batched tokens, 1,024 sequences; max_model_len 8,192.
  // A clip: chunk_length 30 s x 16,000 / hop 160 = 3,000 frames (2 x max_source_positions 1,500),
  // ((3,000 - 1) // 2 + 1 = 1,500 - 2) // 2 + 1 = 750 tokens.
  // Items: min(max(8,192, 750) / 750 = 10, 1,024 x min(999, 8,192 / 750 = 10)) = 10 clips.
  const VllmEncoderProfile p = vllm_encoder_profile(m, 8192, 1024, 8192, 1, 2);
  EXPECT_EQ(p.items, 10u);
  EXPECT_EQ(p.tokens_per_item, 750u);
  EXPECT_EQ(p.pixel_bytes, 7'680'000u);    // 10 x 128 mel bins x 3,000 frames x 2 B
  EXPECT_EQ(p.output_bytes, 61'440'000u);  // 10 x 750 tokens x 4,096 x 2 B
  // Encoding: 10 x 1,500 = 15,000 positions x (2 x 1,280 + 2 x 5,120 = 12,800) x 2 B = 384,000,000,
  // plus the features: 391,680,000.
  EXPECT_EQ(p.encoder_peak, 391'680'000u);
  EXPECT_TRUE(p.note.empty()) << p.note;
  EXPECT_NE(p.formula.find("10 dummy 30 s audio clips"), std::string::npos) << p.formula;
  EXPECT_NE(p.source.find("https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_audio.py"), std::string::npos);
  // TP 2 splits the MLP: 15,000 x (2,560 + 5,120) x 2 B = 230,400,000 + 7,680,000.
  EXPECT_EQ(vllm_encoder_profile(m, 8192, 1024, 8192, 2, 2).encoder_peak, 238'080'000u);
  // 2,048 batched tokens (cards under 70 GiB): 2,048 / 750 = 2 clips; 512 tokens: the budget is
  // max(512, 750) = 750, one clip; a 500-token context still takes max(1, 0) = 1 clip a prompt.
  EXPECT_EQ(vllm_encoder_profile(m, 2048, 256, 8192, 1, 2).items, 2u);
  EXPECT_EQ(vllm_encoder_profile(m, 512, 256, 8192, 1, 2).items, 1u);
  EXPECT_EQ(vllm_encoder_profile(m, 8192, 4, 500, 1, 2).items, 4u);  // min(10, 4 seqs x 1)

  // In the budget the held batch (69,120,000 B: 7,680,000 + 61,440,000) adds to the decoder's
  // peak, which is larger than the encoder pass's 391,680,000 here.
  VllmBudgetSettings s;
  s.card_bytes = 85'028'077'568;  // 79.19 GiB
  s.gpu_memory_utilization = 0.95;
  s.weight_bytes = m.native.bytes;
  Model no_audio = m;
  no_audio.audio_encoder.reset();  // as before: the encoder's batch left out
  const VllmBudget with = vllm_budget(m, s), without = vllm_budget(no_audio, s);
  EXPECT_EQ(with.activation - without.activation, 69'120'000u);
  EXPECT_EQ(without.available_kv - with.available_kv, 69'120'000u);
}

TEST(AudioTokens, TheVllmEngineLineNamesTheAudioBatch) {
  const nlohmann::json l = vc::testing::vllm_h100_line(qwen2_audio_7b(), "qwen2-audio-vllm", "activation");
  ASSERT_TRUE(l.is_object());
  const std::string formula = l["formula"];
  EXPECT_NE(formula.find("encoder batch held 69120000 B"), std::string::npos) << formula;
  EXPECT_NE(formula.find("10 dummy 30 s audio clips"), std::string::npos) << formula;
  EXPECT_NE(l["source"].get<std::string>().find("qwen2_audio.py"), std::string::npos);
}

TEST(AudioTokens, VllmBuildsNoAudioEncoderAtAudioZero) {
  // vLLM's Qwen2AudioForConditionalGeneration creates audio_tower and multi_modal_projector inside
  // _mark_tower_model(vllm_config, "audio") (qwen2_audio.py; vllm_tower_skip.h): at audio 0 neither is
  // built. Their params, worked by hand in test_config_tower.cpp Qwen2AudioEncoderIsCountedFromAudioConfig:
  // encoder 636,968,960 + projector 5,246,976 = 642,215,936, x 2 B (bf16) = 1,284,431,872 B.
  const Model m = model_from_config(qwen2_audio_7b(), "config.json");
  VllmMmLimits audio0, image0;
  read_vllm_mm_limits(audio0, "--limit-mm-per-prompt", R"({"audio": 0})");
  read_vllm_mm_limits(image0, "--limit-mm-per-prompt", R"({"image": 0})");
  const VllmTowerSkip off = vllm_tower_skip(m, resolve_weights(m, "native"), "auto", audio0);
  EXPECT_EQ(off.params, 642'215'936u);
  EXPECT_EQ(off.bytes, 1'284'431'872u);
  EXPECT_NE(off.source.find("qwen2_audio.py"), std::string::npos) << off.source;
  EXPECT_FALSE(vllm_tower_skip(m, resolve_weights(m, "native"), "auto", image0).skipped());  // not its modality

  // End to end: the rank's weights less those bytes, the KV cache that much (and the 69,120,000 B
  // encoder batch, VllmProfilesQwen2AudiosEncoderOnADummyBatchOfClips) larger.
  const std::string dir = ::testing::TempDir() + "qwen2-audio-skip";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << qwen2_audio_7b().dump();
  auto totals = [&](const std::string& limit) {
    const CliResult r = run_cli("estimate " + dir + "/config.json --gpu H100-sxm --json --engine-command \"vllm serve Qwen/Qwen2-Audio-7B-Instruct" + limit + "\"");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
    std::pair<uint64_t, uint64_t> weights_kv{0, 0};
    if (j.is_discarded()) return weights_kv;
    for (const auto& l : j["engine"]["devices"][0]["lines"]) {
      if (l["kind"] == "weights") weights_kv.first += l["bytes"].get<uint64_t>();
      if (l["kind"] == "kv") weights_kv.second += l["bytes"].get<uint64_t>();
    }
    return weights_kv;
  };
  const auto on = totals(""), muted = totals(" --limit-mm-per-prompt audio=0");
  EXPECT_EQ(on.first - muted.first, 1'284'431'872u);
  EXPECT_EQ(muted.second - on.second, 1'284'431'872u + 69'120'000u);
}
