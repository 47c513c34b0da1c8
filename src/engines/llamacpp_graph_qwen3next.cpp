// Qwen3-Next's graph (llama.cpp 80fb11ac src/models/qwen3next.cpp,
// delta-net-base.cpp): Gated DeltaNet layers (one joint q/k/v projection through one short
// convolution, llama.cpp's fused gated delta net, a gated RMS norm) between full-attention layers
// whose query projection carries an output gate; every layer's routed experts with a gated
// shared expert; the output rows picked after the final norm.
#include <optional>

#include "engines/llamacpp_graph_builder.h"

namespace vc::llamacpp_graph_detail {
namespace {

// A Gated DeltaNet layer's widths, read from the GGUF's tensors (the joint projection
// attn_qkv.weight, the output gate attn_gate.weight, ssm_dt.bias per value head) and its state.
struct GdnShape {
  uint64_t channels = 0, kernel = 0, d_inner = 0, v_heads = 0, k_heads = 0, head_k = 0;
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
  return s;
}

// One Gated DeltaNet layer (build_layer_attn_linear) from its normed input to its output
// projection (a reshape of it), in the order its nodes run.
int gdn_layer(Builder& b, const GdnShape& s, const AttentionSpec& a, int h, int s_copy) {
  GgmlGraph& g = b.g;
  const uint64_t T = b.T_, ns = b.in_.seqs;
  const int conv_rows = b.state_rows(a.conv_values, s_copy);
  const int qkv = b.matmul(s.channels, h);
  // CONCAT of the conv states and the transposed ubatch: [d_conv - 1 + T/ns, channels, ns]; its
  // last d_conv - 1 columns go back into the cache.
  const int window = g.node(checked_product({s.kernel - 1 + T / ns, s.channels, ns, kF32}), {g.view(conv_rows), g.view(g.view(qkv))});
  g.write_out({g.view(window)});
  const int recurrent = b.state_rows(a.state_values, s_copy);
  const int act = b.unary(g.node(b.rows(s.channels), {window}));  // SSM_CONV, SiLU in place
  // q and k: an L2 norm (over a view: a new tensor), repeated to the value heads where fewer.
  auto query_or_key = [&] {
    int n = g.node(b.rows(s.k_heads * s.head_k), {g.view(act)});
    if (s.k_heads != s.v_heads) n = g.view(g.node(b.rows(s.v_heads * s.head_k), {g.view(n)}));
    return n;
  };
  const int q = query_or_key();
  const int k = query_or_key();
  // beta and alpha from one projection: alpha made contiguous, + dt bias, softplus, x A (in
  // place); beta made contiguous, sigmoid (in place).
  const int ba = b.matmul(2 * s.v_heads, h);
  const int gate = b.unary(b.unary(b.unary(g.node(b.rows(s.v_heads), {g.view(g.view(ba))}))));
  const int beta = b.unary(g.node(b.rows(s.v_heads), {g.view(g.view(ba))}));
  // GATED_DELTA_NET writes the output and the new states in one tensor.
  const int scan = g.node(checked_add(b.rows(s.d_inner), checked_product({a.state_values, ns, kF32})),
                          {q, k, g.view(act), g.view(gate), g.view(beta), g.view(recurrent)});
  g.write_out({g.view(scan)});  // the new states into the cache
  // The gated norm: RMS norm of the output (over a view), weight, times SiLU(z) (over a reshape).
  const int normed = b.unary(g.node(b.rows(s.d_inner), {g.view(scan)}));
  const int z = b.matmul(s.d_inner, h);
  const int gated = g.node(b.rows(s.d_inner), {normed, g.node(b.rows(s.d_inner), {g.view(z)})}, normed);
  return g.view(b.matmul(b.m_.hidden, g.view(gated)));
}

struct AttentionInputs {
  int pos = -1, k_idx = -1, v_idx = -1, mask = -1;
};

// A full-attention layer (build_layer_attn): the query projection holds query and output gate per
// head; Q and K are RMS-normed (over views: new tensors) and rotated in place.
int gated_attention(Builder& b, const AttentionSpec& a, int h, const AttentionInputs& in) {
  GgmlGraph& g = b.g;
  const uint64_t heads = a.query_heads, q_width = heads * a.head_dim_k, kv_width = uint64_t{a.kv_heads} * a.head_dim_k;
  const int q_full = b.matmul(2 * q_width, h);
  const int q_normed = b.unary(g.node(b.rows(q_width), {g.view(g.view(q_full))}));
  const int q = g.node(b.bytes(q_normed), {q_normed, in.pos}, q_normed);
  const int v = b.matmul(uint64_t{a.kv_heads} * a.head_dim_v, h);
  const int k_normed = b.unary(g.node(b.rows(kv_width), {g.view(b.matmul(kv_width, h))}));
  const int k = g.node(b.bytes(k_normed), {k_normed, in.pos}, k_normed);
  g.write_out({g.view(k), in.k_idx});
  if (b.in_.flash_attn) {
    // V into its cache row by row; FLASH_ATTN_EXT writes every head's output, whose reshape (a
    // view) the gate multiplies: the product goes into the gate's tensor.
    g.write_out({g.view(g.view(v)), in.v_idx});
    const int fa = g.node(b.rows(heads * a.head_dim_v), {g.view(g.view(q)), in.mask});
    const int gate = b.unary(g.node(b.rows(q_width), {g.view(g.view(q_full))}));  // CONT of the gate half, sigmoid
    return b.matmul(b.m_.hidden, b.add_any(g.view(fa), gate));
  }
  g.write_out({g.view(g.view(g.view(v))), in.v_idx});  // the transposed V cache
  const int kq = g.node(checked_product({b.in_.kv_cells, b.T_, heads, kF32}), {g.view(g.view(q))});
  const int sm = g.node(b.bytes(kq), {kq, in.mask}, kq);
  const int kqv = g.node(b.rows(heads * a.head_dim_v), {sm});
  const int merged = g.node(b.bytes(kqv), {g.view(kqv)});  // CONT of the permuted heads
  const int gate = b.unary(g.node(b.rows(q_width), {g.view(g.view(q_full))}));  // CONT of the gate half, sigmoid
  return b.matmul(b.m_.hidden, g.node(b.bytes(merged), {merged, gate}, merged));
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
    inputs.pos = g.leaf(checked_mul(b.T_, kI32));
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

  int x = b.embeddings();
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const int h = b.norm(x);
    const int att = shapes[il] ? gdn_layer(b, *shapes[il], m.layers[il].attention, h, s_copy) : gated_attention(b, m.layers[il].attention, h, inputs);
    const int residual = b.add_any(att, x);  // into the attention output, or into x when that is a view
    const int post = b.norm(residual);
    const FeedForwardSpec& ff = m.layers[il].feed_forward;
    int out = -1;
    if (ff.kind == FeedForwardKind::Dense) {
      out = b.dense_ffn(ff.dense_width, post);
    } else {
      // Softmax routing, weights normalised, no scale (build_layer_ffn).
      out = b.moe_ffn(ff, post, {.normalize = true});
      if (ff.shared_width) {
        // The shared expert times sigmoid(ffn_gate_inp_shexp x): one value per token.
        const int shared = b.dense_ffn(ff.shared_width, post);
        const int shared_gate = b.unary(b.matmul(1, post));
        out = b.add(out, g.node(b.bytes(shared), {shared, shared_gate}, shared));
      }
    }
    x = b.add(out, residual);
  }
  // The final norm of every token (kept for the MTP head), then the output rows, then the logits.
  const int normed = b.norm(x);
  g.mark_output(normed);
  b.keep_outputs();
  const int rows = b.get_rows(m.hidden, normed, out_ids);
  g.mark_output(rows);
  g.mark_output(b.matmul(m.vocab, rows));
  return std::move(b.g);
}

}  // namespace vc::llamacpp_graph_detail
