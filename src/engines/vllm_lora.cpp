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
  uint64_t attention = 0, indexer = 0, recurrent = 0, mlp = 0;
  bool latent = false;                // MLA projections counted
  bool latent_unknown = false;        // MLA whose projection widths were not read (a GGUF's)
  uint64_t mixers = 0;                // recurrent mixers counted (a hybrid-head layer has two mixers)
  uint64_t mixers_unknown = 0;        // recurrent mixers whose geometry was not read, or KDA
};

uint64_t heads_on_rank(uint64_t heads, uint64_t tp);

// vLLM's Qwen3-Next class (qwen3_next.py) builds Gated DeltaNet with gqa_interleaved_layout=True,
// one packed slice per projection; Qwen3.5's (qwen3_5.py) with the q, k, v, z and b, a slices apart.
bool qwen3_next_class(const Model& m) { return m.architecture == "qwen3_next"; }
// Qwen3NextSparseMoeBlock (Qwen3-Next and Qwen3.5 MoE): shared_expert_gate, a ReplicatedLinear of
// hidden -> 1, wrapped like the router (vLLM PR 31719 made it one for LoRA).
bool has_shared_expert_gate(const Model& m) {
  return m.architecture == "qwen3_next" || m.architecture == "qwen3_5_moe" || m.architecture == "qwen3_5_moe_text";
}

