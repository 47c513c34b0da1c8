// Where llama-quantize stores tensors at another type than the tier's (src/llama-quant.cpp,
// llama_tensor_get_type_impl and tensor_type_fallback): matrices whose rows are not whole blocks,
// and the output layer. Expected figures are worked by hand below from the geometry; the last test
// compares with a published GGUF file listed in the catalogue (its bytes from the Hub listing; nothing
// here is fitted to it).
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "estimate/estimate.h"
#include "model/quant.h"
#include "model/quantize_exceptions.h"

using namespace vc;

namespace {

// Grouped-query attention with 64 query heads and 8 KV heads of `head_dim` values.
AttentionSpec grouped_attention(uint32_t head_dim) {
  AttentionSpec a;
  a.kind = AttentionKind::Full;
  a.query_heads = 64;
  a.kv_heads = 8;
  a.head_dim_k = a.head_dim_v = head_dim;
  return a;
}

// One gpt-oss-like layer: hidden 2,880 (not a multiple of 256), 64 query heads x 64 values (4,096,
// a multiple of 256) for the output projection, 8 KV heads, 32 experts of width 2,880; an untied
// 1,000-entry vocabulary.
Model gpt_oss_like() {
  Model m;
  m.hidden = 2880;
  m.tied_embeddings = false;
  LayerConfig l;
  l.attention = grouped_attention(64);
  l.feed_forward.kind = FeedForwardKind::MoE;
  l.feed_forward.experts = 32;
  l.feed_forward.experts_per_token = 4;
  l.feed_forward.expert_width = 2880;
  // q 2,880 x 4,096 + k and v 2,880 x 512 each + o 4,096 x 2,880 = 26,542,080.
  l.params[ParamClass::Attention] = 2880ull * 4096 + 2 * 2880ull * 512 + 4096ull * 2880;
  // 32 experts x 3 x 2,880 x 2,880 = 796,262,400.
  l.params[ParamClass::RoutedExperts] = 32ull * 3 * 2880 * 2880;
  l.params[ParamClass::Router] = 2880ull * 32;
  l.params[ParamClass::Norms] = 2 * 2880;
  m.layers.push_back(l);
  m.params.by_class[ParamClass::Embedding] = 1000ull * 2880;
  m.params.by_class[ParamClass::OutputHead] = 1000ull * 2880;
  m.params.by_class[ParamClass::Attention] = l.params[ParamClass::Attention];
  m.params.by_class[ParamClass::RoutedExperts] = l.params[ParamClass::RoutedExperts];
  m.params.by_class[ParamClass::Router] = l.params[ParamClass::Router];
  m.params.by_class[ParamClass::Norms] = l.params[ParamClass::Norms];
  uint64_t total = 0;
  for (const auto& [c, n] : m.params.by_class) total += n;
  m.params.derived_total = total;
  m.native.format = "BF16";
  m.native.bytes = 2 * total;
  return m;
}

}  // namespace

TEST(QuantizeExceptions, HiddenSizeNotWholeBlocksMovesEveryMatrixThatReadsIt) {
  const Model m = gpt_oss_like();
  // 2,880 % 256 = 64: the embedding (2,880,000), q, k, v (2,880 x 5,120 = 14,745,600) and all three
  // expert matrices (up and gate read the hidden state; down reads 2,880 values too): 796,262,400.
  // The output projection reads 4,096 = 16 x 256 values and stays. Router and norms are never quantized.
  EXPECT_EQ(row_fallback_params(m, 256), 2'880'000ull + 14'745'600ull + 796'262'400ull);
  // At a block of 32 (Q4_0, Q8_0) every width divides: nothing falls back.
  EXPECT_EQ(row_fallback_params(m, 32), 0u);
  const QuantizeExceptions q = quantize_exceptions(m, *QuantTable::builtin().find_tier("Q2_K"));
  EXPECT_EQ(q.row_fallback_type, "Q4_0");
  EXPECT_EQ(q.output_params, 2'880'000ull);  // the untied output layer: "nx % qk_k != 0" gives Q8_0
  EXPECT_EQ(q.output_type, "Q8_0");
}

TEST(QuantizeExceptions, TiedEmbeddingIsQuantizedAsTheOutputLayer) {
  Model m = gpt_oss_like();
  m.tied_embeddings = true;
  m.params.by_class.erase(ParamClass::OutputHead);
  const QuantizeExceptions q = quantize_exceptions(m, *QuantTable::builtin().find_tier("Q4_K_M"));
  EXPECT_EQ(q.output_params, 2'880'000ull);  // token_embd takes the output branch: Q8_0
  EXPECT_EQ(q.output_type, "Q8_0");
  EXPECT_EQ(q.row_fallback_params, 14'745'600ull + 796'262'400ull);
  EXPECT_EQ(q.row_fallback_type, "Q5_0");  // Q4_K's fallback
}

