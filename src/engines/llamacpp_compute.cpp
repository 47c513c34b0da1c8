#include "engines/llamacpp_compute.h"

#include <algorithm>
#include <optional>

#include "core/checked.h"
#include "engines/ggml_alloc_replay.h"
#include "engines/llamacpp_graph.h"

namespace vc {
namespace {

constexpr uint64_t kF32 = 4;
// The CPU buffer type's alignment (ggml-cpu TENSOR_ALIGNMENT): every placement is padded to it.
constexpr uint64_t kCpuAlignment = 32;
// int32 inputs per token (token id, position, output id, ...) and small per-token bookkeeping:
// 28 B in every reference run's constant term (tiny-llama: 9,244 B/token = 28 + 3 x 1,024 + 3 x 2,048).
constexpr uint64_t kInputBytesPerToken = 28;

uint64_t query_heads(const AttentionSpec& a, uint64_t hidden) {
  if (a.query_heads) return a.query_heads;
  // Not read from the source: hidden / head width, at least the KV heads.
  const uint64_t from_width = a.head_dim_k ? hidden / a.head_dim_k : 0;
  return std::max<uint64_t>({from_width, a.kv_heads, 1});
}

// Values per token the layer's mixer keeps alive at its peak, f32.
uint64_t mixer_values(const AttentionSpec& a, uint64_t hidden, bool flash_attn, bool gated_query) {
  const uint64_t heads = query_heads(a, hidden);
  switch (a.kind) {
    case AttentionKind::Full:
    case AttentionKind::SlidingWindow: {
      // Q, K and V projections; without flash attention the per-head output (before the output
      // projection) is a separate tensor too. A gated query projects query and output gate in
      // one tensor, 2 x heads x head width (llama.cpp src/models/qwen3next.cpp, qwen35.cpp:
      // Qcur_full, split by views).
      uint64_t v = (gated_query ? 2 : 1) * heads * a.head_dim_k + uint64_t{a.kv_heads} * (a.head_dim_k + a.head_dim_v);
      if (!flash_attn) v += heads * a.head_dim_v;
      return v;
    }
    case AttentionKind::Latent: {
      // Absorbed MLA: the query before absorption (heads x (nope + rope), the GGUF's
      // key_length_mla; 3 x rope when not read, DeepSeek V3's 192 = 3 x 64), the query and the
      // per-head output in the latent space (2 x heads x (kv_lora + rope)) and the compressed KV
      // row. Fitted on tiny-deepseek2 and tiny-kimi-linear (within 2% of their per-token term).
      const uint64_t row = uint64_t{a.latent_rank} + a.rope_dim;
      const uint64_t q_head = a.head_dim_k ? a.head_dim_k : 3 * uint64_t{a.rope_dim};
      return heads * q_head + 2 * heads * row + a.latent_rank;
    }
    case AttentionKind::LinearState: {
      // Short-convolution channels = conv_values / (kernel - 1); kernel 4 (3 kept taps) is the
      // rule for Mamba2, Gated DeltaNet and KDA. Alive at the peak: about 4.5 f32 copies of them
      // for Mamba2 / Gated DeltaNet (in-projection, convolution window and output, activation,
      // scan output; fitted on tiny-mamba2 and tiny-qwen3next), 2.5 for KDA, whose three
      // separate q/k/v convolutions are freed one by one (fitted on tiny-kimi-linear).
      const uint64_t channels = a.conv_values / 3;
      return a.state_family == StateFamily::KDA ? channels * 5 / 2 : channels * 9 / 2;
    }
    case AttentionKind::None: return 0;
  }
  return 0;
}

// Gated (LLM_FFN_PAR with a gate): gate, up and their product, 3 x the width (the down
// projection's output then reuses the freed gate). Not gated (build_ffn / build_moe_ffn with gate
// NULL: phi2, gpt2, starcoder2, nemotron_h's MLP and experts): up, its bias and activation applied
// in place (ADD, GELU, RELU and SQR on a tensor with one consumer), and the down projection's
// output (n_embd per token, n_used x n_embd for routed experts) laid while up is still read, as the
// gated rule's product is.
uint64_t ffn_values(const FeedForwardSpec& f, uint64_t hidden) {
  const uint64_t used = f.experts_per_token;
  switch (f.kind) {
    case FeedForwardKind::Dense: return f.gated ? checked_mul(3, f.dense_width) : checked_add(f.dense_width, hidden);
    case FeedForwardKind::MoE: {
      const uint64_t width = checked_add(checked_mul(used, f.expert_width), f.shared_width);
      if (f.gated) return checked_mul(3, width);
      return checked_add(width, checked_mul(used + (f.shared_width ? 1 : 0), hidden));
    }
    case FeedForwardKind::None: return 0;
  }
  return 0;
}

// With flash attention the feed-forward phase is the peak on most models, and what ggml-alloc packs
// there was read from its trace (ggml-alloc.c with GGML_ALLOCATOR_DEBUG, llama.cpp v0.4.0; see
// docs/engines.md). Alive in every layer: the f32 input-embedding tensor (n_embd x T, an input of
// the graph, allocated with the other inputs and never freed) and the residual (ffn_inp). Below
// them sit holes left by the first half of the layer: two hidden-sized slots in the first layer
// (the token-embedding rows and the norm or the attention output), one in a middle layer. The gate
// projection goes into that hole when it fits (best fit), else the gate, up and product are laid
// end to end. In the last layer the KQ mask is already freed, so it is never the peak. When
// llama.cpp rotates exactly one of the K and V caches (see one_cache_rotated), the first layer's
// hole is one slot, as in a middle layer (the trace of tiny-qwen3, tiny-qwen3moe, tiny-gpt-oss).
// nullopt: the general rule (below) holds for this layer; 0: this layer is not the peak.
std::optional<uint64_t> flash_ffn_values(const FeedForwardSpec& f, uint64_t hidden, size_t layer, size_t n_layers, bool one_rotated) {
  const bool middle = layer > 0 && layer + 1 < n_layers;
  const bool routed = f.kind == FeedForwardKind::MoE && f.shared_width == 0;
  if (f.kind != FeedForwardKind::Dense && !routed) return std::nullopt;  // shared experts, none
  if (!f.gated) return std::nullopt;  // the traces below were of gated models only
  const uint64_t used = routed ? f.experts_per_token : 1;
  const uint64_t w = routed ? used * f.expert_width : f.dense_width;
  // Routed experts no wider than n_embd all fit in the holes (the general rule holds then).
  if (routed && w <= hidden) return std::nullopt;
  if (layer != 0 && !middle) return 0;
  const uint64_t hole = (middle || one_rotated ? 1 : 2) * hidden;
  const uint64_t kept = 2 * hidden + hole;  // input embeddings + residual + the hole
  if (!routed || w > hole) return kept + 2 * w + (w > hole ? w : 0);
  // Routed experts (llm_graph_context::build_moe_ffn): gate, up and product are n_used x
  // expert_ff wide; the down projection's output is n_used x n_embd (one row per selected expert
  // before the weighted sum). When the gate fills the hole, the down output cannot reuse its slot
  // and lands after the product, with one more hidden-sized slot before it (first layer, read
  // from the trace of tiny-qwen3moe and tiny-gpt-oss).
  return kept + hidden + 2 * w + used * hidden;
}

// llama.cpp rotates a quantized K (V) cache with a Hadamard matrix when every layer's head has
// the same width and it is a multiple of 64 (llama-kv-cache.cpp: attn_rot_k / attn_rot_v), which
// adds graph nodes to every attention layer (llama_mul_mat_hadamard in llama-graph.cpp
// build_attn). The matrix, f32, is an input of the graph (build_input_k_rot / build_input_v_rot),
// one per cache (full and window caches each have theirs), alive all along. Its side: for K the
// largest power of two from 64 up that divides the head width, for V always 64.
struct Rotation {
  uint64_t k_side = 0, v_side = 0;  // side of the rotated cache's matrix, 0: not rotated
  uint64_t caches = 0;              // full-attention and window caches
  bool exactly_one() const { return (k_side != 0) != (v_side != 0); }
  uint64_t matrix_bytes() const { return checked_product({k_side * k_side + v_side * v_side, kF32, caches}); }
};

Rotation cache_rotation(const Model& model, const LlamaCppComputeInput& in) {
  Rotation r;
  bool full = false, window = false;
  uint64_t k_width = 0, v_width = 0;
  bool same_k = true, same_v = true;
  for (const auto& layer : model.layers) {
    const AttentionSpec& a = layer.attention;
    if (a.kind != AttentionKind::Full && a.kind != AttentionKind::SlidingWindow) continue;
    (a.kind == AttentionKind::Full ? full : window) = true;
    same_k = same_k && (k_width == 0 || k_width == a.head_dim_k);
    same_v = same_v && (v_width == 0 || v_width == a.head_dim_v);
    k_width = a.head_dim_k;
    v_width = a.head_dim_v;
  }
  if (in.k_quantized && same_k && k_width && k_width % 64 == 0) {
    r.k_side = 64;
    while (k_width % (2 * r.k_side) == 0) r.k_side *= 2;
  }
  if (in.v_quantized && same_v && v_width && v_width % 64 == 0) r.v_side = 64;
  r.caches = (full ? 1 : 0) + (window ? 1 : 0);
  return r;
}

}  // namespace

LlamaCppGraphInput llamacpp_graph_input(const Model& model, const LlamaCppComputeInput& in) {
  // llama_context: n_batch = min(n_ctx as asked, n_batch) for causal models, n_ubatch =
  // min(n_batch, n_ubatch); sched_reserve reserves min(n_ctx, n_ubatch) tokens over n_seq_max
  // sequences, and graph_reserve rounds that up to a multiple of the sequences.
  const uint64_t batch = std::min(in.n_ctx, in.n_batch);
  const uint64_t seqs = std::max<uint64_t>(1, in.n_seq);
  const uint64_t outputs = std::min({batch, in.n_ubatch, in.n_ctx_padded});  // not rounded: n_outputs
  const Rotation rotation = cache_rotation(model, in);
  return {ceil_div(outputs, seqs) * seqs, seqs, outputs, in.kv_cells, in.swa_cells, in.flash_attn, in.kv_unified, rotation.k_side, rotation.v_side};
}

LlamaCppCompute llamacpp_compute(const Model& model, const LlamaCppComputeInput& in) {
  LlamaCppCompute c;
  const LlamaCppGraphInput graph_input = llamacpp_graph_input(model, in);
  c.tokens = graph_input.tokens;
  const Rotation rotation = cache_rotation(model, in);

  // Where the graph is transcribed (llamacpp_graph.h), replay ggml-alloc over it: exact where the
  // transcription is, holes included.
  if (auto graph = llamacpp_graph(model, graph_input)) {
    c.graph_tensors = graph->tensors.size();
    c.bytes = c.phase_bytes = ggml_alloc_peak(*graph, kCpuAlignment);
    c.phase = "ggml-alloc replay";
    return c;
  }

  const uint64_t residual = checked_mul(3, model.hidden);  // residual stream, normed input, sublayer output

  // Per-token working sets (f32 values) of the phases; the attention phase is kept apart because
  // without flash attention the KQ scores are alive with it.
  uint64_t attention = 0, other = checked_add(residual, model.vocab);  // output head: logits for every token
  std::string other_phase = "output logits";
  uint64_t max_heads = 0, attention_excess = 0, latent_rank = 0;
  for (const auto& layer : model.layers) {
    const AttentionSpec& a = layer.attention;
    if (a.kind != AttentionKind::Full && a.kind != AttentionKind::SlidingWindow) continue;
    const uint64_t width = query_heads(a, model.hidden) * a.head_dim_v;
    if (width > model.hidden) attention_excess = std::max(attention_excess, width - model.hidden);
  }
  // Qwen3-Next and Qwen3.5, the models whose linear layers are Gated DeltaNet, gate their full
  // attention's output with a second half of the query projection.
  const bool gated_query = std::any_of(model.layers.begin(), model.layers.end(), [](const LayerConfig& l) {
    return l.attention.kind == AttentionKind::LinearState && l.attention.state_family == StateFamily::GatedDeltaNet;
  });
  const bool one_rotated = rotation.exactly_one();
  bool has_full = false, has_window = false;
  for (size_t il = 0; il < model.layers.size(); ++il) {
    const LayerConfig& layer = model.layers[il];
    for (const AttentionSpec* a : {&layer.attention, layer.parallel_mixer ? &*layer.parallel_mixer : nullptr}) {
      if (!a) continue;
      const uint64_t v = checked_add(residual, mixer_values(*a, model.hidden, in.flash_attn, gated_query));
      if (a->kind == AttentionKind::LinearState) {
        if (v > other) {
          other = v;
          other_phase = "recurrent mixer";
        }
        continue;
      }
      attention = std::max(attention, v);
      if (a->kind == AttentionKind::Latent) latent_rank = std::max<uint64_t>(latent_rank, a->latent_rank);
      if (a->kind == AttentionKind::Full || a->kind == AttentionKind::Latent) {
        has_full = true;
        max_heads = std::max(max_heads, query_heads(*a, model.hidden));
      }
      if (a->kind == AttentionKind::SlidingWindow) has_window = true;
    }
    // When the attention width (heads x value head) exceeds the hidden size, ggml-alloc keeps the
    // excess as a hole it cannot reuse for the feed-forward tensors (tiny-qwen3: 1,664 values per
    // token where 3 x 128 + 3 x 384 = 1,536; 4 x 64 - 128 = 128 more).
    const std::optional<uint64_t> flash =
        in.flash_attn ? flash_ffn_values(layer.feed_forward, model.hidden, il, model.layers.size(), one_rotated) : std::nullopt;
    const uint64_t f = flash ? *flash : checked_add(checked_add(residual, ffn_values(layer.feed_forward, model.hidden)), attention_excess);
    if (f > other) {
      other = f;
      other_phase = "feed-forward";
    }
  }

  // The KQ mask: one per cache (full, window), n_kv cells x tokens; f16 with flash attention,
  // f32 without. Without flash attention one layer's f32 scores (heads x n_kv x tokens) are alive
  // while its softmax runs. The reservation uses the whole cache as n_kv.
  const uint64_t mask_elem = in.flash_attn ? 2 : 4;
  if (has_full) c.mask_bytes = checked_product({in.kv_cells, c.tokens, mask_elem});
  if (has_window) c.mask_bytes = checked_add(c.mask_bytes, checked_product({in.swa_cells, c.tokens, mask_elem}));
  if (!in.flash_attn && has_full) c.scores_bytes = checked_product({in.kv_cells, c.tokens, max_heads, kF32});

  // MLA without flash attention multiplies the scores by the latent V of every cell, made
  // contiguous as f16 first: kv_lora x 2 B per cell, whatever the ubatch (llama-graph.cpp
  // build_attn_mha, the ggml_cont of the transposed V view).
  if (!in.flash_attn && latent_rank) c.latent_bytes = checked_product({in.kv_cells, latent_rank, 2});
  const uint64_t attention_bytes = checked_add(checked_add(checked_product({attention, kF32, c.tokens}), c.scores_bytes), c.latent_bytes);
  const uint64_t other_bytes = checked_product({other, kF32, c.tokens});
  c.phase_bytes = std::max(attention_bytes, other_bytes);
  c.phase = attention_bytes >= other_bytes ? (c.scores_bytes ? "attention with KQ scores" : "attention") : other_phase;
  // The rotation matrices are graph inputs alive all along, like the masks: counted with them.
  c.mask_bytes = checked_add(c.mask_bytes, rotation.matrix_bytes());
  c.bytes = checked_add(c.mask_bytes, checked_add(c.phase_bytes, checked_mul(kInputBytesPerToken, c.tokens)));
  return c;
}

}  // namespace vc
