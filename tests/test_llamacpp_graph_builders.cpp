// The graph builders of src/engines/llamacpp_graph_<arch>.cpp replayed through ggml-alloc's
// packing, against the compute buffers llama.cpp v0.4.0 (80fb11ac) reserved for the tiny models of
// tests/data/llamacpp-measured.json (llama_get_memory_breakdown, to the byte; the file keeps each
// model's metadata and tensor list, from which the model is read as from its GGUF header).
#include <gtest/gtest.h>

#include "engines/llamacpp_compute.h"
#include "engines/llamacpp_measured.h"
#include "engines/llamacpp_profile.h"

using namespace vc;

namespace {

const MeasuredLlamaCpp& measured() {
  static const MeasuredLlamaCpp m = read_llamacpp_measured(std::string(VRAMCALC_TEST_DATA_DIR) + "/llamacpp-measured.json");
  return m;
}

// Every created case of `model` with flash attention as given and f16 caches (a quantized cache is
// rotated, whose nodes no builder transcribes): ours must equal the measurement.
int expect_exact(const std::string& model, bool flash_attn) {
  int n = 0;
  for (const auto& c : measured().cases) {
    if (c.model != model || !c.created || c.settings.flash_attn != flash_attn) continue;
    if (c.settings.type_k != "F16" || c.settings.type_v != "F16") continue;
    ++n;
    EXPECT_EQ(llamacpp_memory(measured().find(model)->model, c.settings).compute_bytes, c.compute_bytes)
        << c.id << (c.set_aside ? " (set aside)" : " (fitted)");
  }
  return n;
}

}  // namespace

TEST(LlamaCppGraphDeepseek2, AbsorbedMlaWithoutFlashAttentionByHand) {
  // tiny-deepseek2: n_embd 128, 4 heads, q_lora 64, kv_lora 96, rope 32, key_length_mla 96,
  // value_length_mla 64, 3 layers (1 dense, then 8 experts choosing 2 + 1 shared), -c 4096 -fa off,
  // 512 tokens. Inputs: token ids 2,048 (freed after the embedding lookup: a hole at 0), input
  // embeddings 128 x 512 x 4 = 262,144, positions 2,048, K row indices 512 x 8 = 4,096, the f32
  // mask 4096 x 512 x 4 = 8,388,608, output ids 2,048: they end at 8,660,992. Layer 0 then holds
  // the embeddings (262,144), its freed attn_norm (262,144), q_a (64 x 512 x 4 = 131,072), q_b
  // (4 x 96 x 512 x 4 = 786,432), wk_b's absorbed query (96 x 4 x 512 x 4 = 786,432), the rotated
  // q_pe (32 x 4 x 512 x 4 = 262,144) and Qcur ((96 + 32) x 4 x 512 x 4 = 1,048,576), up to
  // 12,199,936; the compressed KV tensors fit in the holes below, and KQ (4096 cells x 512 x 4 heads
  // x 4 B = 33,554,432) goes on top: 45,754,368, the peak, as ggml-alloc's own debug trace of this
  // case shows (tools/measure-llamacpp, "Reading the allocator's peak"), and llama.cpp's
  // measurement (tiny-deepseek2|c4096|np1|b2048|ub512|fa-off|k-f16|v-f16). The phase rule gave
  // 46,610,432 (+1.9%).
  LlamaCppSettings s;
  s.flash_attn = false;
  EXPECT_EQ(llamacpp_memory(measured().find("tiny-deepseek2")->model, s).compute_bytes, 45'754'368u);
}

TEST(LlamaCppGraphDeepseek2, EveryFlashOffCaseToTheByte) {
  // 22 created cases, contexts 256 to 32768, 1 to 4 sequences (one cache stream each: V's latent
  // copy is cells x kv_lora x streams f16), micro-batches 64 to 1024; the phase rule missed them
  // by -4.6% to +1.9%.
  EXPECT_EQ(expect_exact("tiny-deepseek2", false), 22);
}

TEST(LlamaCppGraphDeepseek2, FlashAttentionCasesToTheByte) {
  // With flash attention the mask is f16, there is no latent V copy and no KQ: FLASH_ATTN_EXT
  // writes kv_lora x heads per token, wv_b takes it to v_head x heads, made contiguous. All 22
  // created f16-cache cases (the phase rule: up to +1.7%).
  EXPECT_EQ(expect_exact("tiny-deepseek2", true), 22);
}

