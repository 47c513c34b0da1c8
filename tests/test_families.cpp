// Every family mapper against the hand-worked figures of shared/reference/architectures.md (cited
// by section), the exact published parameter counts where they exist, and the catalogue's
// bookkeeping. Cache figures are bytes per token of context at f16 (2 B per value), summed over
// the layers whose cache grows with context; state figures are bytes per sequence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "estimate/estimate.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"
#include "test_data.h"
#include "published_configs.h"

using namespace vc;

namespace {

const Model& cat(const char* id) {
  const Model* m = Catalogue::builtin().find(id);
  if (!m) throw std::runtime_error(std::string("catalogue has no ") + id);
  return *m;
}

// f16 cache bytes per token over the layers whose cache grows with context (full, latent).
uint64_t growing_f16_bytes_per_token(const Model& m) {
  uint64_t values = 0;
  for (const auto& l : m.layers) {
    for (const AttentionSpec* a : {&l.attention, l.parallel_mixer ? &*l.parallel_mixer : nullptr}) {
      if (a && a->grows_with_context()) values += a->values_per_token();
    }
  }
  return values * 2;
}

// Recurrent state bytes for one sequence through vc::estimate, in the given layout.
uint64_t state_bytes(const Model& m, StateLayout layout) {
  Scenario s;
  s.context = 1;
  s.state_layout = layout;
  return estimate(m, s).state_bytes;
}

// vc::estimate's cache at a context of one token (window layers hold that one token too).
uint64_t estimate_cache_one_token(const Model& m) {
  Scenario s;
  s.context = 1;
  return estimate(m, s).cache_bytes;
}

double billions(uint64_t n) { return static_cast<double>(n) / 1e9; }
double megabytes(uint64_t n) { return static_cast<double>(n) / 1e6; }
uint64_t param(const Model& m, ParamClass c) {
  auto it = m.params.by_class.find(c);
  return it == m.params.by_class.end() ? 0 : it->second;
}

Model from_text(const std::string& json) { return model_from_config(parse_config_text(json, "test config.json"), "test config.json"); }

// A published config.json kept in tests/data/configs/ with its source.
Model from_published(const std::string& file) { return from_text(vc::testing::test_config_text(file)); }

// A two-layer Llama config for the quantization_config tests.
nlohmann::json tiny_llama_config(const std::string& dtype) {
  auto c = nlohmann::json::parse(R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":256,"num_attention_heads":4,
    "num_key_value_heads":2,"intermediate_size":512,"vocab_size":1000})");
  c["torch_dtype"] = dtype;
  return c;
}

bool any_warning_names(const Model& m, const std::string& key) {
  for (const auto& w : m.warnings) if (w.find(key) != std::string::npos) return true;
  return false;
}

}  // namespace

// architectures.md section 1: Llama 3.1 has no head_dim key; 4096 / 32 = 128.
TEST(Families, Llama31CacheAndExactParams) {
  const Model& m8 = cat("llama-3.1-8b");
  EXPECT_EQ(m8.family, "llama");
  EXPECT_EQ(m8.layer_count(AttentionKind::Full), 32u);
  EXPECT_EQ(growing_f16_bytes_per_token(m8), 131072u);   // 32 * 8 * 128 * 2 * 2
  EXPECT_EQ(estimate_cache_one_token(m8), 131072u);
  // Exact totals: Hugging Face safetensors metadata of meta-llama/Llama-3.1-{8B,70B,405B}.
  EXPECT_EQ(m8.params.derived_total, 8'030'261'248u);
  const Model& m70 = cat("llama-3.1-70b");
  EXPECT_EQ(growing_f16_bytes_per_token(m70), 327680u);  // 80 layers
  EXPECT_EQ(m70.params.derived_total, 70'553'706'496u);
  const Model& m405 = cat("llama-3.1-405b");
  EXPECT_EQ(growing_f16_bytes_per_token(m405), 516096u);  // 126 layers
  EXPECT_EQ(m405.params.derived_total, 405'853'388'800u);
}

// Section 1: explicit head_dim 128 beats hidden/heads = 80 (which would give 163,840).
TEST(Families, Qwen3DenseUsesExplicitHeadDim) {
  EXPECT_EQ(growing_f16_bytes_per_token(cat("qwen3-32b")), 262144u);
  EXPECT_EQ(growing_f16_bytes_per_token(cat("qwen3-8b")), 147456u);  // 36 * 8 * 128 * 4
}

// Sections 1 and 8: Qwen3-235B-A22B 192,512 B/token; 235.1 B total, 22.2 B active (the
// reference's active figure counts the input embedding; ours leaves the lookup out).
TEST(Families, Qwen3MoeParams) {
  const Model& m = cat("qwen3-235b-a22b");
  EXPECT_EQ(growing_f16_bytes_per_token(m), 192512u);
  EXPECT_NEAR(billions(m.params.derived_total), 235.1, 0.05);
  EXPECT_NEAR(billions(m.params.derived_active + param(m, ParamClass::Embedding)), 22.2, 0.05);
  EXPECT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_EQ(m.layers[0].feed_forward.experts, 128u);
  EXPECT_EQ(m.layers[0].feed_forward.experts_per_token, 8u);
}

// mlp_only_layers and decoder_sparse_step decide which layers are sparse (transformers Qwen3Moe:
// sparse iff not listed and (i + 1) % step == 0). Hand-made 4-layer config.
TEST(Families, QwenMoeLayerSelection) {
  Model m = from_text(R"({"model_type":"qwen3_moe","num_hidden_layers":4,"hidden_size":64,"num_attention_heads":4,
    "num_key_value_heads":2,"head_dim":16,"intermediate_size":128,"vocab_size":100,"num_experts":4,"num_experts_per_tok":2,
    "moe_intermediate_size":32,"decoder_sparse_step":2,"mlp_only_layers":[3]})");
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::Dense);  // (0+1) % 2 != 0
  EXPECT_EQ(m.layers[1].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_EQ(m.layers[2].feed_forward.kind, FeedForwardKind::Dense);
  EXPECT_EQ(m.layers[3].feed_forward.kind, FeedForwardKind::Dense);  // listed in mlp_only_layers
  // Params by hand: embed + head 2*100*64 = 12,800; final norm 64; per layer attention
  // q 64*64 + k 64*32 + v 64*32 + o 64*64 = 12,288 + q/k norms 32 = 12,320, norms 128;
  // dense 3*64*128 = 24,576 (x3); MoE layer 4 experts * 3*64*32 = 24,576 + router 4*64 = 256.
  EXPECT_EQ(m.params.derived_total, 12800u + 64 + 4 * (12320 + 128) + 3 * 24576 + 24576 + 256);
}

// Section 6: Qwen3-Next-80B-A3B: 12 full + 36 Gated DeltaNet; 24,576 B/token; state 79.0 MB f32,
// 39.5 MB all-16-bit.
TEST(Families, Qwen3NextHybrid) {
  const Model& m = cat("qwen3-next-80b-a3b");
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 12u);
  EXPECT_EQ(m.layer_count(AttentionKind::LinearState), 36u);
  EXPECT_EQ(m.layers[3].attention.kind, AttentionKind::Full);  // (3 + 1) % 4 == 0
  EXPECT_EQ(growing_f16_bytes_per_token(m), 24576u);
  EXPECT_EQ(state_bytes(m, StateLayout::F32), 36u * 548864 * 4);  // 79,036,416
  EXPECT_NEAR(megabytes(state_bytes(m, StateLayout::F32)), 79.0, 0.05);
  EXPECT_NEAR(megabytes(state_bytes(m, StateLayout::F16)), 39.5, 0.05);
}

// Section 6: Qwen3.5-397B-A17B: 45 GDN (64 value heads) + 15 full; 30,720 B/token; 192 MB per
// sequence with bf16 conv and f32 state. MTP layer counted apart; total without it ~396 B
// (the vendor's 397 B includes the vision encoder).
TEST(Families, Qwen35Hybrid) {
  const Model& m = cat("qwen3.5-397b-a17b");
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 15u);
  EXPECT_EQ(m.layer_count(AttentionKind::LinearState), 45u);
  EXPECT_EQ(m.layers.size(), 60u);  // the MTP layer is not in the stack
  EXPECT_EQ(growing_f16_bytes_per_token(m), 30720u);
  EXPECT_EQ(state_bytes(m, StateLayout::Mixed), 45u * (36864 * 2 + 1048576 * 4));
  EXPECT_NEAR(megabytes(state_bytes(m, StateLayout::Mixed)), 192.1, 0.05);
  EXPECT_GT(param(m, ParamClass::Mtp), 0u);
  // The language model alone (the MTP layer and the 0.456B vision tower are counted beside it).
  EXPECT_NEAR(billions(m.params.derived_total - param(m, ParamClass::Mtp) - param(m, ParamClass::Vision)), 396.3, 0.5);
}

