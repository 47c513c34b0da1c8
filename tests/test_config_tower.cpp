// Vision towers counted from config.json's vision_config (src/sources/config/config_tower.cpp):
// the count per layout against figures worked out by hand from the published configs and the
// published totals, the estimate's own line for the tower, and vLLM's profile of the encoder
// (src/engines/vllm_encoder.cpp) against the arithmetic of vLLM's profile_run, worked by hand.
#include <gtest/gtest.h>

#include <filesystem>

#include "catalogue_entry.h"
#include "catalogue/catalogue.h"
#include "catalogue/catalogue_tower.h"
#include "core/error.h"
#include "engines/engine.h"
#include "engines/vllm_budget.h"
#include "engines/vllm_encoder.h"
#include "engines/vllm_tower_skip.h"
#include "estimate/estimate.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_tower.h"
#include "cli_runner.h"
#include "tiny_mmproj.h"
#include "test_data.h"
#include "published_configs.h"

using namespace vc;
using vc::test::entry;
using vc::testing::scratch_dir;
using vc::testing::qwen25_vl_7b;

namespace {


bool has_warning(const Model& m, const std::string& start) {
  for (const auto& w : m.warnings) if (w.rfind(start, 0) == 0) return true;
  return false;
}

}  // namespace

TEST(ConfigTower, CatalogueTowersMatchTheHandWorkedCounts) {
  // Hand-worked from each published vision_config (the figures the catalogue stated before the
  // reader counted them). A SigLIP-sized block (hidden 1152, MLP 4304, LayerNorms, biases) is
  // 4 x 1152 (norms) + 3 x 1152^2 + 3 x 1152 (qkv) + 1152^2 + 1152 (o) + 2 x 1152 x 4304 + 4304 + 1152
  // (MLP) = 15,239,504; 27 of them 411,466,608.
  struct Case {
    const char* id;
    uint64_t vision;
  };
  const Case cases[] = {
      // Gemma 3: 411,466,608 + patch 3 x 14^2 x 1152 + 1152 = 678,528 + 4,096 positions x 1152 = 4,718,592 + post norm 2,304
      // = 416,866,032; projector 1152 x text hidden + 1152: 27B 6,194,304, 12B (3,840) 4,424,832, 4B (2,560) 2,950,272.
      {"gemma-3-27b", 423'060'336},
      {"gemma-3-12b", 421'290'864},
      {"gemma-3-4b", 419'816'304},
      // Pixtral: 24 x (2 x 1024 + 4 x 1024^2 + 3 x 1024 x 4096) = 402,702,336 + patch 3 x 14^2 x 1024 = 602,112 + ln_pre 1024;
      // projector: norm 1024 + merger 4096 x 1024 + 1024 x 5120 + 5120 x 5120 (no biases) = 35,652,608.
      {"mistral-small-3.1-24b", 438'958'080},
      {"mistral-small-3.2-24b", 438'958'080},
      // Qwen3-VL: patch 3 x 2 x 16^2 x 1152 + 1152 = 1,770,624 + 2304 x 1152 = 2,654,208 + 411,466,608; merger LayerNorm 2,304 +
      // 4608^2 + 4608 + 4608 x out + out; DeepStack mergers each LayerNorm 9,216 + the same linears. Out 4096 (8B, 235B):
      // 40,119,040 + 3 x 40,125,952; out 2048 (30B): 30,679,808 + 3 x 30,686,720. Qwen3.5 / 3.6: no DeepStack, out 5120 / 4096 /
      // 3072 / 2048.
      {"qwen3-vl-8b", 576'388'336},
      {"qwen3-vl-235b-a22b", 576'388'336},
      {"qwen3-vl-30b-a3b", 538'631'408},
      {"qwen3.5-27b", 460'730'096},
      {"qwen3.5-397b-a17b", 456'010'480},
      {"qwen3.5-122b-a10b", 451'290'864},
      {"qwen3.5-35b-a3b", 446'571'248},
      {"qwen3.6-35b-a3b", 446'571'248},
      // Kimi K2.5 (MoonViT, modeling_kimi_k25.py): patch 3 x 14^2 x 1152 + 1152 = 678,528 + 64 x 64 x 1152 = 4,718,592 +
      // 411,466,608 + final norm 2,304 = 416,866,032; patchmerger: LayerNorm 2,304 + 4608^2 + 4608 + 4608 x 7168 + 7168
      // = 54,277,888. Total 471,143,920: the card's "MoonViT, 400M" is the encoder alone.
      {"kimi-k2.5", 471'143'920},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.id);
    const Model& m = entry(c.id);
    ASSERT_TRUE(tower_from_config(m));
    const std::optional<TowerSpec> t = catalogue_tower(m);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->params(), c.vision);
    EXPECT_EQ(m.params.by_class.at(ParamClass::Vision), c.vision);
    EXPECT_EQ(m.native.bytes_by_class.at(ParamClass::Vision), 2 * c.vision) << "the tower ships in bf16 beside a bf16 language model";
    EXPECT_NE(m.provenance.at("params.vision").find("vision_config"), std::string::npos);
  }
}

