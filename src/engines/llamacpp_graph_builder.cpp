#include "engines/llamacpp_graph_builder.h"

#include <cctype>
#include <vector>

#include "model/quant.h"

namespace vc::llamacpp_graph_detail {

std::vector<uint64_t> block_tensor_shape(const Model& m, size_t il, const std::string& name) {
  const std::string full = "blk." + std::to_string(il) + "." + name;
  for (const NamedTensor& t : m.tensors)
    if (t.name == full) return t.ne;
  return {};
}

uint64_t cache_row_bytes(const std::string& type, uint64_t values) {
  const QuantFormat* f = QuantTable::builtin().find_type(type);
  return f ? f->row_bytes(values) : checked_mul(values, kF16);
}

int Builder::cache_view(size_t il, const std::string& type, uint64_t row_values, uint64_t cells) {
  const uint64_t streams = in_.kv_unified ? 1 : in_.seqs;
  return g.cache_view(static_cast<int>(il), checked_product({cache_row_bytes(type, row_values), cells, streams}));
}

int Builder::attend(size_t il, int q, int k, int v, const KvInputs& c, uint64_t cells, bool v_strided,
                    const std::function<void()>& after_writes) {
  const AttentionSpec& a = m_.layers[il].attention;
  const uint64_t heads = a.query_heads;
  const uint64_t k_width = uint64_t{a.kv_heads} * a.head_dim_k, v_width = uint64_t{a.kv_heads} * a.head_dim_v;
  into_cache(*this, il, {g.view(k), c.k_idx});
  const int qp = g.view(g.view(q));  // build_attn_mha: Q split into streams, heads permuted
  const int k_cache = cache_view(il, in_.type_k, k_width, cells);
  if (in_.flash_attn) {
    into_cache(*this, il, {g.view(v), c.v_idx});  // one row per token
    if (after_writes) after_writes();
    // FLASH_ATTN_EXT reads Q, the cache's K and V views and the mask; it writes the f32 output
    // of every head, reshaped (a view) to [heads x head width, tokens] for the projection.
    const int v_cache = cache_view(il, in_.type_v, v_width, cells);
    const int fa = g.node(rows(heads * a.head_dim_v), {qp, k_cache, v_cache, c.mask});
    mark(fa, SchedOp::FlashAttn, heads);
    g.tensors[static_cast<size_t>(fa)].gpu_unsupported = !cuda_has_flash_attn_kernel(a.head_dim_k, a.head_dim_v, in_.type_k, in_.type_v);
    cuda_flash_attn_bytes(fa, k_width, v_width, cells, false);
    return g.view(fa);
  }
  if (v_strided) v = cont(v, v_width);
  into_cache(*this, il, {g.view(g.view(v)), c.v_idx});  // into the transposed V cache
  if (after_writes) after_writes();
  // KQ, then SOFT_MAX in place (soft-capping, where a model has it, is SCALE, TANH, SCALE in
  // place before it: no new tensor).
  const int kq = g.node(checked_product({cells, T_, heads, kF32}), {k_cache, qp});
  const int sm = g.node(bytes(kq), {kq, c.mask}, kq);
  const int v_cache = cache_view(il, in_.type_v, v_width, cells);
  const int kqv = g.node(rows(heads * a.head_dim_v), {v_cache, sm});
  return g.node(bytes(kqv), {g.view(kqv)});  // CONT of the permuted heads
}

// ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alloc_size asks fattn.cu
// ggml_cuda_flash_attn_ext_get_alloc_size for a FLASH_ATTN_EXT node: its output, then (each at
// 128 B) an F16 copy of every K value when K is not F16 and of every V value when V is not F16
// (none when V is a view of K's rows), which the MMA and tile kernels read. The vector kernel,
// which reads quantized K and V directly, is chosen only for one or two tokens per stream.
void Builder::cuda_flash_attn_bytes(int fa, uint64_t k_values, uint64_t v_values, uint64_t cells, bool v_in_k) {
  const uint64_t streams = in_.kv_unified ? 1 : in_.seqs;
  if (T_ / streams <= 2) return;
  auto converted = [](const std::string& type) {
    std::string t = type;
    for (auto& ch : t) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return t != "F16";
  };
  constexpr uint64_t kCudaAlignment = 128;
  auto pad = [](uint64_t b) { return checked_mul(ceil_div(b, kCudaAlignment), kCudaAlignment); };
  uint64_t end = bytes(fa);
  if (converted(in_.type_k)) end = checked_add(pad(end), checked_product({k_values, cells, streams, kF16}));
  if (converted(in_.type_v) && !v_in_k) end = checked_add(pad(end), checked_product({v_values, cells, streams, kF16}));
  if (end != bytes(fa)) g.tensors[static_cast<size_t>(fa)].gpu_bytes = end;
}

// llm_graph_context::build_moe_ffn (llama-graph.cpp) with separate gate and up experts and a
// SiLU-gated product, in the order its nodes run: router logits, their softmax or sigmoid (in
// place), the top-k argsort, the chosen weights (GET_ROWS), optional normalising and scaling,
// then the chosen experts' gate and up (MUL_MAT_ID, n_used rows per token), their product, the
// down projection (n_used x n_embd per token), weighted in place, and the sum of its n_used views.
int Builder::moe_ffn(const FeedForwardSpec& f, int x, const MoeRouting& routing, size_t il,
                     const std::function<void()>& after_experts) {
  const uint64_t used = f.experts_per_token;
  const bool annotate = il != SIZE_MAX;
  // The router's logits and, in place, their softmax or sigmoid (gpt-oss: its router bias).
  const int router = matmul(f.experts, x);
  if (annotate) reads(router, {blk(il, "ffn_gate_inp.weight")}, SchedOp::MulMat);
  // Llama 4 chooses on the logits themselves, so their sigmoid has a sibling consumer and writes
  // a new tensor.
  const int probs = routing.choose_on_logits ? g.node(bytes(router), {router}) : unary(router);
  if (annotate) reads(probs, {blk(il, "ffn_gate_inp.bias", false)});  // gpt-oss: the router's bias
  // The selection bias is an ADD over probs, which has a second consumer: never in place.
  const int select = routing.selection_bias ? g.node(bytes(probs), {probs}, probs) : routing.choose_on_logits ? router : probs;
  if (annotate && routing.selection_bias) reads(select, {blk(il, "exp_probs_b.bias")});
  const int top_k = g.view(g.node(rows(f.experts), {select}));  // ARGSORT (i32), its first n_used
  int weights = g.node(checked_product({used, T_, kF32}), {g.view(probs), top_k});
  if (routing.softmax_chosen) weights = g.view(g.node(bytes(weights), {g.view(weights)}));
  if (routing.normalize) {
    const int flat = g.view(weights);
    const int sum = unary(g.node(checked_mul(T_, kF32), {flat}));  // SUM_ROWS, CLAMP in place
    weights = g.view(g.node(bytes(weights), {flat, sum}));         // DIV, reshaped back
  }
  if (routing.scale) weights = g.node(checked_product({used, T_, kF32}), {weights}, weights);
  int input = g.view(x);  // [n_embd, 1, tokens]
  if (routing.weight_before_ffn) {
    const int repeated = g.node(checked_product({m_.hidden, used, T_, kF32}), {input});
    input = g.node(bytes(repeated), {repeated, weights}, repeated);
  }
  const uint64_t width = checked_mul(used, f.expert_width);
  auto experts_matmul = [&](uint64_t w, int in, const char* name) {
    const int out = g.node(rows(w), {in, top_k});  // MUL_MAT_ID
    if (annotate) reads(out, {blk(il, std::string(name) + ".weight")}, SchedOp::MulMatId);
    if (!routing.expert_biases) return out;
    // ADD_ID of the chosen experts' biases: ggml_nrows, n_used rows per token.
    const int biased = g.node(rows(w), {out, top_k}, out);
    if (annotate) reads(biased, {blk(il, std::string(name) + ".bias")}, SchedOp::Other, used);
    return biased;
  };
  const int gate = experts_matmul(width, input, "ffn_gate_exps");
  const int up = experts_matmul(width, input, "ffn_up_exps");
  const int down = experts_matmul(checked_mul(used, m_.hidden), glu(width, gate, up), "ffn_down_exps");
  const int weighted = routing.weight_before_ffn ? down : g.node(bytes(down), {down, weights}, down);
  std::vector<int> experts;
  for (uint64_t i = 0; i < used; ++i) experts.push_back(g.view(weighted));
  if (after_experts) after_experts();
  if (used == 1) return g.node(rows(m_.hidden), {experts[0]});  // CONT
  int out = g.node(rows(m_.hidden), {experts[0], experts[1]});
  for (uint64_t i = 2; i < used; ++i) out = g.node(bytes(out), {out, experts[i]}, out);
  return out;
}

uint64_t positions_per_token(const std::string& arch) {
  for (const char* sectioned : {"qwen2vl", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe"})
    if (arch == sectioned) return 4;
  return 1;
}

bool ffn_covered(const Model& m, size_t il) {
  const FeedForwardSpec& f = m.layers[il].feed_forward;
  if (!f.gated) return false;  // dense_ffn and moe_ffn build a gate; a non-gated MLP has none
  if (f.kind == FeedForwardKind::Dense) return f.dense_width != 0;
  return f.kind == FeedForwardKind::MoE && f.experts && f.experts_per_token && f.expert_width &&
         block_tensor_shape(m, il, "ffn_gate_up_exps.weight").empty();
}

int Builder::residual_ffn(size_t il, int att, int x, int out_ids, const MoeRouting& routing,
                          const std::function<void()>& after_expansions) {
  int residual = x;
  if (il + 1 == m_.layers.size()) {
    keep_outputs();
    att = get_rows(m_.hidden, att, out_ids);
    residual = get_rows(m_.hidden, x, out_ids);
  }
  const int ffn_in = add(att, residual);
  const int f = norm(ffn_in);
  reads(f, {blk(il, "ffn_norm.weight")});
  const FeedForwardSpec& ff = m_.layers[il].feed_forward;
  int out = -1;
  if (ff.kind == FeedForwardKind::Dense) {
    out = dense_ffn(ff.dense_width, f, il, "", after_expansions);
  } else if (ff.shared_width) {
    out = moe_ffn(ff, f, routing, il);
    out = add(out, dense_ffn(ff.shared_width, f, il, "_shexp", after_expansions));
  } else {
    out = moe_ffn(ff, f, routing, il, after_expansions);
  }
  return add(out, ffn_in);
}

}  // namespace vc::llamacpp_graph_detail
