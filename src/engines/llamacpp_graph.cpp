#include "engines/llamacpp_graph.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "core/checked.h"
#include "engines/llamacpp_graph_builder.h"

namespace vc {
using namespace llamacpp_graph_detail;

bool cuda_has_flash_attn_kernel(uint64_t head_k, uint64_t head_v, const std::string& type_k, const std::string& type_v) {
  // Without GGML_CUDA_FA_ALL_QUANTS (off by default) the kernels read K and V of one type, F16,
  // Q4_0 or Q8_0 (fattn.cu: FATTN_VEC_CASE lists; the mixed pairs only with that option).
  auto upper = [](std::string t) {
    for (auto& ch : t) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return t;
  };
  const std::string k = upper(type_k), v = upper(type_v);
  if (k != v || (k != "F16" && k != "Q4_0" && k != "Q8_0")) return false;
  if (head_k != head_v) return false;
  switch (head_k) {
    case 40: case 64: case 72: case 80: case 96: case 112: case 128: case 256: return true;
    default: return false;
  }
}

namespace {

// ---- Softmax-attention decoders (llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3, glm4moe, llama4), flash attention on or off ----

struct DecoderStyle {
  bool qk_norm = false;        // RMS norm of Q and K per head (qwen3, gemma3)
  bool embed_scale = false;    // inputs scaled by sqrt(n_embd) (gemma3)
  bool q_scale = false;        // Q scaled after RoPE instead of in the softmax (gemma3)
  bool k_before_v = false;     // the graph runs K's chain before V's (gemma3: a window cache)
  bool post_norms = false;     // norms after attention and feed-forward (gemma3)
  // One q/k/v projection whose Q, K and V are views (llama-graph.cpp build_qkv with wqkv: phi3),
  // and one up projection of twice the width that SWIGLU splits in halves (build_ffn with no gate).
  bool fused_projections = false;
  bool residual_before_ffn_out = false;  // the last ADD is (residual, ffn out): phi3
  // glm4moe: q/k/v biases (an ADD in place over each product), Q/K norms only where the file has
  // them (GLM-4.5-Air has none), the norm before the feed-forward named post_attention_norm, and
  // DeepSeek-V3-style routing (sigmoid, a selection bias, normalised and scaled weights) with a
  // shared expert added to the routed ones.
  bool qkv_bias = false;
  bool qk_norm_if_present = false;
  const char* ffn_norm = "ffn_norm.weight";
  bool glm_routing = false;
  // llama4 (src/models/llama4.cpp): layers without RoPE (the full-attention ones when chunked
  // layers exist) scale Q by a per-token temperature input; RoPE layers L2-normalise Q and K
  // (RMS_NORM, not for the 128-expert model); sigmoid routing with the chosen weight applied to the
  // experts' input; a shared expert added to the routed one.
  bool llama4 = false;
};

std::optional<DecoderStyle> decoder_style(const std::string& arch) {
  if (arch == "llama") return DecoderStyle{};
  if (arch == "qwen3" || arch == "qwen3moe") return DecoderStyle{.qk_norm = true};
  // qwen2 (src/models/qwen2.cpp): llama's block with q/k/v biases, each an ADD in place.
  if (arch == "qwen2") return DecoderStyle{.qkv_bias = true};
  if (arch == "gemma3")
    return DecoderStyle{.qk_norm = true, .embed_scale = true, .q_scale = true, .k_before_v = true, .post_norms = true};
  // gemma2 (src/models/gemma2-iswa.cpp): gemma3's block without Q/K norms; its soft-capping (of the
  // scores without flash attention, of the logits) is SCALE, TANH, SCALE in place, no new tensor.
  if (arch == "gemma2") return DecoderStyle{.embed_scale = true, .q_scale = true, .k_before_v = true, .post_norms = true};
  if (arch == "phi3") return DecoderStyle{.q_scale = true, .fused_projections = true, .residual_before_ffn_out = true};
  if (arch == "llama4") return DecoderStyle{.llama4 = true};
  if (arch == "glm4moe")
    return DecoderStyle{.qk_norm = true, .qkv_bias = true, .qk_norm_if_present = true, .ffn_norm = "post_attention_norm.weight", .glm_routing = true};
  return std::nullopt;
}

std::optional<GgmlGraph> softmax_decoder(const Model& m, const LlamaCppGraphInput& in, const DecoderStyle& s) {
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const LayerConfig& l = m.layers[il];
    const AttentionSpec& a = l.attention;
    if (a.kind != AttentionKind::Full && a.kind != AttentionKind::SlidingWindow) return std::nullopt;
    if (l.parallel_mixer || !ffn_covered(m, il) || !a.query_heads) return std::nullopt;
    if (s.fused_projections && (l.feed_forward.kind != FeedForwardKind::Dense || a.head_dim_k != a.head_dim_v)) return std::nullopt;
  }
  // phi3's q/k/v are one tensor as convert_hf_to_gguf writes them; a file with separate ones loads
  // too (llama-model.cpp: attn_qkv not required) and then projects as llama does.
  auto in_file = [&](size_t il, const char* name) {  // true for a model not read from a GGUF file
    return m.tensors.empty() || !block_tensor_shape(m, il, name).empty();
  };
  const bool fused_qkv = s.fused_projections && in_file(0, "attn_qkv.weight");
  const bool qk_norm = s.qk_norm && (!s.qk_norm_if_present || in_file(0, "attn_q_norm.weight"));
  const bool has_window = std::any_of(m.layers.begin(), m.layers.end(), [](const LayerConfig& l) { return l.attention.kind == AttentionKind::SlidingWindow; });
  // build_attn with a window cache (llm_graph_input_attn_kv_iswa) expands Q, K, V; else Q, V, K.
  const bool k_first = s.k_before_v || (s.llama4 && has_window);
  // hparams.use_kq_norm: every Llama 4 but the 128-expert Maverick.
  const bool l4_kq_norm = s.llama4 && std::none_of(m.layers.begin(), m.layers.end(), [](const LayerConfig& l) { return l.feed_forward.experts == 128; });
  Builder b(m, in);
  GgmlGraph& g = b.g;
  b.token_inputs();
  // The graph's inputs, placed in the order the graph first reads them. Each cache (full,
  // window) has its row indices for K and V and its mask (llama-kv-cache.cpp build_input_k_idxs /
  // build_input_v_idxs, llama-graph.cpp build_attn_inp_kq_mask). Without flash attention the V
  // cache is transposed, so V gets one index per value, and the mask is f32; with it, one index
  // per token and f16. A rotated quantized cache adds its Hadamard matrix, f32 side x side
  // (build_input_k_rot / build_input_v_rot), read first by the rotation of Q, before RoPE reads
  // the positions.
  KvInputs caches[2];
  int pos = -1, attn_scale = -1;
  for (const auto& l : m.layers) {
    const AttentionSpec& a = l.attention;
    KvInputs& c = caches[a.kind == AttentionKind::SlidingWindow ? 1 : 0];
    if (c.mask >= 0) continue;
    const uint64_t cells = a.kind == AttentionKind::SlidingWindow ? in.swa_cells : in.kv_cells;
    // llama4's temperature (build_inp_attn_scale, f32 a token) is first read by a layer without
    // RoPE, the first full-attention one, before that layer's cache inputs.
    if (s.llama4 && has_window && a.kind != AttentionKind::SlidingWindow) attn_scale = g.leaf(checked_mul(b.T_, kF32));
    c.k_rot = b.rotation_matrix(in.k_rotation);
    if (pos < 0) pos = g.leaf(checked_mul(b.T_, kI32));
    c.v_rot = b.rotation_matrix(in.v_rotation);
    c.k_idx = g.leaf(checked_mul(b.T_, kI64));
    c.v_idx = b.v_idx(a);
    c.mask = b.mask(cells);
  }
  const int out_ids = g.leaf(checked_mul(in.outputs, kI32));

