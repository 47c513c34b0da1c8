// Qwen2.5-Omni read from its config.json (src/sources/config/config_omni.cpp, the towers in
// config_tower.cpp): the thinker's text model, vision tower and audio encoder counted into the
// weights, the talker and token2wav counted beside them, each against figures worked by hand from
// the published config and the module layout of transformers' modeling_qwen2_5_omni.py.
#include <gtest/gtest.h>

#include "core/error.h"
#include "memory_source.h"
#include "safetensors_writer.h"
#include "engines/vllm_encoder.h"
#include "estimate/estimate.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_omni.h"
#include "sources/config/config_tower.h"
#include "sources/safetensors/safetensors_file.h"
#include "sources/safetensors/safetensors_model.h"

using namespace vc;

namespace {

bool has_warning(const Model& m, const std::string& start) {
  for (const auto& w : m.warnings) if (w.rfind(start, 0) == 0) return true;
  return false;
}

// Qwen/Qwen2.5-Omni-7B's config.json (https://huggingface.co/Qwen/Qwen2.5-Omni-7B/blob/main/config.json),
// the keys the count reads. The sizes are the ones transformers' Qwen2_5Omni*Config classes document
// for that checkpoint (configuration_qwen2_5_omni.py: text, audio, DiT, BigVGAN defaults), the vision
// tower Qwen2.5-VL-7B's (hidden 1280, MLP 3420) and the talker's (hidden 896, 24 layers, 12 heads of
// 128, 4 KV heads, codec vocab 8448, embedding 3584); token2wav's dit_config names its sizes both ways
// (dim / hidden_size). Their sum is checked against the published total below.
nlohmann::json qwen25_omni_7b() {
  return nlohmann::json::parse(R"({
    "architectures": ["Qwen2_5OmniModel"], "model_type": "qwen2_5_omni", "enable_audio_output": true, "torch_dtype": "bfloat16",
    "thinker_config": {
      "model_type": "qwen2_5_omni_thinker",
      "text_config": {"model_type": "qwen2_5_omni_text", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
        "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768,
        "tie_word_embeddings": false, "use_sliding_window": false, "sliding_window": 32768, "max_window_layers": 28,
        "rope_scaling": {"mrope_section": [16, 24, 24], "rope_type": "default", "type": "default"}, "rope_theta": 1000000.0},
      "vision_config": {"model_type": "qwen2_5_omni_vision_encoder", "depth": 32, "embed_dim": 1280, "hidden_size": 1280,
        "intermediate_size": 3420, "num_heads": 16, "in_channels": 3, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14,
        "spatial_merge_size": 2, "spatial_patch_size": 14, "temporal_patch_size": 2, "window_size": 112,
        "fullatt_block_indexes": [7, 15, 23, 31]},
      "audio_config": {"model_type": "qwen2_5_omni_audio_encoder", "d_model": 1280, "encoder_attention_heads": 20,
        "encoder_ffn_dim": 5120, "encoder_layers": 32, "num_mel_bins": 128, "max_source_positions": 1500, "n_window": 100,
        "output_dim": 3584}},
    "talker_config": {"model_type": "qwen2_5_omni_talker", "hidden_size": 896, "intermediate_size": 18944, "num_hidden_layers": 24,
      "num_attention_heads": 12, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 8448, "embedding_size": 3584},
    "token2wav_config": {"model_type": "qwen2_5_omni_token2wav",
      "dit_config": {"model_type": "qwen2_5_omni_dit", "dim": 1024, "hidden_size": 1024, "depth": 22, "num_hidden_layers": 22,
        "heads": 16, "num_attention_heads": 16, "head_dim": 64, "ff_mult": 2, "emb_dim": 512, "num_embeds": 8193, "mel_dim": 80,
        "enc_emb_dim": 192, "enc_dim": 128, "enc_channels": [256, 256, 256, 256, 768], "enc_kernel_sizes": [5, 3, 3, 3, 1],
        "enc_dilations": [1, 2, 3, 4, 1], "enc_attention_channels": 64, "enc_res2net_scale": 2, "enc_se_channels": 64},
      "bigvgan_config": {"model_type": "qwen2_5_omni_bigvgan", "mel_dim": 80, "upsample_initial_channel": 1536,
        "resblock_kernel_sizes": [3, 7, 11], "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
        "upsample_rates": [5, 3, 2, 2, 2, 2], "upsample_kernel_sizes": [11, 7, 4, 4, 4, 4]}}})");
}