LayerValues layer_values(const Model& m, const LayerConfig& l, uint64_t tp) {
  LayerValues v;
  const uint64_t h = m.hidden;
  auto mixer = [&](const AttentionSpec& a) {
    const uint64_t values = recurrent_mixer_lora_values(h, a, tp, !qwen3_next_class(m));
    v.recurrent = checked_add(v.recurrent, values);
    (values ? v.mixers : v.mixers_unknown) += 1;
  };
  const AttentionSpec& a = l.attention;
  if ((a.kind == AttentionKind::Full || a.kind == AttentionKind::SlidingWindow) && a.query_heads > 0) {
    const AttentionLoraValues av = attention_lora_values(h, a, tp);
    v.attention = av.qkv + av.o;
    // attn_output_gate: qkv_proj is QKVParallelLinear over 2 x heads query heads (Qwen3NextAttention),
    // so B holds the gate's share of the rank beside q.
    if (a.output_gate) v.attention = checked_add(v.attention, checked_mul(heads_on_rank(a.query_heads, tp), a.head_dim_k));
  } else if (a.kind == AttentionKind::Latent) {
    v.attention = latent_attention_lora_values(h, a, tp).total();
    v.latent = v.attention > 0;
    v.latent_unknown = v.attention == 0;
    v.indexer = indexer_lora_values(h, a).total();
  } else if (a.kind != AttentionKind::None) {
    mixer(a);
  }
  if (l.parallel_mixer && l.parallel_mixer->kind == AttentionKind::LinearState) mixer(*l.parallel_mixer);
  // An MLP without a gate (Phi's fc1 / fc2, phi.py PhiMLP; Nemotron-H's MLPs and experts,
  // nemotron_h.py NemotronHMLP, is_act_and_mul=False) is wrapped as two matrices, and vLLM skips a
  // non-gated MoE's router: model_manager.py _create_lora_modules passes over its "mixer.gate".
  const bool plain = !l.feed_forward.gated;
  auto mlp = [&](uint64_t width) { return (plain ? plain_mlp_lora_values(h, width, tp) : gated_mlp_lora_values(h, width, tp)).total(); };
  // Granite 4.0-H's dense / shared MLP (GraniteMoeSharedMLP): input_linear is a MergedColumnParallelLinear
  // of two slices that packed_modules_mapping names alone ("input_linear": ["input_linear"]), so
  // ColumnParallelLinearWithLoRA gives it one A, not the gate's and up's two.
  const uint64_t packed_one_a = m.architecture == "granitemoehybrid" ? h : 0;
  auto dense = [&](uint64_t width) { return mlp(width) - packed_one_a; };
  const FeedForwardSpec& f = l.feed_forward;
  if (f.kind == FeedForwardKind::Dense) v.mlp = dense(f.dense_width);
  if (f.kind == FeedForwardKind::MoE) {
    v.mlp = checked_add(checked_mul(f.experts, mlp(f.expert_width)), plain ? 0 : h + f.experts);  // experts + router
    if (f.shared_width) v.mlp = checked_add(v.mlp, dense(f.shared_width));
    if (f.shared_width && has_shared_expert_gate(m)) v.mlp = checked_add(v.mlp, h + 1);  // shared_expert_gate
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

LatentLoraValues latent_attention_lora_values(uint64_t hidden, const AttentionSpec& a, uint64_t tp) {
  if (a.kind != AttentionKind::Latent || !a.query_heads || !a.nope_dim || !a.value_dim || !a.latent_rank) return {};
  const uint64_t heads = a.query_heads / tp, kv_lora = a.latent_rank, rope = a.rope_dim, qk = uint64_t{a.nope_dim} + rope;
  LatentLoraValues v;
  if (a.query_rank) {
    v.qkv_a = 2 * hidden + a.query_rank + kv_lora + rope;       // fused_qkv_a_proj: q_a_proj + kv_a_proj_with_mqa
    v.q_b = checked_add(a.query_rank, checked_mul(heads, qk));  // q_b_proj
  } else {
    v.qkv_a = hidden + kv_lora + rope;                          // kv_a_proj_with_mqa
    v.q_b = checked_add(hidden, checked_mul(heads, qk));        // q_proj
  }
  v.kv_b = checked_add(kv_lora, checked_mul(heads, uint64_t{a.nope_dim} + a.value_dim));  // kv_b_proj
  v.o = checked_add(checked_mul(heads, a.value_dim), hidden);                             // o_proj
  return v;
}

uint64_t recurrent_mixer_lora_values(uint64_t hidden, const AttentionSpec& a, uint64_t tp, bool split_gdn) {
  if (a.kind != AttentionKind::LinearState || !a.conv_kernel || !a.mixer_heads || !a.mixer_head_dim || !tp) return 0;
  const uint64_t kernel = a.conv_kernel, heads = a.mixer_heads, d = checked_mul(heads, a.mixer_head_dim);
  switch (a.state_family) {
    case StateFamily::GatedDeltaNet: {  // layers/mamba/gdn: QwenGatedDeltaNetAttention
      if (!a.mixer_key_heads || !a.mixer_key_dim) return 0;
      const uint64_t k = checked_mul(a.mixer_key_heads, a.mixer_key_dim), kr = k / tp, vr = d / tp;
      uint64_t values = checked_add(checked_mul(split_gdn ? 4 : 1, hidden), 2 * kr + 2 * vr);  // in_proj_qkvz
      values = checked_add(values, checked_mul(split_gdn ? 2 : 1, hidden) + 2 * (heads / tp));   // in_proj_ba
      values = checked_add(values, kernel + 2 * kr + vr);                                       // conv1d
      return checked_add(values, vr + hidden);                                                  // out_proj
    }
    case StateFamily::Mamba2: {  // MambaMixer2
      if (!a.mixer_groups || !a.mixer_state) return 0;
      const uint64_t s = a.mixer_state, dr = d / tp;
      uint64_t values = 0;
      if (a.mixer_groups % tp == 0) {  // MergedColumnParallelLinear: one A per slice
        const uint64_t gsr = checked_mul(a.mixer_groups, s) / tp;
        values = checked_add(checked_mul(5, hidden), 2 * dr + 2 * gsr + heads / tp);  // in_proj: z, x, B, C, dt
        values = checked_add(values, 3 * kernel + dr + 2 * gsr);                      // conv1d: x, B, C
      } else {  // one group copied to every rank (vLLM accepts no other case): tp groups in all
        values = checked_add(hidden, checked_add(checked_mul(2, d) + heads, checked_product({2, tp, s})) / tp);  // in_proj
        values = checked_add(values, kernel + checked_add(d, checked_product({2, tp, s})) / tp);               // conv1d
      }
      return checked_add(values, dr + hidden);  // out_proj
    }
    case StateFamily::Mamba1: {  // MambaMixer
      const uint64_t dr = d / tp, dt = a.mixer_dt_rank;
      uint64_t values = checked_add(hidden, 2 * dr);                       // in_proj: x, z (one packed slice)
      values = checked_add(values, kernel + dr);                           // conv1d
      values = checked_add(values, dr + dt + 2 * uint64_t{a.mixer_state});  // x_proj
      values = checked_add(values, dt + dr);                               // dt_proj
      return checked_add(values, dr + hidden);                             // out_proj
    }
    default:
      return 0;
  }
}

IndexerLoraValues indexer_lora_values(uint64_t hidden, const AttentionSpec& a) {
  if (a.kind != AttentionKind::Latent || !a.index_key_dim || !a.index_heads) return {};
  const uint64_t q_in = a.query_rank ? a.query_rank : hidden, dim = a.index_key_dim, heads = a.index_heads;
  return {checked_add(q_in, checked_mul(heads, dim)), hidden + dim, hidden + heads};  // wq_b, wk, weights_proj
}

MlpLoraValues gated_mlp_lora_values(uint64_t hidden, uint64_t width, uint64_t tp) { return {2 * hidden + 2 * (width / tp), width / tp + hidden}; }
MlpLoraValues plain_mlp_lora_values(uint64_t hidden, uint64_t width, uint64_t tp) { return {hidden + width / tp, width / tp + hidden}; }

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
  uint64_t attention = 0, indexer = 0, recurrent = 0, mlp = 0, latent = 0, latent_unknown = 0, indexers = 0, mixers = 0, mixers_unknown = 0;
  for (uint64_t i = 0; i < layers && i < model.layers.size(); ++i) {
    const LayerValues v = layer_values(model, model.layers[i], tp);
    attention = checked_add(attention, v.attention);
    indexer = checked_add(indexer, v.indexer);
    recurrent = checked_add(recurrent, v.recurrent);
    mlp = checked_add(mlp, v.mlp);
    latent += v.latent ? 1 : 0;
    latent_unknown += v.latent_unknown ? 1 : 0;
    indexers += v.indexer ? 1 : 0;
    mixers += v.mixers;
    mixers_unknown += v.mixers_unknown;
  }
  const uint64_t per_rank_unit = checked_add(checked_add(attention, indexer), checked_add(recurrent, mlp));
  out.bytes = checked_product({s.max_loras, s.max_lora_rank, per_rank_unit, value_bytes});
  std::string terms = fmt::format("{} attention", format_count(attention));
  if (indexer) terms += fmt::format(" + {} indexer", format_count(indexer));
  if (recurrent) terms += fmt::format(" + {} recurrent mixer", format_count(recurrent));
  out.formula = fmt::format("max_loras {} x max_lora_rank {} x ({} + {} MLP values per unit of rank over {} layers on this rank) x {} B = {} B",
                            s.max_loras, s.max_lora_rank, terms, format_count(mlp), layers, value_bytes, format_count(out.bytes));
  out.assumption = "every linear module of the decoder wrapped (no --lora-target-modules), A and B not sharded (no --fully-sharded-loras), "
                   "at the model's dtype (--lora-dtype auto); embed_tokens / lm_head slots (models that list them) not counted";
  if (latent)
    out.assumption += fmt::format("; the {} latent (MLA) layers' fused_qkv_a_proj (or q_proj and kv_a_proj_with_mqa), q_b_proj, kv_b_proj and o_proj counted "
                                  "as vLLM wraps them (deepseek_v2.py DeepseekV2MLAAttention)", latent);
  if (latent_unknown) out.assumption += fmt::format("; the attention of {} latent (MLA) layers not counted: their projection widths were not read", latent_unknown);
  if (indexers)
    out.assumption += fmt::format("; the sparse-attention indexer's wq_b, wk and weights_proj of {} layers counted whole on every rank "
                                  "(ReplicatedLinear, deepseek_v2.py Indexer)", indexers);
  if (mixers)
    out.assumption += fmt::format("; {} recurrent mixers' projections counted as vLLM wraps them, conv1d included (a ColumnParallelLinear in vLLM): "
                                  "Gated DeltaNet in_proj_qkvz, in_proj_ba, conv1d, out_proj; Mamba2 in_proj, conv1d, out_proj; "
                                  "Mamba1 in_proj, conv1d, x_proj, dt_proj, out_proj",
                                  mixers);
  if (model.architecture == "granitemoehybrid")
    out.assumption += "; Granite 4.0-H's shared MLP input_linear counted with one A (granitemoehybrid.py packs gate and up under that one name)";
  if (model.architecture == "nemotron_h")
    out.assumption += "; Nemotron-H's MLPs and experts counted without a gate (up_proj and down_proj) and its router not at all, "
                      "as vLLM wraps them (nemotron_h.py NemotronHMLP; model_manager.py skips a non-gated MoE's mixer.gate)";
  else if (std::any_of(model.layers.begin(), model.layers.end(), [](const LayerConfig& l) { return !l.feed_forward.gated && l.feed_forward.kind == FeedForwardKind::Dense; }))
    out.assumption += "; the MLPs counted without a gate, fc1 A hidden and B width / tp, fc2 A width / tp and B hidden (phi.py PhiMLP: "
                      "two linears, each wrapped alone)";
  if (mixers_unknown)
    out.assumption += fmt::format("; the projections of {} recurrent mixers not counted (their geometry was not read, or a family with no rule here), "
                                  "though vLLM wraps every linear module: the figure is low by them", mixers_unknown);
  return out;
}

std::optional<std::string> vllm_lora_refusal(const Model& model) {
  struct Unsupported {
    const char* model_type;
    const char* cls;
    const char* file;
  };
  static constexpr Unsupported kClasses[] = {
      {"kimi_linear", "KimiLinearForCausalLM", "kimi_linear.py"},
      {"falcon", "FalconForCausalLM", "falcon.py"},  // FalconForCausalLM(nn.Module, SupportsPP)
      {"RefinedWeb", "FalconForCausalLM", "falcon.py"},
      {"RefinedWebModel", "FalconForCausalLM", "falcon.py"},
      {"gpt_neox", "GPTNeoXForCausalLM", "gpt_neox.py"},  // GPTNeoXForCausalLM(nn.Module, SupportsPP)
      {"gpt2", "GPT2LMHeadModel", "gpt2.py"},             // GPT2LMHeadModel(nn.Module, SupportsPP)
  };
  for (const auto& c : kClasses) {
    if (model.family == c.model_type || model.architecture == c.model_type)
      return fmt::format("vLLM refuses LoRA for this model at start (\"{0} does not support LoRA yet.\": vllm/model_executor/models/{1} implements "
                         "no SupportsLoRA); run it without --enable-lora, --max-loras and --max-lora-rank",
                         c.cls, c.file);
  }
  return std::nullopt;
}

}  // namespace vc
