#pragma once
// The pieces every llama.cpp graph builder shares (engines/llamacpp_graph*.cpp): a graph under
// construction with the nodes llama.cpp's decoders are made of (llama-graph.cpp: build_inp_embd,
// build_norm, build_ffn, the output head), sized for one reserved ubatch.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/checked.h"
#include "engines/ggml_alloc_replay.h"
#include "engines/llamacpp_graph.h"
#include "model/model.h"

namespace vc {
namespace llamacpp_graph_detail {

constexpr uint64_t kF32 = 4, kF16 = 2, kI32 = 4, kI64 = 8;

// Bytes of one cache row of `values` values at a cache type (-ctk/-ctv: F16, Q8_0, ...).
uint64_t cache_row_bytes(const std::string& type, uint64_t values);

// How build_moe_ffn weighs the chosen experts: nodes between the router and the experts.
struct MoeRouting {
  bool selection_bias = false;  // exp_probs_b (DeepSeek V3): a bias added to choose, not to weigh
  bool normalize = false;       // expert_weights_norm: the chosen weights divided by their sum
  bool scale = false;           // expert_weights_scale other than 0 and 1: one more SCALE
  bool softmax_chosen = false;  // SOFTMAX_WEIGHT gating (gpt-oss): a softmax over the chosen logits
  bool expert_biases = false;   // gate, up and down biases per expert (ADD_ID, in place)
  // Llama 4: the input repeated per chosen expert and weighted before the experts run (REPEAT,
  // MUL in place), so their outputs are not weighted after.
  bool weight_before_ffn = false;
  // Llama 4: the top-k is taken over the router's logits, not their sigmoid (build_moe_ffn:
  // selection_probs = logits for LLM_ARCH_LLAMA4).
  bool choose_on_logits = false;
};

// The inputs of one KV cache (llama-kv-cache.cpp build_input_k_idxs / build_input_v_idxs,
// llama-graph.cpp build_attn_inp_kq_mask) and, for a rotated quantized cache, its Hadamard
// matrices (build_input_k_rot / build_input_v_rot; -1: not rotated).
struct KvInputs {
  int k_idx = -1, v_idx = -1, mask = -1, k_rot = -1, v_rot = -1;
};

class Builder {
 public:
  Builder(const Model& m, const LlamaCppGraphInput& in) : m_(m), in_(in), T_(in.tokens) {}
  GgmlGraph g;

  uint64_t rows(uint64_t width) const { return checked_product({width, T_, kF32}); }  // f32 [width, T]
  // The KQ mask of a cache of `cells` per stream (build_attn_inp_kq_mask): f16 with flash
  // attention, f32 without.
  int mask(uint64_t cells) { return g.leaf(checked_product({cells, T_, in_.flash_attn ? kF16 : kF32})); }
  // A cache's V row indices (build_input_v_idxs): one per token with flash attention; without it
  // the V cache is transposed, one per value.
  int v_idx(const AttentionSpec& a) {
    return g.leaf(in_.flash_attn ? checked_mul(T_, kI64) : checked_product({T_, uint64_t{a.kv_heads}, a.head_dim_v, kI64}));
  }

  // Inputs placed before any node (llm_graph_input_*), in the order the graph first meets them.
  void token_inputs() {
    tokens_ = g.leaf(checked_mul(T_, kI32));
    g.leaf(rows(m_.hidden));  // inp_embd: allocated, never read for token input
  }
  int embeddings() { return g.node(rows(m_.hidden), {tokens_}); }  // GET_ROWS of token_embd

