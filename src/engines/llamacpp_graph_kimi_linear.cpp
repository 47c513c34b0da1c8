// Kimi Linear's graph (llama.cpp 80fb11ac src/models/kimi-linear.cpp):
// Kimi Delta Attention layers (three short convolutions for q, k and v, each with its own
// projection, then llama.cpp's fused gated delta net) between MLA layers without RoPE; the
// leading dense blocks and the routed plus shared experts after them.
#include <cmath>
#include <optional>
#include <string>

#include "engines/llamacpp_graph_builder.h"
#include "engines/llamacpp_graph_recurrent.h"

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

// One KDA layer from its normed input `h` to its output projection, in the order its nodes run,
// with the weights and caches each reads (ggml_sched_replay.h). The short convolutions and A are
// read through reshapes of their weights: listed as the weights they view.
int kda_layer(Builder& b, size_t il, const KdaShape& s, const AttentionSpec& a, int h, const StateCopy& s_copy) {
  GgmlGraph& g = b.g;
  const uint64_t T = b.T_, ns = b.in_.seqs, ch = s.channels();
  auto project = [&](uint64_t width, int x, const std::string& weight) {
    const int p = b.matmul(width, x);
    b.reads(p, {b.blk(il, weight)}, SchedOp::MulMat);
    return p;
  };
  const int conv_rows = gathered_state(b, il, a.conv_values, s_copy);
  // q, k, v: projection, CONCAT of its conv state and the ubatch ([d_conv - 1 + T/ns, ch, ns]),
  // whose last d_conv - 1 columns go back into the cache.
  static constexpr const char* kParts[] = {"q", "k", "v"};
  int window[3];
  for (int i = 0; i < 3; ++i) {
    const int proj = project(ch, h, std::string("attn_") + kParts[i] + ".weight");
    window[i] = g.node(checked_product({s.kernel - 1 + T / ns, ch, ns, kF32}), {g.view(conv_rows), g.view(g.view(proj))});
    b.mark(window[i], SchedOp::Other);
    into_cache(b, il, {g.view(window[i])});
  }
  const int recurrent = gathered_state(b, il, a.state_values, s_copy);
  // SSM_CONV, SiLU (a new tensor: over a reshape), and for q and k an L2 norm (likewise).
  int qkv[3];
  for (int i = 0; i < 3; ++i) {
    const int conv = g.node(b.rows(ch), {window[i]});
    b.reads(conv, {b.blk(il, std::string("ssm_conv1d_") + kParts[i] + ".weight")});
    const int act = g.node(b.rows(ch), {g.view(conv)});
    b.mark(act, SchedOp::Other);
    qkv[i] = act;
    if (i < 2) {
      qkv[i] = g.node(b.rows(ch), {g.view(act)});
      b.mark(qkv[i], SchedOp::Other, s.heads);
    }
  }
  // The decay: f_b(f_a(x)) + dt bias, softplus (in place), times A (a new tensor: over a reshape).
  const int f_b = project(ch, project(s.decay_rank, h, "ssm_f_a.weight"), "ssm_f_b.weight");
  const int biased = b.unary(f_b);
  b.reads(biased, {b.blk(il, "ssm_dt.bias")});
  const int softplus = b.unary(biased);
  b.mark(softplus, SchedOp::Other);
  const int decay = g.node(b.rows(ch), {g.view(softplus)});
  b.reads(decay, {b.blk(il, "ssm_a")}, SchedOp::Other, s.heads);
  const int beta = g.node(b.rows(s.heads), {g.view(project(s.heads, h, "ssm_beta.weight"))});  // SIGMOID over a reshape
  b.mark(beta, SchedOp::Other, s.heads);
  // GATED_DELTA_NET writes the output and the new states in one tensor.
  const int scan = g.node(checked_add(b.rows(ch), checked_product({a.state_values, ns, kF32})),
                          {qkv[0], qkv[1], g.view(qkv[2]), g.view(decay), beta, g.view(recurrent)});
  b.mark(scan, SchedOp::Other);
  g.tensors[static_cast<size_t>(scan)].rows = 1;
  into_cache(b, il, {sized_view(g, scan, checked_product({a.state_values, ns, kF32}))});  // the new states
  const int out = g.node(b.rows(ch), {sized_view(g, scan, b.rows(ch))});  // CONT
  b.mark(out, SchedOp::Other);
  const int rms = g.node(b.rows(ch), {g.view(out)});  // RMS norm per head (over a reshape)
  b.mark(rms, SchedOp::Other, s.heads);
  const int normed = b.unary(rms);
  b.reads(normed, {b.blk(il, "ssm_norm.weight")}, SchedOp::Other, s.heads);
  const int g_b = project(ch, project(s.gate_rank, g.view(g.view(h)), "ssm_g_a.weight"), "ssm_g_b.weight");
  const int gate = g.node(b.rows(ch), {g.view(g_b)});  // sigmoid
  b.mark(gate, SchedOp::Other, s.heads);
  const int gated = g.node(b.rows(ch), {normed, gate}, normed);
  b.mark(gated, SchedOp::Other, s.heads);
  const int merged = g.node(b.rows(ch), {gated});  // CONT
  b.mark(merged, SchedOp::Other);
  return project(b.m_.hidden, merged, "attn_output.weight");
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

  const StateCopy states = s_copy >= 0 ? state_copy_views(g, s_copy) : StateCopy{};
  int x = b.embeddings();
  b.reads(x, {b.weight("token_embd.weight")}, SchedOp::GetRows);
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const int h = b.norm(x);
    b.reads(h, {b.blk(il, "attn_norm.weight")});
    const int att = shapes[il] ? kda_layer(b, il, *shapes[il], m.layers[il].attention, h, states) : mla_attention(b, il, h, inputs);
    // build_moe_ffn with normalised weights always, scaled (routed_scaling_factor 2.446), and a
    // selection bias where the layer has one (exp_probs_b).
    const bool bias = !block_tensor_shape(m, il, "exp_probs_b.bias").empty();
    x = b.residual_ffn(il, att, x, out_ids, {.selection_bias = bias, .normalize = true, .scale = true});
  }
  b.head(x);
  b.finish_scheduled();
  return std::move(b.g);
}

}  // namespace vc::llamacpp_graph_detail
