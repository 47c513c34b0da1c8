// DeepSeek-V2/V3's graph (llama.cpp 80fb11ac src/models/deepseek2.cpp,
// llama-graph.cpp build_attn with an MLA cache and build_attn_mha): multi-head latent attention
// with wk_b absorbed into the query and wv_b applied after the attention, so the cache holds one
// latent row per token (kv_lora_rank + rope dims) shared by every head; the leading dense blocks
// and the routed plus shared experts after them.
#include <optional>

#include "engines/llamacpp_graph_builder.h"

namespace vc::llamacpp_graph_detail {

bool mla_covered(const Model& m, size_t il) {
  const AttentionSpec& a = m.layers[il].attention;
  return a.kind == AttentionKind::Latent && !a.index_key_dim && a.query_heads && a.latent_rank && a.head_dim_v && a.head_dim_k > a.rope_dim &&
         block_tensor_shape(m, il, "attn_kv_b.weight").empty();
}

int mla_attention(Builder& b, size_t il, int h, const MlaInputs& inputs) {
  GgmlGraph& g = b.g;
  const Model& m = b.m_;
  const AttentionSpec& a = m.layers[il].attention;
  const uint64_t heads = a.query_heads, latent = a.latent_rank, rope = a.rope_dim, T = b.T_;
  const uint64_t streams = b.in_.kv_unified ? 1 : b.in_.seqs, cells = b.in_.kv_cells;
  // Q through the low-rank q_a where the layer has one (its width from attn_q_a.weight; V2-Lite
  // and Kimi project directly).
  const std::vector<uint64_t> q_a = block_tensor_shape(m, il, "attn_q_a.weight");
  const int q = g.view(b.matmul(heads * a.head_dim_k, q_a.size() >= 2 ? b.norm(b.matmul(q_a[1], h)) : h));
  // The no-rope part absorbed into the latent space (wk_b), the rope part rotated (a new tensor:
  // it reads a view), joined: [kv_lora + rope, heads, tokens].
  const int absorbed = g.view(g.node(checked_product({latent, heads, T, kF32}), {g.view(g.view(q))}));
  const int q_pe = inputs.pos >= 0 ? g.node(checked_product({rope, heads, T, kF32}), {g.view(q), inputs.pos}) : g.view(q);
  const int q_cur = g.node(checked_product({latent + rope, heads, T, kF32}), {absorbed, q_pe});
  // The compressed KV row: its latent part normed (a new tensor, over a view), the rope part
  // rotated, joined into the cache row.
  const int kv = b.matmul(latent + rope, h);
  const int kv_latent = g.node(b.rows(latent), {g.view(kv)});
  const int v_cur = g.view(g.node(b.rows(latent), {kv_latent}, kv_latent));
  const int k_pe = inputs.pos >= 0 ? g.node(b.rows(rope), {g.view(kv), inputs.pos}) : g.view(kv);
  const int k_cur = g.node(b.rows(latent + rope), {v_cur, k_pe});
  g.write_out({g.view(k_cur), inputs.k_idx});  // SET_ROWS into the cache
  const int q_heads = g.view(g.view(q_cur));
  if (b.in_.flash_attn) {
    // FLASH_ATTN_EXT over the cache (V: a view of its latent part) writes the latent output of
    // every head; wv_b takes it to heads x v_head, made contiguous, reshaped for the projection.
    const int fa = g.node(checked_product({latent, heads, T, kF32}), {q_heads, inputs.mask});
    const int mla = g.node(checked_product({a.head_dim_v, heads, T, kF32}), {g.view(fa)});
    return b.matmul(m.hidden, g.view(g.node(b.bytes(mla), {g.view(mla)})));
  }
  // build_attn_mha without flash attention: V is the latent part of every cached row, made
  // contiguous transposed (f16 [cells, kv_lora] per stream), then KQ, its softmax in place,
  // KQV in the latent space, wv_b back to heads x v_head, the heads merged (CONT).
  const int v_cont = g.node(checked_product({cells, latent, streams, 2}), {});
  const int kq = g.node(checked_product({cells, T, heads, kF32}), {q_heads});
  const int sm = g.node(b.bytes(kq), {kq, inputs.mask}, kq);
  const int kqv = g.node(checked_product({latent, T, heads, kF32}), {v_cont, sm});
  const int kqv_mla = g.node(checked_product({a.head_dim_v, T, heads, kF32}), {kqv});
  return b.matmul(m.hidden, g.node(b.bytes(kqv_mla), {g.view(kqv_mla)}));
}

std::optional<GgmlGraph> deepseek2_graph(const Model& m, const LlamaCppGraphInput& in) {
  for (size_t il = 0; il < m.layers.size(); ++il)
    if (!mla_covered(m, il) || m.layers[il].parallel_mixer || !ffn_covered(m, il)) return std::nullopt;
  Builder b(m, in);
  GgmlGraph& g = b.g;
  b.token_inputs();
  MlaInputs inputs;
  inputs.pos = g.leaf(checked_mul(b.T_, kI32));
  inputs.k_idx = g.leaf(checked_mul(b.T_, kI64));  // one cache (K only): no V row indices
  inputs.mask = b.mask(in.kv_cells);
  const int out_ids = g.leaf(checked_mul(in.outputs, kI32));

  int x = b.embeddings();
  for (size_t il = 0; il < m.layers.size(); ++il) {
    int att = mla_attention(b, il, b.norm(x), inputs);
    // Routing as DeepSeek V3 GGUFs carry it: a selection bias where the layer has one
    // (exp_probs_b), and then normalised weights; scaled by routed_scaling_factor (2.5 on V3,
    // 16 on V2: never 1).
    const bool bias = !block_tensor_shape(m, il, "exp_probs_b.bias").empty();
    x = b.residual_ffn(il, att, x, out_ids, {.selection_bias = bias, .normalize = bias, .scale = true});
  }
  b.head(x);
  return std::move(b.g);
}

}  // namespace vc::llamacpp_graph_detail
