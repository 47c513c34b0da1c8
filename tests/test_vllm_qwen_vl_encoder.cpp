// vLLM's profile of the dynamic-resolution Qwen2-VL / Qwen2.5-VL / Qwen3-VL vision towers on their
// dummy batch (src/engines/vllm_qwen_vl_encoder.cpp), worked by hand from vLLM's qwen2_vl.py /
// qwen2_5_vl.py / qwen3_vl.py and the published configs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "cli_runner.h"
#include "engines/vllm_budget.h"
#include "engines/vllm_encoder.h"
#include "engines/vllm_qwen_vl_encoder.h"
#include "engines/vllm_tower_skip.h"
#include "estimate/estimate.h"
#include "sources/config/config_mapper.h"
#include "engine_line.h"
#include "published_configs.h"

using namespace vc;
using vc::testing::qwen25_vl_7b;
using vc::testing::qwen2_vl_7b;

TEST(VllmQwenVlEncoder, TheTowersGeometryIsRecordedForTheEngines) {
  const Model m = model_from_config(qwen25_vl_7b(), "config.json");
  ASSERT_TRUE(m.vision_encoder);
  const VisionEncoderSpec& t = *m.vision_encoder;
  EXPECT_EQ(t.kind, "Qwen2.5-VL");
  EXPECT_EQ(t.hidden, 1280u);
  EXPECT_EQ(t.ffn, 3420u);
  EXPECT_EQ(t.patch, 14u);
  EXPECT_EQ(t.channels, 3u);
  EXPECT_EQ(t.temporal_patch, 2u);
  EXPECT_EQ(t.spatial_merge, 2u);
  EXPECT_EQ(t.text_hidden, 3584u);
  EXPECT_TRUE(vllm_qwen_vl_modelled(t));
  const Model q2 = model_from_config(qwen2_vl_7b(), "config.json");
  ASSERT_TRUE(q2.vision_encoder);
  EXPECT_EQ(q2.vision_encoder->kind, "Qwen2-VL");
  EXPECT_EQ(q2.vision_encoder->ffn, 5120u);  // embed_dim 1280 x mlp_ratio 4
  EXPECT_FALSE(model_from_config(nlohmann::json::parse(R"({"model_type": "qwen2", "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000})"), "config.json").vision_encoder);
}

TEST(VllmQwenVlEncoder, TheBudgetSizesAVideoByItsLimitAndEncodesOneVideosFrames) {
  const Model m = model_from_config(qwen25_vl_7b(), "config.json");
  const VisionEncoderSpec& t = *m.vision_encoder;
  // smart_resize of a 9,999,999 px square with max_pixels 12,845,056 (= 3,584^2): beta = 9,999,999 / 3,584,
  // floor(3,584 / 28) = 128 a side: 128 x 128 = 16,384 tokens (65,536 patches of 14 px).
  // Video at max_model_len 128,000: frame pairs of 16,384 tokens fit 7 times (114,688; 8 would be 131,072),
  // so 14 frames in all. The budget (encoder_budget.py, mm_counts = the limits) gives a video
  // max(1, min(14 / 999, 14)) = 1 frame, padded to 2: one pair, 16,384 tokens. A tie: max by (tokens,
  // name) takes "video". The item encoded (_get_mm_dummy_batch, mm_counts={video: 1}) gets
  // min(14 / 1, 14) = 14 frames, 7 pairs: 114,688 tokens.
  const VllmQwenVlDummy d = vllm_qwen_vl_dummy(t, 128000, {});
  EXPECT_EQ(d.image_tokens, 16384u);
  EXPECT_EQ(d.budget_video_frames, 1u);
  EXPECT_EQ(d.budget_video_tokens, 16384u);
  EXPECT_EQ(d.video_frames, 14u);
  EXPECT_EQ(d.video_tokens, 114688u);
  EXPECT_EQ(d.modality, "video");
  EXPECT_EQ(d.tokens_per_item, 16384u);
  EXPECT_EQ(d.item_tokens, 114688u);
  EXPECT_EQ(d.limit, 999u);
  auto dummy_with = [&](const char* limits) {
    VllmMmLimits l;
    read_vllm_mm_limits(l, "--limit-mm-per-prompt", limits);
    return vllm_qwen_vl_dummy(t, 128000, l);
  };
  // One video a prompt: the budget's video is the 14-frame one too, more than an image.
  const VllmQwenVlDummy v = dummy_with("video=1");
  EXPECT_EQ(v.video_frames, 14u);
  EXPECT_EQ(v.tokens_per_item, 114688u);
  EXPECT_EQ(v.item_tokens, 114688u);
  EXPECT_EQ(v.modality, "video");
  // Two videos a prompt: the budget's video gets 14 / 2 = 7 frames, padded to 8: 4 pairs, 65,536 tokens.
  const VllmQwenVlDummy w = dummy_with("video=2");
  EXPECT_EQ(w.budget_video_frames, 7u);
  EXPECT_EQ(w.tokens_per_item, 65536u);
  EXPECT_EQ(w.item_tokens, 114688u);
  // Below two pairs' worth of context (16,384 tokens) a video is one frame either way.
  const VllmQwenVlDummy s = vllm_qwen_vl_dummy(t, 8192, {});
  EXPECT_EQ(s.video_frames, 1u);
  EXPECT_EQ(s.item_tokens, 16384u);
  // Video at 0: the image is profiled; both at 0: nothing.
  EXPECT_EQ(dummy_with("video=0").modality, "image");
  EXPECT_EQ(dummy_with("image=0,video=0").modality, "");
  VllmMmLimits none;
  read_vllm_mm_limits(none, "--limit-mm-per-prompt", "image=0,video=0");
  const VllmEncoderProfile p = vllm_encoder_profile(m, 8192, 1024, 128000, 1, 2, none);
  EXPECT_EQ(p.items, 0u);
  EXPECT_NE(p.note.find("image and video 0"), std::string::npos) << p.note;
}

TEST(VllmQwenVlEncoder, Qwen25Vl7bAtTp1WithVllmDefaultsOnAn80GbCard) {
  const Model m = model_from_config(qwen25_vl_7b(), "config.json");
  // vLLM serve defaults on an 80 GB card: 8,192 batched tokens, 1,024 sequences; max_model_len 128,000
  // (max_position_embeddings). Items from the budget's 16,384-token video:
  // min(max(8,192, 16,384) / 16,384 = 1, 1,024 x min(999, 128,000 / 16,384 = 7)) = 1; the item encoded is
  // the 14-frame video: 7 x 65,536 = 458,752 patches.
  const VllmEncoderProfile p = vllm_encoder_profile(m, 8192, 1024, 128000, 1, 2);
  EXPECT_EQ(p.items, 1u);
  EXPECT_EQ(p.tokens_per_item, 114688u);
  EXPECT_EQ(p.pixel_bytes, 1'078'984'704u);  // 458,752 patches x (3 x 2 x 14^2 = 1,176) x 2 B
  EXPECT_EQ(p.output_bytes, 822'083'584u);   // 114,688 tokens x 3,584 x 2 B
  // Encoding: 458,752 patches x (2 x 1,280 + 3 x 3,420 = 12,820) x 2 B = 11,762,401,280, plus the pixels.
  EXPECT_EQ(p.encoder_peak, 12'841'385'984u);
  EXPECT_NE(p.note.find("max_pixels 12845056"), std::string::npos) << p.note;
  EXPECT_NE(p.formula.find("1 dummy 14-frame videos of 114688 tokens (min(max(8192, 16384) / 16384"), std::string::npos) << p.formula;
  EXPECT_NE(p.formula.find("mm_counts={video: 1} at max_model_len 128000"), std::string::npos) << p.formula;
  EXPECT_NE(p.source.find("qwen2_vl.py"), std::string::npos);
  EXPECT_NE(p.source.find("preprocessor_config.json"), std::string::npos);
  // TP 2 splits the MLP: 458,752 x (2,560 + 3 x 1,710) x 2 B = 7,055,605,760 + 1,078,984,704.
  EXPECT_EQ(vllm_encoder_profile(m, 8192, 1024, 128000, 2, 2).encoder_peak, 8'134'590'464u);
  // video=1: the same single 14-frame item.
  VllmMmLimits one_video;
  read_vllm_mm_limits(one_video, "--limit-mm-per-prompt", "video=1");
  const VllmEncoderProfile v = vllm_encoder_profile(m, 8192, 1024, 128000, 1, 2, one_video);
  EXPECT_EQ(v.items, 1u);
  EXPECT_EQ(v.encoder_peak, 12'841'385'984u);
  // With video off the image is profiled: 65,536 patches; pixels 154,140,672 B, outputs 16,384 x 3,584 x 2 B,
  // encoding 65,536 x 25,640 B = 1,680,343,040 + pixels.
  VllmMmLimits no_video;
  read_vllm_mm_limits(no_video, "--limit-mm-per-prompt", "video=0");
  const VllmEncoderProfile i = vllm_encoder_profile(m, 8192, 1024, 128000, 1, 2, no_video);
  EXPECT_EQ(i.pixel_bytes, 154'140'672u);
  EXPECT_EQ(i.output_bytes, 117'440'512u);
  EXPECT_EQ(i.encoder_peak, 1'834'483'712u);
  // A short context: one frame, one item; the budget max(8,192, 16,384) one item.
  const VllmEncoderProfile s = vllm_encoder_profile(m, 8192, 1024, 8192, 1, 2);
  EXPECT_EQ(s.items, 1u);
  EXPECT_EQ(s.encoder_peak, 1'834'483'712u);
  // 40,000 batched tokens: 40,000 / 16,384 = 2 of the budget's items, each the 14-frame video.
  const VllmEncoderProfile b = vllm_encoder_profile(m, 40000, 1024, 128000, 1, 2);
  EXPECT_EQ(b.items, 2u);
  EXPECT_EQ(b.output_bytes, 2 * 822'083'584u);
}

TEST(VllmQwenVlEncoder, Qwen2Vl7bHasATwoMatrixMlp) {
  const Model m = model_from_config(qwen2_vl_7b(), "config.json");
  // max_model_len 32,768: 2 frame pairs fit (4 frames; 5 pad to 6, 49,152 tokens): the item encoded is a
  // 4-frame video of 32,768 tokens, 131,072 patches; the budget's video (999 a prompt) one frame, one item.
  // Encoding: 131,072 x (2 x 1,280 + 2 x 5,120 = 12,800) x 2 B = 3,355,443,200 + pixels 131,072 x 1,176 x 2 B.
  const VllmEncoderProfile p = vllm_encoder_profile(m, 8192, 1024, 32768, 1, 2);
  EXPECT_EQ(p.items, 1u);
  EXPECT_EQ(p.pixel_bytes, 308'281'344u);
  EXPECT_EQ(p.encoder_peak, 3'663'724'544u);
}

TEST(VllmQwenVlEncoder, TheBudgetTakesTheEncoderPassWhenItIsTheLarger) {
  const Model m = model_from_config(qwen25_vl_7b(), "config.json");
  VllmBudgetSettings s;
  s.card_bytes = 85'028'077'568;  // 79.19 GiB
  s.gpu_memory_utilization = 0.9;
  s.weight_bytes = m.native.bytes;
  Model without_tower = m;
  without_tower.vision_encoder.reset();
  const VllmBudget with = vllm_budget(m, s), without = vllm_budget(without_tower, s);
  // peak_with: max(encoder pass, held + decoder's peak); never below the decoder's peak plus the held batch.
  EXPECT_GE(with.activation, without.activation + 154'140'672u + 117'440'512u);
  EXPECT_GE(with.activation, 1'834'483'712u);
}

TEST(VllmQwenVlEncoder, TheVllmActivationLineNamesTheDummyBatch) {
  const nlohmann::json l = vc::testing::vllm_h100_line(qwen25_vl_7b(), "qwen25-vl-vllm", "activation");
  ASSERT_TRUE(l.is_object());
  const std::string formula = l["formula"];
  // At estimate's default context a video is one frame, so the item is the 16,384-token one worked above:
  // held 154,140,672 + 117,440,512.
  EXPECT_NE(formula.find("max(encoder pass 1834483712 B, encoder batch held 271581184 B"), std::string::npos) << formula;
  EXPECT_NE(l["source"].get<std::string>().find("qwen2_vl.py"), std::string::npos);
  const std::string assumption = l["assumption"];
  EXPECT_EQ(assumption.find("left out"), std::string::npos) << assumption;
  EXPECT_NE(assumption.find("published max_pixels 12845056"), std::string::npos) << assumption;
  // At a 128,000 context the item encoded is the 14-frame video, as worked above: held 1,078,984,704 + 822,083,584.
  const std::string dir = ::testing::TempDir() + "qwen25-vl-vllm";
  const nlohmann::json long_context =
      vc::testing::engine_line("estimate " + dir + "/config.json --engine vllm --gpu H100-sxm --context 128000 --json", "kind", "activation");
  ASSERT_TRUE(long_context.is_object());
  EXPECT_NE(long_context["formula"].get<std::string>().find("max(encoder pass 12841385984 B, encoder batch held 1901068288 B"), std::string::npos)
      << long_context["formula"];
}

TEST(VllmQwenVlEncoder, VllmSkipsTheTowerWhenImagesAndVideosAreOff) {
  const Model m = model_from_config(qwen25_vl_7b(), "config.json");
  const WeightsFigure native = resolve_weights(m, "native");
  // Qwen2.5-VL-7B's vision_config by hand (Qwen2_5_VisionTransformer, qwen2_5_vl.py): patch embedding
  // 3 x 2 x 14^2 x 1,280 = 1,505,280 (no bias); a block: 2 RMSNorms 2,560 + qkv 1,280 x 3,840 + 3,840 =
  // 4,919,040 + proj 1,280^2 + 1,280 = 1,639,680 + gate and up 2 x (1,280 x 3,420 + 3,420) = 8,762,040
  // + down 3,420 x 1,280 + 1,280 = 4,378,880: 19,702,200, x 32 = 630,470,400; merger: RMSNorm 1,280 +
  // 5,120^2 + 5,120 = 26,219,520 + 5,120 x 3,584 + 3,584 = 18,353,664: 44,574,464. Tower 676,550,144
  // parameters, 1,353,100,288 B at bf16; all of it is `visual`, built inside
  // _mark_tower_model(vllm_config, {"image", "video"}).
  VllmMmLimits both_off, image_off, video_off;
  read_vllm_mm_limits(both_off, "--limit-mm-per-prompt", "image=0,video=0");
  read_vllm_mm_limits(image_off, "--limit-mm-per-prompt", "image=0");
  read_vllm_mm_limits(video_off, "--limit-mm-per-prompt", "video=0");
  const VllmTowerSkip off = vllm_tower_skip(m, native, "auto", both_off);
  EXPECT_TRUE(off.skipped());
  EXPECT_EQ(off.params, 676'550'144u);
  EXPECT_EQ(off.bytes, 1'353'100'288u);
  EXPECT_NE(off.source.find("qwen2_5_vl.py"), std::string::npos) << off.source;
  EXPECT_NE(off.assumption.find("image, video 0"), std::string::npos) << off.assumption;
  // One modality still on keeps the tower.
  EXPECT_FALSE(vllm_tower_skip(m, native, "auto", image_off).skipped());
  EXPECT_FALSE(vllm_tower_skip(m, native, "auto", video_off).skipped());
  // Qwen2-VL's class builds `visual` the same way.
  const Model q2 = model_from_config(qwen2_vl_7b(), "config.json");
  EXPECT_TRUE(vllm_tower_skip(q2, resolve_weights(q2, "native"), "auto", both_off).skipped());
}

namespace {
const Model& catalogue_model(const char* id) {
  const Model* m = Catalogue::builtin().find(id);
  if (!m) throw std::runtime_error(std::string("catalogue lacks ") + id);
  return *m;
}
}  // namespace

TEST(VllmQwenVlEncoder, Qwen3Vl8bProfilesTheLargestImageWithItsDeepStackOutputs) {
  // Qwen/Qwen3-VL-8B-Instruct's vision_config: hidden 1,152, intermediate 4,304, patch 16, in_channels 3,
  // temporal_patch 2, spatial_merge 2, out_hidden_size 4,096, deepstack_visual_indexes [8, 16, 24].
  const Model& m = catalogue_model("qwen3-vl-8b");
  ASSERT_TRUE(m.vision_encoder);
  const VisionEncoderSpec& t = *m.vision_encoder;
  EXPECT_EQ(t.kind, "Qwen3-VL");
  EXPECT_EQ(t.text_hidden, 4096u);
  EXPECT_EQ(t.deepstack, 3u);
  EXPECT_TRUE(vllm_qwen_vl_modelled(t));
  // smart_resize of a 9,999,999 px square with longest_edge 16,777,216 (= 4,096^2), factor 16 x 2 = 32:
  // beta = 9,999,999 / 4,096, floor(4,096 / 32) = 128 a side: 128 x 128 = 16,384 tokens (65,536 patches).
  // The dummy video (vLLM main, Qwen3VLDummyInputsBuilder.get_dummy_mm_data): 2 frames, each the largest image within
  // video_preprocessor_config.json's longest_edge 25,165,824 / temporal_patch_size 2 = 12,582,912 px:
  // 12,582,912 / 32^2 = 12,288 merged tokens, closest factor pair: isqrt 110, the largest divisor of 12,288 = 2^12 x 3
  // up to 110 is 96, so 96 x 128 (3,072 x 4,096 px; 128 / 96 <= 200). video_smart_resize over 2 frames:
  // 2 x 3,072 x 4,096 = 25,165,824 <= longest_edge, kept. One frame pair: 96 x 128 = 12,288 tokens, whatever max_model_len.
  // Image 16,384 > video 12,288: the image is profiled.
  const VllmQwenVlDummy d = vllm_qwen_vl_dummy(t, 262144, {});
  EXPECT_EQ(d.image_tokens, 16384u);
  EXPECT_EQ(d.video_frames, 2u);
  EXPECT_EQ(d.video_grid_h, 96u);
  EXPECT_EQ(d.video_grid_w, 128u);
  EXPECT_EQ(d.video_tokens, 12288u);
  EXPECT_EQ(d.modality, "image");
  EXPECT_EQ(d.tokens_per_item, 16384u);
  EXPECT_EQ(d.limit, 999u);
  // The same at a short context and with one video a prompt: the Qwen3-VL dummy video does not grow with either.
  VllmMmLimits one_video;
  read_vllm_mm_limits(one_video, "--limit-mm-per-prompt", "video=1");
  EXPECT_EQ(vllm_qwen_vl_dummy(t, 8192, {}).video_tokens, 12288u);
  EXPECT_EQ(vllm_qwen_vl_dummy(t, 262144, one_video).modality, "image");
  // vLLM serve defaults on an 80 GB card (8,192 batched tokens, 1,024 sequences), max_model_len 262,144, TP 1:
  // items min(max(8,192, 16,384) / 16,384 = 1, 1,024 x min(999, 262,144 / 16,384 = 16)) = 1.
  const VllmEncoderProfile p = vllm_encoder_profile(m, 8192, 1024, 262144, 1, 2);
  EXPECT_EQ(p.items, 1u);
  EXPECT_EQ(p.tokens_per_item, 16384u);
  EXPECT_EQ(p.pixel_bytes, 201'326'592u);   // 65,536 patches x (3 x 2 x 16^2 = 1,536) x 2 B
  EXPECT_EQ(p.output_bytes, 536'870'912u);  // 16,384 tokens x (1 + 3 DeepStack) x 4,096 x 2 B
  // Encoding: 65,536 patches x (2 x 1,152 + 2 x 4,304 = 10,912) x 2 B = 1,430,257,664 (linear_fc1's output and its
  // GELU), plus the pixels and the three DeepStack outputs held past block 24: 16,384 x 3 x 4,096 x 2 B = 402,653,184.
  EXPECT_EQ(p.encoder_peak, 2'034'237'440u);
  EXPECT_NE(p.formula.find("vLLM profiles the image"), std::string::npos) << p.formula;
  EXPECT_NE(p.formula.find("(1 + 3 DeepStack) x 4096"), std::string::npos) << p.formula;
  EXPECT_NE(p.note.find("max_pixels 16777216"), std::string::npos) << p.note;
  EXPECT_NE(p.source.find("qwen3_vl.py"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("video_preprocessor_config.json"), std::string::npos) << p.source;
  // TP 2 splits linear_fc1: 65,536 x (2,304 + 2 x 2,152) x 2 B = 866,123,776 + 201,326,592 + 402,653,184.
  EXPECT_EQ(vllm_encoder_profile(m, 8192, 1024, 262144, 2, 2).encoder_peak, 1'470'103'552u);
  // Video off changes nothing (the image was profiled); so does max_model_len 8,192, below the image's 16,384 tokens:
  // the budget max(8,192, 16,384) still takes one image and a prompt at least one item.
  VllmMmLimits no_video, no_image, none;
  read_vllm_mm_limits(no_video, "--limit-mm-per-prompt", "video=0");
  read_vllm_mm_limits(no_image, "--limit-mm-per-prompt", "image=0");
  read_vllm_mm_limits(none, "--limit-mm-per-prompt", "image=0,video=0");
  EXPECT_EQ(vllm_encoder_profile(m, 8192, 1024, 262144, 1, 2, no_video).encoder_peak, 2'034'237'440u);
  const VllmEncoderProfile short_context = vllm_encoder_profile(m, 8192, 1024, 8192, 1, 2);
  EXPECT_EQ(short_context.items, 1u);
  EXPECT_EQ(short_context.encoder_peak, 2'034'237'440u);
  // Image off: the 2-frame video of 12,288 tokens. Items min(max(8,192, 12,288) / 12,288 = 1, 1,024 x min(999, 262,144 /
  // 12,288 = 21)) = 1; 12,288 x 2^2 = 49,152 patches; pixels 49,152 x 1,536 x 2 B = 150,994,944; outputs 12,288 x (1 + 3) x
  // 4,096 x 2 B = 402,653,184; encoding 49,152 x 10,912 x 2 B = 1,072,693,248 + pixels + DeepStack outputs 12,288 x 3 x
  // 4,096 x 2 B = 301,989,888: 1,525,678,080.
  const VllmEncoderProfile v = vllm_encoder_profile(m, 8192, 1024, 262144, 1, 2, no_image);
  EXPECT_EQ(v.items, 1u);
  EXPECT_EQ(v.tokens_per_item, 12288u);
  EXPECT_EQ(v.pixel_bytes, 150'994'944u);
  EXPECT_EQ(v.output_bytes, 402'653'184u);
  EXPECT_EQ(v.encoder_peak, 1'525'678'080u);
  EXPECT_NE(v.formula.find("1 dummy 2-frame videos of 12288 tokens"), std::string::npos) << v.formula;
  EXPECT_NE(v.formula.find("96 x 128 tokens a frame pair"), std::string::npos) << v.formula;
  const VllmEncoderProfile off = vllm_encoder_profile(m, 8192, 1024, 262144, 1, 2, none);
  EXPECT_EQ(off.items, 0u);
  EXPECT_NE(off.note.find("image and video 0"), std::string::npos) << off.note;
}

TEST(VllmQwenVlEncoder, Qwen35HasTheQwen3VlTowerWithoutDeepStack) {
  // Qwen3.5-27B's vision_config is Qwen3-VL's tower (1,152 / 4,304, patch 16) with no deepstack_visual_indexes and
  // out_hidden_size 5,120; vLLM builds it with Qwen3_VisionTransformer (qwen3_5.py).
  const Model& m = catalogue_model("qwen3.5-27b");
  ASSERT_TRUE(m.vision_encoder);
  EXPECT_EQ(m.vision_encoder->kind, "Qwen3-VL");
  EXPECT_EQ(m.vision_encoder->deepstack, 0u);
  const VllmEncoderProfile p = vllm_encoder_profile(m, 8192, 1024, 262144, 1, 2);
  EXPECT_EQ(p.items, 1u);
  EXPECT_EQ(p.output_bytes, 167'772'160u);  // 16,384 x 5,120 x 2 B
  // 1,430,257,664 + pixels 201,326,592, nothing held for DeepStack.
  EXPECT_EQ(p.encoder_peak, 1'631'584'256u);
}

TEST(VllmQwenVlEncoder, TheQwen3Vl8bActivationLineCountsTheEncoderPass) {
  const nlohmann::json line = vc::testing::engine_line("estimate qwen3-vl-8b --engine vllm --gpu h100-sxm --context 32K --json", "kind", "activation");
  ASSERT_TRUE(line.is_object());
  // At 32K context (max_model_len 32,768 >= 16,384; 999 <= 32,768 / 4): items min(max(8,192, 16,384) / 16,384 = 1,
  // 1,024 x min(999, 32,768 / 16,384 = 2)) = 1, so the pass and the held batch are as worked above (held: 201,326,592 +
  // 536,870,912).
  const std::string formula = line["formula"];
  EXPECT_NE(formula.find("encoder pass 2034237440 B, encoder batch held 738197504 B"), std::string::npos) << formula;
  EXPECT_EQ(line["assumption"].get<std::string>().find("left out"), std::string::npos) << line["assumption"];
}
