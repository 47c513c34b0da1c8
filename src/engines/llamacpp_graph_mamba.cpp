// Mamba layers for the ggml-alloc replay: pure Mamba-2 (src/models/mamba.cpp) and the hybrids
// that mix Mamba layers with attention and feed-forward blocks: granitehybrid and nemotron_h
// (Mamba-2: granite-hybrid.cpp, nemotron-h.cpp) and jamba (Mamba-1: jamba.cpp), running
// llm_graph_context_mamba::build_mamba2_layer / build_mamba_layer and llama-graph.cpp build_rs
// as llama.cpp 80fb11ac has them.
//
// Graph order. ggml adds a node when something that reads it is expanded, after its parents
// (depth first). build_rs expands a layer's gathered conv states as soon as the layer starts, and
// the layer then expands its conv states' and SSM states' copies back into the cache; what comes
// after (the gated output, its projection, the residual, the feed-forward) waits for the next
// expansion. So a Mamba layer's gather lands right after the previous layer's last expansion: its
// feed-forward's (build_ffn expands the activation, build_moe_ffn each weighted expert's view)
// where it has one, else its own Mamba state copies, attention cache writes or squared-ReLU
// activation; before the unexpanded rest of that layer.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/checked.h"
#include "engines/ggml_cuda_support.h"
#include "engines/llamacpp_graph_builder.h"
#include "engines/llamacpp_graph_recurrent.h"

