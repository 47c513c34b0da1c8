// DeepSeek-V2 / V2-Lite, DeepSeek-V3 / R1, Kimi K2 and the sparse-attention descendants (model_type
// deepseek_v2, deepseek_v3, kimi_k2, deepseek_v32, glm_moe_dsa). V2-Lite has no query compression
// (q_lora_rank null: a plain q_proj) and routes greedily (no e_score_correction_bias). Every layer
// is multi-head latent attention caching one vector of kv_lora_rank + qk_rope_head_dim values (576), not num_key_value_heads per-head K/V. V3.2 and
// GLM-5 add a lightning indexer on every layer: one more key of index_head_dim values per token.
// GLM-5.2 and 5.3 keep it only on the layers indexer_types calls "full" (21 of 78); a "shared"
// layer reuses the previous full layer's top-k and has neither indexer weights nor cached index
// keys (llama.cpp src/models/glm-dsa.cpp GLM_5_2_DEFAULT_INDEXER_TYPES and is_indexer_full).
// The first first_k_dense_replace layers are dense; the rest carry n_routed_experts plus
// n_shared_experts of moe_intermediate_size each. num_nextn_predict_layers MTP layers ship in the
// checkpoint but are not in the decoding stack: counted as Mtp, not as layers.
// Formulas: reference/architectures.md sections 3, 4 and 8.
#include <fmt/format.h>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_deepseek(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const uint64_t heads = cfg.u64("num_attention_heads", limits::kHeads);
  const uint64_t kv_lora = cfg.u64("kv_lora_rank", limits::kHeadDim);
  const uint64_t q_lora = cfg.opt_u64("q_lora_rank", limits::kHidden).value_or(0);
  const uint64_t rope = cfg.u64("qk_rope_head_dim", limits::kHeadDim);
  const uint64_t nope = cfg.u64("qk_nope_head_dim", limits::kHeadDim);
  const uint64_t v_dim = cfg.u64("v_head_dim", limits::kHeadDim);
  const uint64_t index_dim = cfg.opt_u64("index_head_dim", limits::kHeadDim).value_or(0);
  const uint64_t index_heads = index_dim ? cfg.u64("index_n_heads", limits::kHeads) : 0;
  const uint64_t index_topk = index_dim ? cfg.u64("index_topk", UINT32_MAX) : 0;

  const uint64_t dense_width = cfg.u64("intermediate_size", limits::kWidth);
  const uint64_t first_dense = cfg.opt_u64("first_k_dense_replace", limits::kLayers).value_or(0);
  const uint64_t freq = cfg.u64_or("moe_layer_freq", 1, limits::kLayers, "DeepSeek default: every layer after the dense ones");
  MoeGeometry moe;
  moe.experts = cfg.u64("n_routed_experts", limits::kExperts);
  moe.top_k = cfg.u64("num_experts_per_tok", limits::kExperts);
  moe.expert_width = cfg.u64("moe_intermediate_size", limits::kWidth);
  moe.shared_width = checked_mul(cfg.opt_u64("n_shared_experts", 64).value_or(0), moe.expert_width);
  check_moe(cfg, moe, "num_experts_per_tok");
  // noaux_tc routing (V3 onwards) adds e_score_correction_bias, one value per expert.
  const bool router_bias = cfg.str("topk_method", "noaux_tc") == "noaux_tc";

  const uint64_t mla = mla_params(hidden, heads, q_lora, kv_lora, nope, rope, v_dim);
  uint64_t indexer = 0;
  if (index_dim) {  // indexer: wq_b, wk, k_norm (weight and bias), weights_proj
    indexer = checked_product({q_lora ? q_lora : hidden, index_heads, index_dim});
    indexer = checked_add(indexer, checked_add(checked_mul(hidden, index_dim), 2 * index_dim));
    indexer = checked_add(indexer, checked_mul(hidden, index_heads));
  }
  std::vector<bool> own_indexer(layers, index_dim != 0);
  if (index_dim && cfg.has("indexer_types")) {
    const auto types = read_layer_types(cfg, layers, {"full", "shared"}, "indexer_types");
    for (uint64_t il = 0; il < layers; ++il) own_indexer[il] = types[il] == "full";
  }
  // MTP layers (numbered after the stack) keep their own indexer.
  auto has_indexer = [&](uint64_t il) { return il >= layers ? index_dim != 0 : static_cast<bool>(own_indexer[il]); };
  auto is_sparse = [&](uint64_t il) { return il >= first_dense && il % freq == 0; };
  auto layer_params = [&](ParamTally& t, uint64_t il) {
    t.add_always_active(ParamClass::Attention, has_indexer(il) ? checked_add(mla, indexer) : mla);
    if (is_sparse(il)) tally_glu_moe(t, hidden, moe, router_bias);
    else t.add_always_active(ParamClass::DenseMlp, glu_params(hidden, dense_width));
    t.add_always_active(ParamClass::Norms, 2 * hidden);
  };

  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    AttentionSpec& a = layer.attention;
    a = latent_attention(heads, q_lora, kv_lora, nope, rope, v_dim);
    a.index_key_dim = has_indexer(il) ? static_cast<uint32_t>(index_dim) : 0;
    a.index_heads = has_indexer(il) ? static_cast<uint32_t>(index_heads) : 0;
    a.index_topk = static_cast<uint32_t>(index_topk);
    layer.feed_forward = is_sparse(il) ? moe_spec(moe) : dense_spec(dense_width);
    layer_params(tally, il);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }

  // MTP module: one more decoder layer (numbered after the stack) + eh_proj (2h -> h) and its
  // enorm, hnorm and shared-head norm. Shared with the main model in use; DeepSeek-V3/R1/V3.2's
  // checkpoints also store its own embed_tokens and shared_head.head copies (the Hub's counts: 671B +
  // 11.5B MTP + 2 x 0.93B copies), GLM-5's (glm_moe_dsa) do not. An entry may state otherwise.
  const uint64_t mtp = cfg.opt_u64("num_nextn_predict_layers", limits::kLayers).value_or(0);
  const bool glm = m.family == "glm_moe_dsa";
  const uint64_t copied = mtp_copied_vocab(
      cfg, mtp, !glm,
      glm ? "GLM-5's layout: its checkpoint has no model.layers.78.embed_tokens or shared_head.head "
            "(https://github.com/vllm-project/vllm/pull/34385, https://github.com/vllm-project/vllm-ascend/issues/6754)"
          : "DeepSeek-V3's layout: its checkpoint stores model.layers.61.embed_tokens and shared_head.head, which README_WEIGHTS.md "
            "says the MTP module shares with the main model (the Hub counts 684,531,386,000 elements in deepseek-ai/DeepSeek-V3, "
            "the copies included); V3.2's too (https://github.com/vllm-project/vllm/pull/34385)");
  tally_mtp_layers(tally, mtp, hidden, 3, [&](ParamTally& t, uint64_t i) { layer_params(t, layers + i); }, copied);
  tally.write_to(m.params, cfg.label() + " geometry (DeepSeek mapper)");
}

}  // namespace vc::families