TEST(ConfigTower, PublishedTotalsIncludeTheTower) {
  // google/gemma-3-27b-it's Hub page lists 27.4B parameters: the language model and the 0.42B tower.
  EXPECT_NEAR(static_cast<double>(entry("gemma-3-27b").params.total()) / 1e9, 27.4, 0.05);
  // Qwen2.5-VL-7B-Instruct (Hub page: 8.29B). Tower by hand: Conv3d 3 x 2 x 14^2 x 1280 = 1,505,280 (no bias); 32 blocks x
  // (2 RMSNorms 2,560 + qkv 1280 x 3840 + 3840 = 4,919,040 + proj 1280^2 + 1280 = 1,639,680 + gated MLP 2 x (1280 x 3420 + 3420)
  // + 3420 x 1280 + 1280 = 13,140,920) = 32 x 19,702,200 = 630,470,400; merger RMSNorm 1280 + 5120^2 + 5120 + 5120 x 3584 + 3584
  // = 44,574,464. Total 676,550,144.
  const nlohmann::json config = qwen25_vl_7b();
  const Model m = model_from_config(config, "Qwen2.5-VL-7B-Instruct/config.json");
  EXPECT_EQ(m.params.by_class.at(ParamClass::Vision), 676'550'144u);
  Model scratch;
  ConfigView view(config, "config.json", scratch);
  const std::optional<TowerSpec> t = config_tower(view, 3584);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, "Qwen2.5-VL");
  EXPECT_EQ(t->encoder_params, 1'505'280u + 630'470'400u);
  EXPECT_EQ(t->projector_params, 44'574'464u);
  EXPECT_NEAR(static_cast<double>(m.params.total()) / 1e9, 8.29, 0.005);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
}

TEST(ConfigTower, Qwen2VlTowerIsCountedFromItsEmbedDimAndMlpRatio) {
  // Qwen/Qwen2-VL-7B-Instruct's published config.json (huggingface.co/Qwen/Qwen2-VL-7B-Instruct), the
  // keys the count reads. Tower by hand (transformers' Qwen2VisionTransformerPretrainedModel):
  // Conv3d 3 x 2 x 14^2 x 1280 = 1,505,280 (no bias); 32 blocks x (2 LayerNorms 5,120 + qkv 1280 x
  // 3840 + 3840 = 4,919,040 + proj 1280^2 + 1280 = 1,639,680 + fc1 1280 x 5120 + 5120 = 6,558,720 +
  // fc2 5120 x 1280 + 1280 = 6,554,880) = 32 x 19,677,440 = 629,678,080; PatchMerger LayerNorm 2,560
  // + 5120^2 + 5120 = 26,219,520 + 5120 x 3584 + 3584 = 18,353,664: 44,575,744. Tower 675,759,104
  // (the model card's "675M" ViT). With the Qwen2-7B text model by hand (2 x 152,064 x 3584
  // untied + 28 layers x (q 3584^2 + 3584, k and v 3584 x 512 + 512, o 3584^2, MLP 3 x 3584 x
  // 18,944, 2 norms) = 28 x 233,057,792 + final norm 3,584 = 7,615,616,512) that is
  // 8,291,375,616: the Hub page's 8.29B.
  const nlohmann::json config = vc::testing::qwen2_vl_7b();
  Model scratch;
  ConfigView view(config, "config.json", scratch);
  const std::optional<TowerSpec> t = config_tower(view, 3584);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, "Qwen2-VL");
  EXPECT_EQ(t->encoder_params, 1'505'280u + 629'678'080u);
  EXPECT_EQ(t->projector_params, 44'575'744u);
  EXPECT_EQ(t->spatial_merge, 2u);  // its images take Qwen2.5-VL's processor bounds (--image-size)
  const Model m = model_from_config(config, "Qwen2-VL-7B-Instruct/config.json");
  EXPECT_EQ(m.params.by_class.at(ParamClass::Vision), 675'759'104u);
  EXPECT_EQ(m.params.total(), 8'291'375'616u);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
}

// meta-llama/Llama-4-Scout-17B-16E-Instruct's published config.json, the keys the count reads.
nlohmann::json llama4_scout() {
  return nlohmann::json::parse(R"({
    "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "text_config": {"model_type": "llama4_text", "hidden_size": 5120},
    "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408, "image_size": 336, "intermediate_size": 5632,
      "num_attention_heads": 16, "num_channels": 3, "num_hidden_layers": 34, "patch_size": 14, "pixel_shuffle_ratio": 0.5,
      "projector_input_dim": 4096, "projector_output_dim": 4096, "vision_output_dim": 4096, "multi_modal_projector_bias": false}})");
}

