// llama.cpp's allocations measured to the byte (tests/data/llamacpp-measured.json, written by
// tools/measure-llamacpp/measure.mjs from llama.cpp v0.4.0's llama_get_memory_breakdown on tiny
// generated models) against our rules. Every check runs on the fitted part and on the part set
// aside by a hash of the case id before any rule was fitted, reported apart.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "engines/llamacpp_cpu_weights.h"
#include "engines/llamacpp_measured.h"
#include "engines/llamacpp_profile.h"

using namespace vc;

namespace {

const MeasuredLlamaCpp& measured() {
  static const MeasuredLlamaCpp m = read_llamacpp_measured(std::string(VRAMCALC_TEST_DATA_DIR) + "/llamacpp-measured.json");
  return m;
}

double error_percent(uint64_t ours, uint64_t theirs) {
  return (static_cast<double>(ours) - static_cast<double>(theirs)) / static_cast<double>(theirs) * 100.0;
}

}  // namespace

TEST(LlamaCppMeasured, FileHoldsBothPartsOfEveryArchitecture) {
  // 534 cases on 14 models of 9 architectures; about 30% set aside (159 by the hash rule).
  const auto& m = measured();
  EXPECT_EQ(m.models.size(), 14u);
  EXPECT_EQ(m.cases.size(), 534u);
  size_t aside = 0;
  for (const auto& c : m.cases) aside += c.set_aside ? 1 : 0;
  EXPECT_EQ(aside, 159u);
}

TEST(LlamaCppMeasured, ContextBytesExactOnBothParts) {
  // KV cache + recurrent state: n_ctx padded to 256, n_ctx / n_seq padded to 256 per stream,
  // window caches min(n_ctx_seq, pad256(window + ubatch)), recurrent rows per sequence.
  for (bool aside : {false, true}) {
    int n = 0;
    for (const auto& c : measured().cases) {
      if (!c.created || c.set_aside != aside) continue;
      ++n;
      const LlamaCppMemory mem = llamacpp_memory(measured().find(c.model)->model, c.settings);
      EXPECT_EQ(mem.context_bytes(), c.context_bytes) << c.id;
      EXPECT_EQ(mem.n_ctx_seq, c.n_ctx_seq) << c.id;
      EXPECT_EQ(mem.n_ctx, c.n_ctx) << c.id;
    }
    EXPECT_GT(n, aside ? 100 : 300);
  }
}

TEST(LlamaCppMeasured, RefusesWhatLlamaCppRefuses) {
  // 25 cases where llama_init_from_model returned no context: a quantized V cache without flash
  // attention, different K and V types on MLA models. We must refuse each (exit 2 in the CLI).
  int n = 0;
  for (const auto& c : measured().cases) {
    if (c.created) continue;
    ++n;
    EXPECT_THROW(llamacpp_memory(measured().find(c.model)->model, c.settings), InputError) << c.id << ": " << (c.errors.empty() ? "" : c.errors.front());
  }
  EXPECT_EQ(n, 25);
}

TEST(LlamaCppMeasured, QuantizedVWithoutFlashAttentionIsRefusedWithAMessage) {
  // llama-context.cpp llama_init_from_model: "quantized V cache requires flash_attn to be enabled".
  LlamaCppSettings s;
  s.flash_attn = false;
  s.type_v = "Q8_0";
  try {
    llamacpp_memory(measured().find("tiny-llama-q4")->model, s);
    FAIL() << "a quantized V cache without flash attention was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("flash attention"), std::string::npos) << e.what();
  }
  s.flash_attn = true;  // with flash attention the same cache is fine
  EXPECT_NO_THROW(llamacpp_memory(measured().find("tiny-llama-q4")->model, s));
}

