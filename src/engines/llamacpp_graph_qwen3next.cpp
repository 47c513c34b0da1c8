// Qwen3-Next's graph (llama.cpp 80fb11ac src/models/qwen3next.cpp,
// delta-net-base.cpp), and Qwen3.5's (qwen35moe.cpp: alpha and beta projected apart, IM-RoPE's
// four positions a token): Gated DeltaNet layers (one joint q/k/v projection through one short
// convolution, llama.cpp's fused gated delta net, a gated RMS norm) between full-attention layers
// whose query projection carries an output gate; every layer's routed experts with a gated
// shared expert; the output rows picked after the final norm.
#include <optional>

#include "engines/ggml_cuda_support.h"
#include "engines/llamacpp_graph_builder.h"
#include "engines/llamacpp_graph_recurrent.h"

namespace vc::llamacpp_graph_detail {
namespace {

// A Gated DeltaNet layer's widths, read from the GGUF's tensors (the joint projection
// attn_qkv.weight, the output gate attn_gate.weight, ssm_dt.bias per value head) and its state.
struct GdnShape {
  uint64_t channels = 0, kernel = 0, d_inner = 0, v_heads = 0, k_heads = 0, head_k = 0;
  bool joint_ba = true;  // ssm_ba.weight (Qwen3-Next); else ssm_alpha and ssm_beta (Qwen3.5)
};

std::optional<GdnShape> gdn_shape(const Model& m, size_t il) {
  const AttentionSpec& a = m.layers[il].attention;
  if (a.kind != AttentionKind::LinearState || a.state_family != StateFamily::GatedDeltaNet) return std::nullopt;
  const auto qkv = block_tensor_shape(m, il, "attn_qkv.weight"), gate = block_tensor_shape(m, il, "attn_gate.weight");
  const auto conv = block_tensor_shape(m, il, "ssm_conv1d.weight"), dt = block_tensor_shape(m, il, "ssm_dt.bias");
  if (qkv.size() < 2 || gate.size() < 2 || conv.size() < 2 || dt.empty()) return std::nullopt;  // the legacy ssm_in path: not covered
  GdnShape s;
  s.channels = qkv[1];
  s.kernel = conv[0];
  s.d_inner = gate[1];
  s.v_heads = dt[0];
  if (!s.d_inner || !s.v_heads || s.kernel < 2 || s.channels <= s.d_inner || a.state_values % s.d_inner != 0) return std::nullopt;
  s.head_k = a.state_values / s.d_inner;  // d_state
  if (!s.head_k || (s.channels - s.d_inner) % (2 * s.head_k) != 0) return std::nullopt;
  s.k_heads = (s.channels - s.d_inner) / (2 * s.head_k);
  if (!s.k_heads || s.v_heads % s.k_heads != 0) return std::nullopt;
  s.joint_ba = !block_tensor_shape(m, il, "ssm_ba.weight").empty();
  if (!s.joint_ba && (block_tensor_shape(m, il, "ssm_alpha.weight").empty() || block_tensor_shape(m, il, "ssm_beta.weight").empty())) return std::nullopt;
  return s;
}

// One Gated DeltaNet layer (build_layer_attn_linear) from its normed input to its output
// projection (a reshape of it), in the order its nodes run, with the weights and caches each
// reads (ggml_sched_replay.h). llama.cpp runs the fused GATED_DELTA_NET where the scheduler puts
// it on the layer's device (llama_context::resolve_fused_ops); covered only then.
int gdn_layer(Builder& b, size_t il, const GdnShape& s, const AttentionSpec& a, int h, const StateCopy& s_copy) {
  GgmlGraph& g = b.g;
  const uint64_t T = b.T_, ns = b.in_.seqs;
  const int conv_rows = gathered_state(b, il, a.conv_values, s_copy);
  const int qkv = b.matmul(s.channels, h);
  b.reads(qkv, {b.blk(il, "attn_qkv.weight")}, SchedOp::MulMat);
  // CONCAT of the conv states and the transposed ubatch: [d_conv - 1 + T/ns, channels, ns]; its
  // last d_conv - 1 columns go back into the cache.
  const int window = g.node(checked_product({s.kernel - 1 + T / ns, s.channels, ns, kF32}), {g.view(conv_rows), g.view(g.view(qkv))});
  b.mark(window, SchedOp::Other);
  into_cache(b, il, {g.view(window)});
  const int recurrent = gathered_state(b, il, a.state_values, s_copy);
  const int conv = g.node(b.rows(s.channels), {window});  // SSM_CONV
  b.reads(conv, {b.blk(il, "ssm_conv1d.weight")});
  g.tensors[static_cast<size_t>(conv)].gpu_unsupported = !cuda_supports_ssm_conv(s.channels);
  const int act = b.unary(conv);  // SiLU in place
  b.mark(act, SchedOp::Other);
  // q and k: an L2 norm (over a view: a new tensor), repeated to the value heads where fewer.
  auto query_or_key = [&] {
    int n = g.node(b.rows(s.k_heads * s.head_k), {g.view(act)});
    b.mark(n, SchedOp::Other, s.k_heads);
    if (s.k_heads != s.v_heads) {
      const int r = g.node(b.rows(s.v_heads * s.head_k), {g.view(n)});  // REPEAT
      b.mark(r, SchedOp::Other, s.v_heads);
      n = g.view(r);
    }
    return n;
  };
  const int q = query_or_key();
  const int k = query_or_key();
  // The decay gate and beta, in the order the delta net reads them (gate, then beta).
  // Qwen3-Next: one joint projection; alpha made contiguous, + dt bias, softplus, x A (in place);
  // beta made contiguous, sigmoid (in place). Qwen3.5 (qwen35.cpp, qwen35moe.cpp): ssm_alpha and
  // ssm_beta projected apart, each op over a reshape writing a new tensor first.
  int gate = -1, beta = -1;
  if (s.joint_ba) {
    const int ba = b.matmul(2 * s.v_heads, h);
    b.reads(ba, {b.blk(il, "ssm_ba.weight")}, SchedOp::MulMat);
    const int alpha = g.node(b.rows(s.v_heads), {g.view(g.view(ba))});
    b.mark(alpha, SchedOp::Other);
    const int biased = b.unary(alpha);
    b.reads(biased, {b.blk(il, "ssm_dt.bias")});
    const int softplus = b.unary(biased);
    b.mark(softplus, SchedOp::Other);
    gate = b.unary(softplus);
    b.reads(gate, {b.blk(il, "ssm_a")});
    const int beta_in = g.node(b.rows(s.v_heads), {g.view(g.view(ba))});
    b.mark(beta_in, SchedOp::Other, s.k_heads);
    beta = b.unary(beta_in);
    b.mark(beta, SchedOp::Other, s.k_heads);
  } else {
    const int alpha = b.matmul(s.v_heads, h);
    b.reads(alpha, {b.blk(il, "ssm_alpha.weight")}, SchedOp::MulMat);
    const int biased = g.node(b.rows(s.v_heads), {g.view(alpha)});
    b.reads(biased, {b.blk(il, "ssm_dt.bias")});
    const int softplus = b.unary(biased);
    b.mark(softplus, SchedOp::Other);
    gate = b.unary(softplus);
    b.reads(gate, {b.blk(il, "ssm_a")});
    const int beta_proj = b.matmul(s.v_heads, h);
    b.reads(beta_proj, {b.blk(il, "ssm_beta.weight")}, SchedOp::MulMat);
    beta = g.node(b.rows(s.v_heads), {g.view(beta_proj)});
    b.mark(beta, SchedOp::Other, s.v_heads);
  }
  // GATED_DELTA_NET writes the output and the new states in one tensor.
  const int scan = g.node(checked_add(b.rows(s.d_inner), checked_product({a.state_values, ns, kF32})),
                          {q, k, g.view(act), g.view(gate), g.view(beta), g.view(recurrent)});
  b.mark(scan, SchedOp::Other);
  g.tensors[static_cast<size_t>(scan)].rows = 1;
  into_cache(b, il, {sized_view(g, scan, checked_product({a.state_values, ns, kF32}))});  // the new states
  // The gated norm: RMS norm of the output (over a view), weight, times SiLU(z) (over a reshape).
  const int rms = g.node(b.rows(s.d_inner), {sized_view(g, scan, b.rows(s.d_inner))});
  b.mark(rms, SchedOp::Other, s.v_heads);
  const int normed = b.unary(rms);
  b.reads(normed, {b.blk(il, "ssm_norm.weight")}, SchedOp::Other, s.v_heads);
  const int z = b.matmul(s.d_inner, h);
  b.reads(z, {b.blk(il, "attn_gate.weight")}, SchedOp::MulMat);
  const int silu = g.node(b.rows(s.d_inner), {g.view(z)});
  b.mark(silu, SchedOp::Other, s.v_heads);
  const int gated = g.node(b.rows(s.d_inner), {normed, silu}, normed);
  b.mark(gated, SchedOp::Other, s.v_heads);
  const int out = b.matmul(b.m_.hidden, g.view(gated));
  b.reads(out, {b.blk(il, "ssm_out.weight")}, SchedOp::MulMat);
  return g.view(out);
}

struct AttentionInputs {
  int pos = -1, k_idx = -1, v_idx = -1, mask = -1, k_rot = -1, v_rot = -1;
};

// A full-attention layer (build_layer_attn): the query projection holds query and output gate per
// head; Q and K are RMS-normed (over views: new tensors) and rotated in place.
int gated_attention(Builder& b, size_t il, const AttentionSpec& a, int h, const AttentionInputs& in) {
  GgmlGraph& g = b.g;
  const uint64_t heads = a.query_heads, q_width = heads * a.head_dim_k, kv_width = uint64_t{a.kv_heads} * a.head_dim_k;
  const uint64_t cells = b.in_.kv_cells;
  const int q_full = b.matmul(2 * q_width, h);
  b.reads(q_full, {b.blk(il, "attn_q.weight")}, SchedOp::MulMat);
  // RMS_NORM over the query half, MUL by the norm weight (in place), ROPE (in place).
  auto normed_rope = [&](int input, uint64_t width, uint64_t head_count, const char* norm) {
    const int rms = g.node(b.rows(width), {input});
    b.mark(rms, SchedOp::Other, head_count);
    const int n = b.unary(rms);
    b.reads(n, {b.blk(il, norm)}, SchedOp::Other, head_count);
    const int r = g.node(b.bytes(n), {n, in.pos}, n);
    b.mark(r, SchedOp::Rope, head_count);
    return r;
  };
  // build_attn rotates Q and K by K's Hadamard matrix and V by V's where the cache is quantized.
  const int q = b.rotate(normed_rope(g.view(g.view(q_full)), q_width, heads, "attn_q_norm.weight"), in.k_rot);
  const int v_proj = b.matmul(uint64_t{a.kv_heads} * a.head_dim_v, h);
  b.reads(v_proj, {b.blk(il, "attn_v.weight")}, SchedOp::MulMat);
  const int v = in.v_rot >= 0 ? b.rotate(g.view(v_proj), in.v_rot) : v_proj;
  const int k_proj = b.matmul(kv_width, h);
  b.reads(k_proj, {b.blk(il, "attn_k.weight")}, SchedOp::MulMat);
  const int k = b.rotate(normed_rope(g.view(k_proj), kv_width, a.kv_heads, "attn_k_norm.weight"), in.k_rot);
  into_cache(b, il, {g.view(k), in.k_idx});
  const int k_cache = b.cache_view(il, b.in_.type_k, kv_width, cells);
  // The gate half made contiguous, then its sigmoid (in place).
  auto gate = [&] {
    const int c = g.node(b.rows(q_width), {g.view(g.view(q_full))});
    b.mark(c, SchedOp::Other);
    const int sg = b.unary(c);
    b.mark(sg, SchedOp::Other);
    return sg;
  };
  if (b.in_.flash_attn) {
    // V into its cache row by row; FLASH_ATTN_EXT writes every head's output, whose reshape (a
    // view) the gate multiplies: the product goes into the gate's tensor.
    into_cache(b, il, {g.view(g.view(v)), in.v_idx});
    const int v_cache = b.cache_view(il, b.in_.type_v, uint64_t{a.kv_heads} * a.head_dim_v, cells);
    const int fa = g.node(b.rows(heads * a.head_dim_v), {g.view(g.view(q)), k_cache, v_cache, in.mask});
    b.mark(fa, SchedOp::FlashAttn, heads);
    g.tensors[static_cast<size_t>(fa)].gpu_unsupported = !cuda_has_flash_attn_kernel(a.head_dim_k, a.head_dim_v, b.in_.type_k, b.in_.type_v);
    b.cuda_flash_attn_bytes(fa, kv_width, uint64_t{a.kv_heads} * a.head_dim_v, cells, false);  // F16 copies of a quantized cache on CUDA0
    const int back = in.v_rot >= 0 ? b.rotate(g.view(fa), in.v_rot) : -1;  // rotated back
    const int sigmoid = gate();
    const int gated = b.add_any(back >= 0 ? back : g.view(fa), sigmoid);
    b.mark(gated, SchedOp::Other);
    const int out = b.matmul(b.m_.hidden, gated);
    b.reads(out, {b.blk(il, "attn_output.weight")}, SchedOp::MulMat);
    return out;
  }
  into_cache(b, il, {g.view(g.view(g.view(v))), in.v_idx});  // the transposed V cache
  const int kq = g.node(checked_product({cells, b.T_, heads, kF32}), {k_cache, g.view(g.view(q))});
  b.mark(kq, SchedOp::MulMat, heads);
  const int sm = g.node(b.bytes(kq), {kq, in.mask}, kq);
  b.mark(sm, SchedOp::Other, heads);
  const int v_cache = b.cache_view(il, b.in_.type_v, uint64_t{a.kv_heads} * a.head_dim_v, cells);
  const int kqv = g.node(b.rows(heads * a.head_dim_v), {v_cache, sm});
  b.mark(kqv, SchedOp::MulMat, heads);
  const int merged = g.node(b.bytes(kqv), {g.view(kqv)});  // CONT of the permuted heads
  b.mark(merged, SchedOp::Other);
  const int back = in.v_rot >= 0 ? b.rotate(merged, in.v_rot) : -1;  // rotated back
  const int sigmoid = gate();
  const int gated = back >= 0 ? b.add_any(back, sigmoid) : g.node(b.bytes(merged), {merged, sigmoid}, merged);
  b.mark(gated, SchedOp::Other);
  const int out = b.matmul(b.m_.hidden, gated);
  b.reads(out, {b.blk(il, "attn_output.weight")}, SchedOp::MulMat);
  return out;
}

}  // namespace

std::optional<GgmlGraph> qwen3next_graph(const Model& m, const LlamaCppGraphInput& in) {
  std::vector<std::optional<GdnShape>> shapes;
  std::optional<size_t> first_attention, first_recurrent;
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const LayerConfig& l = m.layers[il];
    if (l.parallel_mixer || !ffn_covered(m, il)) return std::nullopt;
    shapes.push_back(gdn_shape(m, il));
    if (shapes.back()) {
      if (!first_recurrent) first_recurrent = il;
      continue;
    }
    const AttentionSpec& a = l.attention;
    if (a.kind != AttentionKind::Full || !a.query_heads || !a.kv_heads || a.head_dim_k != a.head_dim_v) return std::nullopt;
    if (!first_attention) first_attention = il;
  }
  Builder b(m, in);
  GgmlGraph& g = b.g;
  b.token_inputs();
  // The inputs in the order the layers first use them: s_copy (recurrent layers), then positions,
  // K and V row indices, the mask.
  int s_copy = -1;
  AttentionInputs inputs;
  auto recurrent_inputs = [&] { s_copy = g.leaf(checked_mul(in.seqs, kI32)); };
  auto attention_inputs = [&] {
    const AttentionSpec& a = m.layers[*first_attention].attention;
    inputs.k_rot = b.rotation_matrix(in.k_rotation);  // read by Q's rotation before RoPE reads the positions
    inputs.pos = g.leaf(checked_product({b.T_, positions_per_token(m.architecture), kI32}));
    inputs.v_rot = b.rotation_matrix(in.v_rotation);
    inputs.k_idx = g.leaf(checked_mul(b.T_, kI64));
    inputs.v_idx = b.v_idx(a);
    inputs.mask = b.mask(in.kv_cells);
  };
  if (first_recurrent && (!first_attention || *first_recurrent < *first_attention)) {
    recurrent_inputs();
    if (first_attention) attention_inputs();
  } else {
    attention_inputs();
    if (first_recurrent) recurrent_inputs();
  }
  const int out_ids = g.leaf(checked_mul(in.outputs, kI32));