namespace vc::llamacpp_graph_detail {
namespace {

// Mamba2's heads, d_conv and d_inner, read from a GGUF's tensor shapes (ssm_dt.bias: [heads],
// ssm_conv1d: [d_conv, channels], ssm_out: [d_inner, n_embd]); nullopt without them.
struct Mamba2Shape {
  uint64_t heads = 0, kernel = 0, d_inner = 0;
};

std::optional<Mamba2Shape> mamba2_shape(const Model& m, size_t il) {
  const AttentionSpec& a = m.layers[il].attention;
  if (a.kind != AttentionKind::LinearState || a.state_family != StateFamily::Mamba2) return std::nullopt;
  Mamba2Shape s;
  s.heads = block_tensor_shape(m, il, "ssm_dt.bias").empty() ? 0 : block_tensor_shape(m, il, "ssm_dt.bias")[0];
  const auto conv = block_tensor_shape(m, il, "ssm_conv1d.weight");
  const auto out = block_tensor_shape(m, il, "ssm_out.weight");
  if (!conv.empty()) s.kernel = conv[0];
  if (!out.empty()) s.d_inner = out[0];
  if (!s.heads || s.kernel < 2 || !s.d_inner) return std::nullopt;
  if (a.state_values % s.d_inner != 0 || a.conv_values % (s.kernel - 1) != 0) return std::nullopt;
  return s;
}

bool is_mamba(const Model& m, size_t il) { return m.layers[il].attention.kind == AttentionKind::LinearState; }

// build_rs of layer `il`'s conv states, viewed as [d_conv - 1, channels, seqs].
int conv_states(Builder& b, size_t il, const StateCopy& s_copy) {
  return b.g.view(gathered_state(b, il, b.m_.layers[il].attention.conv_values, s_copy));
}

// build_mamba2_layer from the layer's normed input `h` and its gathered conv states `conv_rows`
// to the output projection. `after_states` runs where the layer's last expansion ends (the SSM
// states copied back into the cache): the next layer's gather goes there.
template <typename AfterStates>
int mamba2_mixer(Builder& b, size_t il, int h, const Mamba2Shape& shape, const StateCopy& s_copy, int conv_rows, AfterStates after_states) {
  GgmlGraph& g = b.g;
  const AttentionSpec& a = b.m_.layers[il].attention;
  const uint64_t T = b.T_, ns = b.in_.seqs;
  const uint64_t d_inner = shape.d_inner, heads = shape.heads, kernel = shape.kernel;
  const uint64_t channels = a.conv_values / (kernel - 1);  // x, B and C
  const uint64_t d_state = a.state_values / d_inner, groups = (channels - d_inner) / (2 * d_state);
  const int zxbcdt = b.matmul(checked_add(checked_add(d_inner, channels), heads), h);
  b.reads(zxbcdt, {b.blk(il, "ssm_in.weight")}, SchedOp::MulMat);
  const int proj = g.view(zxbcdt);
  // CONCAT of the conv states and this ubatch's xBC, transposed: [d_conv - 1 + T/ns, channels, ns]
  const int window = g.node(checked_product({kernel - 1 + T / ns, channels, ns, kF32}), {conv_rows, g.view(g.view(proj))});
  into_cache(b, il, {g.view(window)});  // the last d_conv - 1 columns back into the cache
  const int conv = g.node(b.rows(channels), {window});  // SSM_CONV
  b.reads(conv, {b.blk(il, "ssm_conv1d.weight")});
  g.tensors[static_cast<size_t>(conv)].gpu_unsupported = !cuda_supports_ssm_conv(channels);
  const int biased = b.unary(conv);
  b.reads(biased, {b.blk(il, "ssm_conv1d.bias")});
  const int act = b.unary(biased);  // SILU
  b.mark(act, SchedOp::Other);
  // x, B and C: views of the activations, each spanning (T - 1) rows of all channels plus its own
  // width (ggml_nbytes of a strided view), which is what a copy of one holds.
  const uint64_t span = checked_product({T - 1, channels, kF32});
  const int xs = sized_view(g, act, checked_add(span, checked_mul(d_inner, kF32)));
  const int B = sized_view(g, act, checked_add(span, checked_product({groups, d_state, kF32})));
  const int C = sized_view(g, act, checked_add(span, checked_product({groups, d_state, kF32})));
  const int dt_cont = g.node(b.rows(heads), {g.view(proj)});  // CONT of dt
  b.mark(dt_cont, SchedOp::Other);
  const int dt = b.unary(dt_cont);  // + dt_bias
  b.reads(dt, {b.blk(il, "ssm_dt.bias")});
  // build_rs with SSM_SCAN as its gather: the zero row cleared in the cache, then the scan reads
  // the whole state cache, x, dt, A, B, C and s_copy, writing y and the last states in one tensor.
  into_cache(b, il, {});
  const int scan = g.node(checked_add(b.rows(d_inner), checked_product({a.state_values, ns, kF32})),
                          {whole_state(b, il, a.state_values), xs, dt, B, C, s_copy.main});
  b.reads(scan, {b.blk(il, "ssm_a")}, SchedOp::Other);
  g.tensors[static_cast<size_t>(scan)].rows = 1;  // a 1-D result
  g.tensors[static_cast<size_t>(scan)].gpu_unsupported = !cuda_supports_mamba2_scan(d_state, d_inner / heads);
  extra_states(b, il, a.state_values, s_copy);
  into_cache(b, il, {sized_view(g, scan, checked_product({a.state_values, ns, kF32}))});  // the states back into the cache
  after_states();
  const int z = g.node(b.rows(d_inner), {g.view(proj)});  // CONT of z
  b.mark(z, SchedOp::Other, heads);
  const int y_view = sized_view(g, scan, b.rows(d_inner));
  const int xd = g.node(b.rows(d_inner), {xs});  // x * D (a view: a new tensor)
  b.reads(xd, {b.blk(il, "ssm_d")}, SchedOp::Other, heads);
  const int y = b.add_any(y_view, xd);  // y + x * D, into x * D
  b.mark(y, SchedOp::Other, heads);
  const int gated = b.glu(d_inner, z, y);  // SWIGLU(z, y)
  b.mark(gated, SchedOp::Other, heads);
  const int normed = b.norm(g.view(gated));  // grouped RMS norm
  b.reads(normed, {b.blk(il, "ssm_norm.weight")}, SchedOp::Other, groups);
  const int out = b.matmul(b.m_.hidden, g.view(normed));
  b.reads(out, {b.blk(il, "ssm_out.weight")}, SchedOp::MulMat);
  return out;
}

// Mamba-1's d_conv, d_inner, dt_rank and d_state from a GGUF's tensor shapes (ssm_conv1d:
// [d_conv, d_inner], ssm_dt: [dt_rank, d_inner], ssm_a: [d_state, d_inner]), with Jamba's RMS norms
// of dt, B and C (ssm_dt_norm, ssm_b_norm, ssm_c_norm); nullopt without them.
struct Mamba1Shape {
  uint64_t kernel = 0, d_inner = 0, dt_rank = 0, d_state = 0;
};

std::optional<Mamba1Shape> mamba1_shape(const Model& m, size_t il) {
  const AttentionSpec& a = m.layers[il].attention;
  if (a.kind != AttentionKind::LinearState || a.state_family != StateFamily::Mamba1) return std::nullopt;
  const auto conv = block_tensor_shape(m, il, "ssm_conv1d.weight"), dt = block_tensor_shape(m, il, "ssm_dt.weight");
  const auto A = block_tensor_shape(m, il, "ssm_a");
  if (conv.size() < 2 || dt.size() < 2 || A.size() < 2) return std::nullopt;
  for (const char* norm : {"ssm_dt_norm.weight", "ssm_b_norm.weight", "ssm_c_norm.weight"})
    if (block_tensor_shape(m, il, norm).empty()) return std::nullopt;  // FalconMamba's weightless norms: not covered
  const Mamba1Shape s{.kernel = conv[0], .d_inner = conv[1], .dt_rank = dt[0], .d_state = A[0]};
  if (s.kernel < 2 || !s.d_inner || !s.dt_rank || !s.d_state) return std::nullopt;
  if (a.conv_values != checked_mul(s.kernel - 1, s.d_inner) || a.state_values != checked_mul(s.d_state, s.d_inner)) return std::nullopt;
  return s;
}

// build_mamba_layer from the layer's normed input `h` and its gathered conv states `conv_rows` to
// the output projection; `after_states` as for mamba2_mixer.
template <typename AfterStates>
int mamba1_mixer(Builder& b, size_t il, int h, const Mamba1Shape& s, const StateCopy& s_copy, int conv_rows, AfterStates after_states) {
  GgmlGraph& g = b.g;
  const AttentionSpec& a = b.m_.layers[il].attention;
  const uint64_t T = b.T_, ns = b.in_.seqs;
  const int xz = b.matmul(checked_mul(2, s.d_inner), h);
  b.reads(xz, {b.blk(il, "ssm_in.weight")}, SchedOp::MulMat);
  const int proj = g.view(xz);
  // CONCAT of the conv states and this ubatch's x, transposed: [d_conv - 1 + T/ns, d_inner, ns]
  const int window = g.node(checked_product({s.kernel - 1 + T / ns, s.d_inner, ns, kF32}), {conv_rows, g.view(g.view(proj))});
  into_cache(b, il, {g.view(window)});  // the last d_conv - 1 columns back into the cache
  const int conv = g.node(b.rows(s.d_inner), {window});  // SSM_CONV
  b.reads(conv, {b.blk(il, "ssm_conv1d.weight")});
  const int biased = b.unary(conv);
  b.reads(biased, {b.blk(il, "ssm_conv1d.bias")});
  const int act = b.unary(biased);  // SILU
  b.mark(act, SchedOp::Other);
  // dt, B and C from one projection, each RMS-normed over its strided view (a new tensor) and
  // scaled by its weight in place; dt then projected to d_inner and biased, in the order the scan
  // reads them.
  const int x_db = b.matmul(s.dt_rank + 2 * s.d_state, act);
  b.reads(x_db, {b.blk(il, "ssm_x.weight")}, SchedOp::MulMat);
  auto normed = [&](uint64_t width, const char* weight) {
    const int rms = g.node(b.rows(width), {g.view(x_db)});
    b.mark(rms, SchedOp::Other);
    const int n = b.unary(rms);
    b.reads(n, {b.blk(il, weight)});
    return n;
  };
  const int dt_low = normed(s.dt_rank, "ssm_dt_norm.weight");
  const int dt_proj = b.matmul(s.d_inner, dt_low);
  b.reads(dt_proj, {b.blk(il, "ssm_dt.weight")}, SchedOp::MulMat);
  const int dt = b.unary(dt_proj);
  b.reads(dt, {b.blk(il, "ssm_dt.bias")});
  const int B = normed(s.d_state, "ssm_b_norm.weight");
  const int C = normed(s.d_state, "ssm_c_norm.weight");
  // build_rs with SSM_SCAN as its gather, as in mamba2_mixer.
  into_cache(b, il, {});
  const int scan = g.node(checked_add(b.rows(s.d_inner), checked_product({a.state_values, ns, kF32})),
                          {whole_state(b, il, a.state_values), g.view(act), dt, B, C, s_copy.main});
  b.reads(scan, {b.blk(il, "ssm_a")}, SchedOp::Other);
  g.tensors[static_cast<size_t>(scan)].rows = 1;
  extra_states(b, il, a.state_values, s_copy);
  into_cache(b, il, {sized_view(g, scan, checked_product({a.state_values, ns, kF32}))});
  after_states();
  const int z = g.node(b.rows(s.d_inner), {g.view(proj)});  // CONT of z
  b.mark(z, SchedOp::Other);
  const int y_view = sized_view(g, scan, b.rows(s.d_inner));
  const int xd = g.node(b.rows(s.d_inner), {act});  // x * D: x has a view, so a new tensor
  b.reads(xd, {b.blk(il, "ssm_d")});
  const int y = b.add_any(y_view, xd);
  b.mark(y, SchedOp::Other);
  const int gated = b.glu(s.d_inner, z, y);  // SWIGLU(z, y)
  b.mark(gated, SchedOp::Other);
  const int out = b.matmul(b.m_.hidden, gated);
  b.reads(out, {b.blk(il, "ssm_out.weight")}, SchedOp::MulMat);
  return out;
}

// On the last layer only the output rows go on (inp_out_ids): the mixer's output and the residual.
void keep_output_rows(Builder& b, int& out, int& residual, int out_ids) {
  b.keep_outputs();
  out = b.get_rows(b.m_.hidden, out, out_ids);
  b.mark(out, SchedOp::GetRows);
  residual = b.get_rows(b.m_.hidden, residual, out_ids);
  b.mark(residual, SchedOp::GetRows);
}

}  // namespace

std::optional<GgmlGraph> mamba2_graph(const Model& m, const LlamaCppGraphInput& in) {
  std::vector<Mamba2Shape> shapes;
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const LayerConfig& l = m.layers[il];
    if (l.parallel_mixer || l.feed_forward.kind != FeedForwardKind::None) return std::nullopt;
    const auto shape = mamba2_shape(m, il);
    if (!shape) return std::nullopt;
    shapes.push_back(*shape);
  }
  Builder b(m, in);
  GgmlGraph& g = b.g;
  b.token_inputs();
  const int s_copy_leaf = g.leaf(checked_mul(in.seqs, kI32));  // which state row each sequence reads
  const int out_ids = g.leaf(checked_mul(in.outputs, kI32));
  const StateCopy s_copy = state_copy_views(g, s_copy_leaf);
  int x = b.embeddings();
  b.reads(x, {b.weight("token_embd.weight")}, SchedOp::GetRows);
  int conv_rows = conv_states(b, 0, s_copy);
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const int h = b.norm(x);
    b.reads(h, {b.blk(il, "attn_norm.weight")});
    int out = mamba2_mixer(b, il, h, shapes[il], s_copy, conv_rows, [&] {
      if (il + 1 < m.layers.size()) conv_rows = conv_states(b, il + 1, s_copy);
    });
    int residual = x;
    if (il + 1 == m.layers.size()) keep_output_rows(b, out, residual, out_ids);
    x = b.add(out, residual);
    b.mark(x, SchedOp::Other);
  }
  b.head(x);
  b.finish_scheduled();
  return std::move(b.g);
}

