// llama.cpp compute buffer (src/engines/llamacpp_compute.cpp) against the exact bytes measured
// through llama.cpp's API in tests/data/llamacpp/runs.json (measured_bytes.buffers.CPU.compute).
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "engines/llamacpp_compute.h"
#include "engines/llamacpp_profile.h"
#include "engines/validate.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"
#include "sources/resolver.h"
#include "tiny_gguf.h"

using namespace vc;

namespace {

const Model& tiny_llama() {
  static const Model m = resolve_model(vc::testing::tiny_gguf("tiny-llama.gguf").string());
  return m;
}

}  // namespace

TEST(LlamaCppCompute, FlashAttentionOnReplaysTheAllocator) {
  // tiny-llama (n_embd 256, n_ff 512, 8 heads x 32, 2 kv heads, 4 layers), -c 4096 -ub 512 -fa on:
  // the allocator replay over the flash-attention graph. Inputs: token ids 2,048 + input
  // embeddings 512 x 256 x 4 = 524,288 + positions 2,048 + K and V row ids (one per token) 4,096
  // each + f16 mask 4096 x 512 x 2 = 4,194,304 + output ids 2,048 = 4,732,928. The peak is the
  // second layer's feed-forward: a one-block hole (524,288) the gate does not fit, the residual
  // (524,288), then gate, up and product (512 x 512 x 4 = 1,048,576 each) end to end:
  // 4,732,928 + 2 x 524,288 + 3 x 1,048,576 = 8,927,232 = runs.json llama__c4096-fa_on.
  LlamaCppSettings s;
  LlamaCppMemory mem = llamacpp_memory(tiny_llama(), s);
  EXPECT_EQ(mem.compute_bytes, 8'927'232u);
  // -ub 128 -b 512, the same layout at 128 tokens: inputs 512 + 131,072 + 512 + 2 x 1,024 + mask
  // 4096 x 128 x 2 = 1,048,576 + 512 = 1,183,232; + 2 x 131,072 + 3 x 262,144 = 2,231,808
  // (llama__ub128-b512-fa_on).
  s.n_ubatch = 128;
  s.n_batch = 512;
  EXPECT_EQ(llamacpp_memory(tiny_llama(), s).compute_bytes, 2'231'808u);
  // -c 256: n_batch and n_ubatch are clamped to 256: inputs 1,024 + 262,144 + 1,024 + 2 x 2,048 +
  // mask 256 x 256 x 2 = 131,072 + 1,024 = 400,384; + 2 x 262,144 + 3 x 524,288 = 2,497,536.
  s = LlamaCppSettings{};
  s.n_ctx = 256;
  EXPECT_EQ(llamacpp_memory(tiny_llama(), s).compute_bytes, 2'497'536u);
}

TEST(LlamaCppCompute, FlashAttentionOffReplaysTheAllocator) {
  // -c 32768 -fa off, 512 tokens: the allocator replay (ggml_alloc_replay.h) over tiny-llama's
  // graph. Inputs first: token ids 2,048 + inp_embd 524,288 + positions 2,048 + K row ids 4,096 +
  // V element ids (transposed V) 512 x 64 x 8 = 262,144 + f32 mask 32768 x 512 x 4 = 67,108,864 +
  // output ids 2,048 = 67,905,536. The first layer then lays four hidden-sized tensors
  // (512 x 256 x 4 = 524,288 each) after them: the token embeddings, the attention norm, the Q
  // projection and Q after RoPE (a new tensor: RoPE reads a reshaped view, which ggml-alloc never
  // hands over); the Q projection's freed block is far too small for the f32 scores,
  // 8 heads x 32768 x 512 x 4 = 536,870,912, which go at the end: 67,905,536 + 4 x 524,288 +
  // 536,870,912 = 606,873,600 = llama.cpp's measurement (runs.json llama__c32768-fa_off), to the byte.
  LlamaCppSettings s;
  s.n_ctx = 32768;
  s.flash_attn = false;
  EXPECT_EQ(llamacpp_memory(tiny_llama(), s).compute_bytes, 606'873'600u);
}

TEST(LlamaCppCompute, EveryReferenceRunWithinTenPercent) {
  const auto rows = validate_reference(vc::testing::engine_measurements_dir().string());
  int n = 0;
  for (const auto& r : rows) {
    if (r.figure.rfind("compute_bytes", 0) != 0) continue;
    ++n;
    EXPECT_LE(std::abs(r.error_percent), 10.0) << r.case_id << ": measured " << r.printed << ", ours " << r.ours;
  }
  EXPECT_EQ(n, 91);  // every run that created a context
}

TEST(LlamaCppCompute, GrowsWithContextOnACatalogueModel) {
  // Llama 3.1 8B (32 heads), -fa off: doubling the context from 8K to 16K adds the mask and one
  // layer's scores for 8192 more cells: 8192 x 512 x (4 + 32 x 4) = 553,648,128 B.
  const Model& m = *Catalogue::builtin().find("llama-3.1-8b");
  LlamaCppSettings s;
  s.flash_attn = false;
  s.n_ctx = 8192;
  const uint64_t a = llamacpp_memory(m, s).compute_bytes;
  s.n_ctx = 16384;
  const uint64_t b = llamacpp_memory(m, s).compute_bytes;
  EXPECT_EQ(b - a, 553'648'128u);
}

// A non-gated MLP in the general rule (a family the graph is not transcribed for: Phi's, one layer
// of Phi-2's shape, hidden 2,560, intermediate 10,240, 32 heads of 80, its vocabulary cut to 1,000
// so the feed-forward is the peak), -c 4096 -ub 512 -fa on, f32 values a token: llama.cpp's
// build_ffn with no gate keeps up (10,240; its bias and GELU applied in place) while the down
// projection writes its 2,560, on the residual's 3 x 2,560: 7,680 + 12,800 = 20,480, x 4 B x 512
// tokens = 41,943,040 B. The other phases stay below: attention 7,680 + 32 x 80 + 32 x 160 = 15,360,
// the logits 7,680 + 1,000. Read as gated, the first layer's flash-attention layout holds the
// input embeddings and residual (2 x 2,560) and a two-slot hole (5,120) the gate does not fit,
// then gate, up and product: 10,240 + 3 x 10,240 = 40,960 values, 83,886,080 B.
TEST(LlamaCppCompute, NonGatedFeedForwardInTheGeneralRule) {
  Model m = model_from_config(
      parse_config_text(R"({"architectures": ["PhiForCausalLM"], "model_type": "phi", "hidden_size": 2560, "intermediate_size": 10240,
        "num_hidden_layers": 1, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 1000, "max_position_embeddings": 4096,
        "partial_rotary_factor": 0.4, "tie_word_embeddings": false, "torch_dtype": "float16"})",
                        "phi config.json"),
      "phi config.json");
  ASSERT_FALSE(m.layers[0].feed_forward.gated);
  LlamaCppComputeInput in;
  in.kv_cells = 4096;
  const LlamaCppCompute c = llamacpp_compute(m, in);
  EXPECT_EQ(c.graph_tensors, 0u);
  EXPECT_EQ(c.tokens, 512u);
  EXPECT_EQ(c.phase, "feed-forward");
  EXPECT_EQ(c.phase_bytes, 41'943'040u);
  m.layers[0].feed_forward.gated = true;
  EXPECT_EQ(llamacpp_compute(m, in).phase_bytes, 83'886'080u);
}