TEST(LlamaCppGraphKimiLinear, KdaLayersThenMlaEveryFlashOffCaseToTheByte) {
  // tiny-kimi-linear: three KDA layers (4 heads x 32, d_conv 4: three convolutions, fused gated
  // delta net) then one MLA layer without RoPE (kv_lora 96, rope part 32 left unrotated). At
  // -c 4096 -fa off the peak is the MLA layer's KQ (4 x 4096 x 512 x 4 = 33,554,432) placed at
  // 11,853,856 above what the KDA layers left (a 1,097,728 B hole, the previous layer's output, the
  // latent V copy 4096 x 96 x 2 = 786,432, Qcur (96 + 32) x 4 x 512 x 4 = 1,048,576): 45,408,288,
  // as ggml-alloc's trace of the case shows and llama.cpp measured
  // (tiny-kimi-linear|c4096|np1|b2048|ub512|fa-off|k-f16|v-f16). The phase rule gave +1.8%.
  LlamaCppSettings s;
  s.flash_attn = false;
  EXPECT_EQ(llamacpp_memory(measured().find("tiny-kimi-linear")->model, s).compute_bytes, 45'408'288u);
  // All 22 created flash-off cases (1 to 4 sequences, micro-batches 64 to 1024); the phase rule
  // missed them by -4.7% to +2.0%.
  EXPECT_EQ(expect_exact("tiny-kimi-linear", false), 22);
  EXPECT_EQ(expect_exact("tiny-kimi-linear", true), 22);  // flash attention: as deepseek2's MLA
}

TEST(LlamaCppGraphQwen3Next, GatedDeltaNetAndGatedAttentionEveryFlashOffCaseToTheByte) {
  // tiny-qwen3next (n_embd 128; Gated DeltaNet layers with 2 key heads repeated to 4 value heads,
  // d_state 32; full attention every 4th layer, 4 heads x 64 with an output gate, 2 KV heads), -c
  // 4096 -fa off, 512 tokens. Inputs end at 9,185,312: token ids 2,048 (a hole once read), input
  // embeddings 262,144, s_copy 32, positions 2,048, K row indices 4,096, V row indices
  // 512 x 2 x 64 x 8 = 524,288, the f32 mask 4096 x 512 x 4 = 8,388,608, output ids 2,048. Layer 3
  // (the first full attention) then holds a 262,144 hole, the normed Q (4 x 64 x 512 x 4 =
  // 524,288), a 294,912 hole, the previous layer's output (262,144) and the joint query and gate
  // (2 x 4 x 64 x 512 x 4 = 1,048,576) up to 11,577,376, and KQ (4 x 4096 x 512 x 4 = 33,554,432)
  // on top: 45,131,808 = llama.cpp's measurement (tiny-qwen3next|c4096|np1|...|fa-off), as
  // ggml-alloc's trace shows. The phase rule gave 44,840,960 (-0.6%).
  LlamaCppSettings s;
  s.flash_attn = false;
  EXPECT_EQ(llamacpp_memory(measured().find("tiny-qwen3next")->model, s).compute_bytes, 45'131'808u);
  EXPECT_EQ(expect_exact("tiny-qwen3next", false), 22);
}

