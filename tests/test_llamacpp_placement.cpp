// llama.cpp tensor placement (src/engines/llamacpp_placement.cpp): -ngl, -ts, -ot, worked by hand
// from the tensor table in tests/data/llamacpp/tiny_models.json (tiny-llama: 4 layers of 616,448 B, token_embd
// 262,144 B, output.weight + output_norm 140,288 B; ffn_up/gate/down 1,146,880 B in all).
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "engines/llamacpp_cpu_weights.h"
#include "engines/llamacpp_placement.h"
#include "sources/resolver.h"
#include "tiny_gguf.h"

using namespace vc;

namespace {

const Model& tiny(const std::string& name) {
  static std::map<std::string, Model> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, resolve_model(vc::testing::tiny_gguf(name).string())).first;
  return it->second;
}

uint64_t at(const LlamaCppPlacement& p, const std::string& b) {
  auto it = p.weights_by_buffer.find(b);
  return it == p.weights_by_buffer.end() ? 0 : it->second;
}

}  // namespace

TEST(LlamaCppPlacement, OutputLayerIsOffloadedFirst) {
  const Model& m = tiny("tiny-llama.gguf");
  LlamaCppPlacementSettings s;
  EXPECT_EQ(at(llamacpp_placement(m, 0, s), "CPU"), 2'868'224u);  // -ngl 0: all on the host
  s.n_gpu_layers = 1;  // only the output layer
  auto p = llamacpp_placement(m, 0, s);
  EXPECT_EQ(at(p, "CUDA0"), 140'288u);
  EXPECT_EQ(at(p, "CPU"), 2'868'224u - 140'288u);
  s.n_gpu_layers = 3;  // output + the last two repeating layers (2, 3)
  p = llamacpp_placement(m, 0, s);
  EXPECT_EQ(at(p, "CUDA0"), 140'288u + 2 * 616'448u);
  EXPECT_EQ(p.layer_device[1], "CPU");
  EXPECT_EQ(p.layer_device[2], "CUDA0");
  s.n_gpu_layers = 99;  // everything but the input embedding
  EXPECT_EQ(at(llamacpp_placement(m, 0, s), "CPU"), 262'144u);
}

TEST(LlamaCppPlacement, TensorSplitUsesCumulativeFractions) {
  // -ngl 99 -ts 1,1: 5 offloaded "layers"; layer il goes to the first device whose cumulative
  // fraction (0.5, 1.0) exceeds il / 5: layers 0-2 (0, 0.2, 0.4) on CUDA0, layer 3 (0.6) and the
  // output (0.8) on CUDA1.
  LlamaCppPlacementSettings s;
  s.n_gpu_layers = 99;
  s.devices = 2;
  s.tensor_split = {1, 1};
  auto p = llamacpp_placement(tiny("tiny-llama.gguf"), 0, s);
  EXPECT_EQ(at(p, "CUDA0"), 3 * 616'448u);
  EXPECT_EQ(at(p, "CUDA1"), 616'448u + 140'288u);
  EXPECT_EQ(at(p, "CPU"), 262'144u);
  s.tensor_split = {1};
  EXPECT_THROW(llamacpp_placement(tiny("tiny-llama.gguf"), 0, s), InputError);
}

TEST(LlamaCppPlacement, OverrideTensorMovesMatchingTensors) {
  LlamaCppPlacementSettings s;
  s.n_gpu_layers = 99;
  s.overrides = parse_overrides("ffn_(up|gate|down)=CPU");
  auto p = llamacpp_placement(tiny("tiny-llama.gguf"), 0, s);
  EXPECT_EQ(at(p, "CPU"), 262'144u + 1'146'880u);
  EXPECT_EQ(at(p, "CUDA0"), 2'868'224u - 262'144u - 1'146'880u);
  EXPECT_EQ(p.overridden_tensors, 12u);  // 3 per layer x 4
  EXPECT_THROW(parse_overrides("ffn_(up=CPU"), InputError);
  EXPECT_THROW(parse_overrides("exps=GPU0"), InputError);
  EXPECT_THROW(parse_overrides("exps"), InputError);
  EXPECT_THROW(parse_overrides("exps=CUDA64"), InputError);  // llama.cpp names CUDA0 ... and we place on at most 64 devices
  EXPECT_THROW(parse_overrides("exps=CUDA01"), InputError);  // not a name llama.cpp gives a buffer
  EXPECT_EQ(parse_overrides("exps=CUDA63").front().second, "CUDA63");
}

// Without -ot a catalogue model's tensors are placed without spelling out their names; with an -ot
// that matches nothing they are named and matched one by one. Both must place every byte alike.
TEST(LlamaCppPlacement, NamesOnlyMatterToOverrides) {
  for (const char* id : {"kimi-k3.1-pro", "gpt-oss-20b", "qwen3-32b", "gemma-3-27b", "qwen3-next-80b-a3b"}) {
    SCOPED_TRACE(id);
    const Model& m = *Catalogue::builtin().find(id);
    for (uint64_t ngl : {uint64_t{0}, uint64_t{20}, uint64_t{999}}) {
      LlamaCppPlacementSettings plain;
      plain.n_gpu_layers = ngl;
      plain.devices = 3;
      plain.tensor_split = {3, 1, 2};
      LlamaCppPlacementSettings named = plain;
      named.overrides = parse_overrides("^no-such-tensor$=CPU");
      const auto a = llamacpp_placement(m, 123'456'789'012, plain);
      const auto b = llamacpp_placement(m, 123'456'789'012, named);
      EXPECT_EQ(a.weights_by_buffer, b.weights_by_buffer);
      EXPECT_EQ(a.layer_device, b.layer_device);
      EXPECT_EQ(a.output_device, b.output_device);
      EXPECT_EQ(b.overridden_tensors, 0u);
      // CPU_REPACK reads each host tensor's part and layer, never its spelled-out name.
      EXPECT_EQ(llamacpp_host_repack(m, a.host_tensors, "Q4_K_M").bytes, llamacpp_host_repack(m, b.host_tensors, "Q4_K_M").bytes);
    }
  }
}

// --n-cpu-moe N as a layer count (what plan's offload search uses) moves exactly the tensors of
// llama.cpp's N overrides (blk.i.ffn_(up|down|gate)_exps=CPU for i < N, common/arg.cpp).
TEST(LlamaCppPlacement, CpuMoeCountMatchesItsOverrides) {
  for (const char* id : {"gpt-oss-20b", "qwen3-30b-a3b", "deepseek-v3"}) {
    SCOPED_TRACE(id);
    const Model& m = *Catalogue::builtin().find(id);
    for (uint64_t n : {uint64_t{4}, uint64_t{7}, uint64_t{4096}}) {  // DeepSeek-V3: layers 0-2 are dense
      LlamaCppPlacementSettings by_count;
      by_count.n_gpu_layers = 999;
      by_count.cpu_moe_layers = n;
      LlamaCppPlacementSettings by_regex;
      by_regex.n_gpu_layers = 999;
      by_regex.overrides = cpu_moe_overrides(std::min<uint64_t>(n, m.layers.size()));
      const auto a = llamacpp_placement(m, 123'456'789'012, by_count);
      const auto b = llamacpp_placement(m, 123'456'789'012, by_regex);
      EXPECT_EQ(a.weights_by_buffer, b.weights_by_buffer);
      EXPECT_EQ(a.overridden_tensors, b.overridden_tensors);
      EXPECT_GT(a.overridden_tensors, 0u);
    }
  }
}

TEST(LlamaCppPlacement, TiedEmbeddingIsDuplicatedForTheOutputLayer) {
  // tiny-qwen3 has no output.weight: llama.cpp loads token_embd (128 x 512 F16 = 131,072 B) a
  // second time for the output layer, on the output layer's device.
  const Model& m = tiny("tiny-qwen3.gguf");
  uint64_t total = 0;
  for (const auto& t : m.tensors) total += t.bytes;
  LlamaCppPlacementSettings s;
  s.n_gpu_layers = 99;
  auto p = llamacpp_placement(m, 0, s);
  EXPECT_EQ(at(p, "CPU"), 131'072u);
  EXPECT_EQ(at(p, "CUDA0"), total);  // everything but token_embd, plus its 131,072 B copy
}

TEST(LlamaCppPlacement, CatalogueModelExpertsToHost) {
  // gpt-oss-20b has no tensor names: they are synthesized from the parameter classes. With -ngl 99
  // -ot exps=CPU the host holds the input embedding and every routed expert.
  const Model& m = *Catalogue::builtin().find("gpt-oss-20b");
  const uint64_t bytes = 12'000'000'000;
  LlamaCppPlacementSettings s;
  s.n_gpu_layers = 99;
  s.overrides = parse_overrides("exps=CPU");
  auto p = llamacpp_placement(m, bytes, s);
  EXPECT_TRUE(p.synthesized);
  uint64_t total = 0;
  for (const auto& [c, n] : m.params.by_class) total += n;
  const double host_share = static_cast<double>(m.params.by_class.at(ParamClass::Embedding) + m.params.by_class.at(ParamClass::RoutedExperts)) / static_cast<double>(total);
  EXPECT_NEAR(static_cast<double>(at(p, "CPU")), host_share * 12e9, 12e9 * 0.001);
  EXPECT_NEAR(static_cast<double>(at(p, "CPU") + at(p, "CUDA0")), 12e9, 12e9 * 0.001);
}

// CPU_REPACK of a GGUF model follows its tensors' types and shapes (tiny-llama, from the table in
// tests/data/llamacpp/tiny_models.json): each layer's ffn_gate and ffn_up are Q4_0 of 512 rows
// (73,728 B, a multiple of 32), everything else F16, F32 or Q8_0. -ngl 0 leaves all 4 layers on the
// host: 8 x 73,728 = 589,824 B; -ngl 3 offloads the output layer and layers 2 and 3: 294,912 B;
// -ngl 99 with -ot blk\.0\.ffn_gate=CPU brings back one tensor: 73,728 B.
TEST(LlamaCppPlacement, RepackedHostWeightsOfAGgufModel) {
  const Model& m = tiny("tiny-llama.gguf");
  LlamaCppPlacementSettings s;
  const HostRepack all = llamacpp_host_repack(m, llamacpp_placement(m, 0, s).host_tensors, "native Q8_0");
  EXPECT_EQ(all.bytes, 589'824u);
  EXPECT_EQ(all.tensors, 8u);
  EXPECT_FALSE(all.from_recipe);
  s.n_gpu_layers = 3;
  EXPECT_EQ(llamacpp_host_repack(m, llamacpp_placement(m, 0, s).host_tensors, "native Q8_0").bytes, 294'912u);
  s.n_gpu_layers = 99;
  EXPECT_EQ(llamacpp_host_repack(m, llamacpp_placement(m, 0, s).host_tensors, "native Q8_0").bytes, 0u);
  s.overrides = parse_overrides("blk\\.0\\.ffn_gate=CPU");
  EXPECT_EQ(llamacpp_host_repack(m, llamacpp_placement(m, 0, s).host_tensors, "native Q8_0").bytes, 73'728u);
}

namespace {

// A hand-built model of 8 layers, each with 4,096 attention parameters (8 query heads and 2 KV
// heads of 64: Q 512, K 128, V 128 and O 512 of 1,280 rows, so V is a 0.1 share and O 0.4) and
// 3,072 MLP parameters (dense, or 8 routed experts' up, gate and down), 1,000 embedding and 1,000
// output parameters. Placed at 2,000 + 8 x 7,168 = 59,344 B it holds 1 byte a parameter.
Model hand_built(bool moe) {
  Model m;
  m.name = "hand-built";
  const ParamClass mlp = moe ? ParamClass::RoutedExperts : ParamClass::DenseMlp;
  for (int i = 0; i < 8; ++i) {
    LayerConfig l;
    l.attention = {.kind = AttentionKind::Full, .kv_heads = 2, .query_heads = 8, .head_dim_k = 64, .head_dim_v = 64};
    l.feed_forward = {.kind = moe ? FeedForwardKind::MoE : FeedForwardKind::Dense, .experts = moe ? 8u : 0u};
    l.params = {{ParamClass::Attention, 4096}, {mlp, 3072}};
    m.layers.push_back(l);
  }
  m.params.by_class = {{ParamClass::Embedding, 1000}, {ParamClass::OutputHead, 1000}, {ParamClass::Attention, 8 * 4096}, {mlp, 8 * 3072}};
  return m;
}

}  // namespace

// CPU_REPACK for a model without a GGUF (a catalogue entry at a tier), worked by hand from
// llama-quant.cpp (llama_tensor_get_type, use_more_bits) and repack.cpp, -ngl 0 (all on the host).
// Each repacked tensor is padded to 32 B; token_embd (row lookups) and output.weight (Q6_K) never count.
//   Q4_0: every attention and MLP matrix is Q4_0: 8 x (4,096 + 3,072) = 57,344 B.
//   Q4_K_M: use_more_bits(il, 8) raises attn_v and ffn_down to Q6_K in layers 0, 3, 6 and 7: there
//     4,096 x 0.9 = 3,686 B -> 3,712 padded, and 3,072 x 2/3 = 2,048 B; elsewhere 4,096 + 3,072:
//     4 x (3,712 + 2,048) + 4 x 7,168 = 51,712 B.
//   Q4_K_S: ffn_down to Q5_K in layer 0 (the first eighth), attn_v in layers 0-3:
//     (3,712 + 2,048) + 3 x (3,712 + 3,072) + 4 x 7,168 = 54,784 B.
//   IQ4_NL: 4 query heads per KV head, so attn_v goes to Q5_K in every layer; ffn_down in layer 0:
//     (3,712 + 2,048) + 7 x (3,712 + 3,072) = 53,248 B.
//   Q8_0: nothing is repacked on x86 AVX2; Q3_K_M: a recipe not modelled, flagged.
TEST(LlamaCppPlacement, RepackedHostWeightsOfACatalogueModel) {
  const Model m = hand_built(false);
  LlamaCppPlacementSettings s;  // -ngl 0
  const LlamaCppPlacement p = llamacpp_placement(m, 2000 + 8 * 7168, s);
  ASSERT_TRUE(p.synthesized);
  EXPECT_EQ(at(p, "CPU"), 59'344u);
  const HostRepack q40 = llamacpp_host_repack(m, p.host_tensors, "Q4_0");
  EXPECT_EQ(q40.bytes, 57'344u);
  EXPECT_EQ(q40.tensors, 16u);
  EXPECT_TRUE(q40.from_recipe);
  EXPECT_EQ(llamacpp_host_repack(m, p.host_tensors, "Q4_K_M").bytes, 51'712u);
  EXPECT_EQ(llamacpp_host_repack(m, p.host_tensors, "Q4_K_S").bytes, 54'784u);
  EXPECT_EQ(llamacpp_host_repack(m, p.host_tensors, "IQ4_NL").bytes, 53'248u);
  const HostRepack q80 = llamacpp_host_repack(m, p.host_tensors, "Q8_0");
  EXPECT_EQ(q80.bytes, 0u);
  EXPECT_FALSE(q80.unknown_recipe);
  EXPECT_TRUE(llamacpp_host_repack(m, p.host_tensors, "Q3_K_M").unknown_recipe);
  // -ngl 99: only the input embedding stays on the host, and it is never repacked.
  s.n_gpu_layers = 99;
  EXPECT_EQ(llamacpp_host_repack(m, llamacpp_placement(m, 2000 + 8 * 7168, s).host_tensors, "Q4_0").bytes, 0u);
}

// The same model with 8 routed experts (3,072 B a layer as up, gate and down of 1,024 B each), by hand:
//   MXFP4 (gpt-oss style): only the experts: 8 x 3,072 = 24,576 B.
//   Q4_K_M with 8 experts: attn_v stays Q8_0 and attn_output goes to Q5_K in every layer, so half of
//     the 4,096 attention bytes (Q and K) is Q4_K: 2,048 B; up and gate 1,024 B each; ffn_down_exps
//     Q6_K in layers 0, 3, 6 and 7: 4 x 4,096 + 4 x 5,120 = 36,864 B.
//   -ngl 99 -ot exps=CPU leaves the experts (and the embedding) on the host: MXFP4 24,576 B again.
TEST(LlamaCppPlacement, RepackedHostExpertsOfACatalogueModel) {
  const Model m = hand_built(true);
  LlamaCppPlacementSettings s;
  const LlamaCppPlacement p = llamacpp_placement(m, 2000 + 8 * 7168, s);
  EXPECT_EQ(llamacpp_host_repack(m, p.host_tensors, "native MXFP4").bytes, 24'576u);
  EXPECT_EQ(llamacpp_host_repack(m, p.host_tensors, "Q4_K_M").bytes, 36'864u);
  s.n_gpu_layers = 99;
  s.overrides = parse_overrides("exps=CPU");
  EXPECT_EQ(llamacpp_host_repack(m, llamacpp_placement(m, 2000 + 8 * 7168, s).host_tensors, "native MXFP4").bytes, 24'576u);
}