  const StateCopy states = s_copy >= 0 ? state_copy_views(g, s_copy) : StateCopy{};
  int x = b.embeddings();
  b.reads(x, {b.weight("token_embd.weight")}, SchedOp::GetRows);
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const int h = b.norm(x);
    b.reads(h, {b.blk(il, "attn_norm.weight")});
    const int att = shapes[il] ? gdn_layer(b, il, *shapes[il], m.layers[il].attention, h, states) : gated_attention(b, il, m.layers[il].attention, h, inputs);
    const int residual = b.add_any(att, x);  // into the attention output, or into x when that is a view
    b.mark(residual, SchedOp::Other);
    const int post = b.norm(residual);
    b.reads(post, {b.blk(il, "post_attention_norm.weight")});
    const FeedForwardSpec& ff = m.layers[il].feed_forward;
    int out = -1;
    if (ff.kind == FeedForwardKind::Dense) {
      out = b.dense_ffn(ff.dense_width, post, il);
    } else {
      // Softmax routing, weights normalised, no scale (build_layer_ffn).
      out = b.moe_ffn(ff, post, {.normalize = true}, il);
      if (ff.shared_width) {
        // The shared expert times sigmoid(ffn_gate_inp_shexp x): one value per token.
        const int shared = b.dense_ffn(ff.shared_width, post, il, "_shexp");
        const int shared_logit = b.matmul(1, post);
        b.reads(shared_logit, {b.blk(il, "ffn_gate_inp_shexp.weight")}, SchedOp::MulMat);
        const int shared_gate = b.unary(shared_logit);
        b.mark(shared_gate, SchedOp::Other);
        const int gated = g.node(b.bytes(shared), {shared, shared_gate}, shared);
        b.mark(gated, SchedOp::Other);
        out = b.add(out, gated);
        b.mark(out, SchedOp::Other);
      }
    }
    x = b.add(out, residual);
    b.mark(x, SchedOp::Other);
  }
  // The final norm of every token (kept for the MTP head), then the output rows, then the logits.
  const int normed = b.norm(x);
  b.reads(normed, {b.weight("output_norm.weight")});
  g.mark_output(normed);
  b.keep_outputs();
  const int rows = b.get_rows(m.hidden, normed, out_ids);
  b.mark(rows, SchedOp::GetRows);
  g.mark_output(rows);
  const int logits = b.matmul(m.vocab, rows);
  const int out_w = b.weight("output.weight", false);
  b.reads(logits, {out_w >= 0 ? out_w : kTiedOutputWeight}, SchedOp::MulMat);
  g.mark_output(logits);
  b.finish_scheduled();
  return std::move(b.g);
}

}  // namespace vc::llamacpp_graph_detail