std::optional<GgmlGraph> mamba_hybrid_graph(const Model& m, const LlamaCppGraphInput& in) {
  // granitehybrid: every layer a mixer (Mamba-2 or attention) then a feed-forward (dense, or
  // softmax-routed experts with normalised weights and a shared expert), each with its residual
  // (build_layer_ffn). nemotron_h: every layer one block (Mamba-2, attention, or a squared-ReLU
  // up/down feed-forward) and one residual. Attention rotates Q and K only where the layer says so
  // (AttentionSpec::rotary: Granite's rope switch, on unless the file turns it off; Nemotron-H
  // never) and has no norms of Q and K; Granite's embedding, residual and logit multipliers are
  // SCALEs in place, no new tensor. jamba: Mamba-1 or attention (no RoPE), then the residual
  // added into the layer input, a dense or softmax-routed (weights not normalised) feed-forward,
  // the residual again.
  const bool granite = m.architecture == "granitehybrid", jamba = m.architecture == "jamba";
  const bool ffn_per_layer = granite || jamba;
  std::vector<std::optional<Mamba2Shape>> shapes2;
  std::vector<std::optional<Mamba1Shape>> shapes1;
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const LayerConfig& l = m.layers[il];
    const AttentionSpec& a = l.attention;
    if (l.parallel_mixer) return std::nullopt;
    shapes2.push_back(jamba ? std::nullopt : mamba2_shape(m, il));
    shapes1.push_back(jamba ? mamba1_shape(m, il) : std::nullopt);
    if (is_mamba(m, il) && !shapes2.back() && !shapes1.back()) return std::nullopt;
    if (!is_mamba(m, il) && a.kind != AttentionKind::Full && a.kind != AttentionKind::None) return std::nullopt;
    if (a.kind == AttentionKind::Full && (!a.query_heads || a.head_dim_k != a.head_dim_v)) return std::nullopt;
    const FeedForwardSpec& ff = l.feed_forward;
    if (ffn_per_layer ? !ffn_covered(m, il) : ff.kind == FeedForwardKind::MoE) return std::nullopt;
    if (jamba && ff.kind == FeedForwardKind::MoE && ff.shared_width) return std::nullopt;
    // nemotron_h: a mixer or a feed-forward, never both in one layer
    if (!ffn_per_layer && (a.kind == AttentionKind::None) != (ff.kind == FeedForwardKind::Dense)) return std::nullopt;
  }
  if (!is_mamba(m, 0)) return std::nullopt;  // the inputs' order below starts with the states
  Builder b(m, in);
  GgmlGraph& g = b.g;
  b.token_inputs();
  // Inputs in the order the graph first reads them: the state rows, then the KV cache's
  // (build_inp_mem_hybrid), then the output rows.
  const int s_copy_leaf = g.leaf(checked_mul(in.seqs, kI32));
  const StateCopy s_copy = state_copy_views(g, s_copy_leaf);
  KvInputs kv;
  int pos = -1;
  const auto first_attention = std::find_if(m.layers.begin(), m.layers.end(), [](const LayerConfig& l) { return l.attention.kind == AttentionKind::Full; });
  if (first_attention != m.layers.end()) {
    // Positions where the attention rotates (build_inp_pos: Granite's rope switch), read first
    // by Q's RoPE.
    const bool rotary = std::any_of(m.layers.begin(), m.layers.end(), [](const LayerConfig& l) { return l.attention.kind == AttentionKind::Full && l.attention.rotary; });
    if (rotary) pos = g.leaf(checked_mul(b.T_, kI32));
    kv.k_idx = g.leaf(checked_mul(b.T_, kI64));
    kv.v_idx = b.v_idx(first_attention->attention);
    kv.mask = b.mask(in.kv_cells);
  }
  const int out_ids = g.leaf(checked_mul(in.outputs, kI32));

  int x = b.embeddings();  // expanded first (granite-hybrid.cpp, nemotron-h.cpp)
  b.reads(x, {b.weight("token_embd.weight")}, SchedOp::GetRows);
  // A Mamba-2 layer's conv states are gathered where the previous layer's last expansion ends.
  std::vector<int> conv_rows(m.layers.size(), -1);
  auto gather_if_mamba = [&](size_t il) {
    if (il < m.layers.size() && is_mamba(m, il)) conv_rows[il] = conv_states(b, il, s_copy);
  };
  gather_if_mamba(0);
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const LayerConfig& l = m.layers[il];
    // Where this layer's last expansion ends: Granite's feed-forward (build_ffn expands its
    // activation, "so that we can fuse ffn gate"), else the block itself: a Mamba-2 mixer's state
    // copies, an attention layer's cache writes, a feed-forward block's activation.
    auto last_expansion = [&] { gather_if_mamba(il + 1); };
    auto after_mixer = [&] {
      if (!ffn_per_layer) last_expansion();
    };
    const int h = b.norm(x);
    b.reads(h, {b.blk(il, "attn_norm.weight")});
    int out = -1;
    if (shapes1[il]) {
      out = mamba1_mixer(b, il, h, *shapes1[il], s_copy, conv_rows[il], after_mixer);
    } else if (shapes2[il]) {
      out = mamba2_mixer(b, il, h, *shapes2[il], s_copy, conv_rows[il], after_mixer);
    } else if (l.attention.kind == AttentionKind::Full) {
      // Q, V, K as build_attn expands them, each a view of its projection (plus its bias).
      auto project = [&](uint64_t width, const std::string& name) {
        int p = b.matmul(width, h);
        b.reads(p, {b.blk(il, "attn_" + name + ".weight")}, SchedOp::MulMat);
        if (b.blk(il, "attn_" + name + ".bias", false) >= 0) {
          p = b.unary(p);
          b.reads(p, {b.blk(il, "attn_" + name + ".bias")});
        }
        return g.view(p);
      };
      const AttentionSpec& a = l.attention;
      // RoPE of a view writes a new tensor (granite-hybrid.cpp, where the rope switch is on).
      auto rope = [&](int t, uint64_t heads) {
        if (!a.rotary) return t;
        const int r = g.node(b.rows(heads * a.head_dim_k), {t, pos});
        b.mark(r, SchedOp::Rope, heads);
        return r;
      };
      const int q = rope(project(uint64_t{a.query_heads} * a.head_dim_k, "q"), a.query_heads);
      const int v = project(uint64_t{a.kv_heads} * a.head_dim_v, "v");
      const int k = rope(project(uint64_t{a.kv_heads} * a.head_dim_k, "k"), a.kv_heads);
      // The cache writes end this layer's expansion; the attention itself waits.
      const int merged = b.attend(il, q, k, v, kv, in.kv_cells, false, after_mixer);
      out = b.matmul(m.hidden, merged);
      b.reads(out, {b.blk(il, "attn_output.weight")}, SchedOp::MulMat);
    } else {
      // nemotron_h's feed-forward block: up, squared ReLU (RELU, SQR in place), down.
      const int up = b.matmul(l.feed_forward.dense_width, h);
      b.reads(up, {b.blk(il, "ffn_up.weight")}, SchedOp::MulMat);
      const int act = b.unary(b.unary(up));
      last_expansion();
      out = b.matmul(m.hidden, act);
      b.reads(out, {b.blk(il, "ffn_down.weight")}, SchedOp::MulMat);
    }
    if (granite) {
      x = b.residual_ffn(il, out, x, out_ids, MoeRouting{.normalize = true}, last_expansion);
      continue;
    }
    if (jamba) {
      int residual = x;
      if (il + 1 == m.layers.size()) keep_output_rows(b, out, residual, out_ids);
      const int ffn_in = b.add(residual, out);  // ggml_add(inpL, cur): into the layer input
      const int f = b.norm(ffn_in);
      b.reads(f, {b.blk(il, "ffn_norm.weight")});
      const FeedForwardSpec& ff = l.feed_forward;
      const int ffn_out = ff.kind == FeedForwardKind::Dense ? b.dense_ffn(ff.dense_width, f, il, "", last_expansion)
                                                            : b.moe_ffn(ff, f, MoeRouting{}, il, last_expansion);
      x = b.add(ffn_in, ffn_out);
      continue;
    }
    int residual = x;
    if (il + 1 == m.layers.size()) keep_output_rows(b, out, residual, out_ids);
    x = b.add(out, residual);
  }
  b.head(x);
  b.finish_scheduled();
  // ggml-cuda's support of the Mamba-1 scan is not transcribed (ggml_cuda_support.h): a jamba
  // graph is not offered to the scheduler replay.
  if (jamba) b.g.scheduled = false;
  return std::move(b.g);
}

}  // namespace vc::llamacpp_graph_detail