// Sections 3 and 8: DeepSeek-V3: 61 MLA layers x 576 values = 70,272 B/token (not 128 heads of
// per-head K/V); 671.0 B total and 36.6 B active without the input embedding (37.5 B with);
// the MTP layer adds 11.6 B plus its own embedding and head copies (2 x 129,280 x 7,168 = 1.85 B,
// shipped in the checkpoint): 13.46 B, not a layer of the stack.
TEST(Families, DeepSeekV3) {
  const Model& m = cat("deepseek-v3");
  EXPECT_EQ(m.layers.size(), 61u);
  EXPECT_EQ(m.layer_count(AttentionKind::Latent), 61u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 70272u);
  EXPECT_EQ(estimate_cache_one_token(m), 70272u);
  const uint64_t mtp = param(m, ParamClass::Mtp);
  EXPECT_NEAR(billions(mtp), 11.6 + 2 * 129280.0 * 7168 / 1e9, 0.05);
  EXPECT_NEAR(billions(m.params.derived_total - mtp), 671.0, 0.05);
  EXPECT_NEAR(billions(m.params.derived_active), 36.6, 0.05);
  // With the input embedding we get 37.55 B; the reference prints 37.5 B (its 36.6 B + 0.93 B).
  EXPECT_NEAR(billions(m.params.derived_active + param(m, ParamClass::Embedding)), 37.5, 0.06);
  EXPECT_EQ(m.layers[2].feed_forward.kind, FeedForwardKind::Dense);  // first_k_dense_replace 3
  EXPECT_EQ(m.layers[3].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_EQ(m.layers[3].feed_forward.shared_width, 2048u);
  // Native FP8 (block 128x128: 8 + 32/16384 bits) on attention, MLPs, experts and the MTP layer
  // (680.68 B params -> 680.84 GB) plus bf16 embeddings, head, routers, norms (1.96 B -> 3.92 GB),
  // plus the MTP layer's own embedding and head copies, which the checkpoint keeps in bf16 beside the
  // FP8 layer (1.853 B -> 3.707 GB).
  EXPECT_EQ(m.native.format, "FP8");
  EXPECT_NEAR(billions(m.native.bytes), 684.76 + 2 * 1.853, 0.05);
}

// Section 4: V3.2 adds one 128-value index key per layer: llama.cpp f16 61 * (1,152 + 256) = 85,888.
TEST(Families, DeepSeekV32IndexKeys) {
  const Model& m = cat("deepseek-v3.2");
  EXPECT_EQ(growing_f16_bytes_per_token(m), 85888u);
  EXPECT_EQ(m.layers[0].attention.index_key_dim, 128u);
  EXPECT_EQ(m.layers[60].attention.index_topk, 2048u);
}

// Sections 3 and 8: Kimi K2 70,272 B/token; 1,026 B total; 32.9 B active (with input embedding).
TEST(Families, KimiK2) {
  const Model& m = cat("kimi-k2");
  EXPECT_EQ(m.family, "kimi_k2");
  EXPECT_EQ(growing_f16_bytes_per_token(m), 70272u);
  EXPECT_NEAR(billions(m.params.derived_total), 1026.4, 0.5);
  EXPECT_NEAR(billions(m.params.derived_active + param(m, ParamClass::Embedding)), 32.9, 0.05);
  EXPECT_EQ(param(m, ParamClass::Mtp), 0u);  // num_nextn_predict_layers 0
}

// Section 5: Kimi-Linear-48B-A3B: 7 MLA + 20 KDA; 8,064 B/token; 44.9 MB f32 state.
TEST(Families, KimiLinear) {
  const Model& m = cat("kimi-linear-48b-a3b");
  EXPECT_EQ(m.layer_count(AttentionKind::Latent), 7u);
  EXPECT_EQ(m.layer_count(AttentionKind::LinearState), 20u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 8064u);
  EXPECT_EQ(state_bytes(m, StateLayout::F32), 20u * 561152 * 4);
  EXPECT_NEAR(megabytes(state_bytes(m, StateLayout::F32)), 44.9, 0.05);
  EXPECT_EQ(m.max_context, 1048576u);  // facts: config model_max_length
}

// Sections 2 and 8: gpt-oss-120b: 18 full layers (36,864 B/token) + 18 window-128 layers;
// 116.8 B total, 114.7 B in experts, 5.13 B active without the input embedding (5.71 B with).
TEST(Families, GptOss) {
  const Model& m = cat("gpt-oss-120b");
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 18u);
  EXPECT_EQ(m.layer_count(AttentionKind::SlidingWindow), 18u);
  EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::SlidingWindow);
  EXPECT_EQ(m.layers[0].attention.window, 128u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 36864u);
  EXPECT_NEAR(billions(m.params.derived_total), 116.8, 0.05);
  EXPECT_NEAR(billions(param(m, ParamClass::RoutedExperts)), 114.7, 0.05);
  EXPECT_NEAR(billions(m.params.derived_active), 5.13, 0.005);
  EXPECT_NEAR(billions(m.params.derived_active + param(m, ParamClass::Embedding)), 5.71, 0.005);
  EXPECT_EQ(m.native.format, "MXFP4");
  EXPECT_EQ(growing_f16_bytes_per_token(cat("gpt-oss-20b")), 24576u);  // 12 full layers
}

// Section 2: gemma-3-27b: layer i global iff (i+1) % 6 == 0 -> 10 global of 62 (81,920 B/token),
// 52 local with a 1,024 window.
TEST(Families, Gemma3Pattern) {
  const Model& m = cat("gemma-3-27b");
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 10u);
  EXPECT_EQ(m.layer_count(AttentionKind::SlidingWindow), 52u);
  EXPECT_EQ(m.layers[5].attention.kind, AttentionKind::Full);
  EXPECT_EQ(m.layers[4].attention.kind, AttentionKind::SlidingWindow);
  EXPECT_EQ(m.layers[4].attention.window, 1024u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 81920u);
  EXPECT_EQ(m.vocab, 262208u);  // Gemma3TextConfig default (the config omits it)
  EXPECT_TRUE(m.tied_embeddings);
}