TEST(LlamaCppGraphQwen3Next, FourSequencesOfSixteenTokensWithFlashAttention) {
  // -c 2500 -np 4 -ub 64 -fa on: 64 tokens, 16 per sequence, 768 cells per stream. The peak is
  // layer 1's GATED_DELTA_NET, output 32 x 4 value heads x 64 x 4 = 32,768 and the four
  // sequences' states 4 x 32 x 32 x 4 x 4 = 65,536, placed at 444,192 above the inputs (f16 mask
  // 768 x 64 x 2 = 98,304; s_copy 4 x 4 B in a 32-byte slot), the previous layers' leftovers and
  // the convolution's output (64 x 256 x 4 = 65,536): 542,496 = llama.cpp's measurement
  // (tiny-qwen3next|c2500|np4|b2048|ub64|fa-on|k-f16|v-f16), as ggml-alloc's trace shows. The
  // phase rule gave 493,312 (-9.1%, the worst case of the fitted part).
  LlamaCppSettings s;
  s.n_ctx = 2500;
  s.n_seq = 4;
  s.n_ubatch = 64;
  EXPECT_EQ(llamacpp_memory(measured().find("tiny-qwen3next")->model, s).compute_bytes, 542'496u);
  // Every f16-cache flash-attention case: the gated product of FLASH_ATTN_EXT's reshaped output
  // goes into the sigmoid gate's tensor.
  EXPECT_EQ(expect_exact("tiny-qwen3next", true), 22);
}

TEST(LlamaCppGraphGptOss, BiasedProjectionsAndSinksEveryFlashOffCaseToTheByte) {
  // tiny-gpt-oss (n_embd 128, 4 heads x 64, 1 KV head, window 128 on every other layer, 8 experts
  // choosing 2), -c 256 -fa off: 256 tokens. Inputs end at 924,672: token ids 1,024 (a hole once
  // read), input embeddings 256 x 128 x 4 = 131,072, positions 1,024, then per cache (window, full)
  // K row indices 2,048, V row indices 256 x 64 x 8 = 131,072 and the f32 mask 256 x 256 x 4 =
  // 262,144, output ids 1,024. Layer 0 holds the embeddings (131,072), a 393,216 hole (its norm
  // and the biased Q before RoPE), the rotated Q (262,144) at 1,448,960, and KQ (4 x 256 x 256 x 4 =
  // 1,048,576) on top: 2,759,680 = llama.cpp's measurement
  // (tiny-gpt-oss|c256|np1|b2048|ub512|fa-off|k-f16|v-f16), as ggml-alloc's trace shows. The phase
  // rule gave -4.8%.
  LlamaCppSettings s;
  s.n_ctx = 256;
  s.flash_attn = false;
  EXPECT_EQ(llamacpp_memory(measured().find("tiny-gpt-oss")->model, s).compute_bytes, 2'759'680u);
  EXPECT_EQ(expect_exact("tiny-gpt-oss", false), 23);
  EXPECT_EQ(expect_exact("tiny-gpt-oss", true), 24);  // flash attention: f16 masks, V row by row
}

TEST(LlamaCppGraphGptOss, RotatedQuantizedCachesEveryCaseToTheByte) {
  // A quantized K (V) cache of head width 64 is rotated by a 64 x 64 f32 Hadamard matrix per cache
  // (llama-kv-cache.cpp attn_rot_k / attn_rot_v): an input per cache and a product before and after
  // the attention. Every created tiny-gpt-oss case with a q8_0 or q4_0 cache equals llama.cpp's
  // measurement (the phase rule was 0.1% to 0.8% off).
  int n = 0;
  for (const auto& c : measured().cases) {
    if (c.model != "tiny-gpt-oss" || !c.created || (c.settings.type_k == "F16" && c.settings.type_v == "F16")) continue;
    ++n;
    EXPECT_EQ(llamacpp_memory(measured().find(c.model)->model, c.settings).compute_bytes, c.compute_bytes) << c.id;
  }
  EXPECT_EQ(n, 12);
}

TEST(LlamaCppGraphDeepseek2, LayoutsNotTranscribedKeepThePhaseRule) {
  // The replay answers only for graphs transcribed node by node. A GGUF with the legacy unsplit
  // attn_kv_b (llama.cpp then runs plain multi-head attention) or with fused gate_up experts (one
  // MUL_MAT_ID, then views) is not: the phase rule answers (graph_tensors 0).
  LlamaCppComputeInput in;
  in.n_ctx = in.n_ctx_padded = in.kv_cells = 4096;
  in.flash_attn = false;
  const Model& tiny = measured().find("tiny-deepseek2")->model;
  EXPECT_GT(llamacpp_compute(tiny, in).graph_tensors, 0u);
  for (const std::string added : {"blk.1.attn_kv_b.weight", "blk.1.ffn_gate_up_exps.weight"}) {
    Model m = tiny;
    m.tensors.push_back({added, 0, "F16", {96, 384}});
    EXPECT_EQ(llamacpp_compute(m, in).graph_tensors, 0u) << added;
  }
}

TEST(LlamaCppGraphQwen3Moe, RoutedExpertsInTheQwen3DecoderEveryFlashOffCaseToTheByte) {
  // tiny-qwen3moe: qwen3's attention (Q and K normed per head) with build_moe_ffn's softmax
  // routing, weights normalised, no shared expert. All 22 created flash-off f16-cache cases equal
  // llama.cpp's measurements; the phase rule was over by up to 0.09% (+2,044 B at -c 256).
  EXPECT_EQ(expect_exact("tiny-qwen3moe", false), 22);
}