  // build_norm: RMS_NORM (in place only over a sole consumer) then MUL by the weight.
  int norm(int x) {
    const int n = g.node(data_bytes(x), {x}, x);
    return g.node(bytes(n), {n}, n);
  }
  int unary(int x) { return g.node(bytes(x), {x}, x); }  // SCALE, ADD of a weight, SILU, ROPE...
  int matmul(uint64_t width, int x) { return g.node(rows(width), {x}); }
  int add(int a, int b) { return g.node(bytes(a), {a, b}, a); }
  int add_any(int a, int b) {  // ADD where either side may be overwritten (same layout both)
    const int id = g.node(bytes(b), {a, b}, b);
    g.tensors[static_cast<size_t>(id)].same_layout = {true, true};
    return id;
  }
  int glu(uint64_t width, int gate, int up) { return g.node(rows(width), {gate, up}); }  // not in place
  // A quantized cache's Hadamard matrix (build_input_k_rot / build_input_v_rot): an f32 input,
  // side x side; -1 where the cache is not rotated (side 0).
  int rotation_matrix(uint64_t side) { return side ? g.leaf(checked_product({side, side, kF32})) : -1; }
  // A tensor rotated by such a matrix (llama_mul_mat_hadamard): reshaped to rows of the matrix's
  // side (a view), multiplied by the matrix (a new f32 tensor of the same size), reshaped back.
  int rotate(int t, int matrix) { return matrix < 0 ? t : g.view(g.node(data_bytes(t), {matrix, g.view(t)})); }
  // build_ffn with a SiLU-gated pair (LLM_FFN_SILU, LLM_FFN_PAR): gate, up, their product, down.
  // `il`/`prefix`: the layer and name prefix of its weights ("ffn", or "ffn" with suffix "_shexp").
  // `after_activation` runs where build_ffn expands the activation ("expand here so that we can
  // fuse ffn gate"), before the down projection.
  int dense_ffn(uint64_t width, int x, size_t il = SIZE_MAX, const std::string& suffix = "",
                const std::function<void()>& after_activation = {}) {
    const int gate = matmul(width, x);
    const int up = matmul(width, x);
    const int act = glu(width, gate, up);
    if (after_activation) after_activation();
    const int down = matmul(m_.hidden, act);
    if (il != SIZE_MAX) {
      reads(gate, {blk(il, "ffn_gate" + suffix + ".weight")}, SchedOp::MulMat);
      reads(up, {blk(il, "ffn_up" + suffix + ".weight")}, SchedOp::MulMat);
      reads(down, {blk(il, "ffn_down" + suffix + ".weight")}, SchedOp::MulMat);
    }
    return down;
  }
  // build_moe_ffn's routed experts (engines/llamacpp_graph_builder.cpp): the sum of the chosen
  // experts' outputs, weighted. `after_experts` runs where build_moe_ffn's last expansion ends
  // (each weighted expert's view, expanded before the adds).
  int moe_ffn(const FeedForwardSpec& f, int x, const MoeRouting& routing, size_t il = SIZE_MAX,
              const std::function<void()>& after_experts = {});
  // build_rs for one layer's recurrent state: the ubatch's sequences' rows (GET_ROWS by s_copy),
  // and the zero rows of the states beyond them copied back into the cache.
  int state_rows(uint64_t values_per_seq, int s_copy) {
    const int rows = g.node(checked_product({values_per_seq, in_.seqs, kF32}), {g.view(s_copy)});
    g.write_out({g.node(0, {g.view(s_copy)})});
    return rows;
  }
  // The second half of a pre-norm block from the mixer's output `att` and the block's input `x`:
  // on the last layer only the output rows go on (inp_out_ids), then the residual, the norm, the
  // dense or routed feed-forward (plus the shared experts where there are), the residual again.
  // `after_expansions` runs where the block's last expansion ends: the (shared) feed-forward's
  // activation, else the routed experts' views.
  int residual_ffn(size_t il, int att, int x, int out_ids, const MoeRouting& routing,
                   const std::function<void()>& after_expansions = {});
  // The last layer keeps only the output rows (inp_out_ids): from there on tensors have that many.
  void keep_outputs() { T_ = in_.outputs; }
  int get_rows(uint64_t width, int x, int ids) { return g.node(rows(width), {x, ids}); }

  // The output head: final norm, then the logits of every token (both outputs, never freed).
  void head(int x) {
    const int n = norm(x);
    reads(n, {weight("output_norm.weight")});
    g.mark_output(n);
    const int logits = g.node(rows(m_.vocab), {n});
    const int out = weight("output.weight", false);
    reads(logits, {out >= 0 ? out : kTiedOutputWeight}, SchedOp::MulMat);
    g.mark_output(logits);
  }

  // ---- What the scheduler reads (ggml_sched_replay.h) ----
  // A GGUF tensor's index in Model::tensors; -1 when absent (`required`: the graph then cannot be
  // scheduled).
  int weight(const std::string& name, bool required = true) {
    for (size_t i = 0; i < m_.tensors.size(); ++i)
      if (m_.tensors[i].name == name) return static_cast<int>(i);
    if (required) missing_weight_ = true;
    return -1;
  }
  int blk(size_t il, const std::string& name, bool required = true) { return weight("blk." + std::to_string(il) + "." + name, required); }
  // Node `t` reads `weights` (absent ones, -1, are skipped); its rows as ggml_nrows, or ne[1] for
  // a matrix product: `row_groups` x the tokens.
  void reads(int t, std::initializer_list<int> weights, SchedOp op = SchedOp::Other, uint64_t row_groups = 1) {
    auto& n = g.tensors[static_cast<size_t>(t)];
    for (int w : weights)
      if (w != -1) n.weights.push_back(w);
    n.op = op;
    n.rows = checked_mul(row_groups, T_);
  }
  void mark(int t, SchedOp op, uint64_t row_groups = 1) { reads(t, {}, op, row_groups); }
  // The K or V rows of layer `il`'s cache an attention op reads: every cell of every stream.
  int cache_view(size_t il, const std::string& type, uint64_t row_values, uint64_t cells);
  // A copy of a strided view into a tensor of its own (CONT), `width` f32 a token.
  int cont(int view, uint64_t width) {
    const int copy = g.node(rows(width), {view});
    mark(copy, SchedOp::Other);
    return copy;
  }
  // build_attn over layer `il`'s KV cache from Q, K and V as the model made them (after RoPE,
  // norms, rotation): K and V into the cache, then FLASH_ATTN_EXT, or KQ, SOFT_MAX and KQV
  // (build_attn_mha); returns the heads merged for the output projection. `v_strided`: V is a
  // strided view (of a fused projection) that the transposed cache reads through a copy.
  // `after_writes` runs once K and V are written, where build_attn's expansion ends (a hybrid's
  // next recurrent layer puts its state gather there, engines/llamacpp_graph_mamba.cpp).
  int attend(size_t il, int q, int k, int v, const KvInputs& c, uint64_t cells, bool v_strided = false,
             const std::function<void()>& after_writes = {});
  // What FLASH_ATTN_EXT node `fa` takes where ggml-cuda runs it, reading K rows of `k_values`
  // and V rows of `v_values` over `cells` per stream (V a view of K's rows: MLA).
  void cuda_flash_attn_bytes(int fa, uint64_t k_values, uint64_t v_values, uint64_t cells, bool v_in_k);
  // The graph carries the scheduler's annotations when every weight it names was found.
  void finish_scheduled() { g.scheduled = !missing_weight_; }
  bool missing_weight_ = false;

