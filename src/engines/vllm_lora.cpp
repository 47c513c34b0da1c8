#include "engines/vllm_lora.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"

namespace vc {
namespace {

// Values of A and B per unit of rank, one slot, for one layer on one rank: the shapes in the header.
struct LayerValues {
  uint64_t attention = 0, mlp = 0;
  bool latent = false;                // MLA projections counted
  bool latent_unknown = false;        // MLA whose projection widths were not read (a GGUF's)
  bool recurrent = false;             // a recurrent mixer (or a hybrid-head layer's), not counted
  bool indexer = false;               // a DSA indexer (wq_b), not counted
};

LayerValues layer_values(const Model& m, const LayerConfig& l, uint64_t tp) {
  LayerValues v;
  const uint64_t h = m.hidden;
  const AttentionSpec& a = l.attention;
  if ((a.kind == AttentionKind::Full || a.kind == AttentionKind::SlidingWindow) && a.query_heads > 0) {
    const AttentionLoraValues av = attention_lora_values(h, a, tp);
    v.attention = av.qkv + av.o;
  } else if (a.kind == AttentionKind::Latent) {
    v.attention = latent_attention_lora_values(h, a, tp);
    v.latent = v.attention > 0;
    v.latent_unknown = v.attention == 0;
    v.indexer = a.index_key_dim > 0;
  } else if (a.kind != AttentionKind::None) {
    v.recurrent = true;
  }
  if (l.parallel_mixer && l.parallel_mixer->kind == AttentionKind::LinearState) v.recurrent = true;
  auto gated = [&](uint64_t width) { return gated_mlp_lora_values(h, width, tp).total(); };
  const FeedForwardSpec& f = l.feed_forward;
  if (f.kind == FeedForwardKind::Dense) v.mlp = gated(f.dense_width);
  if (f.kind == FeedForwardKind::MoE) {
    v.mlp = checked_add(checked_mul(f.experts, gated(f.expert_width)), h + f.experts);  // experts + router
    if (f.shared_width) v.mlp = checked_add(v.mlp, gated(f.shared_width));
  }
  return v;
}

// The heads of one kind a rank holds: its share, or one replicated head when there are fewer
// heads than ranks (vLLM's QKVParallelLinear, SGLang's _column_parallel_lora_b_per_rank_dim).
uint64_t heads_on_rank(uint64_t heads, uint64_t tp) { return heads >= tp ? heads / tp : 1; }

}  // namespace

AttentionLoraValues attention_lora_values(uint64_t hidden, const AttentionSpec& a, uint64_t tp) {
  const uint64_t q = heads_on_rank(a.query_heads, tp), kv = heads_on_rank(a.kv_heads, tp);
  return {3 * hidden + q * a.head_dim_k + kv * (a.head_dim_k + a.head_dim_v), q * a.head_dim_v + hidden};
}

uint64_t latent_attention_lora_values(uint64_t hidden, const AttentionSpec& a, uint64_t tp) {
  if (a.kind != AttentionKind::Latent || !a.query_heads || !a.nope_dim || !a.value_dim || !a.latent_rank) return 0;
  const uint64_t heads = a.query_heads / tp, kv_lora = a.latent_rank, rope = a.rope_dim, qk = uint64_t{a.nope_dim} + rope;
  uint64_t values = 0;
  if (a.query_rank) {
    values = checked_add(values, 2 * hidden + a.query_rank + kv_lora + rope);  // fused_qkv_a_proj: q_a_proj + kv_a_proj_with_mqa
    values = checked_add(values, a.query_rank + checked_mul(heads, qk));      // q_b_proj
  } else {
    values = checked_add(values, hidden + kv_lora + rope);                    // kv_a_proj_with_mqa
    values = checked_add(values, hidden + checked_mul(heads, qk));            // q_proj
  }
  values = checked_add(values, kv_lora + checked_mul(heads, uint64_t{a.nope_dim} + a.value_dim));  // kv_b_proj
  return checked_add(values, checked_mul(heads, a.value_dim) + hidden);                           // o_proj
}

MlpLoraValues gated_mlp_lora_values(uint64_t hidden, uint64_t width, uint64_t tp) { return {2 * hidden + 2 * (width / tp), width / tp + hidden}; }

uint64_t parse_max_lora_rank(const std::string& text, const std::string& flag) {
  static constexpr std::array<uint64_t, 9> kRanks = {1, 8, 16, 32, 64, 128, 256, 320, 512};
  const uint64_t rank = parse_count(text, flag, 1, 512);
  if (std::find(kRanks.begin(), kRanks.end(), rank) == kRanks.end())
    throw InputError(flag, fmt::format("{} is not a rank vLLM accepts; accepted: 1, 8, 16, 32, 64, 128, 256, 320, 512", rank));
  return rank;
}

uint64_t parse_max_loras(const std::string& text, const std::string& flag) { return parse_count(text, flag, 1, 1024); }

LoraSlots vllm_lora_slots(const Model& model, const LoraSlotSettings& s, uint64_t tp, uint64_t pp, uint64_t value_bytes) {
  LoraSlots out;
  if (s.max_loras == 0) return out;
  const uint64_t layers = ceil_div(model.layers.size(), pp);
  uint64_t attention = 0, mlp = 0, latent = 0, latent_unknown = 0, recurrent = 0, indexer = 0;
  for (uint64_t i = 0; i < layers && i < model.layers.size(); ++i) {
    const LayerValues v = layer_values(model, model.layers[i], tp);
    attention = checked_add(attention, v.attention);
    mlp = checked_add(mlp, v.mlp);
    latent += v.latent ? 1 : 0;
    latent_unknown += v.latent_unknown ? 1 : 0;
    recurrent += v.recurrent ? 1 : 0;
    indexer += v.indexer ? 1 : 0;
  }
  const uint64_t per_rank_unit = checked_add(attention, mlp);
  out.bytes = checked_product({s.max_loras, s.max_lora_rank, per_rank_unit, value_bytes});
  out.formula = fmt::format("max_loras {} x max_lora_rank {} x ({} attention + {} MLP values per unit of rank over {} layers on this rank) x {} B = {} B",
                            s.max_loras, s.max_lora_rank, format_count(attention), format_count(mlp), layers, value_bytes, format_count(out.bytes));
  out.assumption = "every linear module of the decoder wrapped (no --lora-target-modules), A and B not sharded (no --fully-sharded-loras), "
                   "at the model's dtype (--lora-dtype auto); embed_tokens / lm_head slots (models that list them) not counted";
  if (latent)
    out.assumption += fmt::format("; the {} latent (MLA) layers' fused_qkv_a_proj (or q_proj and kv_a_proj_with_mqa), q_b_proj, kv_b_proj and o_proj counted "
                                  "as vLLM wraps them (deepseek_v2.py DeepseekV2MLAAttention)", latent);
  if (latent_unknown) out.assumption += fmt::format("; the attention of {} latent (MLA) layers not counted: their projection widths were not read", latent_unknown);
  if (indexer) out.assumption += fmt::format("; the sparse-attention indexer's wq_b of {} layers not counted (vLLM wraps it too)", indexer);
  if (recurrent)
    out.assumption += fmt::format("; the recurrent mixers' projections of {} layers (Gated DeltaNet, KDA or Mamba in_proj / out_proj) not counted, "
                                  "though vLLM wraps every linear module: the figure is low by them", recurrent);
  return out;
}

}  // namespace vc
