// DeepSeek-V2/V3's graph (llama.cpp 80fb11ac src/models/deepseek2.cpp,
// llama-graph.cpp build_attn with an MLA cache and build_attn_mha): multi-head latent attention
// with wk_b absorbed into the query and wv_b applied after the attention, so the cache holds one
// latent row per token (kv_lora_rank + rope dims) shared by every head; the leading dense blocks
// and the routed plus shared experts after them.
#include <optional>
#include <string>
#include <vector>

#include "engines/llamacpp_graph_builder.h"

namespace vc::llamacpp_graph_detail {

bool mla_covered(const Model& m, size_t il) {
  const AttentionSpec& a = m.layers[il].attention;
  return a.kind == AttentionKind::Latent && !a.index_key_dim && a.query_heads && a.latent_rank && a.head_dim_v && a.head_dim_k > a.rope_dim &&
         block_tensor_shape(m, il, "attn_kv_b.weight").empty();
}

namespace {

// fattn.cu ggml_cuda_get_best_fattn_kernel for the absorbed MLA shape (K: kv_lora + rope = 576,
// V: its first 512 values): a kernel only with the GQA optimisation (a mask, cells a multiple of
// FATTN_KQ_STRIDE = 256, which llama.cpp's cache padding keeps) and heads per KV head (all of
// them: one latent head) a multiple of 16; K and V are one tensor, so one type, F16, Q4_0 or Q8_0.
// Every other MLA shape (the tiny models' 128/96) has none: supports_op says no and the scheduler
// runs the op on the CPU backend.
bool cuda_has_mla_flash_attn_kernel(uint64_t head_k, uint64_t head_v, uint64_t heads, const std::string& type) {
  // The cache types: as for any listed head width (asked at 128 for the type rule alone).
  return head_k == 576 && head_v == 512 && heads % 16 == 0 && cuda_has_flash_attn_kernel(128, 128, type, type);
}

}  // namespace

int mla_attention(Builder& b, size_t il, int h, const MlaInputs& inputs) {
  GgmlGraph& g = b.g;
  const Model& m = b.m_;
  const LlamaCppGraphInput& in = b.in_;
  const AttentionSpec& a = m.layers[il].attention;
  const uint64_t heads = a.query_heads, latent = a.latent_rank, rope = a.rope_dim, T = b.T_;
  const uint64_t streams = in.kv_unified ? 1 : in.seqs, cells = in.kv_cells;
  // A matrix product by one of the layer's weights, `width` f32 values per token (ne[1]: tokens).
  auto project = [&](uint64_t width, int x, const char* weight) {
    const int p = b.matmul(width, x);
    b.reads(p, {b.blk(il, weight)}, SchedOp::MulMat);
    return p;
  };
  auto norm = [&](int x, const char* weight) {
    const int n = b.norm(x);
    b.reads(n, {b.blk(il, weight)});
    return n;
  };
  // Q through the low-rank q_a where the layer has one (its width from attn_q_a.weight; V2-Lite
  // and Kimi project directly).
  const std::vector<uint64_t> q_a = block_tensor_shape(m, il, "attn_q_a.weight");
  int q_proj = -1;
  if (q_a.size() >= 2) {
    const int q_low = norm(project(q_a[1], h, "attn_q_a.weight"), "attn_q_a_norm.weight");
    q_proj = project(heads * a.head_dim_k, q_low, "attn_q_b.weight");
  } else {
    q_proj = project(heads * a.head_dim_k, h, "attn_q.weight");
  }
  const int q = g.view(q_proj);
  // The no-rope part absorbed into the latent space (wk_b: [kv_lora, tokens, heads]), the rope
  // part rotated (a new tensor: it reads a view), joined: [kv_lora + rope, heads, tokens].
  const int absorbed = g.view(project(latent * heads, g.view(g.view(q)), "attn_k_b.weight"));
  int q_pe = g.view(q);
  if (inputs.pos >= 0) {
    q_pe = g.node(checked_product({rope, heads, T, kF32}), {q_pe, inputs.pos});
    b.mark(q_pe, SchedOp::Rope, heads);
  }
  const int q_cur = g.node(checked_product({latent + rope, heads, T, kF32}), {absorbed, q_pe});
  // The compressed KV row: its latent part normed (RMS_NORM, a new tensor over a view, then MUL
  // by the weight in place), the rope part rotated, joined into the cache row.
  const int kv = project(latent + rope, h, "attn_kv_a_mqa.weight");
  const int kv_latent = g.node(b.rows(latent), {g.view(kv)});
  const int kv_normed = g.node(b.rows(latent), {kv_latent}, kv_latent);
  b.reads(kv_normed, {b.blk(il, "attn_kv_a_norm.weight")});
  const int v_cur = g.view(kv_normed);
  int k_pe = g.view(kv);
  if (inputs.pos >= 0) {
    k_pe = g.node(b.rows(rope), {k_pe, inputs.pos});
    b.mark(k_pe, SchedOp::Rope);
  }
  const int k_cur = g.node(b.rows(latent + rope), {v_cur, k_pe});
  const int write = g.write_out({g.view(k_cur), inputs.k_idx});  // SET_ROWS into the cache
  g.tensors[static_cast<size_t>(write)].cache_layer = static_cast<int>(il);
  b.mark(write, SchedOp::Other);
  const int q_heads = g.view(g.view(q_cur));
  // The attention reads the layer's whole cache as K, and as V a view of each row's latent part
  // (build_attn with an MLA cache): the same rows less the rope values of the last one
  // (ggml_nbytes of a strided view), which is what a copy of it to the other device takes.
  const int k_cache = b.cache_view(il, in.type_k, latent + rope, cells);
  const uint64_t v_bytes = checked_sub(checked_add(b.bytes(k_cache), cache_row_bytes(in.type_k, latent)), cache_row_bytes(in.type_k, latent + rope));
  const int v_cache = g.cache_view(static_cast<int>(il), v_bytes);
  int merged = -1;
  if (in.flash_attn) {
    // FLASH_ATTN_EXT writes the latent output of every head; wv_b takes it to heads x v_head,
    // made contiguous, reshaped for the projection.
    const int fa = g.node(checked_product({latent, heads, T, kF32}), {q_heads, k_cache, v_cache, inputs.mask});
    b.mark(fa, SchedOp::FlashAttn, heads);
    g.tensors[static_cast<size_t>(fa)].gpu_unsupported = !cuda_has_mla_flash_attn_kernel(latent + rope, latent, heads, in.type_k);
    b.cuda_flash_attn_bytes(fa, latent + rope, latent, cells, true);
    const int mla = project(a.head_dim_v * heads, g.view(fa), "attn_v_b.weight");
    merged = g.view(g.node(b.bytes(mla), {g.view(mla)}));
  } else {
    // build_attn_mha without flash attention: V (the latent part of every cached row) made
    // contiguous transposed (f16 [cells, kv_lora] per stream), then KQ, its softmax in place,
    // KQV in the latent space, wv_b back to heads x v_head, the heads merged (CONT).
    const int v_cont = g.node(checked_product({cells, latent, streams, kF16}), {v_cache});
    const int kq = g.node(checked_product({cells, T, heads, kF32}), {k_cache, q_heads});
    const int sm = g.node(b.bytes(kq), {kq, inputs.mask}, kq);
    const int kqv = g.node(checked_product({latent, T, heads, kF32}), {v_cont, sm});
    const int kqv_mla = project(a.head_dim_v * heads, kqv, "attn_v_b.weight");
    merged = g.node(b.bytes(kqv_mla), {g.view(kqv_mla)});
  }
  return project(m.hidden, merged, "attn_output.weight");
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
  b.reads(x, {b.weight("token_embd.weight")}, SchedOp::GetRows);
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const int h = b.norm(x);
    b.reads(h, {b.blk(il, "attn_norm.weight")});
    const int att = mla_attention(b, il, h, inputs);
    // Routing as DeepSeek V3 GGUFs carry it: a selection bias where the layer has one
    // (exp_probs_b), and then normalised weights; scaled by routed_scaling_factor (2.5 on V3,
    // 16 on V2: never 1).
    const bool bias = !block_tensor_shape(m, il, "exp_probs_b.bias").empty();
    x = b.residual_ffn(il, att, x, out_ids, {.selection_bias = bias, .normalize = bias, .scale = true});
  }
  b.head(x);
  b.finish_scheduled();
  return std::move(b.g);
}

}  // namespace vc::llamacpp_graph_detail
