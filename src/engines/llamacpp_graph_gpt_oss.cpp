// gpt-oss's graph (llama.cpp 80fb11ac src/models/openai-moe.cpp): window
// and full attention layers in turn, each projection with a bias, attention sinks in the softmax
// (a weight: no node), then routed experts chosen from the biased router logits, weighted by a
// softmax over the chosen ones, each with its own biases; the output rows picked before the final
// norm.
#include <optional>

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
  const int pos = g.leaf(checked_mul(b.T_, kI32));
  // Each cache (full, window): K row indices, V row indices, the mask, in the order the layers
  // first use them.
  struct CacheInputs {
    int k_idx = -1, v_idx = -1, mask = -1;
    uint64_t cells = 0;
  };
  CacheInputs caches[2];
  auto cache_of = [&](const AttentionSpec& a) -> CacheInputs& { return caches[a.kind == AttentionKind::SlidingWindow ? 1 : 0]; };
  for (const auto& l : m.layers) {
    const AttentionSpec& a = l.attention;
    CacheInputs& c = cache_of(a);
    if (c.mask >= 0) continue;
    c.cells = a.kind == AttentionKind::SlidingWindow ? in.swa_cells : in.kv_cells;
    c.k_idx = g.leaf(checked_mul(b.T_, kI64));
    c.v_idx = b.v_idx(a);
    c.mask = b.mask(c.cells);
  }
  const int out_ids = g.leaf(checked_mul(in.outputs, kI32));

  int x = b.embeddings();
  for (const auto& l : m.layers) {
    const AttentionSpec& a = l.attention;
    const CacheInputs& c = cache_of(a);
    const uint64_t heads = a.query_heads, kv_width = uint64_t{a.kv_heads} * a.head_dim_k;
    const int h = b.norm(x);
    // Q and K: projection, + bias (in place), RoPE over the per-head view (a new tensor).
    auto rotated = [&](uint64_t width) {
      const int p = b.unary(b.matmul(width, h));
      return g.node(b.bytes(p), {g.view(p), pos});
    };
    const int q = rotated(heads * a.head_dim_k);
    const int k = rotated(kv_width);
    const int v = b.unary(b.matmul(uint64_t{a.kv_heads} * a.head_dim_v, h));
    g.write_out({g.view(k), c.k_idx});  // SET_ROWS into the K cache
    int merged = -1;
    if (in.flash_attn) {
      g.write_out({g.view(g.view(v)), c.v_idx});  // SET_ROWS into the V cache, row by row
      merged = g.view(g.node(b.rows(heads * a.head_dim_v), {g.view(g.view(q)), c.mask}));  // FLASH_ATTN_EXT, reshaped
    } else {
      g.write_out({g.view(g.view(g.view(v))), c.v_idx});  // SET_ROWS into the transposed V cache
      const int kq = g.node(checked_product({c.cells, b.T_, heads, kF32}), {g.view(g.view(q))});
      const int sm = g.node(b.bytes(kq), {kq, c.mask}, kq);  // SOFT_MAX with sinks, in place
      const int kqv = g.node(b.rows(heads * a.head_dim_v), {sm});
      merged = g.node(b.bytes(kqv), {g.view(kqv)});  // CONT of the permuted heads
    }
    const int att = b.unary(b.matmul(m.hidden, merged));  // wo, + bias
    const int ffn_in = b.add(att, x);
    const int moe = b.moe_ffn(l.feed_forward, b.norm(ffn_in), {.softmax_chosen = true, .expert_biases = true});
    x = b.add(moe, ffn_in);
  }
  // The last layer's output is kept whole (t_h_nextn); the output rows go through the norm.
  g.mark_output(x);
  b.keep_outputs();
  b.head(b.get_rows(m.hidden, x, out_ids));
  return std::move(b.g);
}

}  // namespace vc::llamacpp_graph_detail