TEST(ConfigTower, Llama4VisionIsTheHubTotalLessTheTextModel) {
  // Tower by hand (transformers' Llama4VisionModel): patch linear 3 x 14^2 x 1408 = 827,904; class
  // token 1,408; (336 / 14)^2 + 1 = 577 positions x 1408 = 812,416; LayerNorms pre/post 5,632; 34
  // blocks x (LayerNorms 5,632 + q/k/v/o 4 x (1408^2 + 1408) = 7,935,488 + fc1 1408 x 5632 + 5632 =
  // 7,935,488 + fc2 5632 x 1408 + 1408 = 7,931,264) = 34 x 23,807,872 = 809,467,648; adapter fc1
  // 5632 x 4096 + fc2 4096^2 = 39,845,888; linear_1 4096 x 5120 = 20,971,520. Total 871,932,416.
  // Check: the Hub's count for Llama-4-Scout-17B-16E-Instruct is 108,641,793,536; its text model by
  // hand (hidden 5120, 48 layers, 40 / 8 heads of 128, 16 experts of 8192 + a shared one, vocab
  // 202,048, untied) is 2 x 202,048 x 5120 + 48 x (62,914,560 attention + 10,240 norms +
  // 2,013,265,920 experts + 125,829,120 shared + 81,920 router) + 5,120 = 107,769,861,120, which
  // leaves 871,932,416 for the tower: the same.
  const nlohmann::json config = llama4_scout();
  Model scratch;
  ConfigView view(config, "config.json", scratch);
  const std::optional<TowerSpec> t = config_tower(view, 5120);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, "Llama 4");
  EXPECT_EQ(t->encoder_params, 827'904u + 1'408u + 812'416u + 5'632u + 809'467'648u);
  EXPECT_EQ(t->projector_params, 39'845'888u + 20'971'520u);
  EXPECT_EQ(t->params(), 108'641'793'536u - 107'769'861'120u);
}

TEST(ConfigTower, KimiVlMoonVitCountsLikeKimiK25s) {
  // moonshotai/Kimi-VL-A3B-Instruct's vision_config (model_type moonvit, plain key names) and text
  // width 2048. By hand (modeling_kimi_vl.py): patch Conv2d 3 x 14^2 x 1152 + 1152 = 678,528; 64 x 64
  // positions x 1152 = 4,718,592; 27 SigLIP-sized blocks x 15,239,504 = 411,466,608; final LayerNorm
  // 2,304; projector LayerNorm 2,304 + 4608^2 + 4608 = 21,238,272 + 4608 x 2048 + 2048 = 9,439,232.
  const nlohmann::json config = nlohmann::json::parse(R"({
    "architectures": ["KimiVLForConditionalGeneration"], "model_type": "kimi_vl", "text_config": {"hidden_size": 2048},
    "vision_config": {"model_type": "moonvit", "patch_size": 14, "init_pos_emb_height": 64, "init_pos_emb_width": 64,
      "num_attention_heads": 16, "num_hidden_layers": 27, "hidden_size": 1152, "intermediate_size": 4304, "merge_kernel_size": [2, 2]}})");
  Model scratch;
  ConfigView view(config, "config.json", scratch);
  const std::optional<TowerSpec> t = config_tower(view, 2048);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, "MoonViT");
  EXPECT_EQ(t->encoder_params, 678'528u + 4'718'592u + 411'466'608u + 2'304u);
  EXPECT_EQ(t->projector_params, 2'304u + 21'238'272u + 9'439'232u);
  // Another wrapper's moonvit (its own projector) is not taken for Kimi-VL's.
  nlohmann::json other = config;
  other["model_type"] = "locateanything";
  Model scratch2;
  ConfigView other_view(other, "config.json", scratch2);
  EXPECT_FALSE(config_tower(other_view, 2048));
}