// The thinker's text model by hand (Qwen2 layout, untied head): embed and lm_head 152,064 x 3584 =
// 544,997,376 each; a layer q 3584^2 + 3584 = 12,848,640, k and v 3584 x 512 + 512 = 1,835,520 each,
// o 12,845,056, gated MLP 3 x 3584 x 18,944 = 203,685,888, 2 RMSNorms 7,168: 233,057,792; 28 layers
// 6,525,618,176; final norm 3,584. 7,615,616,512 (Qwen2.5-7B's own count).
constexpr uint64_t kText = 7'615'616'512;
// The vision tower (Qwen2.5-VL-7B's): patch 3 x 2 x 14^2 x 1280 = 1,505,280; a block RMSNorms 2,560 +
// qkv 1280 x 3840 + 3840 = 4,919,040 + proj 1,639,680 + gated MLP 2 x (1280 x 3420 + 3420) + 3420 x 1280
// + 1280 = 13,140,920 = 19,702,200, 32 of them 630,470,400; merger RMSNorm 1,280 + 5120^2 + 5120 +
// 5120 x 3584 + 3584 = 44,574,464. 676,550,144.
constexpr uint64_t kVision = 676'550'144;
// The audio encoder (Qwen2_5OmniAudioEncoder): conv1 128 x 1280 x 3 + 1280 = 492,800, conv2 1280 x
// 1280 x 3 + 1280 = 4,916,480; positions none (an unsaved sinusoid buffer); 32 blocks x 19,676,160
// (LayerNorms 5,120, q/v/o 3 x (1280^2 + 1280), k 1280^2, fc1 1280 x 5120 + 5120, fc2 5120 x 1280 +
// 1280) = 629,637,120; ln_post 2,560: encoder 635,048,960. audio_bos_eos_token 2 x 3584 = 7,168 and
// proj 1280 x 3584 + 3584 = 4,591,104: 4,598,272. 639,647,232.
constexpr uint64_t kAudio = 639'647'232;
// The talker: thinker_to_talker_proj 3584 x 896 + 896 = 3,212,160; embed_tokens 8448 x 3584 =
// 30,277,632; a layer q 896 x 1536 + 1536 = 1,377,792, k and v 896 x 512 + 512 = 459,264 each, o 1536 x
// 896 = 1,376,256, gated MLP 3 x 896 x 18,944 = 50,921,472, norms 1,792: 54,595,840, 24 of them
// 1,310,300,160; final norm 896; codec_head 896 x 8448 = 7,569,408. 1,351,360,256.
constexpr uint64_t kTalker = 1'351'360'256;
// The DiT: time_embed 256 x 1024 + 1024 + 1024^2 + 1024 = 1,312,768; codec embedding 8194 x 512 =
// 4,195,328; input proj (80 + 128 + 192 + 512) x 1024 + 1024 = 934,912; ECAPA-TDNN 1,729,280 (TDNN 80 x
// 256 x 5 + 256 = 102,656; 3 SE-Res2Net blocks x 213,952 (1x1 convs 2 x 65,792, Res2Net 128 x 128 x 3
// + 128 = 49,280, squeeze-excitation 16,448 + 16,640); aggregation 768^2 + 768 = 590,592; pooling
// 2304 x 64 + 64 + 64 x 768 + 768 = 197,440; fc 1536 x 128 + 128 = 196,736); 22 blocks x 14,693,376
// (AdaLayerNormZero 1024 x 6144 + 6144 = 6,297,600, q/k/v/out 4 x 1,049,600, MLP 1024 x 2048 + 2048 +
// 2048 x 1024 + 1024 = 4,197,376) = 323,254,272; norm_out 1024 x 2048 + 2048 = 2,099,200; proj_out
// 1024 x 80 + 80 = 82,000. 333,607,760.
constexpr uint64_t kDit = 333'607'760;
// BigVGAN: conv_pre 80 x 1536 x 7 + 1536 = 861,696; ups 1536 x 768 x 11 + 768, 768 x 384 x 7 + 384,
// then kernel 4 halvings down to 24 channels = 15,433,704; per stage of c channels the three AMPBlocks
// hold 6 x (3 + 7 + 11) c^2 + 18c (convs) + 36c (SnakeBeta alpha, beta) = 126c^2 + 54c, over c = 768 ...
// 24 (sum c^2 786,240, sum c 1,512) = 99,147,888; activation_post 48 + conv_post 24 x 7 = 168.
// 115,443,504 (its 449 tensors all counted: 2 + 12 + 18 x 24 + 2 + 1).
constexpr uint64_t kBigvgan = 115'443'504;

}  // namespace