TEST(LlamaCppMeasured, CpuModelBufferWithRepackedCopiesExact) {
  // CPU_Mapped (span of the tensors left mapped) + CPU_REPACK (Q4_0/Q4_K/IQ4_NL/MXFP4 matrices with
  // a multiple of 8 rows, 32-byte aligned): exact on all 14 models, fitted and set aside alike.
  for (const auto& m : measured().models) {
    const LlamaCppCpuWeights w = llamacpp_cpu_weights({m.header});
    EXPECT_EQ(w.mapped_bytes, m.mapped_bytes) << m.name << (m.set_aside ? " (set aside)" : "");
    EXPECT_EQ(w.repack_bytes, m.repack_bytes) << m.name << (m.set_aside ? " (set aside)" : "");
  }
  // tiny-llama-q4 by hand: 3 layers x (Q4_K q 256x256 = 36,864 + Q4_K k 256x64 = 9,216 + Q4_0 gate
  // 256x768 = 110,592 + IQ4_NL up 256x768 = 110,592) + Q4_0 output 256x512 = 73,728 = 875,520.
  EXPECT_EQ(llamacpp_cpu_weights({measured().find("tiny-llama-q4")->header}).repack_bytes, 875'520u);
}

TEST(LlamaCppMeasured, ComputeBufferWithinTolerancesReached) {
  // The compute buffer is a replay of ggml-alloc (llama, qwen3, gemma3 without flash attention;
  // deepseek2, kimi-linear, qwen3next, gpt-oss; unrotated caches; Mamba2) or a model of its peak
  // (docs/engines.md). Reached on llama.cpp v0.4.0: fitted part 360 of 361 cases within 3%
  // (99.7%), all within 10%, worst -6.6% (tiny-llama-q4k, both caches q8_0); set-aside part 148 of
  // 148 within 3%, worst -2.3%. The 3% target is not met on every case; the bounds sit just under
  // what is reached so that a change that loses accuracy fails here.
  for (bool aside : {false, true}) {
    int n = 0, within3 = 0, within10 = 0;
    double worst = 0;
    for (const auto& c : measured().cases) {
      if (!c.created || c.set_aside != aside) continue;
      ++n;
      const double e = error_percent(llamacpp_memory(measured().find(c.model)->model, c.settings).compute_bytes, c.compute_bytes);
      within3 += std::fabs(e) <= 3.0 ? 1 : 0;
      within10 += std::fabs(e) <= 10.0 ? 1 : 0;
      worst = std::max(worst, std::fabs(e));
    }
    SCOPED_TRACE(aside ? "set-aside part" : "fitted part");
    EXPECT_GE(within3 * 100, n * 99) << within3 << " of " << n << " within 3%";
    EXPECT_EQ(within10, n) << within10 << " of " << n << " within 10%";
    EXPECT_LE(worst, aside ? 3.0 : 7.0);
  }
}

TEST(LlamaCppMeasured, Mamba2ScanPeakIsReplayed) {
  // tiny-mamba2 (n_embd 128, d_inner 384, d_state 32, 2 groups, 6 heads, d_conv 4, 3 layers),
  // -c 8192 -ub 64: channels x, B, C = 384 + 2 x 2 x 32 = 512. The replay of ggml-alloc over
  // build_mamba2_layer's graph peaks at the last layer's scan, as ggml-alloc's own trace of this
  // case shows (tools/measure-llamacpp, "Reading the allocator's peak"): below it the inputs, the
  // residual (32,768), dt (6 x 64 x 4 = 1,536), a 102,912 B hole, the in-projection
  // (2 x 384 + 128 + 6) x 64 x 4 = 230,912, the conv window's freed 67 x 512 x 4 = 137,216 B
  // (a hole the convolved x/B/C, 64 x 512 x 4 = 131,072, does not take: the window is freed only
  // after the convolution ran), the convolved x/B/C, and at 669,728 the scan output, y
  // 384 x 64 x 4 = 98,304 + one state 32 x 384 x 4 = 49,152: 669,728 + 147,456 = 817,184 =
  // llama.cpp's measurement (tiny-mamba2|c8192|np1|b2048|ub64|fa-on), to the byte; the phase rule
  // gave 689,920 (-15.6%).
  LlamaCppSettings s;
  s.n_ctx = 8192;
  s.n_ubatch = 64;
  const Model& m = measured().find("tiny-mamba2")->model;
  EXPECT_EQ(llamacpp_memory(m, s).compute_bytes, 817'184u);
}

TEST(LlamaCppMeasured, RotatedQuantizedCachesMoveTheFeedForwardHole) {
  // tiny-qwen3 (n_embd 128, n_ff 320, 4 heads x 64, 5 layers), -c 4096 -fa on, 512 tokens; the
  // f16 mask is 4096 x 512 x 2 = 4,194,304. A q8_0 V cache on a 64-wide head is rotated: its
  // 64 x 64 f32 Hadamard matrix is a graph input (16,384 B), and with one cache rotated the first
  // layer's hole is one slot: 3 x 128 + 3 x 320 = 1,344 values (a middle layer: the same), x 4 B
  // + 28 B = 5,404 B x 512 = 2,766,848. Total 6,977,536 = measured (|k-f16|v-q8_0, to the byte).
  LlamaCppSettings s;
  s.type_v = "q8_0";
  const Model& m = measured().find("tiny-qwen3")->model;
  EXPECT_EQ(llamacpp_memory(m, s).compute_bytes, 6'977'536u);
  // Both caches q8_0: two matrices (32,768 B) and the first layer's two-slot hole again: 4 x 128 +
  // 3 x 320 = 1,472 values, x 4 B + 28 B = 5,916 B x 512 = 3,028,992. Total 7,256,064 = measured
  // (|k-q8_0|v-q8_0, to the byte).
  s.type_k = "q8_0";
  EXPECT_EQ(llamacpp_memory(m, s).compute_bytes, 7'256'064u);
}

TEST(LlamaCppMeasured, ComputeFollowsTheReservedBatch) {
  // tiny-llama-q4 (n_embd 256, n_ff 768, 3 layers), -c 5000 -np 3 -fa on: n_ctx_seq =
  // pad256(5120 / 3) = 1,792; the graph is reserved for 512 tokens rounded up to a multiple of 3 =
  // 513, each stream attending its 1,792 cells: f16 mask 1,792 x 513 x 2 = 1,838,592. With flash
  // attention the first layer's feed-forward phase is the peak: input embeddings 256 + residual
  // 256 + a hole of 2 x 256 + gate, up and product 3 x 768 (768 > 512: the gate does not fit the
  // hole) = 3,328 values, x 4 B + 28 B inputs = 13,340 B per token x 513 = 6,843,420; 8,682,012
  // in all. llama.cpp measured 8,682,112 (tiny-llama-q4|c5000|np3|...|fa-on): -0.001%.
  LlamaCppSettings s;
  s.n_ctx = 5000;
  s.n_seq = 3;
  const LlamaCppMemory mem = llamacpp_memory(measured().find("tiny-llama-q4")->model, s);
  EXPECT_EQ(mem.n_ctx_seq, 1792u);
  EXPECT_EQ(mem.compute_bytes, 8'682'012u);
  EXPECT_NEAR(static_cast<double>(mem.compute_bytes), 8'682'112.0, 8'682'112.0 * 0.0001);
}