TEST(ConfigTower, Qwen2AudioEncoderIsCountedFromAudioConfig) {
  // Qwen/Qwen2-Audio-7B-Instruct's audio_config (Whisper-large-v3's encoder) into text width 4096.
  // By hand (modeling_qwen2_audio.py; the checkpoint's audio_tower tensors: conv1 [1280, 128, 3] +
  // bias, conv2 [1280, 1280, 3] + bias, embed_positions [1500, 1280], projector linear [4096, 1280] +
  // bias): conv1 491,520 + 1,280 = 492,800; conv2 4,915,200 + 1,280 = 4,916,480; positions
  // 1,920,000; 32 blocks x (LayerNorms 5,120 + q/v/o 3 x (1280^2 + 1280) + k 1280^2 = 6,557,440 +
  // fc1 1280 x 5120 + 5120 = 6,558,720 + fc2 5120 x 1280 + 1280 = 6,554,880) = 32 x 19,676,160 =
  // 629,637,120; final LayerNorm 2,560; projector 5,246,976. Tower 642,215,936. With the Qwen-7B
  // text model by hand (vocab 156,032 x 4096 x 2 + 32 x 202,395,648 + 4096 = 7,754,878,976) that is
  // 8,397,094,912 in all, the Hub page's 8.4B to its rounding.
  const nlohmann::json config = nlohmann::json::parse(R"({
    "architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio",
    "text_config": {"model_type": "qwen2", "hidden_size": 4096},
    "audio_config": {"model_type": "qwen2_audio_encoder", "d_model": 1280, "encoder_attention_heads": 20, "encoder_ffn_dim": 5120,
      "encoder_layers": 32, "num_mel_bins": 128, "max_source_positions": 1500}})");
  Model scratch;
  ConfigView view(config, "config.json", scratch);
  const std::optional<TowerSpec> t = config_audio_tower(view, 4096);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, "Qwen2-Audio");
  EXPECT_EQ(t->encoder_params, 492'800u + 4'916'480u + 1'920'000u + 629'637'120u + 2'560u);
  EXPECT_EQ(t->projector_params, 5'246'976u);
  EXPECT_NEAR(static_cast<double>(t->params() + 7'754'878'976u) / 1e9, 8.4, 0.005);
}

TEST(ConfigTower, KimiK3MoonViT3dIsCountedFromItsVisionConfig) {
  // Kimi K3's published vision_config (data/models/kimi-k3/config.json; K3.1 Pro reads the same
  // file): vt_hidden_size 1,024, vt_intermediate_size 4,096, 27 layers, qkv_hidden_size 1,536,
  // patch 14, a 64 x 64 position grid, merge 2 x 2, RMSNorms, no biases, patchmergerv2 into 7,168.
  // By hand:
  //   patch embedding 3 x 14 x 14 x 1,024 = 602,112; positions 64 x 64 x 1,024 = 4,194,304;
  //   a block: 2 RMSNorms 2,048 + wqkv 1,024 x 4,608 = 4,718,592 + wo 1,536 x 1,024 = 1,572,864
  //     + fc0 1,024 x 4,096 = 4,194,304 + fc1 4,194,304 = 14,682,112; x 27 = 396,417,024;
  //   final RMSNorm 1,024: encoder 401,214,464.
  //   projector: linear_1 4,096 x 4,096 = 16,777,216 + linear_2 4,096 x 7,168 = 29,360,128
  //     + RMSNorm 7,168 = 46,144,512.
  // In all 447,358,976, the 0.447B Moonshot states for the tower (stated before as 447,000,000).
  for (const char* id : {"kimi-k3", "kimi-k3.1-pro"}) {
    SCOPED_TRACE(id);
    const Model& m = entry(id);
    EXPECT_TRUE(tower_from_config(m));
    EXPECT_EQ(m.params.by_class.at(ParamClass::Vision), 447'358'976u);
    EXPECT_FALSE(has_warning(m, kTowerNotCountedWarning));
  }
  nlohmann::json c = nlohmann::json::parse(R"({"model_type": "kimi_k3", "text_config": {"hidden_size": 7168},
    "vision_config": {"vt_hidden_size": 1024, "vt_intermediate_size": 4096, "vt_num_hidden_layers": 27, "vt_num_attention_heads": 12,
      "qkv_hidden_size": 1536, "patch_size": 14, "init_pos_emb_height": 64, "init_pos_emb_width": 64, "merge_kernel_size": [2, 2],
      "mm_hidden_size": 1024, "text_hidden_size": 7168, "mm_projector_type": "patchmergerv2", "norm_type": "rmsnorm",
      "attn_bias": false, "linear_bias": false, "patch_embed_proj_bias": false}})");
  Model scratch;
  ConfigView view(c, "config.json", scratch);
  const std::optional<TowerSpec> t = config_tower(view, 7168);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, "MoonViT3d");
  EXPECT_EQ(t->encoder_params, 401'214'464u);
  EXPECT_EQ(t->projector_params, 46'144'512u);
  // Biases switched on add one vector each: conv 1,024; per block wqkv 4,608 + wo 1,024 (attn_bias)
  // and fc0 4,096 + fc1 1,024 (linear_bias), x 27 = 290,304; 291,328 in all.
  c["vision_config"]["attn_bias"] = true;
  c["vision_config"]["linear_bias"] = true;
  c["vision_config"]["patch_embed_proj_bias"] = true;
  ConfigView biased(c, "config.json", scratch);
  EXPECT_EQ(config_tower(biased, 7168)->encoder_params, 401'214'464u + 291'328u);
  // A projector that does not read the encoder's width is refused.
  c["vision_config"]["mm_hidden_size"] = 1152;
  ConfigView bad(c, "config.json", scratch);
  EXPECT_THROW(config_tower(bad, 7168), InputError);
}

