// Qwen3-Omni read from its config.json (src/sources/config/config_omni3.cpp, the thinker view in
// config_omni.cpp, the towers in config_tower.cpp): the thinker's MoE text model, vision tower and
// AuT audio encoder counted into the weights, the talker and code2wav counted beside them, each
// against figures worked by hand from the published config and the module layout of transformers'
// modeling_qwen3_omni_moe.py, and their sum against the published checkpoint's parameter count.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "core/error.h"
#include "memory_source.h"
#include "safetensors_writer.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_omni.h"
#include "sources/config/config_omni3.h"
#include "sources/config/config_tower.h"
#include "sources/safetensors/safetensors_file.h"
#include "sources/safetensors/safetensors_model.h"

using namespace vc;

namespace {

bool has_warning(const Model& m, const std::string& start) {
  for (const auto& w : m.warnings) if (w.rfind(start, 0) == 0) return true;
  return false;
}

// Qwen/Qwen3-Omni-30B-A3B-Instruct's config.json
// (https://huggingface.co/Qwen/Qwen3-Omni-30B-A3B-Instruct/blob/main/config.json), the keys the
// count reads, with the published values as two public transcriptions of that file give them alike
// (one trimmed copy in a parser's test, one full print of the loaded config beside its tensor list).
// Its vision_config names image_size (768) and no num_position_embeddings; the talker's
// text_config names num_experts (transformers 5 prints it as num_local_experts).
nlohmann::json qwen3_omni_30b() {
  return nlohmann::json::parse(R"({
    "architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe", "enable_audio_output": true,
    "torch_dtype": "bfloat16",
    "thinker_config": {
      "model_type": "qwen3_omni_moe_thinker",
      "text_config": {"model_type": "qwen3_omni_moe_text", "hidden_size": 2048, "intermediate_size": 768, "num_hidden_layers": 48,
        "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 152064, "max_position_embeddings": 65536,
        "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "shared_expert_intermediate_size": 0,
        "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": true, "use_qk_norm": true, "tie_word_embeddings": false,
        "attention_bias": false, "rope_theta": 1000000, "rope_scaling": {"mrope_section": [24, 20, 20], "interleaved": true}},
      "vision_config": {"model_type": "qwen3_omni_moe_vision_encoder", "depth": 27, "hidden_size": 1152, "num_heads": 16,
        "intermediate_size": 4304, "patch_size": 16, "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 2048,
        "in_channels": 3, "image_size": 768, "deepstack_visual_indexes": [8, 16, 24], "apply_vit_abs_pos_embed": true},
      "audio_config": {"model_type": "qwen3_omni_moe_audio_encoder", "num_mel_bins": 128, "d_model": 1280, "encoder_attention_heads": 20,
        "encoder_ffn_dim": 5120, "encoder_layers": 32, "downsample_hidden_size": 480, "output_dim": 2048, "n_window": 50,
        "n_window_infer": 800, "max_source_positions": 1500}},
    "talker_config": {"model_type": "qwen3_omni_moe_talker", "thinker_hidden_size": 2048, "num_code_groups": 16, "accept_hidden_layer": 24,
      "text_config": {"model_type": "qwen3_omni_moe_talker_text", "hidden_size": 1024, "intermediate_size": 2048, "num_hidden_layers": 20,
        "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 6,
        "moe_intermediate_size": 384, "shared_expert_intermediate_size": 768, "vocab_size": 3072, "attention_bias": false},
      "code_predictor_config": {"model_type": "qwen3_omni_moe_talker_code_predictor", "hidden_size": 1024, "num_hidden_layers": 5,
        "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072, "vocab_size": 2048,
        "num_code_groups": 16, "attention_bias": false}},
    "code2wav_config": {"codebook_size": 2048, "num_quantizers": 16, "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 8,
      "num_attention_heads": 16, "num_key_value_heads": 16, "sliding_window": 72, "decoder_dim": 1536, "upsample_rates": [8, 5, 4, 3],
      "upsampling_ratios": [2, 2], "attention_bias": false}})");
}

