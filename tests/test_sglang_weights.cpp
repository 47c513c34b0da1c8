// PyTorch's caching allocator replayed for weight tensors (src/engines/torch_caching_allocator.h,
// rules of c10/cuda/CUDACachingAllocator.cpp) and SGLang's weights on one rank
// (src/engines/sglang_weights.h, models/deepseek_v2.py's MLA layout); every figure worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "engines/serving_speculative.h"
#include "engines/sglang_weights.h"
#include "engines/torch_caching_allocator.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"
#include "published_configs.h"

using namespace vc;

namespace {

constexpr uint64_t kMiB = 1ull << 20;


// A model at plain TP 4 and at TP 4 / DP 2 (--enable-dp-attention: two attention groups of two
// ranks, attn_tp_size 2); the even share of the checkpoint is the same either way.
struct Tp4Dp2 {
  SglangRankWeights tp4, dp2;
};
Tp4Dp2 tp4_and_dp2(const Model& m) {
  Tp4Dp2 r{sglang_rank_weights(m, m.native.bytes, 4, 1, "auto"), sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 2)};
  EXPECT_EQ(r.dp2.attention_tp, 2u);
  EXPECT_EQ(r.dp2.even_share, r.tp4.even_share);
  return r;
}

}  // namespace

// 12 MiB + 1 B: round_size to 512 B gives 12,583,424 B, 10 MiB or more, so a segment of its own
//   rounded up to 2 MiB: 7 x 2 MiB = 14 MiB (14,680,064 B); the rest, 2,096,640 B, is over 1 MiB:
//   split off as a free block of the large pool.
// 3 MiB: large pool, but the free 2,096,640 B block is too small; under 10 MiB, so a 20 MiB segment
//   (kLargeBuffer); its rest of 17 MiB is split off, free.
// 500 KiB (512,000 B, already a multiple of 512): small pool (1 MiB or less), empty, so a 2 MiB
//   segment; its rest of 1,585,152 B (at least 512 B) split off, free.
// Reserved 14 + 20 + 2 = 36 MiB in 3 segments for 16,240,641 B asked.
TEST(TorchCachingAllocator, HandWorkedWeightSequence) {
  const TorchReserved r = torch_reserved({12 * kMiB + 1, 3 * kMiB, 500 * 1024});
  EXPECT_EQ(r.requested, 16'240'641u);
  EXPECT_EQ(r.reserved, 36 * kMiB);
  EXPECT_EQ(r.segments, 3u);
  EXPECT_EQ(r.allocated, 12'583'424u + 3 * kMiB + 512'000u);  // every block was split: the rounded requests
}

// The blocks split off serve later requests, best fit first: 1.5 MiB (over 1 MiB: the large pool)
// takes the 2,096,640 B rest of the first segment, not the 17 MiB one, and keeps its 523,776 B rest
// (not over 1 MiB: not split); 16 MiB then fits the 17 MiB rest and keeps its 1 MiB (not over
// 1 MiB). No new segment: still 36 MiB reserved; allocated holds the unsplit rests.
TEST(TorchCachingAllocator, FreeRestsServeLaterRequests) {
  const TorchReserved r = torch_reserved({12 * kMiB + 1, 3 * kMiB, 500 * 1024, 3 * kMiB / 2, 16 * kMiB});
  EXPECT_EQ(r.reserved, 36 * kMiB);
  EXPECT_EQ(r.segments, 3u);
  EXPECT_EQ(r.allocated, 12'583'424u + 3 * kMiB + 512'000u + 2'096'640u + 17 * kMiB);
}

// A non-gated MLP is laid out as SGLang builds it: one up projection of `width` rows (Phi's
// ColumnParallelLinear fc1, models/phi.py PhiMLP; Nemotron-H's up_proj) and the down projection,
// not a gate_up_proj of 2 x width. Phi-2 (hidden 2,560, intermediate 10,240, 32 layers, float16) at
// TP 2: fc1 on a rank 10,240 / 2 x 2,560 x 2 B = 26,214,400 B, fc2 the same, 64 tensors of that size
// (no other tensor of Phi-2 has it: qkv 19,660,800, dense 6,553,600, the head 131,072,000), none of
// the gated reading's 52,428,800. Nemotron-3-Nano-30B-A3B's experts are up and down only
// (UnquantizedFusedMoEMethod.create_weights: w13 of intermediate_size_per_partition rows when not
// is_gated): at TP 1 w13 is 128 experts x 1,856 x 2,688 x 2 B = 1,277,165,568 B, as w2 is, 46 such
// tensors over its 23 MoE layers, none of the gated 2,554,331,136.
TEST(SglangRankWeights, NonGatedMlpsLaidOutAsTwoMatrices) {
  const Model phi2 = model_from_config(vc::testing::phi2(), "phi-2 config.json");
  const SglangRankWeights p = sglang_rank_weights(phi2, checked_mul(phi2.params.derived_total, 2), 2, 1, "float16");
  EXPECT_EQ(std::count(p.tensors.begin(), p.tensors.end(), 26'214'400u), 64);
  EXPECT_EQ(std::count(p.tensors.begin(), p.tensors.end(), 52'428'800u), 0);
  const Model& nano = *Catalogue::builtin().find("nemotron-3-nano-30b-a3b");
  const SglangRankWeights n = sglang_rank_weights(nano, nano.native.bytes, 1, 1, "auto");
  EXPECT_EQ(std::count(n.tensors.begin(), n.tensors.end(), 1'277'165'568u), 46);
  EXPECT_EQ(std::count(n.tensors.begin(), n.tensors.end(), 2'554'331'136u), 0);
}

// A small MLA model in bf16 at TP 4: hidden 1,024, vocabulary 1,000 (untied head), one layer of 8
// heads, q_lora_rank 256, kv_lora_rank 128, qk_rope_head_dim 32, qk_nope_head_dim 64, v_head_dim 64,
// a dense MLP of 2,048. What a rank holds beyond 1/4 of each tensor (bytes, 2 a parameter):
//   embedding: 1,024 padded rows / 4 = 256 x 1,024 = 524,288 B against 2,048,000 / 4: +12,288
//   fused_qkv_a_proj_with_mqa, whole: 1,024 x (256 + 128 + 32) = 851,968 B, less 212,992: +638,976
//   q_a_layernorm, whole: 512 B less 128: +384; kv_a_layernorm: 256 B less 64: +192
//   q_b_proj, kv_b_proj, o_proj, the MLP: split evenly, +0
//   input and post-attention norms: 2 x (2,048 - 512) = +3,072; final norm +1,536
//   output head as the embedding: +12,288
//   = 668,736 B. w_kc and w_vc: 2 heads x 64 x 128 x 2 B each = 65,536 B.
// The allocator over the rank's 15 tensors (5,544,704 B asked): the small pool packs everything
// of 1 MiB and less into two 2 MiB segments (the first full at 1,803,264 B when down_proj's 1 MiB
// arrives), gate_up_proj (2 MiB, over 1 MiB and under 10 MiB) takes a 20 MiB segment: 24 MiB
// reserved, 19,621,120 B over what was asked.
TEST(SglangRankWeights, MlaDownProjectionsWholeOnEveryRank) {
  Model m;
  m.hidden = 1024;
  m.vocab = 1000;
  m.native.format = "BF16";
  m.params.derived_total = 4'000'000;
  m.native.bytes = 8'000'000;
  LayerConfig l;
  l.attention.kind = AttentionKind::Latent;
  l.attention.query_heads = 8;
  l.attention.latent_rank = 128;
  l.attention.rope_dim = 32;
  l.attention.query_rank = 256;
  l.attention.nope_dim = 64;
  l.attention.value_dim = 64;
  l.feed_forward.kind = FeedForwardKind::Dense;
  l.feed_forward.dense_width = 2048;
  m.layers = {l};
  const SglangRankWeights w = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto");
  EXPECT_EQ(w.even_share, 2'000'000u);
  EXPECT_EQ(w.replicated_extra, 668'736u);
  EXPECT_EQ(w.mla_copies, 65'536u);
  EXPECT_EQ(w.tensors.size(), 15u);
  EXPECT_EQ(w.allocator_overhead, 19'621'120u);
  EXPECT_EQ(w.total, 2'000'000u + 668'736u + 65'536u + 19'621'120u);

  // Without query compression (DeepSeek-V2-Lite's layout) q_proj is split and kv_a_proj_with_mqa
  // (1,024 x (128 + 32) = 327,680 B) whole: +245,760 in place of +638,976 and +384.
  m.layers[0].attention.query_rank = 0;
  EXPECT_EQ(sglang_rank_weights(m, m.native.bytes, 4, 1, "auto").replicated_extra, 668'736u - 638'976u - 384u + 245'760u);
}

// QwQ-32B (Qwen2.5-32B's geometry) at TP 4, as on the four L4s of docs/accuracy.md: per layer
// qkv_proj 17.5 MiB in an 18 MiB segment, o_proj 12.5 MiB in 14 MiB (its 1.5 MiB rest split off,
// never reused: no later request is between 1 and 1.5 MiB), gate_up_proj 135 MiB in 136, down_proj
// 67.5 MiB in 68: 3.5 MiB a layer, 224 MiB over 64 layers; the embedding and the head 371.25 MiB
// each in 372; the 129 norms (10,240 B each, 1,320,960 B) in one 2 MiB segment (776,192 B over).
// 225.5 MiB + 776,192 B = 237,230,080 B. Replicated: the 129 norms, 3/4 of 10,240 B each = 990,720 B
// (152,064 rows need no padding to 64; 2 KV heads a rank need no replication). The RoPE cache,
// 131,072 positions x 128 x 4 B = 64 MiB, a 2 MiB multiple, adds no rounding; its freed 32 MiB
// temporaries (freqs, cos, sin) hold qkv_proj and o_proj of layers 1 to 3 (17.5 + 12.5 MiB, a 2 MiB
// rest), the 2 MiB over those two tensors' own 18 and 14 MiB segments: the same rounding.
TEST(SglangRankWeights, QwQ32bAtTp4RoundsUpPerSegment) {
  const Model& m = *Catalogue::builtin().find("qwen2.5-32b");
  const SglangRankWeights w = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto");
  EXPECT_EQ(w.allocator_overhead, 237'230'080u);
  EXPECT_EQ(w.rope_cache, 64 * kMiB);
  EXPECT_EQ(w.replicated_extra, 990'720u);
  EXPECT_EQ(w.mla_copies, 0u);
}

// Frees (c10/cuda/CUDACachingAllocator.cpp free_block, try_merge_blocks, release_cached_blocks):
// two 512 KiB requests share one 2 MiB small segment (the first at offset 0, the second at 512 KiB,
// a 1 MiB rest split off, free); 20 MiB is a segment of its own (10 MiB and more, a 2 MiB
// multiple). Freeing both small blocks merges them with the rest into one free 2 MiB block: the
// whole segment, so empty_cache would give it back: 20 MiB reserved, one segment, 20 MiB asked.
// A 1 MiB request (small pool) then takes that free 2 MiB block (best fit; its 1 MiB rest split
// off, at least 512 B): the segment is live again, 22 MiB reserved in two segments.
TEST(TorchCachingAllocator, FreedBlocksMergeAndWholeSegmentsGoBack) {
  std::vector<TorchStep> s = {TorchStep::alloc(512 * 1024), TorchStep::alloc(512 * 1024), TorchStep::alloc(20 * kMiB), TorchStep::release(0),
                              TorchStep::release(1)};
  TorchReserved r = torch_reserved_steps(s);
  EXPECT_EQ(r.reserved, 20 * kMiB);
  EXPECT_EQ(r.segments, 1u);
  EXPECT_EQ(r.requested, 20 * kMiB);
  s.push_back(TorchStep::alloc(kMiB));
  r = torch_reserved_steps(s);
  EXPECT_EQ(r.reserved, 22 * kMiB);
  EXPECT_EQ(r.segments, 2u);
  EXPECT_EQ(r.allocated, 21 * kMiB);
}

// Llama 3.1 8B at TP 1 (max_position_embeddings 131,072, head_dim 128): SGLang's RotaryEmbedding
// (layers/rotary_embedding/base.py) keeps cat(cos, sin) in fp32: 131,072 x 128 x 4 B = 64 MiB, one
// instance for the 32 layers (get_rope's _ROPE_DICT). Built in layer 0 after o_proj: inv_freq
// (256 B) and t (512 KiB) in a 2 MiB small segment, freqs, cos and sin 32 MiB each, three segments
// of their own, the cache a 64 MiB one; all but the cache freed. The small segment is wholly free
// (the norms take it later, as they would a new one); each 32 MiB block is taken whole by a later
// o_proj (4,096 x 4,096 x 2 B = 32 MiB exactly: layers 1 to 3), which would otherwise take a
// 32 MiB segment of its own. So the weights grow by the cache alone, 64 MiB, not rounded.
TEST(SglangRankWeights, Llama31RopeCacheIs64MiB) {
  const Model& m = *Catalogue::builtin().find("llama-3.1-8b");
  ASSERT_EQ(m.max_context, 131072u);
  const SglangRankWeights w = sglang_rank_weights(m, m.native.bytes, 1, 1, "auto");
  EXPECT_EQ(w.rope_cache, 64 * kMiB);
  Model no_rope = m;
  no_rope.max_context = 0;  // positions not read: no cache
  const SglangRankWeights n = sglang_rank_weights(no_rope, m.native.bytes, 1, 1, "auto");
  EXPECT_EQ(n.rope_cache, 0u);
  EXPECT_EQ(w.total - n.total, 64 * kMiB);
  EXPECT_EQ(w.allocator_overhead, n.allocator_overhead);
}

// Kimi K2.5 at TP 8 (models/kimi_k25.py): the MoonViT tower (hidden 1,152, MLP 4,304, 16 heads of
// 72, 27 blocks, 14 x 14 patches, a 64 x 64 position grid) and the projector (merged width 4 x
// 1,152 = 4,608 into 7,168) whole on every rank but the attention's qkv_proj and proj (2 heads a
// rank). Parameters, whole: patch 3 x 14 x 14 x 1,152 + 1,152 = 678,528; positions 4,718,592; a
// block 4 x 1,152 (norms) + 4,962,512 (fc0) + 4,959,360 (fc1) + 3,984,768 (qkv) + 1,328,256 (proj)
// = 15,239,504, x 27 = 411,466,608; final norm 2,304; projector 2,304 + 21,238,272 + 33,037,312 =
// 54,277,888: 471,143,920 (0.47B). On a rank a block holds qkv 432 x 1,152 + 432 and proj 144 x
// 1,152 + 1,152 (the bias whole): 10,591,616, x 27 = 285,973,632; the rank 345,650,944. At 2 B:
// 691,301,888 B on the rank less the eighth of 942,287,840 B an even share holds (117,785,980;
// every tensor's bytes divide by 8) = 573,515,908 B beyond the even share. The YaRN cache of its
// text model (262,144 positions x qk_rope_head_dim 64 x 4 B) is 64 MiB.
TEST(SglangRankWeights, KimiK25TowerWholeOnEveryRankButItsAttention) {
  const Model& m = *Catalogue::builtin().find("kimi-k2.5");
  const SglangRankWeights w = sglang_rank_weights(m, m.native.bytes, 8, 1, "auto");
  EXPECT_EQ(w.tower_extra, 573'515'908u);
  EXPECT_EQ(w.rope_cache, 64 * kMiB);
}

// --enable-dp-attention (sglang_weights.h): Qwen3-30B-A3B (qwen3_moe: hidden 2,048, 32 heads and 4
// KV heads of 128, 48 layers, vocabulary 151,936, bf16) at TP 4. Its attention is built on the
// attention-TP group (models/qwen3_moe.py, tp_size=attn_tp_size) and so is its embedding
// (VocabParallelEmbedding(use_attn_tp_group=is_dp_attention_enabled()), sglang PR #17403); the
// experts, the router and the output head as without DP attention. Beyond the quarter an even share
// holds, per layer:
//   qkv_proj (32 x 128 + 4 x 2 x 128) x 2,048 = 10,485,760 params = 20,971,520 B, its quarter 5,242,880 B;
//   o_proj 32 x 128 x 2,048 = 8,388,608 params = 16,777,216 B, its quarter 4,194,304 B;
//   embedding 151,936 x 2,048 x 2 B = 622,329,856 B (151,936 rows: a multiple of 64, no padding), its quarter 155,582,464 B.
// dp 4 (attn_tp_size 1, everything whole): (20,971,520 - 5,242,880 + 16,777,216 - 4,194,304) x 48
//   = 1,358,954,496 B, + 622,329,856 - 155,582,464 = 466,747,392 B: 1,825,701,888 B more.
// dp 2 (attn_tp_size 2, halves): (10,485,760 - 5,242,880 + 8,388,608 - 4,194,304) x 48 = 452,984,832 B,
//   + the embedding's half 311,164,928 - 155,582,464 = 155,582,464 B: 608,567,296 B more.
TEST(SglangRankWeights, DpAttentionSplitsAttentionAndEmbeddingOverTheGroup) {
  const Model& m = *Catalogue::builtin().find("qwen3-30b-a3b");
  ASSERT_EQ(m.architecture, "qwen3_moe");
  const SglangRankWeights tp4 = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto");
  const SglangRankWeights dp4 = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 4);
  const SglangRankWeights dp2 = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 2);
  EXPECT_EQ(tp4.attention_tp, 4u);
  EXPECT_EQ(tp4.embedding_tp, 4u);
  EXPECT_EQ(dp4.attention_tp, 1u);
  EXPECT_EQ(dp4.embedding_tp, 1u);
  EXPECT_EQ(dp2.attention_tp, 2u);
  EXPECT_EQ(dp2.embedding_tp, 2u);
  EXPECT_EQ(dp4.even_share, tp4.even_share);
  EXPECT_EQ(dp4.replicated_extra - tp4.replicated_extra, 1'825'701'888u);
  EXPECT_EQ(dp2.replicated_extra - tp4.replicated_extra, 608'567'296u);
  EXPECT_EQ(dp4.rope_cache, tp4.rope_cache);
  // The rank's tensors: the embedding first, then layer 0's qkv_proj.
  EXPECT_EQ(dp4.tensors[0], 622'329'856u);
  EXPECT_EQ(dp2.tensors[0], 311'164'928u);
  EXPECT_EQ(dp4.tensors[1], 20'971'520u);
  EXPECT_EQ(dp2.tensors[1], 10'485'760u);
}

// The dense Qwen3 (models/qwen3.py, sglang PR #7681): Qwen3-32B (hidden 5,120, 64 heads and 8 KV
// heads of 128, 64 layers, MLP 25,600, vocabulary 151,936, untied, bf16) at TP 4, DP 2: attention
// and embedding over attn_tp_size 2, the MLP (Qwen2MLP, no tp override) and the head over TP 4.
//   qkv_proj (64 x 128 + 8 x 2 x 128) x 5,120 = 52,428,800 params = 104,857,600 B: on the rank its
//     half (32 heads, 4 KV heads) 52,428,800 B against the quarter 26,214,400 B: 26,214,400 B more;
//   o_proj 64 x 128 x 5,120 x 2 B = 83,886,080 B: half 41,943,040 against 20,971,520: 20,971,520 B more;
//   x 64 layers: 47,185,920 x 64 = 3,019,898,880 B;
//   embedding 151,936 (a multiple of 64) x 5,120 x 2 B = 1,555,824,640 B: half 777,912,320 against
//     388,956,160: 388,956,160 B more. In all 3,408,855,040 B beyond plain TP 4.
// The MLP as at TP 4: gate_up 2 x 6,400 x 5,120 x 2 B = 131,072,000 B, down 6,400 x 5,120 x 2 B =
// 65,536,000 B (after qkv_proj, o_proj and the RoPE cache). --enable-dp-lm-head moves the head to
// the group too: its half 777,912,320 against the quarter, 388,956,160 B more.
TEST(SglangRankWeights, DpAttentionOnDenseQwen3SplitsAttentionAndEmbeddingOverTheGroup) {
  const Model& m = *Catalogue::builtin().find("qwen3-32b");
  ASSERT_EQ(m.architecture, "qwen3");
  const auto [tp4, dp2] = tp4_and_dp2(m);
  EXPECT_EQ(dp2.embedding_tp, 2u);
  EXPECT_EQ(dp2.dense_mlp_tp, 4u);
  EXPECT_EQ(dp2.head_tp, 4u);
  EXPECT_EQ(dp2.replicated_extra - tp4.replicated_extra, 3'408'855'040u);
  EXPECT_EQ(dp2.tensors[0], 777'912'320u);
  EXPECT_EQ(dp2.tensors[1], 52'428'800u);
  EXPECT_EQ(dp2.tensors[2], 41'943'040u);
  EXPECT_EQ(dp2.tensors[4], 131'072'000u);
  EXPECT_EQ(dp2.tensors[5], 65'536'000u);
  EXPECT_EQ(tp4.tensors[4], 131'072'000u);
  const SglangRankWeights head = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 2, true);
  EXPECT_EQ(head.head_tp, 2u);
  EXPECT_EQ(head.replicated_extra - dp2.replicated_extra, 388'956'160u);
}

// Llama (models/llama.py; sglang PR #15268 "llama model and llama eagle3 model support dp-attn":
// its attention on the attention-TP group; the embedding on that group since PR #17403). Llama 3.1 8B
// (hidden 4,096, 32 heads and 8 KV heads of 128, 32 layers, vocabulary 128,256, bf16) at TP 2, DP 2:
// attn_tp_size 1, so attention and embedding whole on each rank, against their halves at TP 2:
//   qkv_proj (32 x 128 + 2 x 8 x 128) x 4,096 x 2 B = 50,331,648 B, half 25,165,824: 25,165,824 B more;
//   o_proj 4,096 x 4,096 x 2 B = 33,554,432 B, half 16,777,216: 16,777,216 B more;
//   x 32 layers: 41,943,040 x 32 = 1,342,177,280 B;
//   embedding 128,256 (a multiple of 64) x 4,096 x 2 B = 1,050,673,152 B, half 525,336,576: 525,336,576 B more.
// In all 1,867,513,856 B beyond plain TP 2; the MLP (LlamaMLP) and the head stay at TP 2.
// Qwen2 (models/qwen2.py: Qwen2Attention on the whole TP group) and other classes not read are
// refused, and so is a dp that does not divide tp.
TEST(SglangRankWeights, DpAttentionOnLlamaSplitsAttentionOverTheGroupAndOtherClassesAreRefused) {
  const Model& llama = *Catalogue::builtin().find("llama-3.1-8b");
  ASSERT_EQ(llama.architecture, "llama");
  const SglangRankWeights tp2 = sglang_rank_weights(llama, llama.native.bytes, 2, 1, "auto");
  const SglangRankWeights dp2 = sglang_rank_weights(llama, llama.native.bytes, 2, 1, "auto", 2);
  EXPECT_EQ(dp2.attention_tp, 1u);
  EXPECT_EQ(dp2.embedding_tp, 1u);
  EXPECT_EQ(dp2.dense_mlp_tp, 2u);
  EXPECT_EQ(dp2.head_tp, 2u);
  EXPECT_EQ(dp2.even_share, tp2.even_share);
  EXPECT_EQ(dp2.replicated_extra - tp2.replicated_extra, 1'867'513'856u);
  EXPECT_EQ(dp2.tensors[0], 1'050'673'152u);
  EXPECT_EQ(dp2.tensors[1], 50'331'648u);
  EXPECT_EQ(dp2.tensors[2], 33'554'432u);
  const Model& qwen2 = *Catalogue::builtin().find("qwen2.5-7b");
  ASSERT_EQ(qwen2.architecture, "qwen2");
  EXPECT_THROW(sglang_rank_weights(qwen2, qwen2.native.bytes, 2, 1, "auto", 2), InputError);
  EXPECT_NO_THROW(sglang_rank_weights(qwen2, qwen2.native.bytes, 2, 1, "auto", 1));
  const Model& gemma = *Catalogue::builtin().find("gemma-3-12b");
  EXPECT_THROW(sglang_rank_weights(gemma, gemma.native.bytes, 2, 1, "auto", 2), InputError);
  EXPECT_THROW(sglang_rank_weights(llama, llama.native.bytes, 4, 1, "auto", 3), InputError);
}

// --moe-dense-tp-size 1 (layers/communicator.py enable_moe_dense_fully_dp; models/deepseek_v2.py
// DeepseekV2DecoderLayer: the dense layers' DeepseekV2MLP at tp_size 1). DeepSeek-V3 (hidden 7,168,
// the first 3 layers dense with MLP 18,432) at TP 8, read at 2 B a parameter (a tier of 2 x its
// parameters: every class at 2 B, no scales):
//   gate_up 2 x 18,432 x 7,168 = 264,241,152 params = 528,482,304 B whole, its eighth 66,060,288 B
//     (2 x 2,304 x 7,168 x 2): 462,422,016 B more;
//   down 18,432 x 7,168 x 2 B = 264,241,152 B whole, its eighth 33,030,144 B: 231,211,008 B more;
//   x 3 layers: (462,422,016 + 231,211,008) x 3 = 2,080,899,072 B beyond the TP 8 layout.
// The shared experts keep TP. Qwen3-30B-A3B has no dense MLP layer: nothing moves. A class with dense
// layers not read for the flag (Gemma 3) and any value but 1 are refused.
TEST(SglangRankWeights, MoeDenseTpSizeOneKeepsDeepseekDenseLayersWhole) {
  const Model& m = *Catalogue::builtin().find("deepseek-v3");
  ASSERT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::Dense);
  ASSERT_EQ(m.layers[0].feed_forward.dense_width, 18432u);
  const uint64_t tier = 2 * m.params.total();
  const SglangRankWeights tp8 = sglang_rank_weights(m, tier, 8, 1, "auto");
  const SglangRankWeights whole = sglang_rank_weights(m, tier, 8, 1, "auto", 1, false, 0, 1);
  EXPECT_EQ(tp8.dense_mlp_tp, 8u);
  EXPECT_EQ(whole.dense_mlp_tp, 1u);
  EXPECT_EQ(whole.even_share, tp8.even_share);
  EXPECT_EQ(whole.replicated_extra - tp8.replicated_extra, 2'080'899'072u);
  EXPECT_NE(std::find(whole.tensors.begin(), whole.tensors.end(), 528'482'304u), whole.tensors.end());
  EXPECT_EQ(std::find(tp8.tensors.begin(), tp8.tensors.end(), 528'482'304u), tp8.tensors.end());
  // With DP attention too (dp 8): the same 2,080,899,072 B on top of DP attention's own.
  const SglangRankWeights dp8 = sglang_rank_weights(m, tier, 8, 1, "auto", 8);
  const SglangRankWeights dp8_whole = sglang_rank_weights(m, tier, 8, 1, "auto", 8, false, 0, 1);
  EXPECT_EQ(dp8_whole.replicated_extra - dp8.replicated_extra, 2'080'899'072u);

  const Model& moe = *Catalogue::builtin().find("qwen3-30b-a3b");
  EXPECT_EQ(sglang_rank_weights(moe, moe.native.bytes, 4, 1, "auto", 1, false, 0, 1).total, sglang_rank_weights(moe, moe.native.bytes, 4, 1, "auto").total);
  // Gemma 3 (dense MLP layers, models/gemma3_causal.py not read for the flag) is refused.
  const Model& gemma = *Catalogue::builtin().find("gemma-3-12b");
  EXPECT_THROW(sglang_rank_weights(gemma, gemma.native.bytes, 2, 1, "auto", 1, false, 0, 1), InputError);
  EXPECT_NO_THROW(sglang_rank_weights(gemma, gemma.native.bytes, 2, 1, "auto"));
  EXPECT_THROW(sglang_rank_weights(m, tier, 8, 1, "auto", 1, false, 0, 2), InputError);
}

// --enable-dp-lm-head (ParallelLMHead(use_attn_tp_group=True), in qwen2_moe.py and llama.py alike):
// the output head over the attention group's tp / dp ranks. Qwen3-30B-A3B at TP 4, DP 4: the head
// whole, 151,936 x 2,048 x 2 B = 622,329,856 B against its quarter 155,582,464: 466,747,392 B more
// than DP attention alone. Llama 3.1 8B at TP 2, DP 2 (attention and embedding on the group of one):
// the head whole, 128,256 (a multiple of 64) x 4,096 x 2 B = 1,050,673,152 B against its
// half: 525,336,576 B more. Without DP attention SGLang refuses the flag (it asserts enable_dp_attention).
TEST(SglangRankWeights, DpLmHeadSplitsTheHeadOverTheAttentionGroup) {
  const Model& m = *Catalogue::builtin().find("qwen3-30b-a3b");
  const SglangRankWeights dp4 = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 4);
  const SglangRankWeights head = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 4, true);
  EXPECT_EQ(dp4.head_tp, 4u);
  EXPECT_EQ(head.head_tp, 1u);
  EXPECT_EQ(head.replicated_extra - dp4.replicated_extra, 466'747'392u);
  const Model& llama = *Catalogue::builtin().find("llama-3.1-8b");
  const SglangRankWeights l = sglang_rank_weights(llama, llama.native.bytes, 2, 1, "auto", 2);
  const SglangRankWeights lh = sglang_rank_weights(llama, llama.native.bytes, 2, 1, "auto", 2, true);
  EXPECT_EQ(lh.replicated_extra - l.replicated_extra, 525'336'576u);
  EXPECT_THROW(sglang_rank_weights(llama, llama.native.bytes, 2, 1, "auto", 1, true), InputError);
}

// GLM-4.5-Air (models/glm4_moe.py: Glm4MoeAttention's qkv_proj and o_proj with tp_rank=attn_tp_rank,
// tp_size=attn_tp_size; Glm4MoeModel's VocabParallelEmbedding(use_attn_tp_group=is_dp_attention_enabled());
// the dense layer's Glm4MoeMLP at tp_rank 0, tp_size 1 under enable_moe_dense_fully_dp()). Its
// config.json (data/models/glm-4.5-air): hidden 4,096, 96 heads and 8 KV heads of 128, 46 layers, the
// first (first_k_dense_replace 1) dense with intermediate_size 10,944, vocabulary 151,552 (a multiple
// of 64, no padding), untied, bf16 (2 B a parameter). At TP 4, DP 2 (attn_tp_size 2) against plain TP 4:
//   qkv_proj (96 x 128 + 2 x 8 x 128) x 4,096 = 58,720,256 params = 117,440,512 B: its half (48 heads,
//     4 KV heads) 58,720,256 B against the quarter 29,360,128 B: 29,360,128 B more;
//   o_proj 96 x 128 x 4,096 x 2 B = 100,663,296 B: half 50,331,648 against 25,165,824: 25,165,824 B more;
//   x 46 layers: 54,525,952 x 46 = 2,508,193,792 B;
//   embedding 151,552 x 4,096 x 2 B = 1,241,513,984 B: half 620,756,992 against 310,378,496: 310,378,496 B more.
// In all 2,818,572,288 B beyond plain TP 4; the experts, the router and the head as at TP 4.
// --moe-dense-tp-size 1 keeps layer 0's MLP whole: gate_up 2 x 10,944 x 4,096 x 2 B = 179,306,496 B
// against its quarter (2 x 2,736 x 4,096 x 2) 44,826,624: 134,479,872 B more; down 10,944 x 4,096 x 2 B
// = 89,653,248 B against 22,413,312: 67,239,936 B more; 201,719,808 B in all.
TEST(SglangRankWeights, DpAttentionOnGlm45AirSplitsAttentionAndEmbeddingOverTheGroup) {
  const Model& m = *Catalogue::builtin().find("glm-4.5-air");
  ASSERT_EQ(m.architecture, "glm4_moe");
  ASSERT_EQ(m.layers.size(), 46u);
  ASSERT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::Dense);
  ASSERT_EQ(m.layers[1].feed_forward.kind, FeedForwardKind::MoE);
  const auto [tp4, dp2] = tp4_and_dp2(m);
  EXPECT_EQ(dp2.embedding_tp, 2u);
  EXPECT_EQ(dp2.dense_mlp_tp, 4u);
  EXPECT_EQ(dp2.head_tp, 4u);
  EXPECT_EQ(dp2.replicated_extra - tp4.replicated_extra, 2'818'572'288u);
  EXPECT_EQ(dp2.tensors[0], 620'756'992u);
  EXPECT_EQ(tp4.tensors[0], 310'378'496u);
  EXPECT_EQ(dp2.tensors[1], 58'720'256u);
  EXPECT_EQ(dp2.tensors[2], 50'331'648u);
  const SglangRankWeights whole = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 2, false, 0, 1);
  EXPECT_EQ(whole.dense_mlp_tp, 1u);
  EXPECT_EQ(whole.replicated_extra - dp2.replicated_extra, 201'719'808u);
  EXPECT_NE(std::find(whole.tensors.begin(), whole.tensors.end(), 179'306'496u), whole.tensors.end());
  const SglangRankWeights head = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 2, true);
  EXPECT_EQ(head.head_tp, 2u);
}

// gpt-oss (models/gpt_oss.py: GptOssAttention on attn_tp_rank / attn_tp_size, but GptOssModel's
// VocabParallelEmbedding(enable_tp=not is_dp_attention_enabled()): whole on every rank). gpt-oss-20b's
// config.json: hidden 2,880, 64 heads and 8 KV heads of 64, 24 layers, vocabulary 201,088 (a multiple
// of 64), untied; attention and embedding unquantized (modules_to_not_convert), 2 B a parameter. At
// TP 4, DP 2 (attn_tp_size 2) against plain TP 4:
//   qkv_proj (64 x 64 + 2 x 8 x 64) x 2,880 x 2 B = 29,491,200 B: half 14,745,600 against the quarter
//     7,372,800: 7,372,800 B more; o_proj 64 x 64 x 2,880 x 2 B = 23,592,960 B: half 11,796,480 against
//     5,898,240: 5,898,240 B more; x 24 layers: 13,271,040 x 24 = 318,504,960 B;
//   embedding whole: 201,088 x 2,880 x 2 B = 1,158,266,880 B against its quarter 289,566,720: 868,700,160 B more.
// In all 1,187,205,120 B beyond plain TP 4.
TEST(SglangRankWeights, DpAttentionOnGptOssKeepsTheEmbeddingWhole) {
  const Model& m = *Catalogue::builtin().find("gpt-oss-20b");
  ASSERT_EQ(m.architecture, "gpt_oss");
  ASSERT_EQ(m.layers.size(), 24u);
  const auto [tp4, dp2] = tp4_and_dp2(m);
  EXPECT_EQ(dp2.embedding_tp, 1u);
  EXPECT_EQ(dp2.replicated_extra - tp4.replicated_extra, 1'187'205'120u);
  EXPECT_EQ(dp2.tensors[0], 1'158'266'880u);
  EXPECT_EQ(dp2.tensors[1], 14'745'600u);
  EXPECT_NE(sglang_weights_formula(dp2, "auto", 4, 1).find("the embedding whole"), std::string::npos);
}

// Qwen3-Next-80B-A3B (models/qwen3_next.py; hidden 2,048, 48 layers: every 4th full attention with
// 16 heads and 2 KV heads of 256 and an output gate, the other 36 Gated DeltaNet with 16 key heads of
// 128, 32 value heads of 128 and a width-4 convolution; vocabulary 151,936, untied, bf16) at TP 4
// and at TP 4 / DP 2. Qwen3HybridAttentionDecoderLayer and Qwen3GatedDeltaNet are built with
// tp_size=attn_tp_size and the embedding with use_attn_tp_group, so at DP 2 all three are split
// over 2 ranks; the MoE blocks (Qwen2MoeSparseMoeBlock) keep TP 4. Beyond the quarter an even share
// holds, worked per tensor (rank bytes at TP 4 -> at DP 2, the quarter subtracted):
//   full layer qkv_proj (16 x 2 x 256 query and gate + 2 x (256 + 256)) x 2,048 = 18,874,368 params
//     = 37,748,736 B, quarter 9,437,184 B; TP 4: (4 x 512 + 1 KV head x 512) x 2,048 x 2 B = 10,485,760 B
//     (1,048,576 more: the KV head replicated); DP 2: (8 x 512 + 512) x 2,048 x 2 B = 18,874,368 B
//     (9,437,184 more): 8,388,608 B more than TP 4;
//   o_proj 16 x 256 x 2,048 x 2 B = 16,777,216 B: TP 4 its quarter, DP 2 its half: 4,194,304 B more;
//   x 12 full layers: 12,582,912 x 12 = 150,994,944 B.
//   Gated DeltaNet layer: key_dim 16 x 128 = 2,048, value_dim 32 x 128 = 4,096, conv_dim 2 x 2,048 +
//     4,096 = 8,192: conv1d 8,192 x 4 x 2 B = 65,536 B (DP 2: 32,768, 16,384 more); in_proj_qkvz
//     (2 x 2,048 + 2 x 4,096) x 2,048 x 2 B = 50,331,648 B (DP 2: 25,165,824, 12,582,912 more);
//     in_proj_ba 2 x 32 x 2,048 x 2 B = 262,144 B (DP 2: 131,072, 65,536 more); dt_bias 32 x 2 B
//     (DP 2: 32 B against 16 at TP 4, 16 more); A_log float32, 32 / 4 x 4 = 32 B at TP 4 and 32 / 2 x
//     4 = 64 B at DP 2 (32 more); the gated norm 128 x 2 B whole either way; out_proj 4,096 x 2,048 x
//     2 B = 16,777,216 B (DP 2: 8,388,608, 4,194,304 more): 16,859,184 B more a layer, x 36 = 606,930,624 B.
//   embedding 151,936 (a multiple of 64) x 2,048 x 2 B = 622,329,856 B: half 311,164,928 against the
//     quarter 155,582,464: 155,582,464 B more.
// In all 150,994,944 + 606,930,624 + 155,582,464 = 913,508,032 B beyond plain TP 4. Layer 0 (Gated
// DeltaNet) at DP 2, after the embedding: conv1d 32,768 B, in_proj_qkvz 25,165,824, in_proj_ba 131,072,
// dt_bias 32, A_log 64, norm 256, out_proj 8,388,608; layer 3's qkv_proj (after layers 0-2's tensors).
TEST(SglangRankWeights, DpAttentionOnQwen3NextSplitsItsMixersOverTheGroup) {
  const Model& m = *Catalogue::builtin().find("qwen3-next-80b-a3b");
  ASSERT_EQ(m.architecture, "qwen3_next");
  const auto [tp4, dp2] = tp4_and_dp2(m);
  EXPECT_EQ(tp4.mixer_tp, 4u);
  EXPECT_EQ(dp2.mixer_tp, 2u);
  EXPECT_EQ(dp2.embedding_tp, 2u);
  EXPECT_EQ(dp2.head_tp, 4u);
  EXPECT_EQ(dp2.replicated_extra - tp4.replicated_extra, 913'508'032u);
  const std::vector<uint64_t> layer0 = {311'164'928u, 32'768u, 25'165'824u, 131'072u, 32u, 64u, 256u, 8'388'608u};
  ASSERT_GT(dp2.tensors.size(), layer0.size());
  EXPECT_EQ(std::vector<uint64_t>(dp2.tensors.begin(), dp2.tensors.begin() + layer0.size()), layer0);
  const std::vector<uint64_t> tp4_layer0 = {155'582'464u, 16'384u, 12'582'912u, 65'536u, 16u, 32u, 256u, 4'194'304u};
  EXPECT_EQ(std::vector<uint64_t>(tp4.tensors.begin(), tp4.tensors.begin() + tp4_layer0.size()), tp4_layer0);
  EXPECT_NE(std::find(dp2.tensors.begin(), dp2.tensors.end(), 18'874'368u), dp2.tensors.end());  // a full layer's qkv_proj, output gate in
  EXPECT_NE(std::find(tp4.tensors.begin(), tp4.tensors.end(), 10'485'760u), tp4.tensors.end());
  EXPECT_NE(sglang_weights_formula(dp2, "auto", 4, 1).find("recurrent mixers"), std::string::npos);
  // Without the mixers' geometry (as from a GGUF file) they cannot be laid out over the group: exit 2
  // under DP attention, the even share at plain TP as before.
  Model unread = m;
  for (LayerConfig& l : unread.layers)
    if (l.attention.kind == AttentionKind::LinearState) l.attention.mixer_heads = 0;
  EXPECT_EQ(sglang_rank_weights(unread, unread.native.bytes, 4, 1, "auto").mixer_tp, 0u);
  try {
    sglang_rank_weights(unread, unread.native.bytes, 4, 1, "auto", 2);
    ADD_FAILURE() << "a hybrid without its mixer geometry was not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--enable-dp-attention"), std::string::npos) << e.what();
  }
}

// Qwen3.5-27B (models/qwen3_5.py Qwen3_5ForConditionalGeneration; text config: hidden 5,120, 64
// layers, every 4th full attention with 24 heads and 4 KV heads of 256 and an output gate, the other 48
// Gated DeltaNet with 16 key heads of 128, 48 value heads of 128 and a width-4 convolution; vocabulary
// 248,320, untied, bf16) at plain TP 4. Qwen3_5GatedDeltaNet builds the tensors Qwen3-Next's does, now
// laid out one by one (rank bytes, the quarter in brackets where they differ):
//   embedding 248,320 (a multiple of 64) / 4 = 62,080 rows x 5,120 x 2 B = 635,699,200 B;
//   layer 0: key_dim 16 x 128 = 2,048, value_dim 48 x 128 = 6,144, conv_dim 2 x 2,048 + 6,144 = 10,240:
//   conv1d 10,240 / 4 = 2,560 x 4 x 2 B = 20,480 B; in_proj_qkvz (2 x 2,048 + 2 x 6,144) / 4 = 4,096 rows
//   x 5,120 x 2 B = 41,943,040 B; in_proj_ba 2 x 48 / 4 = 24 rows x 5,120 x 2 B = 245,760 B; dt_bias
//   48 / 4 = 12 x 2 B = 24 B; A_log float32 12 x 4 B = 48 B (quarter of 48 x 2 B: 24); the gated norm
//   128 x 2 B = 256 B whole (quarter 64); out_proj 6,144 / 4 = 1,536 x 5,120 x 2 B = 15,728,640 B.
//   Beyond the even share: 24 + 192 = 216 B a mixer, x 48 = 10,368 B more than with the mixers left
//   in the even share (as for a Qwen3.5 whose mixer geometry was not read).
//   A full layer's qkv_proj: (24 / 4 = 6 heads x 2 x 256 + 1 KV head x 512) x 5,120 x 2 B = 36,700,160 B.
// Under --enable-dp-attention it exits 2 naming the flag and the vision tower, whose split over the
// attention group was not read (the entry classes subclass Qwen3VLForConditionalGeneration).
TEST(SglangRankWeights, Qwen35MixersLaidOutAndDpAttentionRefusedForItsTower) {
  const Model& m = *Catalogue::builtin().find("qwen3.5-27b");
  ASSERT_EQ(m.architecture, "qwen3_5");
  const SglangRankWeights tp4 = sglang_rank_weights(m, m.native.bytes, 4, 1, "auto");
  EXPECT_EQ(tp4.mixer_tp, 4u);
  const std::vector<uint64_t> layer0 = {635'699'200u, 20'480u, 41'943'040u, 245'760u, 24u, 48u, 256u, 15'728'640u};
  ASSERT_GT(tp4.tensors.size(), layer0.size());
  EXPECT_EQ(std::vector<uint64_t>(tp4.tensors.begin(), tp4.tensors.begin() + layer0.size()), layer0);
  EXPECT_NE(std::find(tp4.tensors.begin(), tp4.tensors.end(), 36'700'160u), tp4.tensors.end());
  Model unread = m;
  for (LayerConfig& l : unread.layers)
    if (l.attention.kind == AttentionKind::LinearState) l.attention.mixer_heads = 0;
  const SglangRankWeights before = sglang_rank_weights(unread, unread.native.bytes, 4, 1, "auto");
  EXPECT_EQ(before.mixer_tp, 0u);
  EXPECT_EQ(tp4.replicated_extra - before.replicated_extra, 10'368u);
  for (const char* id : {"qwen3.5-27b", "qwen3.5-397b-a17b", "qwen3.6-35b-a3b"}) {
    const Model& q = *Catalogue::builtin().find(id);
    try {
      sglang_rank_weights(q, q.native.bytes, 8, 1, "auto", 8);
      ADD_FAILURE() << id << " was not refused";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--enable-dp-attention"), std::string::npos) << id << ": " << what;
      EXPECT_NE(what.find("vision tower"), std::string::npos) << id << ": " << what;
    }
  }
}

// MiniMax-M2.5 (models/minimax_m2.py; sglang PR #20067) is answered; its ParallelLMHead takes no
// use_attn_tp_group, so --enable-dp-lm-head leaves the head over all tp ranks: the same bytes. The
// subclasses of DeepseekV2ForCausalLM (DeepSeek V3.2, GLM-5) and of LlamaForCausalLM (Mistral,
// Phi-3 / Phi-4) are answered. Classes not written for DP attention (Mixtral: models/mixtral.py's
// MixtralAttention on the whole TP group), multimodal classes whose towers were not read (Llama 4,
// Qwen3-VL, Mistral 3, and Qwen3.5 for its Qwen3-VL tower) and the hybrid recurrent classes but
// Qwen3-Next and Qwen3.5 (Nemotron-H, Jamba, Kimi Linear, Granite 4.0-H: their mixers follow the
// attention group, which the weights here do not lay out for them) exit 2 naming --enable-dp-attention.
TEST(SglangRankWeights, DpAttentionAcceptedAndRefusedClasses) {
  const Model& mm = *Catalogue::builtin().find("minimax-m2.5");
  ASSERT_EQ(mm.architecture, "minimax_m2");
  const SglangRankWeights mm_dp = sglang_rank_weights(mm, mm.native.bytes, 8, 1, "auto", 8);
  const SglangRankWeights mm_head = sglang_rank_weights(mm, mm.native.bytes, 8, 1, "auto", 8, true);
  EXPECT_EQ(mm_dp.attention_tp, 1u);
  EXPECT_EQ(mm_dp.embedding_tp, 1u);
  EXPECT_EQ(mm_head.head_tp, 8u);
  EXPECT_EQ(mm_head.total, mm_dp.total);
  for (const char* id : {"deepseek-v3.2", "glm-5", "mistral-7b-v0.3", "phi-4"}) {
    const Model& m = *Catalogue::builtin().find(id);
    EXPECT_EQ(sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 2).attention_tp, 2u) << id;
  }
  for (const char* id : {"mixtral-8x7b", "llama-4-scout", "qwen3-vl-8b", "mistral-small-3.1-24b", "qwen3.5-27b", "qwen3.5-35b-a3b",
                         "nemotron-h-56b", "jamba-v0.1", "kimi-linear-48b-a3b", "granite-4.0-h-small", "gemma-3-27b", "qwen2.5-72b"}) {
    const Model& m = *Catalogue::builtin().find(id);
    try {
      sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 2);
      ADD_FAILURE() << id << " was not refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--enable-dp-attention"), std::string::npos) << id << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("MiniMax-M2"), std::string::npos) << id << ": " << e.what();
    }
  }
}

// The checkpoint's MTP layer is not built for the target (SGLang loads layers below
// num_hidden_layers): DeepSeek-V3's even share at TP 8 is an eighth of the checkpoint less it
// (mtp_weight_bytes; its embedding and head copies alone are 2 x 129,280 x 7,168 x 2 B).
TEST(SglangRankWeights, MtpLayersAreNotInTheTargetsShare) {
  const Model& v3 = *Catalogue::builtin().find("deepseek-v3");
  const uint64_t mtp = mtp_weight_bytes(v3, v3.native.bytes, false);
  EXPECT_GT(mtp, 3'706'716'160u);
  EXPECT_EQ(sglang_rank_weights(v3, v3.native.bytes, 8, 1, "auto").even_share, (v3.native.bytes - mtp + 7) / 8);
}