TEST(QuantizeExceptions, OutputLayerTypeByTier) {
  const QuantTable& t = QuantTable::builtin();
  // Hidden 4,096 (16 blocks of 256): a block-type tier below Q8_0 keeps the output layer at Q6_K,
  // the 1- and 2-bit i-quants at Q5_K; Q8_0, floats and the measured mixes keep their own bits.
  EXPECT_EQ(output_layer_type(*t.find_type("Q4_0"), 4096), "Q6_K");
  EXPECT_EQ(output_layer_type(*t.find_type("IQ1_S"), 4096), "Q5_K");
  EXPECT_EQ(output_layer_type(*t.find_type("IQ2_XXS"), 4096), "Q5_K");
  EXPECT_EQ(output_layer_type(*t.find_type("Q6_K"), 4096), "");
  EXPECT_EQ(output_layer_type(*t.find_type("Q8_0"), 4096), "");
  EXPECT_EQ(output_layer_type(*t.find_type("BF16"), 4096), "");
  EXPECT_EQ(output_layer_type(*t.find_tier("Q4_K_M"), 4096), "");
  // Hidden 2,880: Q8_0 at every llama.cpp tier below it, mixes included.
  EXPECT_EQ(output_layer_type(*t.find_type("Q4_0"), 2880), "Q8_0");
  EXPECT_EQ(output_layer_type(*t.find_tier("Q4_K_M"), 2880), "Q8_0");
}

TEST(QuantizeExceptions, OnlyTheDownProjectionWhenOnlyTheIntermediateWidthIsOdd) {
  // Qwen2-72B's shape: hidden 8,192 (32 blocks), dense width 29,568 (115.5 blocks): ffn_down alone
  // (8,192 x 29,568 = 242,221,056 per layer) falls back; up and gate read 8,192 values.
  Model m;
  m.hidden = 8192;
  LayerConfig l;
  l.attention = grouped_attention(128);
  l.feed_forward.kind = FeedForwardKind::Dense;
  l.feed_forward.dense_width = 29568;
  l.params[ParamClass::Attention] = 8192ull * 8192 * 2 + 2 * 8192ull * 1024;
  l.params[ParamClass::DenseMlp] = 3ull * 8192 * 29568;
  m.layers.assign(2, l);
  EXPECT_EQ(row_fallback_params(m, 256), 2 * 242'221'056ull);
}

TEST(QuantizeExceptions, WeightsFigurePricesTheOtherTypes) {
  const Model m = gpt_oss_like();
  const WeightsFigure w = resolve_weights(m, "Q2_K");
  // Total 2,880,000 x 2 + 26,542,080 + 796,262,400 + 92,160 + 5,760 = 828,662,400 params.
  // Falling back: 813,888,000 at Q4_0 (4.5 bits) = 457,812,000 B; output 2,880,000 at Q8_0 (8.5 bits)
  // = 3,060,000 B; the other 11,894,400 at the Q2_K mix's 3.35 bits = 4,980,780 B.
  EXPECT_EQ(w.exceptions.row_fallback_type, "Q4_0");
  EXPECT_EQ(w.unclamped, 457'812'000ull + 3'060'000ull + 4'980'780ull);
  EXPECT_FALSE(w.clamped);
  // A type without a fallback (Q8_0, 32-value blocks) prices every parameter at its own bits:
  // 828,662,400 x 8.5 / 8 = 880,453,800 B.
  EXPECT_EQ(resolve_weights(m, "Q8_0").unclamped, 880'453'800ull);
}

TEST(QuantizeExceptions, EveryFallbackNamesAKnownBlockType) {
  for (const QuantFormat& f : QuantTable::builtin().all()) {
    if (f.row_fallback.empty()) continue;
    const QuantFormat* to = QuantTable::builtin().find_type(f.row_fallback);
    ASSERT_NE(to, nullptr) << f.name;
    EXPECT_EQ(f.row_block, 256u) << f.name;  // K-quants, i-quants and their mixes: 256-value blocks
    EXPECT_EQ(to->block_elems, 32u) << f.name;  // every fallback type has 32-value blocks
  }
}

// Set against a published file (never used to shape the rule): unsloth's gemma-3-1b-it-Q4_K_M.gguf is
// 806 MB (Hub listing, in the catalogue's ladder). Gemma 3 1B's hidden size 1,152 is 4.5 blocks of
// 256, so q, k, v, gate and up fall back to Q5_0 and the tied 262,144 x 1,152 embedding to Q8_0. Every
// parameter at 4.85 bits gave 606 MB (-25%); with the exceptions the figure is 781 MB (-3.1%).
TEST(QuantizeExceptions, Gemma3OneBillionQ4KMNearThePublishedFile) {
  const Model& m = *Catalogue::builtin().find("gemma-3-1b");
  const Build* published = m.find_build("gemma-3-1b-it-Q4_K_M");
  ASSERT_NE(published, nullptr);
  const double ratio = static_cast<double>(resolve_weights(m, "Q4_K_M").bytes) / static_cast<double>(published->bytes);
  EXPECT_GT(ratio, 0.96);
  EXPECT_LT(ratio, 1.04);
}