TEST(ConfigTower, UnknownLayoutsAreLeftOutWithAWarningAndBadValuesRejected) {
  nlohmann::json c = qwen25_vl_7b();
  c["vision_config"]["model_type"] = "mllama_vision_model";  // Llama 3.2 Vision's: not modelled
  const Model m = model_from_config(c, "config.json");
  EXPECT_FALSE(tower_from_config(m));
  EXPECT_EQ(m.params.by_class.count(ParamClass::Vision), 0u);
  EXPECT_TRUE(has_warning(m, kTowerNotCountedWarning));
  nlohmann::json audio = qwen25_vl_7b();
  audio["audio_config"] = {{"d_model", 1280}};
  EXPECT_TRUE(has_warning(model_from_config(audio, "config.json"), kTowerNotCountedWarning));
  nlohmann::json bad = qwen25_vl_7b();
  bad["vision_config"]["depth"] = -3;
  EXPECT_THROW(model_from_config(bad, "config.json"), InputError);
  bad["vision_config"]["depth"] = "32";
  EXPECT_THROW(model_from_config(bad, "config.json"), InputError);
}

TEST(ConfigTower, TheEstimateShowsTheTowerOnItsOwnLine) {
  const Model& g = entry("gemma-3-27b");
  Scenario s;
  const Estimate e = estimate(g, s);
  ASSERT_GE(e.lines.size(), 2u);
  EXPECT_EQ(e.lines[1].id, "weights.vision");
  EXPECT_EQ(e.lines[1].bytes, 846'120'672u);  // 423,060,336 params x 2 B (bf16)
  EXPECT_EQ(e.lines[0].bytes + e.lines[1].bytes, e.weights.bytes) << "the two lines are the checkpoint, counted once";
  // A GGUF build is the language model alone (the tower is a separate mmproj): no tower line.
  s.quant = "gemma-3-27b-it.Q4_K_M";
  const Estimate b = estimate(g, s);
  for (const auto& l : b.lines) EXPECT_NE(l.id, "weights.vision");
}