  int x = b.embeddings();
  b.reads(x, {b.weight("token_embd.weight")}, SchedOp::GetRows);
  if (s.embed_scale) x = b.unary(x);
  for (size_t il = 0; il < m.layers.size(); ++il) {
    const AttentionSpec& a = m.layers[il].attention;
    const KvInputs& c = caches[a.kind == AttentionKind::SlidingWindow ? 1 : 0];
    const uint64_t cells = a.kind == AttentionKind::SlidingWindow ? in.swa_cells : in.kv_cells;
    const uint64_t heads = a.query_heads;
    const int h = b.norm(x);
    b.reads(h, {b.blk(il, "attn_norm.weight")});
    const uint64_t k_width = uint64_t{a.kv_heads} * a.head_dim_k, v_width = uint64_t{a.kv_heads} * a.head_dim_v;
    int qkv = -1;  // the fused projection, whose views Q, K and V are
    if (fused_qkv) {
      qkv = b.matmul(checked_add(checked_mul(heads, a.head_dim_k), checked_add(k_width, v_width)), h);
      b.reads(qkv, {b.blk(il, "attn_qkv.weight")}, SchedOp::MulMat);
    }
    // One of Q, K, V projected on its own (attn_q/k/v), with its bias added in place (glm4moe).
    auto project = [&](uint64_t width, const std::string& name) {
      int p = b.matmul(width, h);
      b.reads(p, {b.blk(il, "attn_" + name + ".weight")}, SchedOp::MulMat);
      if (s.qkv_bias) {
        p = b.unary(p);
        b.reads(p, {b.blk(il, "attn_" + name + ".bias", false)});
      }
      return p;
    };
    // llama4: every 4th layer (n_no_rope_layer_step) has no RoPE; they are the full-attention ones.
    const bool use_rope = !s.llama4 || !has_window || a.kind == AttentionKind::SlidingWindow;
    // Q: projection, per-head view, (norm), RoPE (a new tensor when it reads a view), (scale).
    auto q_or_k = [&](uint64_t width, const char* name, uint64_t head_count) {
      const int v = g.view(qkv >= 0 ? qkv : project(width, name));
      int r = -1;
      if (s.llama4 && !use_rope) {
        if (name[0] != 'q') return v;  // K stays a view of its projection
        r = g.node(b.rows(width), {v, attn_scale});  // MUL by the temperature: a new tensor
        b.mark(r, SchedOp::Other, head_count);
        return r;
      }
      if (qk_norm) {
        const int n = b.norm(v);
        b.reads(n, {b.blk(il, std::string("attn_") + name + "_norm.weight")}, SchedOp::Other, head_count);
        r = b.unary(n);
        g.tensors[static_cast<size_t>(r)].parents.push_back(pos);  // ROPE reads the positions
        g.tensors[static_cast<size_t>(r)].same_layout.push_back(false);
      } else {
        r = g.node(b.rows(width), {v, pos});
      }
      b.mark(r, SchedOp::Rope, head_count);
      if (s.llama4 && l4_kq_norm) r = b.unary(r);  // Llama4TextL2Norm: RMS_NORM in place
      return r;
    };
    int q = q_or_k(heads * a.head_dim_k, "q", heads);
    if (s.q_scale) q = b.unary(q);
    q = b.rotate(q, c.k_rot);
    int k = -1, v = -1;
    auto key = [&] { k = b.rotate(q_or_k(k_width, "k", a.kv_heads), c.k_rot); };
    // A view of the fused projection is strided: rotating it, or writing it into a transposed V
    // cache, first copies it out (CONT; llama_mul_mat_hadamard, llama-kv-cache.cpp cpy_v).
    bool v_strided = false;
    auto value = [&] {
      v = g.view(qkv >= 0 ? qkv : project(v_width, "v"));
      v_strided = qkv >= 0;
      if (v_strided && c.v_rot >= 0) {
        v = b.cont(v, v_width);
        v_strided = false;
      }
      v = b.rotate(v, c.v_rot);
    };
    // build_attn adds Q, V, K to the graph in that order; with a window cache (build_attn for
    // llm_graph_input_attn_kv_iswa) Q, K, V.
    if (k_first) {
      key();
      value();
    } else {
      value();
      key();
    }
    const int merged = b.attend(il, q, k, v, c, cells, v_strided);
    int att = b.matmul(m.hidden, b.rotate(merged, c.v_rot));  // the output rotated back
    b.reads(att, {b.blk(il, "attn_output.weight")}, SchedOp::MulMat);
    int residual = x;
    const bool last = il + 1 == m.layers.size();
    if (last) {
      b.keep_outputs();
      att = b.get_rows(m.hidden, att, out_ids);
    }
    if (s.post_norms) {
      att = b.norm(att);
      b.reads(att, {b.blk(il, "post_attention_norm.weight")});
    }
    if (last) residual = b.get_rows(m.hidden, x, out_ids);
    const int ffn_in = b.add(att, residual);
    const int f = b.norm(ffn_in);
    b.reads(f, {b.blk(il, s.ffn_norm)});
    const FeedForwardSpec& ff = m.layers[il].feed_forward;
    int out = -1;
    if (ff.kind != FeedForwardKind::Dense) {
      // build_moe_ffn's routing: qwen3moe softmax with normalised weights; GLM-4.5 to 4.7 ship the
      // selection bias (e_score_correction_bias), norm_topk_prob and a routed_scaling_factor of 2.5
      // (config.json); llama4 weighs the experts' input. The shared expert (glm4moe, llama4) runs
      // on the same input and is added to the routed output.
      MoeRouting routing{.normalize = true};
      if (s.glm_routing) routing = {.selection_bias = in_file(il, "exp_probs_b.bias"), .normalize = true, .scale = true};
      if (s.llama4) routing = {.weight_before_ffn = true, .choose_on_logits = true};
      out = b.moe_ffn(ff, f, routing, il);
      if (ff.shared_width) out = b.add(out, b.dense_ffn(ff.shared_width, f, il, "_shexp"));
    } else if (s.fused_projections) {
      const int up = b.matmul(checked_mul(ff.dense_width, 2), f);
      b.reads(up, {b.blk(il, "ffn_up.weight")}, SchedOp::MulMat);
      const int act = g.node(b.rows(ff.dense_width), {up});  // SWIGLU of the halves, not in place
      b.mark(act, SchedOp::Other);
      out = b.matmul(m.hidden, act);
      b.reads(out, {b.blk(il, "ffn_down.weight")}, SchedOp::MulMat);
    } else {
      out = b.dense_ffn(ff.dense_width, f, il);
    }
    if (s.post_norms) {
      out = b.norm(out);
      b.reads(out, {b.blk(il, "post_ffw_norm.weight")});
    }
    x = s.residual_before_ffn_out ? b.add(ffn_in, out) : b.add(out, ffn_in);
  }
  b.head(x);
  b.finish_scheduled();
  return std::move(b.g);
}

}  // namespace

std::optional<GgmlGraph> llamacpp_graph(const Model& model, const LlamaCppGraphInput& in) {
  if (model.layers.empty() || in.seqs == 0 || in.tokens % in.seqs != 0 || in.outputs == 0 || in.outputs > in.tokens) return std::nullopt;
  if (const auto style = decoder_style(model.architecture)) return softmax_decoder(model, in, *style);
  if (model.architecture == "gpt-oss") return gpt_oss_graph(model, in);
  if (model.architecture == "qwen3next" || model.architecture == "qwen35moe") return qwen3next_graph(model, in);
  if (in.k_rotation || in.v_rotation) return std::nullopt;  // transcribed for the decoders above only
  if (model.architecture == "mamba2") return mamba2_graph(model, in);
  if (model.architecture == "granitehybrid" || model.architecture == "nemotron_h" || model.architecture == "jamba") return mamba_hybrid_graph(model, in);
  if (model.architecture == "deepseek2") return deepseek2_graph(model, in);
  if (model.architecture == "kimi-linear") return kimi_linear_graph(model, in);
  return std::nullopt;
}

}  // namespace vc
