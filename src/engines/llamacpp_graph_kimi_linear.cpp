// Kimi Linear's graph (llama.cpp 80fb11ac src/models/kimi-linear.cpp):
// Kimi Delta Attention layers (three short convolutions for q, k and v, each with its own
// projection, then llama.cpp's fused gated delta net) between MLA layers without RoPE; the
// leading dense blocks and the routed plus shared experts after them.
#include <cmath>
#include <optional>

#include "engines/llamacpp_graph_builder.h"

namespace vc::llamacpp_graph_detail {
namespace {

// A KDA layer's widths: heads x head_dim channels per q, k and v, d_conv taps, and the low ranks
// of its decay (ssm_f_a) and output gate (ssm_g_a) projections: heads and ranks read from the
// GGUF's tensors, the rest from the state's size.
struct KdaShape {
  uint64_t heads = 0, head_dim = 0, kernel = 0, decay_rank = 0, gate_rank = 0;
  uint64_t channels() const { return heads * head_dim; }
};

std::optional<KdaShape> kda_shape(const Model& m, size_t il) {
  const AttentionSpec& a = m.layers[il].attention;
  if (a.kind != AttentionKind::LinearState || a.state_family != StateFamily::KDA) return std::nullopt;
  const auto beta = block_tensor_shape(m, il, "ssm_beta.weight");  // [n_embd, heads]
  if (beta.size() < 2 || !beta[1]) return std::nullopt;
  KdaShape s;
  s.heads = beta[1];
  // state_values = heads x head_dim^2, conv_values = 3 x (d_conv - 1) x heads x head_dim.
  s.head_dim = static_cast<uint64_t>(std::llround(std::sqrt(static_cast<double>(a.state_values / s.heads))));
  if (!s.head_dim || s.heads * s.head_dim * s.head_dim != a.state_values || a.conv_values % (3 * s.channels()) != 0) return std::nullopt;
  s.kernel = a.conv_values / (3 * s.channels()) + 1;
  const auto f_a = block_tensor_shape(m, il, "ssm_f_a.weight"), g_a = block_tensor_shape(m, il, "ssm_g_a.weight");
  if (f_a.size() < 2 || g_a.size() < 2) return std::nullopt;
  s.decay_rank = f_a[1];
  s.gate_rank = g_a[1];
  return s;
}

// One KDA layer from its normed input `h` to its output projection, in the order its nodes run.
int kda_layer(Builder& b, const KdaShape& s, const AttentionSpec& a, int h, int s_copy) {
  GgmlGraph& g = b.g;
  const uint64_t T = b.T_, ns = b.in_.seqs, ch = s.channels();
  const int conv_rows = b.state_rows(a.conv_values, s_copy);
  // q, k, v: projection, CONCAT of its conv state and the ubatch ([d_conv - 1 + T/ns, ch, ns]),
  // whose last d_conv - 1 columns go back into the cache.
  int window[3];
  for (int& w : window) {
    const int proj = b.matmul(ch, h);
    w = g.node(checked_product({s.kernel - 1 + T / ns, ch, ns, kF32}), {g.view(conv_rows), g.view(g.view(proj))});
    g.write_out({g.view(w)});
  }
  const int recurrent = b.state_rows(a.state_values, s_copy);
  // SSM_CONV, SiLU (a new tensor: over a reshape), and for q and k an L2 norm (likewise).
  int qkv[3];
  for (int i = 0; i < 3; ++i) {
    const int act = g.node(b.rows(ch), {g.view(g.node(b.rows(ch), {window[i]}))});
    qkv[i] = i < 2 ? g.node(b.rows(ch), {g.view(act)}) : act;
  }
  // The decay: f_b(f_a(x)) + dt bias, softplus (in place), times A (a new tensor: over a reshape).
  const int decay = g.node(b.rows(ch), {g.view(b.unary(b.unary(b.matmul(ch, b.matmul(s.decay_rank, h)))))});
  const int beta = g.node(b.rows(s.heads), {g.view(b.matmul(s.heads, h))});  // SIGMOID over a reshape
  // GATED_DELTA_NET writes the output and the new states in one tensor.
  const int scan = g.node(checked_add(b.rows(ch), checked_product({a.state_values, ns, kF32})),
                          {qkv[0], qkv[1], g.view(qkv[2]), g.view(decay), beta, g.view(recurrent)});
  g.write_out({g.view(scan)});  // the new states into the cache
  const int out = g.node(b.rows(ch), {g.view(scan)});  // CONT
  const int normed = b.unary(g.node(b.rows(ch), {g.view(out)}));  // RMS norm per head (over a reshape), weight
  const int gate = g.node(b.rows(ch), {g.view(b.matmul(ch, b.matmul(s.gate_rank, g.view(g.view(h)))))});  // sigmoid
  const int gated = g.node(b.rows(ch), {normed, gate}, normed);
  return b.matmul(b.m_.hidden, g.node(b.rows(ch), {gated}));  // CONT, output projection
}

}  // namespace

std::optional<GgmlGraph> kimi_linear_graph(const Model& m, const LlamaCppGraphInput& in) {
  std::vector<std::optional<KdaShape>> shapes;
  bool has_mla = false;
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const LayerConfig& l = m.layers[il];
    if (l.parallel_mixer || !ffn_covered(m, il)) return std::nullopt;
    shapes.push_back(kda_shape(m, il));
    if (!shapes.back() && !mla_covered(m, il)) return std::nullopt;
    has_mla = has_mla || !shapes.back();
  }
  Builder b(m, in);
  GgmlGraph& g = b.g;
  b.token_inputs();
  // build_inp_mem_hybrid_k: the recurrent states' s_copy, then the MLA cache's inputs (Kimi's MLA
  // rotates nothing: no positions).
  const int s_copy = g.leaf(checked_mul(in.seqs, kI32));
  MlaInputs inputs;
  if (has_mla) {
    inputs.k_idx = g.leaf(checked_mul(b.T_, kI64));
    inputs.mask = b.mask(in.kv_cells);
  }
  const int out_ids = g.leaf(checked_mul(in.outputs, kI32));

  int x = b.embeddings();
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const int h = b.norm(x);
    const int att = shapes[il] ? kda_layer(b, *shapes[il], m.layers[il].attention, h, s_copy) : mla_attention(b, il, h, inputs);
    // build_moe_ffn with normalised weights always, scaled (routed_scaling_factor 2.446), and a
    // selection bias where the layer has one (exp_probs_b).
    const bool bias = !block_tensor_shape(m, il, "exp_probs_b.bias").empty();
    x = b.residual_ffn(il, att, x, out_ids, {.selection_bias = bias, .normalize = true, .scale = true});
  }
  b.head(x);
  return std::move(b.g);
}

}  // namespace vc::llamacpp_graph_detail