TEST(ConfigTower, VllmProfilesGemma3sEncoderOnADummyImageBatch) {
  const Model& g = entry("gemma-3-27b");
  // vLLM serve defaults on an 80 GB card: 8,192 batched tokens, 1,024 sequences; max_model_len 8,192.
  // Items: min(8192 / 256 = 32, 1024 x min(999, 8192 / 256)) = 32 images of 896 x 896.
  const VllmEncoderProfile p = vllm_encoder_profile(g, 8192, 1024, 8192, 1, 2);
  EXPECT_EQ(p.items, 32u);
  EXPECT_EQ(p.pixel_bytes, 154'140'672u);   // 32 x 3 x 896^2 x 2 B
  EXPECT_EQ(p.output_bytes, 88'080'384u);   // 32 x 256 tokens x 5376 x 2 B
  // Encoding: 32 x 64^2 = 131,072 patches x (2 x 1152 + 2 x 4304) x 2 B = 2,860,515,328, plus the pixels.
  EXPECT_EQ(p.encoder_peak, 3'014'656'000u);
  // 2,048 batched tokens (cards under 70 GiB): 8 images.
  EXPECT_EQ(vllm_encoder_profile(g, 2048, 256, 8192, 1, 2).items, 8u);

  // In the budget the held batch adds to the decoder's peak (which is larger than the encoder's here).
  VllmBudgetSettings s;
  s.card_bytes = 85'028'077'568;  // 79.19 GiB
  s.gpu_memory_utilization = 0.95;
  s.weight_bytes = g.native.bytes;
  Model text_only = g;
  text_only.provenance.erase("vision_config");  // as if the tower were not counted from the config
  const VllmBudget with = vllm_budget(g, s), without = vllm_budget(text_only, s);
  EXPECT_EQ(with.activation - without.activation, 242'221'056u);  // 154,140,672 + 88,080,384
  EXPECT_EQ(without.available_kv - with.available_kv, 242'221'056u);
}

// --limit-mm-per-prompt (vllm/multimodal/encoder_budget.py _get_max_items: items per prompt
// max(1, min(limit, max_model_len / tokens)); a modality at 0 does not pass through the tower, and
// with every modality at 0 vLLM runs text-only, registry.py supports_multimodal_inputs).
TEST(ConfigTower, VllmLimitMmPerPromptShapesTheEncoderBatch) {
  const Model& g = entry("gemma-3-27b");
  VllmMmLimits two;
  read_vllm_mm_limits(two, "--limit-mm-per-prompt", "image=2,video=0");
  EXPECT_EQ(two.of("image"), 2u);
  EXPECT_EQ(two.of("audio"), kVllmDefaultMmLimit);
  // 4 sequences: min(8,192 / 256 = 32, 4 x max(1, min(2, 8,192 / 256))) = 8 images (the default limit: 4 x 32 = 128, so 32).
  EXPECT_EQ(vllm_encoder_profile(g, 8192, 4, 8192, 1, 2, two).items, 8u);
  EXPECT_EQ(vllm_encoder_profile(g, 8192, 4, 8192, 1, 2).items, 32u);
  VllmMmLimits none;
  read_vllm_mm_limits(none, "--limit-mm-per-prompt", R"({"image": {"count": 0, "width": 512}})");
  const VllmEncoderProfile off = vllm_encoder_profile(g, 8192, 1024, 8192, 1, 2, none);
  EXPECT_EQ(off.items, 0u);
  EXPECT_EQ(off.held(), 0u);
  EXPECT_NE(off.note.find("--limit-mm-per-prompt gives image 0"), std::string::npos) << off.note;
  EXPECT_EQ(none.json(), R"({"image":0})");
  // Bad values name the flag.
  for (const char* bad : {"image", "image=-1", "IMAGE=1", "{\"image\": \"many\"}", "[1]", "image=99999999999"}) {
    VllmMmLimits l;
    EXPECT_THROW(read_vllm_mm_limits(l, "--limit-mm-per-prompt", bad), InputError) << bad;
  }
  // Through a pasted command: the held batch of 32 images (242,221,056 B, worked above) is gone from
  // the activation and goes to the KV cache.
  EngineInputs in;
  in.gpu = "H100-sxm";
  in.command = "vllm serve google/gemma-3-27b-it";
  const EngineAnswer with = run_engine(engine_request(g, Scenario{}, in));
  in.command = "vllm serve google/gemma-3-27b-it --limit-mm-per-prompt '{\"image\": 0}'";
  const EngineAnswer without = run_engine(engine_request(g, Scenario{}, in));
  EXPECT_EQ(with.bytes(AllocKind::Activation) - without.bytes(AllocKind::Activation), 242'221'056u);
  // Nor does vLLM build the tower (SupportsMultiModal._mark_tower_model; vllm_tower_skip.h): the
  // SigLIP tower and projector, 423,060,336 params x 2 B = 846,120,672 B (worked by hand in
  // VllmSkipsTheTowerItsLimitsTurnOff), leave the rank's weights, and the KV cache gets them with the
  // activation: 846,120,672 + 242,221,056 = 1,088,341,728 B more.
  EXPECT_EQ(with.bytes(AllocKind::Weights) - without.bytes(AllocKind::Weights), 846'120'672u);
  EXPECT_EQ(without.bytes(AllocKind::Kv) - with.bytes(AllocKind::Kv), 1'088'341'728u);
  // Tokens: Gemma 3 27B's 62 layers are 10 global and 52 window layers of 16 KV heads x 128 x 2 (K, V)
  // x 2 B = 8,192 B a token each; the hybrid allocator groups them by 10 (groups: 1 + ceil(52 / 10) =
  // 7) into blocks of 8,192 x 10 x 16 tokens = 1,310,720 B. With the tower kept at image 0 the pool
  // would be 12,517,562,759 B: 9,550 blocks, 9,550 / 7 = 1,364 x 16 = 21,824 tokens; without it
  // 13,363,683,431 B: 10,195 blocks, 10,195 / 7 = 1,456 x 16 = 23,296 tokens (21,392 at the default
  // limit: 12,275,341,703 B, 9,365 blocks, 1,337 x 16). Each pool is 301,989,888 B below what it was
  // before the RoPE tables were counted (1,048,576 x 128 x 2 + 131,072 x 128 x 2 B, vllm_rope.h:
  // 13,665,673,319 B and 23,824 tokens without the tower then).
  EXPECT_EQ(with.kv_tokens.value_or(0), 21'392u);
  EXPECT_EQ(without.kv_tokens.value_or(0), 23'296u);
  EXPECT_EQ(without.bytes(AllocKind::Kv), 13'363'683'431u);
  bool said = false;
  for (const auto& l : without.devices.at(0).lines) {
    EXPECT_EQ(l.label.find("Vision tower"), std::string::npos) << l.label;  // no tower line: it is not on the rank
    if (l.kind != AllocKind::Weights) continue;
    said = said || (l.source.find("vllm/model_executor/models/interfaces.py (SupportsMultiModal._mark_tower_model)") != std::string::npos &&
           l.source.find("gemma3_mm.py") != std::string::npos && l.assumption.find("--limit-mm-per-prompt gives image 0") != std::string::npos &&
           l.formula.find("846,120,672 B of the SigLIP vision tower and its projector") != std::string::npos);
  }
  EXPECT_TRUE(said);
}

// vLLM's rule (vllm_tower_skip.h): a class that creates its tower inside _mark_tower_model builds
// none of it when every modality the tower serves is at 0 (interfaces.py:
// all(mm_config.get_limit_per_prompt(m) == 0 for m in modalities)).
TEST(ConfigTower, VllmSkipsTheTowerItsLimitsTurnOff) {
  const Model& g = entry("gemma-3-27b");
  const WeightsFigure native = resolve_weights(g, "native");
  VllmMmLimits image0, image1, video0;
  read_vllm_mm_limits(image0, "--limit-mm-per-prompt", "image=0");
  read_vllm_mm_limits(image1, "--limit-mm-per-prompt", "image=1");
  read_vllm_mm_limits(video0, "--limit-mm-per-prompt", "video=0");
  // Gemma 3 27B's SigLIP (vision_config: 27 layers, hidden 1,152, MLP 4,304, patch 14, 896 px, no
  // head) by hand: patch embedding 3 x 14 x 14 x 1,152 + 1,152 = 678,528; positions (896 / 14)^2 =
  // 4,096 x 1,152 = 4,718,592; a layer: 2 LayerNorms 4,608 + q, k, v, out 4 x (1,152^2 + 1,152) =
  // 5,313,024 + fc1 1,152 x 4,304 + 4,304 = 4,962,512 + fc2 4,304 x 1,152 + 1,152 = 4,959,360 =
  // 15,239,504, x 27 = 411,466,608; post LayerNorm 2,304: encoder 416,866,032. Gemma3MultiModalProjector
  // (gemma3_mm.py): mm_input_projection_weight 1,152 x 5,376 = 6,193,152 + mm_soft_emb_norm 1,152 =
  // 6,194,304. Both are created inside _mark_tower_model(vllm_config, "image"): 423,060,336 params,
  // at the checkpoint's bf16 846,120,672 B.
  const VllmTowerSkip off = vllm_tower_skip(g, native, "auto", image0);
  EXPECT_TRUE(off.skipped());
  EXPECT_EQ(off.params, 416'866'032u + 6'194'304u);
  EXPECT_EQ(off.bytes, 846'120'672u);
  EXPECT_EQ(off.tier_bytes, 846'120'672u);
  EXPECT_NE(off.source.find("gemma3_mm.py"), std::string::npos) << off.source;
  // --dtype float32 casts the bf16 tower too: 423,060,336 x 4 B.
  EXPECT_EQ(vllm_tower_skip(g, native, "float32", image0).bytes, 1'692'241'344u);
  // A limit above 0, or another modality at 0, builds it.
  EXPECT_FALSE(vllm_tower_skip(g, native, "auto", image1).skipped());
  EXPECT_FALSE(vllm_tower_skip(g, native, "auto", video0).skipped());
  EXPECT_FALSE(vllm_tower_skip(g, native, "auto", VllmMmLimits{}).skipped());
  // A tower whose class's use of _mark_tower_model was not read (Kimi K3's MoonViT3d) still loads.
  const Model& k3 = entry("kimi-k3");
  EXPECT_FALSE(vllm_tower_skip(k3, resolve_weights(k3, "native"), "auto", image0).skipped());
}

TEST(ConfigTower, VllmSkipsMistral3sPixtralTowerAtImageZero) {
  const Model& m = entry("mistral-small-3.1-24b");
  VllmMmLimits image0;
  read_vllm_mm_limits(image0, "--limit-mm-per-prompt", "image=0");
  // Mistral Small 3.1's Pixtral tower by hand (vision_config: 24 layers, hidden 1,024, MLP 4,096, patch
  // 14, no biases): patch conv 3 x 14^2 x 1,024 = 602,112 + ln_pre 1,024; a layer: 2 RMSNorms 2,048 +
  // q, k, v, o 4 x 1,024^2 = 4,194,304 + gate, up, down 3 x 1,024 x 4,096 = 12,582,912 = 16,779,264,
  // x 24 = 402,702,336: 403,305,472. Mistral3MultiModalProjector (mistral3.py, no bias): RMSNorm 1,024
  // + patch merger 4 x 1,024 x 1,024 = 4,194,304 + linear_1 1,024 x 5,120 = 5,242,880 + linear_2
  // 5,120^2 = 26,214,400: 35,652,608. Both are built inside _mark_tower_model(vllm_config, "image"):
  // 438,958,080 params, 877,916,160 B at bf16.
  const VllmTowerSkip off = vllm_tower_skip(m, resolve_weights(m, "native"), "auto", image0);
  EXPECT_TRUE(off.skipped());
  EXPECT_EQ(off.params, 438'958'080u);
  EXPECT_EQ(off.bytes, 877'916'160u);
  EXPECT_NE(off.source.find("mistral3.py"), std::string::npos) << off.source;
}

TEST(ConfigTower, EnginesShowTheTowerWhereTheyLoadIt) {
  const Model& g = entry("gemma-3-27b");
  EngineInputs in;
  in.gpu = "H100-sxm";
  // vLLM loads the checkpoint's tower with the weights: its own line on the rank, 423,060,336 x 2 B
  // (TP 1), beside the language model's; the two add up to the checkpoint, and the RoPE tables'
  // line adds 1,048,576 x 128 x 2 + 131,072 x 128 x 2 = 301,989,888 B (vllm_rope.h).
  in.engine = "vllm";
  const EngineAnswer v = run_engine(engine_request(g, Scenario{}, in));
  ASSERT_EQ(v.devices.size(), 1u);
  uint64_t tower = 0;
  for (const auto& l : v.devices[0].lines) {
    if (l.label.rfind("Vision tower", 0) == 0) tower = l.bytes;
  }
  EXPECT_EQ(tower, 846'120'672u);
  EXPECT_EQ(v.bytes(AllocKind::Weights), g.native.bytes + 301'989'888u);
  // llama.cpp loads a tower only from an --mmproj GGUF: the weights leave it out and a note says so.
  in.engine = "llamacpp";
  const EngineAnswer l = run_engine(engine_request(g, Scenario{}, in));
  bool said = false;
  for (const auto& n : l.notes) said = said || n.find("vision tower (423M params) is not loaded") != std::string::npos;
  EXPECT_TRUE(said);
  // Its weights: the checkpoint less the tower (each tensor at its class's share; rounding of a few bytes).
  EXPECT_NEAR(static_cast<double>(l.bytes(AllocKind::Weights)), static_cast<double>(g.native.bytes - 846'120'672u), 1e3);
}

TEST(ConfigTower, MmprojAutoForACatalogueModelIsTheTowerCountedFromItsConfig) {
  // Gemma 3 27B at a GGUF build (the language model alone), llama.cpp: the projector is the tower
  // counted above, 423,060,336 parameters, at F16 (2 B each, as llama.cpp's mmproj GGUF holds it):
  // 846,120,672 B on the first GPU. One image: (896 px / 14 px)^2 = 4,096 patches pooled to 256
  // tokens (config.json mm_tokens_per_image), added to the 32,768-token context per sequence.
  // Encoder peak, one image: 4,096 positions x (5 x 1,152 + 4,304) x 4 B + 16 heads x 4,096^2 x 4 B
  // = 164,888,576 + 1,073,741,824 = 1,238,630,400 B.
  const CliResult r = run_cli("estimate gemma-3-27b --json --engine llamacpp --quant gemma-3-27b-it.Q4_K_M --context 32K --mmproj auto --images 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  const auto& lines = j["components"]["lines"];
  ASSERT_EQ(lines[0]["id"], "vision.weights");
  EXPECT_EQ(lines[0]["bytes"].get<uint64_t>(), 846'120'672u);
  EXPECT_NE(lines[0]["assumption"].get<std::string>().find("F16"), std::string::npos);
  ASSERT_EQ(lines[1]["id"], "vision.compute");
  EXPECT_EQ(lines[1]["bytes"].get<uint64_t>(), 1'238'630'400u);
  EXPECT_EQ(j["components"]["image_tokens"].get<uint64_t>(), 256u);
  EXPECT_EQ(j["inputs"]["context_tokens"].get<uint64_t>(), 32'768u + 256u);
  // llama.cpp puts the projector on the first GPU.
  bool on_cuda0 = false;
  for (const auto& l : j["engine"]["devices"][0]["lines"]) on_cuda0 = on_cuda0 || l["bytes"].get<uint64_t>() == 846'120'672u;
  EXPECT_TRUE(on_cuda0) << j["engine"]["devices"][0].dump();
  // A text-only model has no tower to take; a dynamic-resolution tower needs its projector file.
  const CliResult text = run_cli("estimate qwen3-8b --mmproj auto");
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.output.find("no vision tower"), std::string::npos) << text.output;
  const CliResult dynamic = run_cli("estimate mistral-small-3.1-24b --mmproj auto");
  EXPECT_EQ(dynamic.exit_code, 2);
  EXPECT_NE(dynamic.output.find("any size"), std::string::npos) << dynamic.output;
}

TEST(ConfigTower, AnMmprojBesideACheckpointThatHoldsItsTowerIsNotCountedTwice) {
  const std::filesystem::path file = scratch_dir() / "tower-twice-mmproj.gguf";
  vc::testing::write_tiny_mmproj(file);
  // The BF16 checkpoint holds its SigLIP tower (weights.vision): the projector adds nothing to the weights.
  const CliResult native = run_cli("estimate gemma-3-27b --json --mmproj " + file.string());
  ASSERT_EQ(native.exit_code, 0) << native.output;
  const auto j = nlohmann::json::parse(native.output);
  ASSERT_EQ(j["components"]["lines"][0]["id"], "vision.weights");
  EXPECT_EQ(j["components"]["lines"][0]["bytes"].get<uint64_t>(), 0u);
  // The rule engine's device: the estimate plus the encoder's compute only.
  ASSERT_EQ(j["components"]["lines"][1]["id"], "vision.compute");
  EXPECT_EQ(j["engine"]["total_bytes"].get<uint64_t>(),
            j["totals"]["total_bytes"].get<uint64_t>() + j["components"]["lines"][1]["bytes"].get<uint64_t>());
  // A GGUF build is the language model alone: the projector's tensor bytes are added.
  const CliResult build = run_cli("estimate gemma-3-27b --json --quant gemma-3-27b-it.Q4_K_M --mmproj " + file.string());
  ASSERT_EQ(build.exit_code, 0) << build.output;
  EXPECT_EQ(nlohmann::json::parse(build.output)["components"]["lines"][0]["bytes"].get<uint64_t>(), vc::testing::kTinyMmprojBytes);
}