  uint64_t bytes(int t) const { return g.tensors[static_cast<size_t>(t)].bytes; }
  uint64_t bytes_of_root(int v) const { return bytes(g.tensors[static_cast<size_t>(v)].view_of); }
  // The bytes a tensor or view looks at (a view here always spans its whole source).
  uint64_t data_bytes(int t) const { return g.tensors[static_cast<size_t>(t)].view_of >= 0 ? bytes_of_root(t) : bytes(t); }

  const Model& m_;
  const LlamaCppGraphInput& in_;
  uint64_t T_;
  int tokens_ = -1;
};

// Positions per token in build_inp_pos (llama_hparams::n_pos_per_embd): 4 where the rope type is
// M-RoPE or IM-RoPE (llama-model.cpp llama_model_rope_type: Qwen2-VL, Qwen3-VL, Qwen3.5), else 1.
uint64_t positions_per_token(const std::string& arch);

// An op that writes into layer `il`'s cache (SET_ROWS or a CPY into a view of it, SCALE in place):
// it runs where the cache is (ggml_backend_sched_backend_id_from_cur, "1.vsrc").
inline int into_cache(Builder& b, size_t il, std::vector<int> parents) {
  const int w = b.g.write_out(std::move(parents));
  b.g.tensors[static_cast<size_t>(w)].cache_layer = static_cast<int>(il);
  b.mark(w, SchedOp::Other);
  return w;
}

// Whether residual_ffn covers layer `il`'s feed-forward (not: experts with one fused gate_up
// tensor, whose single MUL_MAT_ID is not transcribed).
bool ffn_covered(const Model& m, size_t il);

// The graph inputs an MLA cache adds (build_attn_inp_k): positions (-1: the model rotates
// nothing, as Kimi's MLA layers), the K cache's row indices, the f32 mask.
struct MlaInputs {
  int pos = -1, k_idx = -1, mask = -1;
};
// Absorbed multi-head latent attention, from the layer's normed input `h` to its output
// projection (engines/llamacpp_graph_deepseek2.cpp).
int mla_attention(Builder& b, size_t il, int h, const MlaInputs& inputs);
// Whether layer `il`'s MLA is one mla_attention covers (not: a sparse indexer, or the legacy
// unsplit attn_kv_b, which llama.cpp runs as plain multi-head attention).
bool mla_covered(const Model& m, size_t il);

// The graph of one architecture, or nullopt where a layer or setting is not covered.
std::optional<GgmlGraph> deepseek2_graph(const Model& m, const LlamaCppGraphInput& in);
std::optional<GgmlGraph> kimi_linear_graph(const Model& m, const LlamaCppGraphInput& in);
std::optional<GgmlGraph> qwen3next_graph(const Model& m, const LlamaCppGraphInput& in);
std::optional<GgmlGraph> gpt_oss_graph(const Model& m, const LlamaCppGraphInput& in);
std::optional<GgmlGraph> mamba2_graph(const Model& m, const LlamaCppGraphInput& in);
// Mamba layers mixed with attention layers and feed-forward blocks: granitehybrid, nemotron_h
// (Mamba-2), jamba (Mamba-1).
std::optional<GgmlGraph> mamba_hybrid_graph(const Model& m, const LlamaCppGraphInput& in);

// The shape of a GGUF tensor of block `il` ("attn_q_a.weight"); empty when the model was not read
// from a GGUF file or lacks it.
std::vector<uint64_t> block_tensor_shape(const Model& m, size_t il, const std::string& name);

}  // namespace llamacpp_graph_detail
}  // namespace vc