// The thinker's text model by hand (Qwen3 MoE, untied head, no shared expert): embed and lm_head
// 152,064 x 2048 = 311,427,072 each; a layer q 2048 x 4096 = 8,388,608, k and v 2048 x 512 =
// 1,048,576 each, o 8,388,608, q/k norms 256 (attention 18,874,624), router 128 x 2048 = 262,144,
// experts 128 x 3 x 2048 x 768 = 603,979,776, norms 4,096: 623,120,640; 48 layers 29,909,790,720;
// final norm 2,048. 30,532,646,912.
constexpr uint64_t kText = 30'532'646'912;
// The vision tower (Qwen3-VL's layout): patch 3 x 2 x 16^2 x 1152 + 1152 = 1,770,624; positions
// (768 / 16)^2 = 2,304 x 1152 = 2,654,208; a block LayerNorms 4,608 + qkv 1152 x 3456 + 3456 =
// 3,984,768 + proj 1,328,256 + fc1 1152 x 4304 + 4304 = 4,962,512 + fc2 4,959,360 = 15,239,504, 27
// of them 411,466,608: encoder 415,891,440. Merger LayerNorm 2,304 + 4608^2 + 4608 = 21,238,272 +
// 4608 x 2048 + 2048 = 9,439,232: 30,679,808; 3 DeepStack mergers (LayerNorm over 4,608: 9,216 + the
// same linears 30,677,504) 92,060,160: projector 122,739,968. 538,631,408 (the report's 540M).
constexpr uint64_t kVisionEncoder = 415'891'440, kVisionProjector = 122'739'968;
constexpr uint64_t kVision = kVisionEncoder + kVisionProjector;
// The AuT audio encoder: conv2d1 1 x 480 x 9 + 480 = 4,800, conv2d2 and conv2d3 480 x 480 x 9 + 480 =
// 2,074,080 each; conv_out 480 x 16 x 1280 = 9,830,400 (128 mel bins halved thrice: 64, 32, 16); a
// block LayerNorms 5,120 + q/k/v/o 4 x (1280^2 + 1280) = 6,558,720 + fc1 1280 x 5120 + 5120 =
// 6,558,720 + fc2 5120 x 1280 + 1280 = 6,554,880 = 19,677,440, 32 of them 629,678,080; ln_post 2,560:
// encoder 643,664,000. proj1 1280^2 + 1280 = 1,639,680 and proj2 1280 x 2048 + 2048 = 2,623,488:
// 4,263,168. 647,927,168 (the report's 650M).
constexpr uint64_t kAudioEncoder = 643'664'000, kAudioProjector = 4'263'168;
constexpr uint64_t kAudio = kAudioEncoder + kAudioProjector;
// The talker's decoder: codec_embedding 3072 x 1024 = 3,145,728; a layer q 1024 x 2048 = 2,097,152,
// k and v 1024 x 256 = 262,144 each, o 2,097,152, q/k norms 256, router 128 x 1024 = 131,072, experts
// 128 x 3 x 1024 x 384 = 150,994,944, shared expert 3 x 1024 x 768 = 2,359,296 and its gate 1,024,
// norms 2,048: 158,207,232, 20 of them 3,164,144,640; final norm 1,024; text_projection and
// hidden_projection 2 x (2048 x 2048 + 2048 + 2048 x 1024 + 1024) = 12,589,056; codec_head 3,145,728.
// 3,183,026,176.
constexpr uint64_t kTalkerDecoder = 3'183'026'176;
// The code predictor: a layer q 1024 x 2048 = 2,097,152, k and v 1024 x 1024 each, o 2,097,152, q/k
// norms 256, gated MLP 3 x 1024 x 3072 = 9,437,184, norms 2,048: 15,730,944, 5 of them 78,654,720 (the
// report's 80M MTP); final norm 1,024; 15 codec embeddings and 15 lm_heads of 2048 x 1024 =
// 62,914,560. 141,570,304.
constexpr uint64_t kCodePredictor = 141'570'304;
// code2wav: code_embedding 2048 x 16 x 1024 = 33,554,432; pre_transformer 8 layers x (q/k/v/o 4 x
// 1024^2 + gated MLP 3 x 1024 x 3072 + 2 RMSNorms and 2 layer scales 4,096 = 13,635,584) + norm 1,024 =
// 109,085,696; 2 upsampling stages x (ConvTranspose1d 1024 x 1024 x 2 + 1024 = 2,098,176, ConvNeXt
// 11 x 1024 + 1024 x 4096 + 4096 + 4096 x 1024 + 1024 = 8,404,992) = 21,006,336; decoder conv 1024 x
// 1536 x 7 + 1536 = 11,011,584, blocks over 1536 -> 768 (rate 8) 33,047,808, 768 -> 384 (5)
// 6,496,896, 384 -> 192 (4) 1,478,976, 192 -> 96 (3) 333,984 (each SnakeBeta 2 x in, ConvTranspose1d
// in x out x 2 rate + out, 3 units of 4 x out + out^2 x 7 + out + out^2 + out), SnakeBeta 192 + conv 96
// x 7 + 1 = 865: 52,370,113. 216,016,577 (the report's 200M).
constexpr uint64_t kCode2Wav = 216'016'577;

}  // namespace

