// gpt-oss's graph (llama.cpp 80fb11ac src/models/openai-moe.cpp): window
// and full attention layers in turn, each projection with a bias, attention sinks in the softmax
// (a weight: no node), then routed experts chosen from the biased router logits, weighted by a
// softmax over the chosen ones, each with its own biases; the output rows picked before the final
// norm.
#include <optional>
#include <string>
#include <vector>

#include "engines/llamacpp_graph_builder.h"

namespace vc::llamacpp_graph_detail {

std::optional<GgmlGraph> gpt_oss_graph(const Model& m, const LlamaCppGraphInput& in) {
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const LayerConfig& l = m.layers[il];
    const AttentionSpec& a = l.attention;
    if (a.kind != AttentionKind::Full && a.kind != AttentionKind::SlidingWindow) return std::nullopt;
    if (l.parallel_mixer || !a.query_heads || !a.kv_heads || l.feed_forward.kind != FeedForwardKind::MoE || !ffn_covered(m, il)) return std::nullopt;
  }
  Builder b(m, in);
  GgmlGraph& g = b.g;
  b.token_inputs();
  // Each cache (full, window), in the order the layers first use it: its Hadamard matrices where
  // a quantized cache is rotated (the positions come between K's and V's: the rotation of Q reads
  // K's matrix before RoPE reads them), K row indices, V row indices, the mask.
  struct CacheInputs {
    int k_rot = -1, v_rot = -1, k_idx = -1, v_idx = -1, mask = -1;
    uint64_t cells = 0;
  };
  CacheInputs caches[2];
  auto cache_of = [&](const AttentionSpec& a) -> CacheInputs& { return caches[a.kind == AttentionKind::SlidingWindow ? 1 : 0]; };
  int pos = -1;
  for (const auto& l : m.layers) {
    const AttentionSpec& a = l.attention;
    CacheInputs& c = cache_of(a);
    if (c.mask >= 0) continue;
    c.cells = a.kind == AttentionKind::SlidingWindow ? in.swa_cells : in.kv_cells;
    c.k_rot = b.rotation_matrix(in.k_rotation);
    if (pos < 0) pos = g.leaf(checked_mul(b.T_, kI32));
    c.v_rot = b.rotation_matrix(in.v_rotation);
    c.k_idx = g.leaf(checked_mul(b.T_, kI64));
    c.v_idx = b.v_idx(a);
    c.mask = b.mask(c.cells);
  }
  const int out_ids = g.leaf(checked_mul(in.outputs, kI32));

  int x = b.embeddings();
  b.reads(x, {b.weight("token_embd.weight")}, SchedOp::GetRows);
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const AttentionSpec& a = m.layers[il].attention;
    const CacheInputs& c = cache_of(a);
    const uint64_t heads = a.query_heads, kv_width = uint64_t{a.kv_heads} * a.head_dim_k, v_width = uint64_t{a.kv_heads} * a.head_dim_v;
    auto weight = [&](const std::string& name) { return b.blk(il, name); };
    const int h = b.norm(x);
    b.reads(h, {weight("attn_norm.weight")});
    // A projection and its bias (ADD, in place).
    auto projected = [&](uint64_t width, const std::string& name) {
      const int p = b.matmul(width, h);
      b.reads(p, {weight(name + ".weight")}, SchedOp::MulMat);
      const int biased = b.unary(p);
      b.reads(biased, {weight(name + ".bias")});
      return biased;
    };
    // Q and K: projection, + bias, RoPE over the per-head view (a new tensor).
    auto rotated = [&](uint64_t width, const std::string& name, uint64_t head_count) {
      const int p = projected(width, name);
      const int r = g.node(b.bytes(p), {g.view(p), pos});
      b.mark(r, SchedOp::Rope, head_count);
      return r;
    };
    // A rotated cache: Q and K by K's matrix, V by V's, the output rotated back.
    const int q = b.rotate(rotated(heads * a.head_dim_k, "attn_q", heads), c.k_rot);
    const int k = b.rotate(rotated(kv_width, "attn_k", a.kv_heads), c.k_rot);
    const int v = b.rotate(projected(v_width, "attn_v"), c.v_rot);
    into_cache(b, il, {g.view(k), c.k_idx});
    const int sinks = weight("attn_sinks.weight");
    const int k_cache = b.cache_view(il, in.type_k, kv_width, c.cells);
    int merged = -1;
    if (in.flash_attn) {
      into_cache(b, il, {g.view(g.view(v)), c.v_idx});  // row by row
      // FLASH_ATTN_EXT reads Q, the cache's K and V views, the mask and the sinks (a weight the
      // scheduler does not place it by), reshaped for the projection.
      const int v_cache = b.cache_view(il, in.type_v, v_width, c.cells);
      const int fa = g.node(b.rows(heads * a.head_dim_v), {g.view(g.view(q)), k_cache, v_cache, c.mask});
      b.reads(fa, {sinks}, SchedOp::FlashAttn, heads);
      g.tensors[static_cast<size_t>(fa)].gpu_unsupported = !cuda_has_flash_attn_kernel(a.head_dim_k, a.head_dim_v, in.type_k, in.type_v);
      b.cuda_flash_attn_bytes(fa, kv_width, v_width, c.cells, false);
      merged = g.view(fa);
    } else {
      into_cache(b, il, {g.view(g.view(g.view(v))), c.v_idx});  // into the transposed V cache
      const int kq = g.node(checked_product({c.cells, b.T_, heads, kF32}), {k_cache, g.view(g.view(q))});
      const int sm = g.node(b.bytes(kq), {kq, c.mask}, kq);  // SOFT_MAX with the sinks, in place
      b.reads(sm, {sinks}, SchedOp::Other, heads);
      const int v_cache = b.cache_view(il, in.type_v, v_width, c.cells);
      const int kqv = g.node(b.rows(heads * a.head_dim_v), {v_cache, sm});
      merged = g.node(b.bytes(kqv), {g.view(kqv)});  // CONT of the permuted heads
    }
    const int wo = b.matmul(m.hidden, b.rotate(merged, c.v_rot));
    b.reads(wo, {weight("attn_output.weight")}, SchedOp::MulMat);
    const int att = b.unary(wo);
    b.reads(att, {weight("attn_output.bias")});
    const int ffn_in = b.add(att, x);
    const int post = b.norm(ffn_in);
    b.reads(post, {weight("post_attention_norm.weight")});
    const int moe = b.moe_ffn(m.layers[il].feed_forward, post, {.softmax_chosen = true, .expert_biases = true}, il);
    x = b.add(moe, ffn_in);
  }
  // The last layer's output is kept whole (t_h_nextn); the output rows go through the norm.
  g.mark_output(x);
  b.keep_outputs();
  b.head(b.get_rows(m.hidden, x, out_ids));
  b.finish_scheduled();
  return std::move(b.g);
}

}  // namespace vc::llamacpp_graph_detail