TEST(ConfigOmni, TheThinkerIsMappedWithItsVisionTowerAndAudioEncoder) {
  const Model m = model_from_config(qwen25_omni_7b(), "config.json");
  EXPECT_EQ(m.architecture, "qwen2_5_omni");
  EXPECT_EQ(m.layers.size(), 28u);
  EXPECT_EQ(m.hidden, 3584u);
  EXPECT_EQ(m.vocab, 152'064u);
  EXPECT_EQ(m.layers[0].attention.kv_heads, 4u);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_TRUE(tower_from_config(m));
  EXPECT_EQ(m.params.by_class.at(ParamClass::Vision), kVision + kAudio);
  EXPECT_EQ(m.params.derived_total, kText + kVision + kAudio);  // 8,931,813,888: what vLLM loads
  EXPECT_EQ(m.native.bytes, 2 * (kText + kVision + kAudio));   // bfloat16
  EXPECT_NE(m.provenance.at("params.audio").find("Qwen2.5-Omni audio"), std::string::npos);
  EXPECT_FALSE(has_warning(m, kTowerNotCountedWarning));
}

TEST(ConfigOmni, VllmProfilesTheVisionModalityNotTheAudioEncoder) {
  // vLLM profiles the modality with the most tokens per item (encoder_budget.py
  // get_modality_with_max_tokens): the dynamic-resolution vision tower's image or video, not the
  // audio encoder's 750-token clips; that tower's dummy batch is not modelled, and the note says why.
  const Model m = model_from_config(qwen25_omni_7b(), "config.json");
  const VllmEncoderProfile p = vllm_encoder_profile(m, 8192, 1024, 8192, 1, 2);
  EXPECT_EQ(p.items, 0u);
  EXPECT_EQ(p.held(), 0u);
  EXPECT_NE(p.note.find("get_modality_with_max_tokens"), std::string::npos) << p.note;
}

TEST(ConfigOmni, TheAudioEncoderIsCountedFromAudioConfig) {
  const nlohmann::json thinker = omni_thinker_view(qwen25_omni_7b());
  Model scratch;
  ConfigView view(thinker, "config.json", scratch);
  const std::optional<TowerSpec> t = config_audio_tower(view, 3584);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, "Qwen2.5-Omni audio");
  EXPECT_EQ(t->encoder_params, 492'800u + 4'916'480u + 629'637'120u + 2'560u);
  EXPECT_EQ(t->projector_params, 7'168u + 4'591'104u);
  EXPECT_EQ(t->params(), kAudio);
  // Its output width is audio_config.output_dim, not the caller's guess.
  EXPECT_EQ(config_audio_tower(view, 2048)->params(), kAudio);
}

TEST(ConfigOmni, TheTalkerAndToken2WavAreCountedBesideTheWeights) {
  const Model m = model_from_config(qwen25_omni_7b(), "config.json");
  const nlohmann::json thinker = omni_thinker_view(qwen25_omni_7b());
  Model scratch;
  ConfigView view(thinker, "config.json", scratch);
  const std::optional<TalkerSpec> talker = config_talker(view);
  ASSERT_TRUE(talker);
  EXPECT_EQ(talker->params, kTalker);
  const std::optional<Token2WavSpec> t2w = config_token2wav(view);
  ASSERT_TRUE(t2w);
  EXPECT_EQ(t2w->dit, kDit);
  EXPECT_EQ(t2w->bigvgan, kBigvgan);
  // The whole checkpoint: 8,931,813,888 + 1,351,360,256 + 449,051,264 = 10,732,225,408, the Hub page's
  // 10.7B (huggingface.co/Qwen/Qwen2.5-Omni-7B) to its rounding; a public sum over the loaded
  // Qwen2_5OmniForConditionalGeneration's parameters gives the same 10,732,225,408 to the unit.
  EXPECT_EQ(m.params.derived_total + talker->params + t2w->params(), 10'732'225'408u);
  EXPECT_TRUE(m.provenance.count("params.talker"));
  EXPECT_TRUE(m.provenance.count("params.token2wav"));
  ASSERT_EQ(m.left_out.size(), 1u);
  EXPECT_NE(m.left_out[0].find("the talker (1.35B params)"), std::string::npos) << m.left_out[0];
  EXPECT_NE(m.left_out[0].find("vLLM serves the thinker only"), std::string::npos);
  EXPECT_TRUE(has_warning(m, kOmniSpeechPartsWarning));
  // A token2wav_config without its sub-configs takes transformers' defaults, and says so.
  nlohmann::json bare = thinker;
  bare["token2wav_config"] = nlohmann::json::object();
  Model scratch2;
  ConfigView bare_view(bare, "config.json", scratch2);
  const std::optional<Token2WavSpec> d = config_token2wav(bare_view);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->params(), kDit + kBigvgan);
  EXPECT_NE(d->formula.find("transformers' defaults"), std::string::npos);
}

TEST(ConfigOmni, AFlatThinkerConfigReadsTheSameTextModel) {
  // Some versions keep the text sizes in thinker_config itself, without a text_config.
  nlohmann::json c = qwen25_omni_7b();
  nlohmann::json text = c["thinker_config"]["text_config"];
  c["thinker_config"].erase("text_config");
  text.erase("model_type");
  for (const auto& [k, v] : text.items()) c["thinker_config"][k] = v;
  const Model m = model_from_config(c, "config.json");
  EXPECT_EQ(m.params.derived_total, kText + kVision + kAudio);
}

TEST(ConfigOmni, TheEstimateCountsTheThinker) {
  const Model m = model_from_config(qwen25_omni_7b(), "config.json");
  const Estimate e = estimate(m, Scenario{});
  ASSERT_GE(e.lines.size(), 2u);
  EXPECT_EQ(e.lines[1].id, "weights.vision");
  EXPECT_EQ(e.lines[1].bytes, 2 * (kVision + kAudio));  // 2,632,394,752 B: vision and audio at bf16
  EXPECT_EQ(e.lines[1].label, "Vision tower, audio encoder and projectors (1.32B params)");
  EXPECT_EQ(e.lines[0].bytes + e.lines[1].bytes, e.weights.bytes);
  EXPECT_EQ(e.weights.bytes, 17'863'627'776u);  // 8,931,813,888 x 2 B
}

TEST(ConfigOmni, BadTalkerValuesAreRejected) {
  nlohmann::json c = qwen25_omni_7b();
  c["talker_config"]["hidden_size"] = -896;
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
  c["talker_config"]["hidden_size"] = "896";
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
  c = qwen25_omni_7b();
  c["talker_config"].erase("vocab_size");
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
  c = qwen25_omni_7b();
  c["token2wav_config"]["bigvgan_config"]["upsample_rates"] = nlohmann::json::array({5, 3});
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
}

TEST(ConfigOmni, AFolderCountsTheThinkersTensorsAndSumsTheSpeechOnesApart) {
  // A tiny Qwen2.5-Omni checkpoint: the thinker's tensors under "thinker.", the talker's and
  // token2wav's beside them (token2wav in F32, as the published files keep its vocoder).
  nlohmann::json config = qwen25_omni_7b();
  config["thinker_config"]["text_config"] = {{"model_type", "qwen2_5_omni_text"}, {"hidden_size", 64}, {"intermediate_size", 128},
                                             {"num_hidden_layers", 1}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                                             {"vocab_size", 256}, {"tie_word_embeddings", false}};
  config["thinker_config"].erase("vision_config");
  config["thinker_config"].erase("audio_config");
  vc::testing::SafetensorsWriter w;
  w.tensor("thinker.model.embed_tokens.weight", "BF16", {256, 64}, 32'768);
  w.tensor("thinker.lm_head.weight", "BF16", {256, 64}, 32'768);
  w.tensor("thinker.model.layers.0.self_attn.q_proj.weight", "BF16", {64, 64}, 8'192);
  w.tensor("talker.model.layers.0.mlp.up_proj.weight", "BF16", {128, 64}, 16'384);
  w.tensor("token2wav.code2wav_bigvgan_model.conv_post.weight", "F32", {1, 24, 7}, 672);
  vc::testing::MemorySource src(w.whole(), "model.safetensors");
  const std::vector<SafetensorsFile> files = {read_safetensors(src)};
  const Model m = model_from_checkpoint(config, "config.json", files);
  // The weights are the thinker's three tensors: 32,768 x 2 + 8,192 B; its head read as the head.
  EXPECT_EQ(m.native.bytes, 73'728u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::OutputHead), 16'384u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::Embedding), 16'384u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::Attention), 4'096u);
  // Apart: 128 x 64 + 24 x 7 = 8,360 params in 16,384 + 672 = 17,056 B.
  ASSERT_TRUE(m.provenance.count("params.speech_tensors"));
  EXPECT_NE(m.provenance.at("params.speech_tensors").find("2 speech-output tensors (talker., token2wav., code2wav.): 8,360 params, 17,056 B"), std::string::npos)
      << m.provenance.at("params.speech_tensors");
}