TEST(ConfigOmni3, TheThinkerIsMappedWithItsVisionTowerAndAudioEncoder) {
  const Model m = model_from_config(qwen3_omni_30b(), "config.json");
  EXPECT_EQ(m.architecture, "qwen3_omni_moe");
  EXPECT_EQ(m.layers.size(), 48u);
  EXPECT_EQ(m.hidden, 2048u);
  EXPECT_EQ(m.vocab, 152'064u);
  EXPECT_EQ(m.layers[0].attention.kv_heads, 4u);
  EXPECT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_EQ(m.layers[47].feed_forward.experts, 128u);
  EXPECT_EQ(m.layers[47].feed_forward.experts_per_token, 8u);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_TRUE(tower_from_config(m));
  EXPECT_EQ(m.params.by_class.at(ParamClass::Vision), kVision + kAudio);
  // 31,719,205,488: what vLLM loads, and exactly the -Thinking checkpoint's parameter count (its
  // files hold the thinker alone: model.safetensors.index.json total_size 63,438,410,976 B = 2 B each,
  // https://huggingface.co/Qwen/Qwen3-Omni-30B-A3B-Thinking).
  EXPECT_EQ(m.params.derived_total, kText + kVision + kAudio);
  EXPECT_EQ(m.params.derived_total, 31'719'205'488u);
  EXPECT_EQ(m.native.bytes, 2 * (kText + kVision + kAudio));  // bfloat16
  // Active (kActiveConvention, towers out): head 311,427,072 + 48 x (attention 18,874,624 + router
  // 262,144 + 8 of 128 experts 8 x 4,718,592 = 37,748,736 + norms 4,096 = 56,889,600) = 2,730,700,800
  // + final norm 2,048: 3,042,129,920, the "A3B".
  EXPECT_EQ(m.params.derived_active, 3'042'129'920u);
  EXPECT_NE(m.provenance.at("params.audio").find("(Qwen3-Omni audio)"), std::string::npos);
  EXPECT_NE(m.provenance.at("params.vision").find("(Qwen3-Omni vision)"), std::string::npos);
  EXPECT_FALSE(has_warning(m, kTowerNotCountedWarning));
}

TEST(ConfigOmni3, TheVisionTowerAndAudioEncoderTermByTerm) {
  const nlohmann::json thinker = omni_thinker_view(qwen3_omni_30b());
  Model scratch;
  ConfigView view(thinker, "config.json", scratch);
  const std::optional<TowerSpec> v = config_tower(view, 2048);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, "Qwen3-Omni vision");
  EXPECT_EQ(v->encoder_params, kVisionEncoder);
  EXPECT_EQ(v->projector_params, kVisionProjector);
  const std::optional<TowerSpec> a = config_audio_tower(view, 2048);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, "Qwen3-Omni audio");
  EXPECT_EQ(a->encoder_params, 4'800u + 2 * 2'074'080u + 9'830'400u + 629'678'080u + 2'560u);
  EXPECT_EQ(a->projector_params, kAudioProjector);
  EXPECT_EQ(a->encoder_params, kAudioEncoder);
  // A vision_config that names num_position_embeddings (transformers' printed config does: 2304)
  // counts those positions; one of 1024 counts 1024 x 1152 fewer by (2304 - 1024) x 1152 = 1,474,560.
  nlohmann::json named = thinker;
  named["vision_config"]["num_position_embeddings"] = 2304;
  Model scratch2;
  ConfigView named_view(named, "config.json", scratch2);
  EXPECT_EQ(config_tower(named_view, 2048)->params(), kVision);
  named["vision_config"]["num_position_embeddings"] = 1024;
  Model scratch3;
  ConfigView fewer_view(named, "config.json", scratch3);
  EXPECT_EQ(config_tower(fewer_view, 2048)->params(), kVision - 1'474'560u);
}

TEST(ConfigOmni3, TheTalkerAndCode2WavAreCountedBesideTheWeights) {
  const Model m = model_from_config(qwen3_omni_30b(), "config.json");
  const nlohmann::json thinker = omni_thinker_view(qwen3_omni_30b());
  Model scratch;
  ConfigView view(thinker, "config.json", scratch);
  const std::optional<Qwen3TalkerSpec> talker = config_qwen3_talker(view);
  ASSERT_TRUE(talker);
  EXPECT_EQ(talker->decoder, kTalkerDecoder);
  EXPECT_EQ(talker->code_predictor, kCodePredictor);
  EXPECT_EQ(talker->params(), 3'324'596'480u);  // the report's 3B talker
  const std::optional<Code2WavSpec> c2w = config_code2wav(view);
  ASSERT_TRUE(c2w);
  EXPECT_EQ(c2w->params, kCode2Wav);
  // The whole checkpoint: 31,719,205,488 + 3,324,596,480 + 216,016,577 = 35,259,818,545, the published
  // checkpoint's parameter count to the unit (https://huggingface.co/Qwen/Qwen3-Omni-30B-A3B-Instruct:
  // model.safetensors.index.json total_size 70,519,637,090 B, all bfloat16, = 2 x 35,259,818,545).
  EXPECT_EQ(m.params.derived_total + talker->params() + c2w->params, 35'259'818'545u);
  EXPECT_TRUE(m.provenance.count("params.talker"));
  EXPECT_TRUE(m.provenance.count("params.code2wav"));
  ASSERT_EQ(m.left_out.size(), 1u);
  EXPECT_NE(m.left_out[0].find("the talker (3.32B params: decoder 3.18B + code predictor 142M)"), std::string::npos) << m.left_out[0];
  EXPECT_NE(m.left_out[0].find("code2wav (216M params)"), std::string::npos) << m.left_out[0];
  EXPECT_NE(m.left_out[0].find("vLLM serves the thinker only"), std::string::npos);
  EXPECT_TRUE(has_warning(m, kOmniSpeechPartsWarning));
}

TEST(ConfigOmni3, MissingSizesTakeTransformersDefaultsAndSaySo) {
  // Qwen3OmniMoeCode2WavConfig's and Qwen3OmniMoeTalkerCodePredictorConfig's defaults are the
  // published sizes (but num_code_groups, 32 by default: 31 embeddings and heads instead of 15).
  nlohmann::json c = omni_thinker_view(qwen3_omni_30b());
  c["code2wav_config"] = nlohmann::json::object();
  c["talker_config"]["code_predictor_config"].erase("num_code_groups");
  // transformers 5 prints the talker's num_experts as num_local_experts: read the same.
  c["talker_config"]["text_config"].erase("num_experts");
  c["talker_config"]["text_config"]["num_local_experts"] = 128;
  Model scratch;
  ConfigView view(c, "config.json", scratch);
  const std::optional<Code2WavSpec> c2w = config_code2wav(view);
  ASSERT_TRUE(c2w);
  EXPECT_EQ(c2w->params, kCode2Wav);
  EXPECT_NE(c2w->formula.find("transformers' defaults: hidden_size 1024"), std::string::npos) << c2w->formula;
  const std::optional<Qwen3TalkerSpec> talker = config_qwen3_talker(view);
  ASSERT_TRUE(talker);
  EXPECT_EQ(talker->decoder, kTalkerDecoder);
  // 16 more embeddings and heads of 2048 x 1024: 2 x 16 x 2,097,152 = 67,108,864 more.
  EXPECT_EQ(talker->code_predictor, kCodePredictor + 67'108'864u);
  EXPECT_NE(talker->formula.find("num_code_groups 32"), std::string::npos) << talker->formula;
}

TEST(ConfigOmni3, WithoutAudioOutputNoSpeechPartsAreCounted) {
  // enable_audio_output false: Qwen3OmniMoeForConditionalGeneration never builds the talker or code2wav.
  nlohmann::json c = qwen3_omni_30b();
  c["enable_audio_output"] = false;
  const Model m = model_from_config(c, "config.json");
  EXPECT_EQ(m.params.derived_total, kText + kVision + kAudio);
  EXPECT_TRUE(m.left_out.empty());
  EXPECT_FALSE(m.provenance.count("params.talker"));
  EXPECT_NE(m.provenance.at("speech_output").find("enable_audio_output false"), std::string::npos);
  EXPECT_FALSE(has_warning(m, kOmniSpeechPartsWarning));
  // A thinker-only config (no talker_config, no code2wav_config) counts the same thinker and nothing beside.
  nlohmann::json bare = qwen3_omni_30b();
  bare.erase("talker_config");
  bare.erase("code2wav_config");
  const Model b = model_from_config(bare, "config.json");
  EXPECT_EQ(b.params.derived_total, kText + kVision + kAudio);
  EXPECT_TRUE(b.left_out.empty());
}

TEST(ConfigOmni3, BadValuesAreRejected) {
  nlohmann::json c = qwen3_omni_30b();
  c["talker_config"]["text_config"]["hidden_size"] = -1024;
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
  c = qwen3_omni_30b();
  c["talker_config"]["text_config"].erase("shared_expert_intermediate_size");  // transformers has no default for it
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
  c = qwen3_omni_30b();
  c["talker_config"]["text_config"]["attention_bias"] = "no";
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
  c = qwen3_omni_30b();
  c["code2wav_config"]["decoder_dim"] = 8;  // 8 halved four times is 0 channels
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
  c = qwen3_omni_30b();
  c["thinker_config"]["audio_config"].erase("downsample_hidden_size");
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
  c = qwen3_omni_30b();
  c["thinker_config"]["vision_config"]["image_size"] = 8;  // under one 16-pixel patch
  EXPECT_THROW(model_from_config(c, "config.json"), InputError);
}

TEST(ConfigOmni3, AFolderCountsTheThinkersTensorsAndSumsTheSpeechOnesApart) {
  // A tiny Qwen3-Omni checkpoint: the thinker's tensors under "thinker.", the talker's and code2wav's beside them.
  nlohmann::json config = qwen3_omni_30b();
  config["thinker_config"]["text_config"] = {{"model_type", "qwen3_omni_moe_text"}, {"hidden_size", 64}, {"intermediate_size", 128},
                                             {"num_hidden_layers", 1}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                                             {"head_dim", 16}, {"vocab_size", 256}, {"tie_word_embeddings", false}};
  config["thinker_config"].erase("vision_config");
  config["thinker_config"].erase("audio_config");
  vc::testing::SafetensorsWriter w;
  w.tensor("thinker.model.embed_tokens.weight", "BF16", {256, 64}, 32'768);
  w.tensor("thinker.lm_head.weight", "BF16", {256, 64}, 32'768);
  w.tensor("thinker.model.layers.0.self_attn.q_proj.weight", "BF16", {64, 64}, 8'192);
  w.tensor("talker.model.codec_embedding.weight", "BF16", {3072, 16}, 98'304);
  w.tensor("code2wav.decoder.6.conv.weight", "BF16", {1, 96, 7}, 1'344);
  vc::testing::MemorySource src(w.whole(), "model.safetensors");
  const std::vector<SafetensorsFile> files = {read_safetensors(src)};
  const Model m = model_from_checkpoint(config, "config.json", files);
  // The weights are the thinker's three tensors: 32,768 x 2 + 8,192 B.
  EXPECT_EQ(m.native.bytes, 73'728u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::OutputHead), 16'384u);
  // Apart: 3072 x 16 + 96 x 7 = 49,824 params in 98,304 + 1,344 = 99,648 B.
  ASSERT_TRUE(m.provenance.count("params.speech_tensors"));
  EXPECT_NE(m.provenance.at("params.speech_tensors").find("2 speech-output tensors (talker., token2wav., code2wav.): 49,824 params, 99,648 B"),
            std::string::npos)
      << m.provenance.at("params.speech_tensors");
}

TEST(ConfigOmni3, AudioSecondsAddAutsThirteenTokensASecond) {
  // processing_qwen3_omni_moe.py: one clip (truncation False) of 100 frames a second, 13 tokens per
  // 100 frames (_get_feat_extract_output_lengths): 75 s are 7,500 frames, 75 x 13 = 975 tokens, so
  // the 8K context's cache lines hold 8,192 + 975 = 9,167 tokens.
  const std::string dir = ::testing::TempDir() + "qwen3-omni";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << qwen3_omni_30b().dump();
  const CliResult r = run_cli("estimate " + dir + "/config.json --context 8192 --audio-seconds 75 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["components"]["audio_tokens"], 975);
  EXPECT_EQ(j["inputs"]["context_tokens"], 9167);
  EXPECT_EQ(j["components"]["lines"][0]["id"], "audio.tokens");
  EXPECT_NE(j["components"]["lines"][0]["formula"].get<std::string>().find("7,500 log-mel frames"), std::string::npos);
}
