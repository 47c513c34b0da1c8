// Kimi Linear and Kimi K3 (model_type kimi_linear inside kimi_k3's text_config): Kimi Delta
// Attention layers with a fixed recurrent state, MLA layers listed in
// linear_attn_config.full_attn_layers (1-indexed), a latent MoE with shared experts.
// Formulas: reference/architectures.md sections 3, 5 and 8; llama.cpp src/models/kimi-k3.cpp and
// conversion/kimi_k3.py; vLLM vllm/model_executor/models/kimi_linear.py.
#include <fmt/format.h>

#include <set>

#include "core/checked.h"
#include "model/param_tally.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_kimi_linear(ConfigView& cfg) {
  Model& m = cfg.model();
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const uint64_t hidden = cfg.u64("hidden_size", limits::kHidden);
  const uint64_t vocab = cfg.u64("vocab_size", limits::kVocab);
  const uint64_t heads = cfg.u64("num_attention_heads", limits::kHeads);
  m.hidden = hidden;
  m.vocab = vocab;
  m.tied_embeddings = cfg.flag("tie_word_embeddings", false);

  // MLA geometry (the full-attention layers).
  const uint64_t kv_lora = cfg.u64("kv_lora_rank", limits::kHeadDim);
  const uint64_t q_lora = cfg.opt_u64("q_lora_rank", limits::kHidden).value_or(0);
  const uint64_t rope = cfg.u64("qk_rope_head_dim", limits::kHeadDim);
  const uint64_t nope = cfg.u64("qk_nope_head_dim", limits::kHeadDim);
  const uint64_t v_dim = cfg.u64("v_head_dim", limits::kHeadDim);
  const bool output_gate = cfg.flag("mla_use_output_gate", false);
  // Sparse attention index keys (DeepSeek-V3.2 style keys), present on K3.1 Pro's assumed config.
  const uint64_t index_dim = cfg.opt_u64("index_head_dim", limits::kHeadDim).value_or(0);
  const uint64_t index_topk = cfg.opt_u64("index_topk", limits::kWindow).value_or(0);
  const uint64_t index_heads = cfg.opt_u64("index_n_heads", limits::kHeads).value_or(0);

  // KDA geometry.
  const nlohmann::json* lin = cfg.object("linear_attn_config");
  if (!lin) cfg.fail("linear_attn_config", "missing; Kimi Linear configs list their KDA and MLA layers there");
  const std::string lpath = "linear_attn_config";
  const uint64_t kda_heads = cfg.u64_in(*lin, lpath, "num_heads", limits::kHeads);
  const uint64_t kda_dim = cfg.u64_in(*lin, lpath, "head_dim", limits::kStateDim);
  const uint64_t kernel = cfg.u64_in_or(*lin, lpath, "short_conv_kernel_size", 4, 64, "Kimi Linear default");
  const bool full_rank_gate = lin->value("use_full_rank_gate", false);
  std::set<uint64_t> full_layers;
  if (lin->contains("full_attn_layers")) {
    for (uint64_t l : cfg.u64_list((*lin)["full_attn_layers"], lpath + ".full_attn_layers", limits::kLayers, limits::kLayers)) {
      if (l == 0 || l > layers) cfg.fail(lpath + ".full_attn_layers", fmt::format("lists layer {}; layers are numbered 1 to {}", l, layers));
      full_layers.insert(l - 1);  // 1-indexed in the config
    }
  }

  // MoE geometry.
  const uint64_t experts = cfg.u64("num_experts", limits::kExperts);
  const uint64_t top_k = cfg.has("num_experts_per_token") ? cfg.u64("num_experts_per_token", limits::kExperts)
                                                           : cfg.u64("num_experts_per_tok", limits::kExperts);
  if (top_k > experts) cfg.fail("num_experts_per_token", fmt::format("is {} but there are only {} experts", top_k, experts));
  const uint64_t expert_width = cfg.u64("moe_intermediate_size", limits::kWidth);
  const uint64_t shared = cfg.opt_u64("num_shared_experts", 64).value_or(0);
  const uint64_t dense_width = cfg.u64("intermediate_size", limits::kWidth);
  const uint64_t first_dense = cfg.opt_u64("first_k_dense_replace", limits::kLayers).value_or(0);
  // Latent MoE (K3): routed experts work in a narrower hidden size behind a down/up projection.
  const uint64_t expert_hidden = cfg.opt_u64("routed_expert_hidden_size", limits::kHidden).value_or(hidden);

  ParamTally tally;
  tally.add(ParamClass::Embedding, checked_mul(vocab, hidden), 0);
  if (!m.tied_embeddings) tally.add_always_active(ParamClass::OutputHead, checked_mul(vocab, hidden));
  tally.add_always_active(ParamClass::Norms, hidden);  // final norm

  const uint64_t kda_width = checked_mul(kda_heads, kda_dim);
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    AttentionSpec& a = layer.attention;
    if (full_layers.count(il)) {
      a = latent_attention(heads, q_lora, kv_lora, nope, rope, v_dim);
      a.index_key_dim = static_cast<uint32_t>(index_dim);
      a.index_topk = static_cast<uint32_t>(index_topk);
      uint64_t p = mla_params(hidden, heads, q_lora, kv_lora, nope, rope, v_dim);
      if (output_gate) p = checked_add(p, checked_product({hidden, heads, v_dim}));
      if (index_dim && index_heads) {  // indexer: wq_b, wk, k_norm, weights_proj
        p = checked_add(p, checked_product({q_lora ? q_lora : hidden, index_heads, index_dim}));
        p = checked_add(p, checked_add(checked_mul(hidden, index_dim), 2 * index_dim));
        p = checked_add(p, checked_mul(hidden, index_heads));
      }
      tally.add_always_active(ParamClass::Attention, p);
    } else {
      a.kind = AttentionKind::LinearState;
      a.state_family = StateFamily::KDA;
      a.state_values = checked_mul(kda_width, kda_dim);             // one head_dim x head_dim matrix per head
      a.conv_values = checked_product({3, kernel - 1, kda_width});  // short conv of q, k and v
      // q, k, v, o projections; forget gate (full rank or low rank); output gate (low rank);
      // beta projection; q/k/v conv weights; A_log, dt_bias, output norm.
      uint64_t p = checked_product({4, hidden, kda_width});
      uint64_t low_rank = checked_add(checked_mul(hidden, kda_dim), checked_mul(kda_dim, kda_width));
      p = checked_add(p, full_rank_gate ? checked_mul(hidden, kda_width) : low_rank);
      p = checked_add(p, low_rank);
      p = checked_add(p, checked_mul(hidden, kda_heads));
      p = checked_add(p, checked_product({3, kda_width, kernel}));
      p = checked_add(p, kda_heads + kda_width + kda_dim);
      tally.add_always_active(ParamClass::Attention, p);
    }
    tally.add_always_active(ParamClass::Norms, 2 * hidden);

    FeedForwardSpec& f = layer.feed_forward;
    if (il < first_dense) {
      f.kind = FeedForwardKind::Dense;
      f.dense_width = dense_width;
      tally.add_always_active(ParamClass::DenseMlp, glu_params(hidden, dense_width));
    } else {
      f.kind = FeedForwardKind::MoE;
      f.experts = static_cast<uint32_t>(experts);
      f.experts_per_token = static_cast<uint32_t>(top_k);
      f.expert_width = expert_width;
      f.shared_width = shared * expert_width;
      const uint64_t one_expert = glu_params(expert_hidden, expert_width);
      tally.add(ParamClass::RoutedExperts, checked_mul(experts, one_expert), checked_mul(top_k, one_expert));
      if (shared) tally.add_always_active(ParamClass::SharedExperts, glu_params(hidden, shared * expert_width));
      tally.add_always_active(ParamClass::Router, checked_mul(experts, hidden) + experts);  // + score bias
      // Latent MoE down/up projections and norm: the always-active part of every MoE block, in bf16
      // like the shared experts, so they are placed and read with them (not with layer 0's dense MLP).
      if (expert_hidden != hidden) {
        tally.add_always_active(ParamClass::SharedExperts, checked_product({2, hidden, expert_hidden}) + expert_hidden);
      }
    }
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (Kimi Linear mapper)");
}

}  // namespace vc::families