// Gemma 2 (google/gemma-2-9b-it, -27b-it and -2b-it config.json: the sizes below; every config
// has head_dim, sliding_window 4096, vocab 256,000, 8,192 positions and no tie key, so the head is
// tied). By hand (q + k + v + o, GeGLU MLP 3 x hidden x width, 4 RMSNorms a layer, tied
// embedding, final norm):
//   9B: 3,584 x (16 + 8 + 8 + 16) x 256 = 44,040,192 + 3 x 3,584 x 14,336 = 154,140,672 + 14,336
//     = 198,195,200 a layer x 42 = 8,324,198,400 + 256,000 x 3,584 = 917,504,000 + 3,584 = 9,241,705,984;
//   27B: 4,608 x (32 + 16 + 16 + 32) x 128 = 56,623,104 + 3 x 4,608 x 36,864 = 509,607,936 + 18,432
//     = 566,249,472 x 46 = 26,047,475,712 + 1,179,648,000 + 4,608 = 27,227,128,320;
//   2B: 2,304 x (8 + 4 + 4 + 8) x 256 = 14,155,776 + 3 x 2,304 x 9,216 = 63,700,992 + 9,216
//     = 77,865,984 x 26 = 2,024,515,584 + 589,824,000 + 2,304 = 2,614,341,888.
// The Hub pages print 9.24B, 27.2B and 2.61B, and vLLM 0.19 loads 17.22, 50.72 and 4.9 GiB in bf16
// (tests/data/engine-logs.json): 2 B x these counts are 17.21, 50.71 and 4.87 GiB. Layers alternate
// local (window 4096) and global, the first local: 21 of the 9B's 42 layers keep the whole context,
// 8 KV heads of 256 each, 21 x 2 x 8 x 256 x 2 B = 172,032 B a token.
TEST(Families, Gemma2CountsAndAlternatingWindows) {
  auto gemma2 = [](uint64_t hidden, uint64_t width, uint64_t layers, uint64_t heads, uint64_t kv, uint64_t head_dim) {
    return from_text(fmt::format(R"({{"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": {}, "intermediate_size": {},
      "num_hidden_layers": {}, "num_attention_heads": {}, "num_key_value_heads": {}, "head_dim": {}, "vocab_size": 256000,
      "max_position_embeddings": 8192, "sliding_window": 4096, "query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0,
      "final_logit_softcapping": 30.0, "hidden_activation": "gelu_pytorch_tanh", "torch_dtype": "bfloat16"}})",
                                 hidden, width, layers, heads, kv, head_dim));
  };
  const Model m9 = gemma2(3584, 14336, 42, 16, 8, 256);
  EXPECT_EQ(m9.params.derived_total, 9'241'705'984u);
  EXPECT_TRUE(m9.tied_embeddings);
  EXPECT_EQ(m9.layer_count(AttentionKind::Full), 21u);
  EXPECT_EQ(m9.layers[0].attention.kind, AttentionKind::SlidingWindow);
  EXPECT_EQ(m9.layers[0].attention.window, 4096u);
  EXPECT_EQ(m9.layers[1].attention.kind, AttentionKind::Full);
  EXPECT_EQ(growing_f16_bytes_per_token(m9), 172'032u);
  EXPECT_EQ(gemma2(4608, 36864, 46, 32, 16, 128).params.derived_total, 27'227'128'320u);
  EXPECT_EQ(gemma2(2304, 9216, 26, 8, 4, 256).params.derived_total, 2'614'341'888u);
}

// Phi-2 (microsoft/phi-2 config.json: hidden 2,560, MLP 10,240, 32 layers of 32 heads (MHA, head
// dim 80), vocabulary 51,200, untied, qk_layernorm false). By hand after transformers' PhiForCausalLM:
// per layer input LayerNorm 2 x 2,560 = 5,120; q, k, v 3 x (2,560^2 + 2,560) = 19,668,480; dense
// 2,560^2 + 2,560 = 6,556,160; fc1 2,560 x 10,240 + 10,240 = 26,224,640; fc2 10,240 x 2,560 + 2,560
// = 26,216,960: 78,671,360 x 32 = 2,517,483,520; embedding 51,200 x 2,560 = 131,072,000; final
// LayerNorm 5,120; lm_head with bias 131,072,000 + 51,200 = 131,123,200. In all 2,779,683,840, the
// Hub page's 2.78B; vLLM 0.19 loads 5.19 GiB in half precision (tests/data/engine-logs.json), 2 B x
// this count being 5.18 GiB. The cache: 32 layers x 2 x 32 x 80 x 2 B = 327,680 B a token.
TEST(Families, Phi2ParallelBlockWithBiases) {
  const Model m = from_text(vc::testing::phi2().dump());
  EXPECT_EQ(m.params.derived_total, 2'779'683'840u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::OutputHead), 131'123'200u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 327'680u);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  // PhiMLP is fc1 and fc2, no gate: the engines' replays lay it out as two matrices.
  EXPECT_FALSE(m.layers[0].feed_forward.gated);
  EXPECT_EQ(m.layers[0].feed_forward.up_rows(10240), 10240u);
}

// The non-gated families (starcoder2, gpt_neox, falcon, gpt2, gpt_bigcode): before their mappers
// they fell to the generic reading, a gated MLP of three matrices, 50% too many MLP weights.
// Published exact counts: the Hub API's safetensors.total as llmfit's hf_models.json @ a3e0eb27
// records it (tests/data/hub-parameter-counts.json says how it is read), and Pythia's model card.

// bigcode/starcoder2-3b (tests/data/configs/starcoder2-3b.json: hidden 3,072, 30 layers, 24 heads of
// 128, 2 KV heads, MLP 12,288, vocabulary 49,152, use_bias, tied). By hand after transformers'
// Starcoder2ForCausalLM: per layer q 3,072^2 + 3,072, k and v 2 x (3,072 x 256 + 256), o 3,072^2 +
// 3,072 = 20,453,888; c_fc 3,072 x 12,288 + 12,288 and c_proj 12,288 x 3,072 + 3,072 = 75,512,832;
// two LayerNorms 4 x 3,072 = 12,288: 95,979,008 x 30 = 2,879,370,240; embedding 49,152 x 3,072 =
// 150,994,944; final LayerNorm 6,144. In all 3,030,371,328, the Hub's safetensors.total exactly.
// Cache: 30 layers x 2 x 2 heads x 128 x 2 B = 30,720 B a token (every layer full: see the mapper).
TEST(Families, StarCoder2NonGatedWithBiases) {
  const Model m = from_published("starcoder2-3b.json");
  EXPECT_EQ(m.family, "starcoder2");
  EXPECT_EQ(m.params.derived_total, 3'030'371'328u);
  EXPECT_EQ(m.layers[0].param_count(), 95'979'008u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 30'720u);
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 30u);
  EXPECT_EQ(m.max_context, 16'384u);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  EXPECT_FALSE(m.layers[0].feed_forward.gated);
  EXPECT_EQ(m.layers[0].feed_forward.up_rows(12288), 12288u);
  // The generic reading it replaces counted gate, up and down without biases: 3 x 3,072 x 12,288
  // = 113,246,208 a layer against 75,512,832.
  EXPECT_EQ(m.layers[0].params.at(ParamClass::DenseMlp), 75'512'832u);
}

// EleutherAI/pythia-1.4b (hidden 2,048, 24 layers, 16 heads of 128, MLP 8,192, vocabulary 50,304,
// untied). By hand after transformers' GPTNeoXForCausalLM: per layer two LayerNorms 4 x 2,048 =
// 8,192; query_key_value 2,048 x 6,144 + 6,144 = 12,589,056; dense 2,048^2 + 2,048 = 4,196,352;
// dense_h_to_4h 2,048 x 8,192 + 8,192 = 16,785,408; dense_4h_to_h 8,192 x 2,048 + 2,048 =
// 16,779,264: 50,358,272 x 24 = 1,208,598,528, + final LayerNorm 4,096 = 1,208,602,624 (the model
// card's non-embedding count); embed_in and embed_out 2 x 50,304 x 2,048 = 206,045,184. In all
// 1,414,647,808: Pythia's model card ("Naming convention and parameter count",
// https://huggingface.co/EleutherAI/pythia-1.4b) and the Hub's safetensors.total of pythia-1.4b-deduped.
// Pythia-1B (16 layers of 8 heads, the same widths): 16 x 50,358,272 + 4,096 + 206,045,184 =
// 1,011,781,632, the card's figure. Cache: 24 x 2 x 2,048 x 2 B = 196,608 B a token.
TEST(Families, GptNeoxPythiaMatchesTheModelCard) {
  const Model m = from_text(vc::testing::pythia_1_4b().dump());
  EXPECT_EQ(m.family, "gpt_neox");
  EXPECT_EQ(m.params.derived_total, 1'414'647'808u);
  EXPECT_EQ(m.params.derived_total - param(m, ParamClass::Embedding) - param(m, ParamClass::OutputHead), 1'208'602'624u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 196'608u);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  EXPECT_FALSE(m.layers[0].feed_forward.gated);
  auto one_b = vc::testing::pythia_1_4b();
  one_b["num_hidden_layers"] = 16;
  one_b["num_attention_heads"] = 8;
  EXPECT_EQ(from_text(one_b.dump()).params.derived_total, 1'011'781'632u);
  // Heads that do not divide the width name the key.
  auto bad = vc::testing::pythia_1_4b();
  bad["num_attention_heads"] = 15;
  try {
    from_text(bad.dump());
    FAIL() << "accepted 15 heads over 2,048";
  } catch (const InputError& e) {
    EXPECT_NE(e.subject().find("num_attention_heads"), std::string::npos) << e.what();
  }
}

// tiiuae/falcon-7b (tests/data/configs/falcon-7b.json: hidden 4,544, 32 layers, 71 heads of 64,
// multi_query, parallel_attn, no bias, vocabulary 65,024, tied). By hand after transformers'
// FalconForCausalLM: per layer input_layernorm 2 x 4,544 = 9,088; query_key_value 4,544 x (4,544 +
// 2 x 64) = 21,229,568; dense 4,544^2 = 20,647,936; dense_h_to_4h and dense_4h_to_h 2 x 4,544 x
// 18,176 = 165,183,488: 207,070,080 x 32 = 6,626,242,560; word_embeddings 65,024 x 4,544 =
// 295,469,056; ln_f 9,088. Loaded: 6,921,720,704. The checkpoint also stores lm_head.weight, the
// tied head's copy: + 295,469,056 = 7,217,189,760, the Hub's safetensors.total. Cache: one KV head,
// 32 x 2 x 64 x 2 B = 8,192 B a token.
// falcon-40b (new_decoder_architecture, 8 KV heads, 60 layers of 8,192, 128 heads): per layer
// ln_attn and ln_mlp 4 x 8,192 = 32,768; qkv 8,192 x (128 + 16) x 64 = 75,497,472; dense 8,192^2 =
// 67,108,864; MLP 2 x 8,192 x 32,768 = 536,870,912: 679,510,016 x 60 = 40,770,600,960; + 65,024 x
// 8,192 = 532,676,608 + ln_f 16,384 = 41,303,293,952 loaded; + the head's copy 532,676,608 =
// 41,835,970,560, the Hub's count. Cache 60 x 2 x 8 x 64 x 2 B = 122,880 B a token.
// falcon-180B (80 layers of 14,848, 232 heads, 8 KV heads): per layer 4 x 14,848 + 14,848 x 248 x
// 64 + 14,848^2 + 2 x 14,848 x 59,392 = 2,219,894,784; x 80 + 65,024 x 14,848 + 29,696 =
// 178,557,088,768 loaded; + 965,476,352 = 179,522,565,120, the Hub's count. Cache 163,840 B a token.
TEST(Families, FalconMultiQueryAndGroupedKv) {
  const Model f7 = from_published("falcon-7b.json");
  EXPECT_EQ(f7.family, "falcon");
  EXPECT_EQ(f7.params.derived_total, 6'921'720'704u);
  EXPECT_EQ(f7.params.derived_total + f7.vocab * f7.hidden, 7'217'189'760u);
  EXPECT_EQ(f7.layers[0].attention.kv_heads, 1u);
  EXPECT_EQ(growing_f16_bytes_per_token(f7), 8'192u);
  EXPECT_FALSE(f7.layers[0].feed_forward.gated);
  EXPECT_EQ(f7.layers[0].feed_forward.dense_width, 18'176u);
  EXPECT_TRUE(f7.warnings.empty()) << f7.warnings.front();

  const Model f40 = from_text(vc::testing::falcon_40b().dump());
  EXPECT_EQ(f40.params.derived_total, 41'303'293'952u);
  EXPECT_EQ(f40.params.derived_total + f40.vocab * f40.hidden, 41'835'970'560u);
  EXPECT_EQ(growing_f16_bytes_per_token(f40), 122'880u);
  const Model f180 = from_text(vc::testing::falcon_180b().dump());
  EXPECT_EQ(f180.params.derived_total, 178'557'088'768u);
  EXPECT_EQ(f180.params.derived_total + f180.vocab * f180.hidden, 179'522'565'120u);
  EXPECT_EQ(growing_f16_bytes_per_token(f180), 163'840u);

  // The first (RefinedWeb-era) key names read the same.
  auto old = nlohmann::json::parse(R"({"model_type":"falcon","n_embed":8192,"n_layer":60,"n_head":128,"n_head_kv":8,
    "new_decoder_architecture":true,"vocab_size":65024})");
  EXPECT_EQ(from_text(old.dump()).params.derived_total, 41'303'293'952u);
  // The first configs' model types, as vLLM's RWConfig reads them (tiiuae/falcon-40b and falcon-7b
  // before their rename: RWForCausalLM, no new_decoder_architecture key): a hidden size of 8,192 is
  // the new architecture, and the counts are the ones above.
  auto rw40 = nlohmann::json::parse(R"({"alibi": false, "architectures": ["RWForCausalLM"], "bias": false, "hidden_size": 8192,
    "model_type": "RefinedWeb", "n_head": 128, "n_head_kv": 8, "n_layer": 60, "parallel_attn": true, "vocab_size": 65024})");
  const Model r40 = from_text(rw40.dump());
  EXPECT_EQ(r40.family, "RefinedWeb");  // read by the Falcon mapper
  EXPECT_EQ(r40.params.derived_total, 41'303'293'952u);
  EXPECT_EQ(growing_f16_bytes_per_token(r40), 122'880u);
  auto rw7 = nlohmann::json::parse(R"({"alibi": false, "architectures": ["RWForCausalLM"], "bias": false, "hidden_size": 4544,
    "model_type": "RefinedWebModel", "multi_query": true, "n_head": 71, "n_layer": 32, "parallel_attn": true, "vocab_size": 65024})");
  EXPECT_EQ(from_text(rw7.dump()).params.derived_total, 6'921'720'704u);
  // Without parallel_attn RWConfig's default is false: a second LayerNorm a layer, 32 x 2 x 4,544 more.
  rw7.erase("parallel_attn");
  EXPECT_EQ(from_text(rw7.dump()).params.derived_total, 6'921'720'704u + 290'816u);
  // Bad values name their key and what is accepted.
  auto bad = vc::testing::falcon_40b();
  bad["num_kv_heads"] = 7;
  try {
    from_text(bad.dump());
    FAIL() << "accepted 7 KV heads for 128 heads";
  } catch (const InputError& e) {
    EXPECT_NE(e.subject().find("num_kv_heads"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("divisor"), std::string::npos) << e.what();
  }
  bad = vc::testing::falcon_40b();
  bad["num_ln_in_parallel_attn"] = 3;
  EXPECT_THROW(from_text(bad.dump()), InputError);
}

// bigcode/gpt_bigcode-santacoder (tests/data/configs/gpt_bigcode-santacoder.json: n_embd 2,048, 24
// layers, 16 heads of 128, multi_query, n_inner 8,192, 2,048 positions, vocabulary 49,280). By hand
// after transformers' GPTBigCodeForCausalLM: per layer ln_1 and ln_2 4 x 2,048 = 8,192; c_attn 2,048
// x (2,048 + 2 x 128) + 2,304 = 4,720,896; c_proj 2,048^2 + 2,048 = 4,196,352; c_fc 2,048 x 8,192 +
// 8,192 = 16,785,408; mlp c_proj 8,192 x 2,048 + 2,048 = 16,779,264: 42,490,112 x 24 =
// 1,019,762,688; wte 49,280 x 2,048 = 100,925,440; wpe 2,048 x 2,048 = 4,194,304; ln_f 4,096. In all
// 1,124,886,528, the Hub's safetensors.total exactly. Cache: 24 x 2 x 128 x 2 B = 12,288 B a token.
// bigcode/starcoder (n_embd 6,144, 40 layers, 48 heads, n_inner 24,576, 8,192 positions, vocabulary
// 49,152): per layer 24,576 + 6,144 x 6,400 + 6,400 + 6,144^2 + 6,144 + 2 x 6,144 x 24,576 + 24,576
// + 6,144 = 379,128,064; x 40 + 49,152 x 6,144 + 8,192 x 6,144 + 12,288 = 15,517,456,384 loaded;
// the checkpoint's lm_head copy + 301,989,888 = 15,819,446,272, the Hub's count.
// openai-community/gpt2 (768 wide, 12 layers of 12 heads, 1,024 positions, vocabulary 50,257, n_inner
// absent: 3,072): per layer 3,072 + 768 x 2,304 + 2,304 + 768^2 + 768 + 768 x 3,072 + 3,072 + 3,072 x
// 768 + 768 = 7,087,872; x 12 + 50,257 x 768 + 1,024 x 768 + 1,536 = 124,439,808. The Hub's
// 137,022,720 adds the 12 causal-mask buffers h.N.attn.bias the checkpoint stores, 1,024^2 each.
TEST(Families, GptBigCodeAndGpt2LearnedPositions) {
  const Model sc = from_published("gpt_bigcode-santacoder.json");
  EXPECT_EQ(sc.family, "gpt_bigcode");
  EXPECT_EQ(sc.params.derived_total, 1'124'886'528u);
  EXPECT_EQ(sc.layers[0].attention.kv_heads, 1u);
  EXPECT_FALSE(sc.layers[0].attention.rotary);
  EXPECT_EQ(growing_f16_bytes_per_token(sc), 12'288u);
  EXPECT_EQ(sc.max_context, 2'048u);
  EXPECT_FALSE(sc.layers[0].feed_forward.gated);
  EXPECT_TRUE(sc.warnings.empty()) << sc.warnings.front();

  const Model star = from_text(vc::testing::starcoder().dump());
  EXPECT_EQ(star.params.derived_total, 15'517'456'384u);
  EXPECT_EQ(star.params.derived_total + star.vocab * star.hidden, 15'819'446'272u);
  EXPECT_EQ(growing_f16_bytes_per_token(star), 20'480u);  // 40 x 2 x 128 x 2 B

  const Model g2 = from_text(vc::testing::gpt2().dump());
  EXPECT_EQ(g2.family, "gpt2");
  EXPECT_EQ(g2.params.derived_total, 124'439'808u);
  EXPECT_EQ(g2.params.derived_total + 12u * 1024 * 1024, 137'022'720u);
  EXPECT_EQ(g2.layers[0].attention.kv_heads, 12u);
  EXPECT_EQ(growing_f16_bytes_per_token(g2), 36'864u);  // 12 x 2 x 768 x 2 B
  EXPECT_FALSE(g2.layers[0].feed_forward.gated);

  try {
    from_text(R"({"model_type":"gpt2","n_layer":2,"n_head":2,"n_positions":16,"vocab_size":10})");
    FAIL() << "accepted a GPT-2 config without a width";
  } catch (const InputError& e) {
    EXPECT_NE(e.subject().find("n_embd"), std::string::npos) << e.what();
  }
}

// Families the generic reading got wrong by a whole head or by norms, now mapped (the layouts:
// docs/readers.md). google/gemma-2b (tests/data/configs/gemma-2b.json: hidden 2,048, 18 layers, 8
// heads and 1 KV head of 256, MLP 16,384, vocabulary 256,000) leaves tie_word_embeddings out, and
// GemmaConfig ties by default; the generic reading added an untied head of 524,288,000. By hand: per
// layer q and o 2 x 2,048 x 2,048, k and v 2 x 2,048 x 256, gate, up and down 3 x 2,048 x 16,384, two
// norms 4,096: 110,104,576 x 18 = 1,981,882,368; embedding 524,288,000; final norm 2,048. In all
// 2,506,172,416, the Hub's safetensors.total of google/gemma-2b. Cache 18 x 2 x 256 x 2 B = 18,432.
TEST(Families, GemmaTiesItsHeadByDefault) {
  const Model m = from_published("gemma-2b.json");
  EXPECT_EQ(m.family, "gemma");
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.params.derived_total, 2'506'172'416u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 18'432u);
  EXPECT_TRUE(m.layers[0].feed_forward.gated);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
}

// CohereForAI/c4ai-command-r-08-2024 (tests/data/configs/c4ai-command-r-08-2024.json: hidden 8,192,
// 40 layers, 64 heads and 8 KV heads of 128, MLP 24,576, vocabulary 256,000, use_qk_norm false, no
// tie_word_embeddings key: CohereConfig ties). By hand after CohereForCausalLM: per layer q and o 2 x
// 8,192^2, k and v 2 x 8,192 x 1,024 = 150,994,944; gate, up, down 3 x 8,192 x 24,576 = 603,979,776;
// input_layernorm 8,192 (one, a weight without a bias): 754,982,912 x 40 = 30,199,316,480; embedding
// 2,097,152,000; final norm 8,192. In all 32,296,476,672, the figure the Hub gives for
// CohereLabs/aya-expanse-32b, a model of this geometry. With use_qk_norm (Command R+): + 40 x (64 + 8)
// x 128 = 368,640. Cache 40 x 2 x 8 x 128 x 2 B = 163,840 B a token.
TEST(Families, CohereParallelBlockTiedHead) {
  const Model m = from_published("c4ai-command-r-08-2024.json");
  EXPECT_EQ(m.family, "cohere");
  EXPECT_EQ(m.params.derived_total, 32'296'476'672u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 163'840u);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  auto qk = nlohmann::json::parse(vc::testing::test_config_text("c4ai-command-r-08-2024.json"));
  qk["use_qk_norm"] = true;
  EXPECT_EQ(from_text(qk.dump()).params.derived_total, 32'296'476'672u + 368'640u);
}

// Cohere 2 (Command R7B, Command A) keeps Cohere's tensors and slides its attention: the same
// Command R geometry read as model_type cohere2 has the same 32,296,476,672 parameters, and with no
// layer_types its layers 4, 8, ... 40 (i + 1 a multiple of sliding_window_pattern, 4 by default:
// transformers' Cohere2Config.__post_init__) are full, the other 30 a window of sliding_window 4,096
// (the default); only the sliding layers rotate by position. The cache that grows with context:
// 10 full layers x 2 x 8 x 128 x 2 B = 40,960 B a token. With layer_types naming every layer full,
// the whole 163,840 B again.
TEST(Families, Cohere2SlidesThreeLayersOfFour) {
  auto cfg = nlohmann::json::parse(vc::testing::test_config_text("c4ai-command-r-08-2024.json"));
  cfg["model_type"] = "cohere2";
  cfg["architectures"] = {"Cohere2ForCausalLM"};
  const Model m = from_text(cfg.dump());
  EXPECT_EQ(m.family, "cohere2");
  EXPECT_EQ(m.params.derived_total, 32'296'476'672u);
  ASSERT_EQ(m.layers.size(), 40u);
  EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::SlidingWindow);
  EXPECT_EQ(m.layers[0].attention.window, 4096u);
  EXPECT_TRUE(m.layers[0].attention.rotary);
  EXPECT_EQ(m.layers[3].attention.kind, AttentionKind::Full);
  EXPECT_FALSE(m.layers[3].attention.rotary);  // Cohere2Attention.forward: RoPE only when sliding
  EXPECT_EQ(m.layers[39].attention.kind, AttentionKind::Full);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 40'960u);
  cfg["layer_types"] = std::vector<std::string>(40, "full_attention");
  EXPECT_EQ(growing_f16_bytes_per_token(from_text(cfg.dump())), 163'840u);
}

// allenai/OLMo-2-1124-7B's published config.json (https://huggingface.co/allenai/OLMo-2-1124-7B/blob/main/config.json:
// hidden 4,096, 32 layers of 32 heads (MHA, 128), MLP 11,008, vocabulary 100,352, untied). By hand after
// Olmo2ForCausalLM: per layer q, k, v, o 4 x 4,096^2 = 67,108,864; q_norm and k_norm 2 x 4,096; gate,
// up, down 3 x 4,096 x 11,008 = 135,266,304; post-attention and post-feed-forward norms 8,192:
// 202,391,552 x 32 = 6,476,529,664; embedding and head 2 x 100,352 x 4,096 = 822,083,584; final norm
// 4,096. In all 7,298,617,344, the Hub's safetensors.total of allenai/OLMo-2-1124-7B-Instruct (the
// generic reading, without the q/k norms, was 262,144 short).
// ibm-granite/granite-3.3-8b-instruct (tests/data/engine-logs.json's config: hidden 4,096, 40 layers,
// 32 heads, 8 KV heads, MLP 12,800, vocabulary 49,159, tied): per layer 2 x 4,096^2 + 2 x 4,096 x 1,024
// + 3 x 4,096 x 12,800 + 8,192 = 199,237,632; x 40 + 49,159 x 4,096 + 4,096 = 8,170,864,640, the Hub's
// count; read by the Llama mapper now, without the generic reading's warnings.
TEST(Families, Olmo2QkNormsAndGraniteAsLlama) {
  const Model o = from_text(R"({"architectures": ["Olmo2ForCausalLM"], "attention_bias": false, "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 11008, "max_position_embeddings": 4096, "model_type": "olmo2", "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 32, "rms_norm_eps": 1e-06, "rope_theta": 500000, "tie_word_embeddings": false, "torch_dtype": "float32",
    "vocab_size": 100352})");
  EXPECT_EQ(o.family, "olmo2");
  EXPECT_EQ(o.params.derived_total, 7'298'617'344u);
  EXPECT_EQ(growing_f16_bytes_per_token(o), 524'288u);  // 32 x 2 x 4,096 x 2 B
  EXPECT_TRUE(o.warnings.empty()) << o.warnings.front();
  const Model g = from_text(R"({"model_type": "granite", "hidden_size": 4096, "intermediate_size": 12800, "num_hidden_layers": 40,
    "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 49159, "max_position_embeddings": 131072, "tie_word_embeddings": true,
    "torch_dtype": "bfloat16"})");
  EXPECT_EQ(g.family, "granite");
  EXPECT_EQ(g.params.derived_total, 8'170'864'640u);
  EXPECT_TRUE(g.warnings.empty()) << g.warnings.front();
}

// google/gemma-3-4b-it's published config.json names only hidden 2560, width 10240 and 34 layers in
// its text_config: transformers' Gemma3TextConfig defaults give 8 query heads, 4 KV heads and
// head_dim 256. By hand: layers 5, 11, 17, 23, 29 are global (5 of 34), each keeps K and V of
// 4 x 256 at 2 bytes: 5 x 2 x 4 x 256 x 2 = 20,480 B a token; the defaults are said in provenance.
TEST(Families, Gemma3HeadsFromTransformersDefaults) {
  const Model& m = cat("gemma-3-4b");
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 5u);
  EXPECT_EQ(m.layers[5].attention.query_heads, 8u);
  EXPECT_EQ(m.layers[5].attention.kv_heads, 4u);
  EXPECT_EQ(m.layers[5].attention.head_dim_k, 256u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 20480u);
  ASSERT_TRUE(m.provenance.count("num_attention_heads"));
  EXPECT_NE(m.provenance.at("num_attention_heads").find("Gemma3TextConfig default"), std::string::npos);
  // An explicit key still wins: the 27B names 32 heads, 16 KV heads and head_dim 128.
  EXPECT_EQ(cat("gemma-3-27b").layers[5].attention.head_dim_k, 128u);
}

// Section 2: Mistral-7B-v0.3 sets sliding_window null: all 32 layers full, 131,072 B/token.
// A v0.1-style 4,096 window makes every layer a window layer.
TEST(Families, MistralWindow) {
  const Model& m = cat("mistral-7b-v0.3");
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 32u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 131072u);
  Model v01 = from_text(R"({"model_type":"mistral","num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,
    "num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,"sliding_window":4096})");
  EXPECT_EQ(v01.layer_count(AttentionKind::SlidingWindow), 32u);
  EXPECT_EQ(v01.layers[0].attention.window, 4096u);
}

// Sections 1 and 8: Mixtral 8x7B: 131,072 B/token; 46.7 B total, 12.9 B per token (Mistral AI).
TEST(Families, Mixtral) {
  const Model& m = cat("mixtral-8x7b");
  EXPECT_EQ(growing_f16_bytes_per_token(m), 131072u);
  EXPECT_NEAR(billions(m.params.derived_total), 46.7, 0.05);
  EXPECT_NEAR(billions(m.params.derived_active + param(m, ParamClass::Embedding)), 12.9, 0.05);
}

// Section 1 (GQA) for GLM-4.7 / MiniMax-M2.5: 92 * 8 * 128 * 4 = 376,832 and 62 * 8 * 128 * 4
// = 253,952 B/token. Vendor sizes (GLM-4.5 355 B / 32 B; MiniMax-M2 230 B / 10 B) within 2%.
TEST(Families, Glm47AndMiniMaxM25) {
  const Model& glm = cat("glm-4.7");
  EXPECT_EQ(growing_f16_bytes_per_token(glm), 376832u);
  EXPECT_NEAR(billions(glm.params.derived_total), 355.0, 355.0 * 0.02);
  EXPECT_GT(param(glm, ParamClass::Mtp), 0u);
  const Model& mm = cat("minimax-m2.5");
  EXPECT_EQ(growing_f16_bytes_per_token(mm), 253952u);
  EXPECT_NEAR(billions(mm.params.derived_total), 230.0, 230.0 * 0.02);
  EXPECT_NEAR(billions(mm.params.derived_active), 10.0, 10.0 * 0.05);
}

// Section 7: Nemotron-H-56B: 54 M, 10 *, 54 -; 40,960 B/token; 919 MB f32 state.
TEST(Families, NemotronH56B) {
  const Model& m = cat("nemotron-h-56b");
  EXPECT_EQ(m.layers.size(), 118u);
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 10u);
  EXPECT_EQ(m.layer_count(AttentionKind::LinearState), 54u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 40960u);
  EXPECT_EQ(state_bytes(m, StateLayout::F32), 54u * 4255744 * 4);
  EXPECT_NEAR(megabytes(state_bytes(m, StateLayout::F32)), 919.0, 0.5);
  EXPECT_EQ(m.layers[0].attention.state_family, vc::StateFamily::Mamba2);
  // Its '-' layers are NemotronHMLP (up_proj, squared ReLU, down_proj): not gated.
  const auto mlp = std::find_if(m.layers.begin(), m.layers.end(), [](const LayerConfig& l) { return l.feed_forward.kind == FeedForwardKind::Dense; });
  ASSERT_NE(mlp, m.layers.end());
  EXPECT_FALSE(mlp->feed_forward.gated);
}

// Section 7: Nemotron-3-Nano-30B-A3B: 23 M, 6 *, 23 E; 6,144 B/token; 49.1 MB (bf16 conv + f32 SSM).
TEST(Families, Nemotron3Nano) {
  const Model& m = cat("nemotron-3-nano-30b-a3b");
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 6u);
  EXPECT_EQ(m.layer_count(AttentionKind::LinearState), 23u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 6144u);
  EXPECT_NEAR(megabytes(state_bytes(m, StateLayout::Mixed)), 49.1, 0.05);
  // NVIDIA model card: 31.6 B total, about 3.2 B active.
  EXPECT_NEAR(billions(m.params.derived_total), 31.6, 0.05);
  EXPECT_NEAR(billions(m.params.derived_active), 3.2, 0.05);
  // Its 'E' layers' experts and shared expert are up and down only, as vLLM's relu2_no_mul reads them.
  const auto moe = std::find_if(m.layers.begin(), m.layers.end(), [](const LayerConfig& l) { return l.feed_forward.kind == FeedForwardKind::MoE; });
  ASSERT_NE(moe, m.layers.end());
  EXPECT_FALSE(moe->feed_forward.gated);
  EXPECT_TRUE(cat("llama-3.1-8b").layers[0].feed_forward.gated);  // a SwiGLU MLP stays gated
}

// Section 7: Jamba 1.5 Mini: attention at 4, 12, 20, 28 (period 8, offset 4); Mamba1 d_inner
// 2 * 4096 = 8192: conv 3 * 8192 = 24,576 and SSM 8192 * 16 = 131,072 values per layer.
TEST(Families, Jamba) {
  const Model& m = cat("jamba-1.5-mini");
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 4u);
  EXPECT_EQ(m.layers[4].attention.kind, AttentionKind::Full);
  EXPECT_FALSE(m.layers[4].attention.rotary);  // Jamba has no positional encoding (modeling_jamba)
  EXPECT_EQ(m.layers[12].attention.kind, AttentionKind::Full);
  EXPECT_EQ(m.layers[1].feed_forward.kind, FeedForwardKind::MoE);  // period 2, offset 1
  EXPECT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::Dense);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 4u * 8 * 128 * 4);
  EXPECT_EQ(state_bytes(m, StateLayout::F32), 28u * (24576 + 131072) * 4);
  // AI21: 52 B total, 12 B active.
  EXPECT_NEAR(billions(m.params.derived_total), 52.0, 52.0 * 0.02);
}

// Section 7: Falcon-H1 runs attention and Mamba2 on every layer (partial config): KV
// 44 * 2 * 128 * 4 = 45,056 B/token; state per layer conv 3 * (3072 + 2 * 256) = 10,752,
// SSM 24 * 128 * 256 = 786,432 values.
TEST(Families, FalconH1Parallel) {
  Model m = from_published("Falcon-H1-7B-Instruct.PARTIAL.json");
  EXPECT_EQ(m.layers.size(), 44u);
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 44u);
  EXPECT_EQ(m.layer_count(AttentionKind::LinearState), 44u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 45056u);
  EXPECT_EQ(state_bytes(m, StateLayout::F32), 44u * (10752 + 786432) * 4);
}

// Granite 4.0 H-Small (granitemoehybrid), worked by hand from its config: 40 layers, 4 of them
// attention (32 query / 8 KV heads, head_dim 4096 / 32 = 128), 36 Mamba2 (128 heads x 64 = 8192
// inner, 1 group, state 128, conv 4); every layer a 72-expert top-10 MoE of width 768 beside a
// shared gated MLP of 1536; tied embeddings, vocab 100,352.
//   KV per token (f16): 4 layers x 2 (K, V) x 8 x 128 x 2 B = 16,384 B.
//   Mamba2 state per layer: conv 3 x (8192 + 2 x 128) = 25,344 values, SSM 128 x 64 x 128 = 1,048,576.
//   Params: embedding 100,352 x 4096 = 411,041,792 (+ final norm 4,096);
//     attention 4096 x 4096 x 2 + 4096 x 1024 x 2 = 41,943,040 per attention layer;
//     Mamba2 in_proj 4096 x (8192 + 8448 + 128) = 68,681,728, conv 8448 x 4 + 8448 bias = 42,240,
//       dt_bias/A_log/D 384, norm 8192, out_proj 8192 x 4096 = 33,554,432: 102,286,976 per layer;
//     MoE 72 x 3 x 4096 x 768 = 679,477,248 (10 active: 94,371,840), shared 3 x 4096 x 1536 =
//       18,874,368, router 72 x 4096 = 294,912; norms 2 x 4096 per layer.
//   Total 4 x 41,943,040 + 36 x 102,286,976 + 40 x (679,477,248 + 18,874,368 + 294,912 + 8,192)
//     + 411,041,792 + 4,096 = 32,207,337,984 (IBM: 32B).
//   Active: the same with 10 experts, no input embedding, the tied head read whole: 8,803,121,664 (IBM: 9B).
TEST(Families, GraniteHybridSmall) {
  const Model& m = cat("granite-4.0-h-small");
  EXPECT_EQ(m.family, "granitemoehybrid");
  EXPECT_EQ(m.layers.size(), 40u);
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 4u);
  EXPECT_EQ(m.layer_count(AttentionKind::LinearState), 36u);
  EXPECT_EQ(m.layers[5].attention.kind, AttentionKind::Full);
  EXPECT_FALSE(m.layers[5].attention.rotary);  // position_embedding_type "nope"; no RoPE in llama.cpp's graph
  EXPECT_EQ(m.layers[5].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 16384u);
  EXPECT_EQ(state_bytes(m, StateLayout::F32), 36u * (25344 + 1048576) * 4);
  EXPECT_EQ(m.params.derived_total, 32'207'337'984u);
  EXPECT_EQ(m.params.derived_active, 8'803'121'664u);
  EXPECT_TRUE(m.warnings.empty());
}

// A dense Granite 4.0 hybrid (num_local_experts 0, as H-Micro / H-1B): the shared MLP alone.
// By hand: head_dim 64 / 4 = 16; attention 64 x 64 x 2 + 64 x 32 x 2 = 12,288; Mamba2 (4 x 32 = 128
// inner, conv_dim 128 + 2 x 16 = 160) in_proj 64 x (128 + 160 + 4) = 18,688, conv 160 x 4 + 160 = 800,
// 12 + 128 (dt/A/D, norm), out_proj 128 x 64 = 8,192: 27,820; shared MLP 3 x 64 x 128 = 24,576 per
// layer; norms 2 x 64 per layer; tied embedding 100 x 64 = 6,400 and final norm 64: 95,980 in all.
// KV per token: 1 attention layer x 2 x 2 heads x 16 x 2 B = 128 B.
TEST(Families, GraniteHybridDense) {
  const std::string config = R"({"model_type":"granitemoehybrid","hidden_size":64,"num_hidden_layers":2,
    "layer_types":["mamba","attention"],"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":100,
    "tie_word_embeddings":true,"num_local_experts":0,"shared_intermediate_size":128,"intermediate_size":128,
    "mamba_n_heads":4,"mamba_d_head":32,"mamba_d_state":16,"mamba_n_groups":1,"mamba_d_conv":4,"mamba_expand":2,
    "max_position_embeddings":4096})";
  Model m = from_text(config);
  EXPECT_EQ(m.params.derived_total, 95'980u);
  EXPECT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::Dense);
  EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::LinearState);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 128u);
  // mamba_n_heads x mamba_d_head must be mamba_expand x hidden_size.
  auto bad = nlohmann::json::parse(config);
  bad["mamba_expand"] = 3;
  try {
    model_from_config(bad, "test config.json");
    FAIL() << "a mamba_expand that disagrees with the head geometry is accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mamba_expand"), std::string::npos) << e.what();
  }
}

// Llama 4 Scout's text model (meta-llama/Llama-4-Scout-17B-16E-Instruct config.json, text_config,
// the keys the mapper reads), worked by hand: 48 layers, all MoE (interleave_moe_layer_step 1),
// 16 experts of 8,192 (top 1) plus a shared expert of 8,192; 40 query / 8 KV heads of 128.
//   Attention 5120 x 5120 x 2 + 5120 x 1024 x 2 = 62,914,560; experts 16 x 3 x 5120 x 8192 =
//   2,013,265,920; shared 3 x 5120 x 8192 = 125,829,120; router 5120 x 16 = 81,920; norms 10,240:
//   2,202,101,760 a layer, x 48 = 105,700,884,480; untied embedding and head 2 x 202,048 x 5120 =
//   2,068,971,520; final norm 5,120. Total 107,769,861,120: the Hub's 108,641,793,536 less the
//   vision tower's 871,932,416 (test_config_tower.cpp).
//   Layers 3, 7, ... (every 4th, no RoPE) attend to everything; the others within 8,192-token
//   chunks: 12 full layers, 36 windowed. KV a token in a full layer: 2 x 8 x 128 x 2 B = 4,096 B.
TEST(Families, Llama4ScoutChunkedAttentionAndSharedExperts) {
  const std::string config = R"({"architectures":["Llama4ForConditionalGeneration"],"model_type":"llama4",
    "text_config":{"model_type":"llama4_text","attention_bias":false,"attention_chunk_size":8192,"head_dim":128,
    "hidden_size":5120,"intermediate_size":8192,"intermediate_size_mlp":16384,"max_position_embeddings":10485760,
    "num_attention_heads":40,"num_experts_per_tok":1,"num_hidden_layers":48,"num_key_value_heads":8,"num_local_experts":16,
    "rms_norm_eps":1e-05,"rope_theta":500000.0,"torch_dtype":"bfloat16","use_qk_norm":true,"vocab_size":202048,
    "interleave_moe_layer_step":1,"tie_word_embeddings":false}})";
  Model m = from_text(config);
  EXPECT_EQ(m.params.derived_total, 107'769'861'120u);
  EXPECT_EQ(m.layer_count(AttentionKind::Full), 12u);
  EXPECT_EQ(m.layer_count(AttentionKind::SlidingWindow), 36u);
  EXPECT_EQ(m.layers[3].attention.kind, AttentionKind::Full);
  EXPECT_EQ(m.layers[0].attention.window, 8192u);
  EXPECT_EQ(m.layers[0].feed_forward.shared_width, 8192u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 12u * 4096);
  EXPECT_TRUE(m.warnings.empty());
  // Maverick's layout (interleave_moe_layer_step 2, 128 experts): odd layers MoE, even layers a dense
  // MLP of intermediate_size_mlp; by hand 24 x (62,914,560 + 128 x 125,829,120 + 125,829,120 +
  // 655,360 + 10,240) + 24 x (62,914,560 + 3 x 5120 x 16384 + 10,240) + 2,068,971,520 + 5,120 =
  // 400,711,848,960 (the Hub's Llama-4-Maverick-17B-128E: 401.6B with its 0.87B vision tower).
  auto maverick = nlohmann::json::parse(config);
  maverick["text_config"]["interleave_moe_layer_step"] = 2;
  maverick["text_config"]["num_local_experts"] = 128;
  const Model mv = model_from_config(maverick, "test config.json");
  EXPECT_EQ(mv.params.derived_total, 400'711'848'960u);
  EXPECT_EQ(mv.layers[0].feed_forward.kind, FeedForwardKind::Dense);
  EXPECT_EQ(mv.layers[1].feed_forward.kind, FeedForwardKind::MoE);
  // A malformed no_rope_layers names the key.
  auto bad = nlohmann::json::parse(config);
  bad["text_config"]["no_rope_layers"] = {1, 1, 1};
  EXPECT_THROW(model_from_config(bad, "test config.json"), InputError);
}

// GLM-5.2 (zai-org/GLM-5.2 config.json indexer_types): only the 21 "full" layers (0, 1, 2 and every
// 4th from 6) keep a lightning indexer; the 57 "shared" ones reuse the previous full layer's top-k
// and have no indexer weights or index keys (llama.cpp src/models/glm-dsa.cpp). By hand:
//   cache per token at f16: 78 x (512 + 64) x 2 B + 21 x 128 x 2 B = 89,856 + 5,376 = 95,232 B
//   (every layer indexed: 109,824 B, 15% more);
//   indexer weights a layer: q_lora 2048 x 32 heads x 128 = 8,388,608, wk 6144 x 128 = 786,432,
//   k_norm 256, weights_proj 6144 x 32 = 196,608: 9,371,904; GLM-5.1's geometry is otherwise the
//   same (the mapper reads no key that differs), so 5.2 has 57 x 9,371,904 = 534,198,528 fewer.
TEST(Families, Glm52SharedIndexers) {
  const Model& m52 = cat("glm-5.2");
  size_t indexed = 0;
  for (const auto& l : m52.layers) indexed += l.attention.index_key_dim ? 1 : 0;
  EXPECT_EQ(indexed, 21u);
  EXPECT_NE(m52.layers[6].attention.index_key_dim, 0u);
  EXPECT_EQ(m52.layers[7].attention.index_key_dim, 0u);
  EXPECT_EQ(growing_f16_bytes_per_token(m52), 95'232u);
  EXPECT_EQ(cat("glm-5.1").params.derived_total - m52.params.derived_total, 534'198'528u);
}

// Section 4: GLM-5 (glm_moe_dsa) is MLA + an indexer on every layer: 78 * (1,152 + 256) B/token.
TEST(Families, Glm5Dsa) {
  Model m = from_published("GLM-5.json");
  EXPECT_EQ(m.layer_count(AttentionKind::Latent), 78u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 78u * 1408);
}

TEST(Families, UnknownArchitectureFallsBackWithWarnings) {
  Model m = from_text(R"({"model_type":"mystery_lm","num_hidden_layers":4,"hidden_size":256,"num_attention_heads":8,"vocab_size":1000})");
  EXPECT_EQ(m.family, "generic");
  EXPECT_EQ(m.layers.size(), 4u);
  EXPECT_TRUE(any_warning_names(m, "mystery_lm"));
  EXPECT_TRUE(any_warning_names(m, "num_key_value_heads"));
  EXPECT_TRUE(any_warning_names(m, "head_dim"));
  EXPECT_TRUE(any_warning_names(m, "intermediate_size"));
  EXPECT_FALSE(any_warning_names(m, "vocab_size"));  // present, so not guessed
  // MHA guess: 4 layers * 8 heads * (256 / 8 = 32) * 2 * 2 B.
  EXPECT_EQ(growing_f16_bytes_per_token(m), 4096u);
}

TEST(Families, UnknownArchitectureWithoutLayerCountIsAnInputError) {
  try {
    from_text(R"({"model_type":"mystery_lm","hidden_size":256,"num_attention_heads":8})");
    FAIL() << "accepted a config without num_hidden_layers";
  } catch (const InputError& e) {
    EXPECT_NE(e.subject().find("num_hidden_layers"), std::string::npos) << e.what();
  }
}

TEST(Families, BadLayerListsNameTheKey) {
  try {
    from_text(R"({"model_type":"gpt_oss","num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,"num_key_value_heads":2,
      "head_dim":16,"intermediate_size":64,"vocab_size":10,"num_local_experts":4,"num_experts_per_tok":2,"sliding_window":128,
      "layer_types":["sliding_attention"]})");
    FAIL() << "accepted a short layer_types";
  } catch (const InputError& e) {
    EXPECT_NE(e.subject().find("layer_types"), std::string::npos) << e.what();
  }
  try {
    from_text(R"({"model_type":"nemotron_h","num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,"vocab_size":10,
      "intermediate_size":64,"hybrid_override_pattern":"-X"})");
    FAIL() << "accepted pattern character X";
  } catch (const InputError& e) {
    EXPECT_NE(e.subject().find("hybrid_override_pattern"), std::string::npos) << e.what();
  }
}

// Every catalogue entry loads, carries its config's provenance, and has a source on every stated
// figure, extra parameter class and checkpoint size.
TEST(Catalogue, EveryEntryLoadsWithSources) {
  const auto& models = Catalogue::builtin().models();
  for (const char* id : {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "qwen3-8b", "qwen3-32b", "qwen3-235b-a22b",
                         "qwen3-next-80b-a3b", "deepseek-v3", "deepseek-v3.2", "kimi-k2", "kimi-linear-48b-a3b", "gpt-oss-20b",
                         "gpt-oss-120b", "gemma-3-27b", "mistral-7b-v0.3", "mixtral-8x7b", "glm-4.7", "minimax-m2.5",
                         "nemotron-h-56b", "nemotron-3-nano-30b-a3b", "jamba-1.5-mini", "qwen3.5-397b-a17b", "kimi-k3", "kimi-k3.1-pro"}) {
    EXPECT_NE(Catalogue::builtin().find(id), nullptr) << id;
  }
  EXPECT_GE(models.size(), 24u);
  for (const auto& m : models) {
    SCOPED_TRACE(m.id);
    EXPECT_FALSE(m.layers.empty());
    EXPECT_FALSE(m.name.empty());
    EXPECT_FALSE(m.sources.empty());
    EXPECT_FALSE(m.license.empty());
    EXPECT_GT(m.max_context, 0u);
    EXPECT_GT(m.native.bytes, 0u);
    EXPECT_FALSE(m.native.source.empty());
    EXPECT_FALSE(m.provenance.count("config.json") == 0 || m.provenance.at("config.json").empty());
    if (m.params.stated_total) {
      EXPECT_FALSE(m.params.stated_total->source.empty());
    }
    if (m.params.stated_active) {
      EXPECT_FALSE(m.params.stated_active->source.empty());
    }
    for (const auto& [key, where] : m.provenance) EXPECT_FALSE(where.empty()) << key;
    for (const auto& b : m.builds) EXPECT_FALSE(b.source.empty()) << b.name;
    EXPECT_TRUE(m.warnings.empty()) << "catalogue entries need a dedicated mapper: " << (m.warnings.empty() ? "" : m.warnings[0]);
    std::string lower = m.id;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(lower, m.id);
  }
}

// End to end: `vramcalc models` lists every catalogue id.
TEST(Catalogue, ModelsCommandListsEveryEntry) {
  std::string out;
  FILE* p = popen((std::string(VRAMCALC_BINARY) + " models").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0);
  for (const auto& m : Catalogue::builtin().models()) EXPECT_NE(out.find(m.id + " "), std::string::npos) << m.id;
}

// quantization_config shapes beyond MXFP4/FP8 (reference/architectures.md §9): the native size
// counts the quantized linear layers at the format's block layout and the rest at the dtype.
TEST(NativeCheckpoint, AwqGptqAndBitsandbytes) {
  auto base = tiny_llama_config("float16");
  vc::Model plain = vc::model_from_config(base, "plain.json");
  const auto& c = plain.params.by_class;
  const uint64_t linear = c.at(vc::ParamClass::Attention) + c.at(vc::ParamClass::DenseMlp);
  const uint64_t rest = plain.params.derived_total - linear;
  EXPECT_EQ(plain.native.bytes, plain.params.derived_total * 2);

  auto awq = base;
  awq["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}};
  vc::Model a = vc::model_from_config(awq, "awq.json");
  EXPECT_EQ(a.native.format, "INT4_G128");
  // 133 B per 256 weights (128 B packed + 2 fp16 scales + 2 packed zeros); fp16 elsewhere.
  EXPECT_EQ(a.native.bytes, linear * 133 / 256 + rest * 2);

  auto bnb = base;
  bnb["quantization_config"] = {{"quant_method", "bitsandbytes"}, {"load_in_4bit", true}};
  vc::Model b = vc::model_from_config(bnb, "bnb.json");
  EXPECT_EQ(b.native.format, "NF4");
  EXPECT_EQ(b.native.bytes, linear * 36 / 64 + rest * 2);  // 32 B + fp32 absmax per 64

  auto odd = base;
  odd["quantization_config"] = {{"quant_method", 7}, {"bits", "four"}};  // hostile types: a warning, not a crash
  vc::Model o = vc::model_from_config(odd, "odd.json");
  EXPECT_EQ(o.native.bytes, o.params.derived_total * 2);
  EXPECT_FALSE(o.warnings.empty());
}

// DeepSeek-V2-Lite (published config.json of deepseek-ai/DeepSeek-V2-Lite): q_lora_rank null,
// kv_lora_rank 512 + rope 64 = 576 cached values on each of 27 layers (27 x 576 x 2 B = 31,104 B a
// token at f16); layer 0 dense, 26 MoE layers of 64 routed + 2 shared experts of 1,408.
// Parameters by hand: attention 13,763,072 a layer (q 2048x16x192, kv_a 2048x576 + 512, kv_b
// 512x16x256, o 16x128x2048); 15.71 B in all ("15.7B" on the model card), 2.45 B active.
TEST(Families, DeepSeekV2LiteIsLatent) {
  Model m = from_text(R"({"architectures":["DeepseekV2ForCausalLM"],"model_type":"deepseek_v2","vocab_size":102400,"hidden_size":2048,
    "intermediate_size":10944,"moe_intermediate_size":1408,"num_hidden_layers":27,"num_attention_heads":16,"num_key_value_heads":16,
    "n_shared_experts":2,"n_routed_experts":64,"kv_lora_rank":512,"q_lora_rank":null,"qk_rope_head_dim":64,"v_head_dim":128,
    "qk_nope_head_dim":128,"topk_method":"greedy","n_group":1,"topk_group":1,"num_experts_per_tok":6,"moe_layer_freq":1,
    "first_k_dense_replace":1,"max_position_embeddings":163840,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})");
  EXPECT_EQ(m.family, "deepseek_v2");
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_EQ(m.layer_count(AttentionKind::Latent), 27u);
  EXPECT_EQ(growing_f16_bytes_per_token(m), 31104u);
  EXPECT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::Dense);
  EXPECT_EQ(m.layers[1].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_EQ(m.layers[1].feed_forward.shared_width, 2816u);
  EXPECT_NEAR(billions(m.params.derived_total), 15.706, 0.002);
  EXPECT_NEAR(billions(m.params.derived_active), 2.451, 0.005);
}

// A config that declares a latent rank is never read as full attention by the fallback.
TEST(Families, UnknownLatentArchitectureIsRefused) {
  try {
    from_text(R"({"model_type":"mystery_mla","num_hidden_layers":4,"hidden_size":256,"num_attention_heads":8,"kv_lora_rank":64,"vocab_size":1000})");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("kv_lora_rank"), std::string::npos) << e.what();
  }
}

// Quantized checkpoints per tensor: compressed-tensors W4A16 (group 128, ignore lm_head) and GPTQ
// with "lm_head": true. Embeddings stay 16-bit in both; only GPTQ's head is quantized.
TEST(NativeCheckpoint, CompressedTensorsAndGptqHead) {
  auto base = tiny_llama_config("bfloat16");
  vc::Model plain = vc::model_from_config(base, "plain.json");
  const auto& c = plain.params.by_class;
  const uint64_t linear = c.at(vc::ParamClass::Attention) + c.at(vc::ParamClass::DenseMlp);
  const uint64_t head = c.at(vc::ParamClass::OutputHead);
  const uint64_t rest = plain.params.derived_total - linear;

  auto ct = base;
  ct["quantization_config"] = nlohmann::json::parse(R"({"quant_method":"compressed-tensors","format":"pack-quantized","ignore":["lm_head"],
    "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":4,"type":"int","group_size":128,"strategy":"group","symmetric":true}}}})");
  vc::Model w4 = vc::model_from_config(ct, "w4a16.json");
  EXPECT_EQ(w4.native.format, "INT4_G128");
  EXPECT_EQ(w4.native.bytes, linear * 133 / 256 + rest * 2);  // as AWQ/GPTQ 4-bit group 128; bf16 embeddings and head

  auto fp8 = base;
  fp8["quantization_config"] = nlohmann::json::parse(R"({"quant_method":"compressed-tensors","format":"float-quantized","ignore":["lm_head"],
    "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":8,"type":"float","strategy":"channel"}}}})");
  EXPECT_EQ(vc::model_from_config(fp8, "fp8.json").native.format, "FP8_E4M3");

  auto gptq = base;
  gptq["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"lm_head", true}};
  vc::Model g = vc::model_from_config(gptq, "gptq.json");
  EXPECT_EQ(g.native.bytes, (linear + head) * 133 / 256 + (rest - head) * 2);
}
