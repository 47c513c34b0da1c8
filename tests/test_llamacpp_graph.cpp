// The compute graphs llama.cpp reserves (src/engines/llamacpp_graph.cpp), checked on a one-layer
// llama small enough to follow ggml-alloc by hand: its inputs as llama.cpp 80fb11ac creates them
// (llama-kv-cache.cpp build_input_k_idxs / build_input_v_idxs / build_input_k_rot,
// llama-graph.cpp build_attn_inp_kq_mask) and the peak of the packing.
#include <gtest/gtest.h>

#include "engines/llamacpp_graph.h"

using namespace vc;

namespace {

// n_embd 128, 2 query heads and 1 KV head of 64, n_ff 96, vocab 40.
Model one_layer_llama() {
  Model m;
  m.architecture = "llama";
  m.hidden = 128;
  m.vocab = 40;
  LayerConfig l;
  l.attention.kind = AttentionKind::Full;
  l.attention.query_heads = 2;
  l.attention.kv_heads = 1;
  l.attention.head_dim_k = l.attention.head_dim_v = 64;
  l.feed_forward.kind = FeedForwardKind::Dense;
  l.feed_forward.dense_width = 96;
  m.layers = {l};
  return m;
}

// 8 tokens, one sequence, every token an output, 256 cells.
LlamaCppGraphInput eight_tokens(bool flash_attn) {
  LlamaCppGraphInput in;
  in.tokens = in.outputs = 8;
  in.kv_cells = 256;
  in.flash_attn = flash_attn;
  return in;
}

uint64_t input_bytes(const GgmlGraph& g) {
  uint64_t sum = 0;
  for (const auto& t : g.tensors) sum += t.leaf ? t.bytes : 0;
  return sum;
}

}  // namespace

TEST(LlamaCppGraph, FlashAttentionInputsAreTokenRowsAndAnF16Mask) {
  // With flash attention the V cache is not transposed: one row index per token (8 x 8 B), and
  // the mask is f16: 256 cells x 8 tokens x 2 B = 4,096. Token ids 32 + input embeddings
  // 8 x 128 x 4 = 4,096 + positions 32 + K row ids 64 + V row ids 64 + mask 4,096 + output ids
  // 32 = 8,416 B.
  const auto on = llamacpp_graph(one_layer_llama(), eight_tokens(true));
  ASSERT_TRUE(on);
  EXPECT_EQ(input_bytes(*on), 8'416u);
  // Without it, V gets one index per value (8 tokens x 64 x 8 B = 4,096) and the mask is f32
  // (8,192): 32 + 4,096 + 32 + 64 + 4,096 + 8,192 + 32 = 16,544 B.
  const auto off = llamacpp_graph(one_layer_llama(), eight_tokens(false));
  ASSERT_TRUE(off);
  EXPECT_EQ(input_bytes(*off), 16'544u);
}

TEST(LlamaCppGraph, FlashAttentionPeakWorkedByHand) {
  // ggml-alloc over the one-layer graph, every size a multiple of the 32 B alignment. The inputs
  // take 0..8,416. Then, end to end: the token embeddings (8 x 128 x 4 = 4,096; read again by the
  // residual, so the attention norm cannot run in place over them), the attention norm (4,096),
  // the Q projection (4,096) and Q after RoPE (4,096: RoPE reads a reshaped view, which is never
  // handed over) = 24,800. From there every tensor fits a freed block: V and K projections
  // (2,048 each) go where Q's projection was, K after RoPE where the norm was, the attention
  // output (4,096) where V and K were, the feed-forward's gate, up and product (8 x 96 x 4 = 3,072
  // each) into the blocks the attention and the inputs left. The buffer is 24,800 B.
  const auto g = llamacpp_graph(one_layer_llama(), eight_tokens(true));
  ASSERT_TRUE(g);
  EXPECT_EQ(ggml_alloc_peak(*g, 32), 24'800u);
}

TEST(LlamaCppGraph, RotatedCachesAddTheirMatricesAndFourProductsPerLayer) {
  // A quantized K and V cache on 64-wide heads are rotated (attn_rot_k / attn_rot_v): two
  // f32 64 x 64 matrices (16,384 B each) join the inputs, 8,416 + 32,768 = 41,184 B, and each
  // layer multiplies Q, K, V and the attention output by a matrix (llama_mul_mat_hadamard: a
  // reshape, the product, a reshape back: 3 tensors each, 12 in all).
  LlamaCppGraphInput in = eight_tokens(true);
  const auto plain = llamacpp_graph(one_layer_llama(), in);
  in.k_rotation = in.v_rotation = 64;
  const auto rotated = llamacpp_graph(one_layer_llama(), in);
  ASSERT_TRUE(plain && rotated);
  EXPECT_EQ(input_bytes(*rotated), 41'184u);
  EXPECT_EQ(rotated->tensors.size(), plain->tensors.size() + 2 + 12);
}
