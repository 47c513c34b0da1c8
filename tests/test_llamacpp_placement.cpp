// llama.cpp tensor placement (src/engines/llamacpp_placement.cpp): -ngl, -ts, -ot, worked by hand
// from the tensor table in tests/data/llamacpp/tiny_models.json (tiny-llama: 4 layers of 616,448 B, token_embd
// 262,144 B, output.weight + output_norm 140,288 B; ffn_up/gate/down 1,146,880 B in all).
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "core/error.h"
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
