// Kimi K3 read from its published config.json (the catalogue's copy, data/models/kimi-k3/config.json,
// sourced in its facts.json) through the Kimi Linear mapper: layer split, cache and state widths,
// parameters and native size, each against figures worked by hand from the config and the
// checkpoint's tensor shapes (stated at each assertion).
#include <gtest/gtest.h>

#include <string>

#include "catalogue/catalogue.h"
#include "catalogue/embedded_data.h"
#include "core/error.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"

using namespace vc;

namespace {

nlohmann::json k3_config() {
  return parse_config_text(std::string(embedded::file_text("models/kimi-k3/config.json")), "Kimi-K3.json");
}

}  // namespace

TEST(KimiK3Geometry, LayerSplitFromOneIndexedLists) {
  Model m = model_from_config(k3_config(), "Kimi-K3.json");
  ASSERT_EQ(m.layers.size(), 93u);
  EXPECT_EQ(m.layer_count(AttentionKind::Latent), 24u);        // full_attn_layers 4,8,...,92,93
  EXPECT_EQ(m.layer_count(AttentionKind::LinearState), 69u);   // kda_layers
  EXPECT_EQ(m.layers[3].attention.kind, AttentionKind::Latent);  // 1-indexed 4 -> 0-indexed 3
  EXPECT_EQ(m.layers[92].attention.kind, AttentionKind::Latent);
  EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::LinearState);
  EXPECT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::Dense);  // first_k_dense_replace 1
  EXPECT_EQ(m.layers[1].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_EQ(m.layers[1].feed_forward.experts, 896u);
  EXPECT_EQ(m.layers[1].feed_forward.experts_per_token, 16u);
}

TEST(KimiK3Geometry, CacheAndStateWidths) {
  Model m = model_from_config(k3_config(), "Kimi-K3.json");
  const AttentionSpec& mla = m.layers[3].attention;
  EXPECT_EQ(mla.values_per_token(), 576u);  // 512 latent + 64 rope, no index keys in K3
  const AttentionSpec& kda = m.layers[0].attention;
  EXPECT_EQ(kda.state_values, 96u * 128 * 128);  // 1,572,864: one 128x128 matrix per head
  EXPECT_EQ(kda.conv_values, 3u * 3 * 12288);    // 110,592: (kernel-1) x 3 x heads x head_dim
}

TEST(KimiK3Geometry, ParametersMatchTheTensorShapeCount) {
  Model m = model_from_config(k3_config(), "Kimi-K3.json");
  // Routed experts: 92 layers x 896 x 3 x (3072 x 3584) = 2,722,740,830,208 exactly.
  EXPECT_EQ(m.params.by_class.at(ParamClass::RoutedExperts), 2'722'740'830'208ull);
  // Text model 2.7795T from the tensor shapes; we derive within 0.01%. The vision tower, counted from
  // vision_config (test_config_tower.cpp: 447,358,976), comes on top.
  EXPECT_EQ(m.params.by_class.at(ParamClass::Vision), 447'358'976ull);
  EXPECT_NEAR(static_cast<double>(m.params.derived_total - 447'358'976ull), 2.7795e12, 2.7795e12 * 1e-4);
  // Active per token excluding the input embedding: 104.19B.
  EXPECT_NEAR(static_cast<double>(m.params.derived_active), 104.19e9, 104.19e9 * 1e-4);
}

TEST(KimiK3Geometry, NativeSizeDerivedFromQuantizationConfig) {
  Model m = model_from_config(k3_config(), "Kimi-K3.json");
  // MXFP4 (4.25 bits) on routed experts only, bf16 elsewhere: 1,446.46 GB + ~114 GB = ~1,560.8 GB,
  // against 1,560.94 GB measured on disk (the vision tower's 0.45B bf16 is not in the text config).
  EXPECT_EQ(m.native.format, "MXFP4");
  EXPECT_NEAR(static_cast<double>(m.native.bytes), 1560.0e9, 1560.0e9 * 0.002);
  // The catalogue replaces it with the measured files.
  EXPECT_EQ(Catalogue::builtin().find("kimi-k3")->native.bytes, 1'560'936'091'448ull);
  EXPECT_TRUE(Catalogue::builtin().find("kimi-k3")->native.measured);
}

TEST(KimiK3Geometry, BrokenConfigsNameTheField) {
  auto cfg = k3_config();
  cfg["text_config"].erase("kv_lora_rank");
  try {
    model_from_config(cfg, "Kimi-K3.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("kv_lora_rank"), std::string::npos) << e.what();
  }
  cfg = k3_config();
  cfg["text_config"]["linear_attn_config"]["full_attn_layers"] = {0, 4};  // 1-indexed: 0 is invalid
  EXPECT_THROW(model_from_config(cfg, "Kimi-K3.json"), InputError);
  cfg = k3_config();
  cfg["text_config"]["num_experts_per_token"] = 1000;  // more than 896 experts
  EXPECT_THROW(model_from_config(cfg, "Kimi-K3.json"), InputError);
  cfg = k3_config();
  cfg["text_config"]["num_hidden_layers"] = -3;
  EXPECT_THROW(model_from_config(cfg, "Kimi-K3.json"), InputError);
  EXPECT_THROW(parse_config_text("{\"a\": [[[[" + std::string(200, '[') + "]]]]}", "deep.json"), InputError);
  EXPECT_THROW(parse_config_text("not json", "x.json"), InputError);
}
