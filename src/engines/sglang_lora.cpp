#include "engines/sglang_lora.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"

namespace vc {
namespace {

const std::set<std::string> kDecoderLinear = {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"};
// The latent attention's and the DSA indexer's modules (lora/utils.py _KNOWN_LORA_TARGET_MODULES).
const std::set<std::string> kLatent = {"fused_qkv_a_proj_with_mqa", "q_b_proj", "kv_b_proj", "indexer.wq_b", "indexer.wk", "indexer.weights_proj"};
// The recurrent mixers' modules SGLang knows (_KNOWN_LORA_TARGET_MODULES): Gated DeltaNet's packed
// in_proj_qkvz (in_proj_qkv / _q / _k / _v / _z normalize to it), Mamba's in_proj, and out_proj.
const std::set<std::string> kMixer = {"in_proj_qkvz", "in_proj", "out_proj"};

std::string normalized_module(const std::string& name) {
  const std::string leaf = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
  if (leaf == "q_proj" || leaf == "k_proj" || leaf == "v_proj") return "qkv_proj";
  if (leaf == "gate_proj" || leaf == "up_proj") return "gate_up_proj";
  if (leaf == "vocab_emb" || leaf == "embeddings" || leaf == "word_embeddings") return "embed_tokens";
  if (leaf == "output" || leaf == "unembed_tokens") return "lm_head";
  if (leaf == "q_a_proj" || leaf == "kv_a_proj_with_mqa") return "fused_qkv_a_proj_with_mqa";
  if (leaf == "wq_b" || leaf == "wk" || leaf == "weights_proj") return "indexer." + leaf;
  if (leaf == "in_proj_qkv" || leaf == "in_proj_q" || leaf == "in_proj_k" || leaf == "in_proj_v" || leaf == "in_proj_z") return "in_proj_qkvz";
  return leaf;
}

// gate_up and down of a gated MLP of width w on a rank, each when targeted.
uint64_t gated_values(uint64_t hidden, uint64_t width, uint64_t tp, bool gate_up, bool down) {
  const MlpLoraValues v = gated_mlp_lora_values(hidden, width, tp);
  return (gate_up ? v.gate_up : 0) + (down ? v.down : 0);
}

// Whose get_hidden_dim sizes the buffers (lora/utils.py get_hidden_dim: the model's own when it has
// one, else get_default_hidden_dim, which knows no recurrent mixer's module).
enum class LoraShapes { Default, Qwen35, NemotronH };
LoraShapes lora_shapes(const Model& m) {
  const std::string& a = m.architecture;
  // models/qwen3_5.py Qwen3_5ForCausalLM.get_hidden_dim (Qwen3_5MoeForCausalLM inherits it).
  if (a == "qwen3_5" || a == "qwen3_5_text" || a == "qwen3_5_moe" || a == "qwen3_5_moe_text") return LoraShapes::Qwen35;
  if (a == "nemotron_h") return LoraShapes::NemotronH;  // models/nemotron_h.py NemotronHForCausalLM.get_hidden_dim
  return LoraShapes::Default;
}

// The first Gated DeltaNet / Mamba mixer (KDA is left to the attention rules), with its geometry read
// or not (`read`).
const AttentionSpec* first_mixer(const Model& m, bool read) {
  auto known = [read](const AttentionSpec& a) {
    return a.kind == AttentionKind::LinearState && (!read || (a.mixer_heads && a.mixer_head_dim)) &&
           (a.state_family == StateFamily::GatedDeltaNet || a.state_family == StateFamily::Mamba2 || a.state_family == StateFamily::Mamba1);
  };
  for (const auto& l : m.layers) {
    if (known(l.attention)) return &l.attention;
    if (l.parallel_mixer && known(*l.parallel_mixer)) return &*l.parallel_mixer;
  }
  return nullptr;
}

}  // namespace

void set_sglang_lora_targets(SglangLoraSettings& s, const std::vector<std::string>& names) {
  if (names.empty()) throw InputError("--lora-target-modules", "needs module names (q_proj k_proj v_proj o_proj gate_proj up_proj down_proj embed_tokens lm_head) or all");
  s.target_modules.clear();
  s.unmodelled_modules.clear();
  const bool all = std::find(names.begin(), names.end(), "all") != names.end();
  if (all && names.size() > 1) throw InputError("--lora-target-modules", "'all' must be the only module named, as SGLang requires");
  s.all_modules = all;
  if (all) {
    s.target_modules = kDecoderLinear;
    return;
  }
  for (const auto& n : names) {
    const std::string m = normalized_module(n);
    if (kDecoderLinear.count(m) || kLatent.count(m) || kMixer.count(m) || m == "embed_tokens" || m == "lm_head") s.target_modules.insert(m);
    else s.unmodelled_modules.push_back(n);
  }
}

uint64_t sglang_lora_rank(const SglangLoraSettings& s) {
  if (s.max_lora_rank) return *s.max_lora_rank;
  throw InputError("--max-lora-rank", "is not given and no --lora-paths adapter's adapter_config.json was read: SGLang sizes its LoRA pool by the "
                                      "adapters' largest r; give --max-lora-rank R, or --lora-paths adapters vramcalc can read");
}

std::string sglang_lora_label(const SglangLoraSettings& s) {
  return fmt::format("LoRA memory pool ({} slots of rank {})", s.max_loras_per_batch, sglang_lora_rank(s));
}

LoraSlots sglang_lora_pool(const Model& model, const SglangLoraSettings& s, uint64_t tp, uint64_t value_bytes) {
  LoraSlots out;
  if (s.max_loras_per_batch == 0) return out;
  const std::set<std::string>& t = s.target_modules.empty() ? kDecoderLinear : s.target_modules;
  const bool qkv = t.count("qkv_proj"), o = t.count("o_proj"), gate_up = t.count("gate_up_proj"), down = t.count("down_proj");
  // "all" or no list: every module the model has, the latent ones included (auto_detect_lora_target_modules).
  const bool every = s.target_modules.empty() || s.all_modules;
  auto named = [&](const char* m) { return every || t.count(m) > 0; };
  const bool qkv_a = named("fused_qkv_a_proj_with_mqa"), q_b = named("q_b_proj"), kv_b = named("kv_b_proj");
  const bool wq_b = named("indexer.wq_b"), wk = named("indexer.wk"), weights_proj = named("indexer.weights_proj");
  const uint64_t h = model.hidden;
  const LoraShapes shapes = lora_shapes(model);
  const AttentionSpec* hybrid = first_mixer(model, false);  // a Gated DeltaNet or Mamba layer
  const AttentionSpec* mixer = first_mixer(model, true);    // one whose projection geometry was read
  const std::string flag = s.targets_from_adapters ? "--lora-paths" : "--lora-target-modules";
  // The recurrent mixers' modules: SGLang sizes in_proj_qkvz and out_proj only on Qwen3.5
  // (Qwen3_5ForCausalLM.get_hidden_dim), in_proj and out_proj only on Nemotron-H
  // (NemotronHForCausalLM.get_hidden_dim); anywhere else get_default_hidden_dim raises
  // NotImplementedError while LoRAMemoryPool.init_buffers runs, and the server does not start.
  auto sizable = [&](const std::string& m) {
    if (m == "in_proj_qkvz") return shapes == LoraShapes::Qwen35 && mixer && mixer->state_family == StateFamily::GatedDeltaNet;
    if (m == "in_proj") return shapes == LoraShapes::NemotronH && mixer && mixer->state_family == StateFamily::Mamba2;
    return mixer && ((shapes == LoraShapes::Qwen35 && mixer->state_family == StateFamily::GatedDeltaNet) ||
                     (shapes == LoraShapes::NemotronH && mixer->state_family == StateFamily::Mamba2));
  };
  bool in_proj_qkvz = false, in_proj = false, out_proj = false, up_proj = false, latent_fc = false;
  if (s.all_modules && hybrid) {
    // auto_detect_lora_target_modules takes every LinearBase leaf the model has that SGLang knows:
    // a Gated DeltaNet's in_proj_qkvz and out_proj, a Mamba mixer's in_proj and out_proj; the model's
    // supported_lora_modules add the rest (Nemotron-H: up_proj, fc1_latent_proj, fc2_latent_proj).
    if (shapes == LoraShapes::Default)
      throw InputError("--lora-target-modules",
                       fmt::format("all is refused for this model ({}): SGLang resolves it to every module it knows that the model has, the "
                                   "recurrent mixers' {} included, and its model class has no get_hidden_dim, so lora/utils.py "
                                   "get_default_hidden_dim raises NotImplementedError for them while the LoRA memory pool is sized; name "
                                   "the attention and MLP modules instead (q_proj k_proj v_proj o_proj gate_proj up_proj down_proj)",
                                   model.architecture.empty() ? "class unknown" : model.architecture,
                                   hybrid->state_family == StateFamily::GatedDeltaNet ? "in_proj_qkvz and out_proj" : "in_proj and out_proj"));
    in_proj_qkvz = sizable("in_proj_qkvz");
    in_proj = up_proj = latent_fc = sizable("in_proj");
    out_proj = sizable("out_proj");
  } else {
    for (const char* m : {"in_proj_qkvz", "in_proj", "out_proj"}) {
      if (!t.count(m)) continue;
      if (!sizable(m))
        throw InputError(flag, fmt::format("{} {}, which SGLang cannot size for this model ({}): only Qwen3.5's get_hidden_dim sizes "
                                           "in_proj_qkvz and out_proj, only Nemotron-H's in_proj and out_proj; elsewhere "
                                           "lora/utils.py get_default_hidden_dim raises NotImplementedError while the LoRA memory pool is sized",
                                           s.targets_from_adapters ? "adapters name" : "names", m,
                                           model.architecture.empty() ? "class unknown" : model.architecture));
    }
    in_proj_qkvz = t.count("in_proj_qkvz") > 0;
    in_proj = t.count("in_proj") > 0;
    out_proj = t.count("out_proj") > 0;
  }
  // On a hybrid model SGLang sizes the attention modules from the config for every one of
  // num_hidden_layers, the recurrent ones included (mem_pool.py init_buffers: `for idx in
  // range(self.num_layer)`; no get_hidden_dim looks at the layer's type for qkv_proj / o_proj).
  const AttentionSpec* config_attention = nullptr;
  for (const auto& l : model.layers) {
    if ((l.attention.kind == AttentionKind::Full || l.attention.kind == AttentionKind::SlidingWindow) && l.attention.query_heads > 0) {
      config_attention = &l.attention;
      break;
    }
  }
  // A MoE model (a FusedMoE in the model) gets the per-expert buffers on every layer, at the
  // experts' width, and the dense buffers only when it has shared experts.
  const FeedForwardSpec* moe = nullptr;
  const FeedForwardSpec* dense_mlp = nullptr;
  bool shared_experts = false;
  for (const auto& l : model.layers) {
    if (l.feed_forward.kind == FeedForwardKind::MoE) {
      if (!moe) moe = &l.feed_forward;
      shared_experts = shared_experts || l.feed_forward.shared_width > 0;
    }
    if (l.feed_forward.kind == FeedForwardKind::Dense && !dense_mlp) dense_mlp = &l.feed_forward;
  }
  // Nemotron-H: get_hidden_dim sizes the MLP modules by the layer's type on every layer (a mamba
  // layer's gate_up_proj at 2 x mamba_num_heads x mamba_head_dim, the others at intermediate_size;
  // up_proj unstacked). Its MoE checkpoints (non-gated experts) are not modelled here.
  const bool nemotron_mlp = shapes == LoraShapes::NemotronH && !moe && dense_mlp;
  const uint64_t mixer_width = mixer ? checked_mul(mixer->mixer_heads, mixer->mixer_head_dim) : 0;  // d_inner, or value heads x dim
  uint64_t attention = 0, indexer = 0, recurrent = 0, mlp = 0, left_out = 0, latent_layers = 0, indexer_layers = 0, no_qkv = 0, no_indexer = 0;
  uint64_t recurrent_layers = 0, mlp_left_out = 0;
  for (const auto& l : model.layers) {  // num_hidden_layers on every rank, whatever --pp
    const AttentionSpec& a = hybrid && config_attention ? *config_attention : l.attention;
    const LatentLoraValues lv = a.query_rank ? latent_attention_lora_values(h, a, tp) : LatentLoraValues{};
    if ((a.kind == AttentionKind::Full || a.kind == AttentionKind::SlidingWindow) && a.query_heads > 0) {
      const AttentionLoraValues av = attention_lora_values(h, a, tp);
      // Qwen3.5's qkv_proj B holds the output gate beside q (get_hidden_dim: 2 x heads when attn_output_gate);
      // the default get_hidden_dim (Qwen3-Next) leaves it out.
      const uint64_t gate = shapes == LoraShapes::Qwen35 && a.output_gate ? checked_mul(a.query_heads >= tp ? a.query_heads / tp : 1, a.head_dim_k) : 0;
      attention = checked_add(attention, (qkv ? av.qkv + gate : 0) + (o ? av.o : 0));
      recurrent_layers += hybrid && l.attention.kind == AttentionKind::LinearState ? 1 : 0;
    } else if (lv.total()) {  // MLA with q_lora_rank (fused_qkv_a_proj_with_mqa); an MLA layer has no qkv_proj
      const uint64_t v = (qkv_a ? lv.qkv_a : 0) + (q_b ? lv.q_b : 0) + (kv_b ? lv.kv_b : 0) + (o ? lv.o : 0);
      attention = checked_add(attention, v);
      latent_layers += v ? 1 : 0;
      no_qkv += qkv && !every ? 1 : 0;
      const IndexerLoraValues iv = indexer_lora_values(h, a);
      const uint64_t iv_named = (wq_b ? iv.wq_b : 0) + (wk ? iv.wk : 0) + (weights_proj ? iv.weights_proj : 0);
      indexer = checked_add(indexer, iv_named);
      indexer_layers += iv_named ? 1 : 0;
      no_indexer += !iv.total() && !every && (wq_b || wk || weights_proj) ? 1 : 0;
    } else if (a.kind != AttentionKind::None && (qkv || o || (!every && (qkv_a || q_b || kv_b)))) {
      ++left_out;
    }
    // The mixers' modules, on every layer too, from the config.
    if (mixer) {
      const uint64_t wr = mixer_width / tp;
      if (in_proj_qkvz) {  // stacked 4 (q, k, v, z): A 4 x hidden; B 2 x key + 2 x value, column-parallel
        const uint64_t k = checked_mul(mixer->mixer_key_heads, mixer->mixer_key_dim);
        recurrent = checked_add(recurrent, checked_add(checked_mul(4, h), checked_add(checked_mul(2, k), checked_mul(2, mixer_width)) / tp));
      }
      if (in_proj) recurrent = checked_add(recurrent, checked_add(checked_mul(2, h), checked_mul(2, wr)));  // stacked 2 (gate, x): A 2 x hidden, B 2 x d_inner
      if (out_proj) recurrent = checked_add(recurrent, wr + h);                                            // row-parallel: A d / tp, B hidden
      if (latent_fc) recurrent = checked_add(recurrent, checked_mul(4, h));  // fc1 / fc2_latent_proj, replicated, hidden -> hidden without moe_latent_size
    }
    const FeedForwardSpec& f = l.feed_forward;
    if (nemotron_mlp) {
      const bool mamba_layer = l.attention.kind == AttentionKind::LinearState;
      const uint64_t w = dense_mlp->dense_width / tp;
      if (gate_up) mlp = checked_add(mlp, checked_mul(2, h) + 2 * (mamba_layer ? mixer_width / tp : w));
      if (down) mlp = checked_add(mlp, w + h);
      if (up_proj) mlp = checked_add(mlp, h + w);
    } else if (shapes == LoraShapes::NemotronH && (gate_up || down || up_proj) && f.kind != FeedForwardKind::None) {
      ++mlp_left_out;
    } else if (moe) {
      mlp = checked_add(mlp, checked_mul(moe->experts, gated_values(h, moe->expert_width, tp, gate_up, down)));
      if (shared_experts) mlp = checked_add(mlp, gated_values(h, f.kind == FeedForwardKind::MoE ? f.shared_width : f.dense_width, tp, gate_up, down));
    } else if (f.kind == FeedForwardKind::Dense) {
      mlp = checked_add(mlp, gated_values(h, f.dense_width, tp, gate_up, down));
    }
  }
  // embed_tokens: A over the whole vocabulary on every rank, B over hidden; lm_head: B over the rank's
  // vocabulary share. "all" takes both (lora_manager.py init_lora_shapes adds EMBEDDING_NAMES).
  uint64_t embedding = 0;
  if (t.count("embed_tokens") || s.all_modules) embedding = checked_add(embedding, model.vocab + h);
  if (t.count("lm_head") || s.all_modules) embedding = checked_add(embedding, h + ceil_div(model.vocab, tp));
  const uint64_t rank = sglang_lora_rank(s);
  const uint64_t per_rank_unit = checked_add(checked_add(checked_add(attention, indexer), checked_add(recurrent, mlp)), embedding);
  out.bytes = checked_product({s.max_loras_per_batch, rank, per_rank_unit, value_bytes});
  out.formula = fmt::format(
      "max_loras_per_batch {} x max_lora_rank {} x ({} attention{}{} + {} MLP values per unit of rank over {} layers{}) x {} B = {} B",
      s.max_loras_per_batch, rank, format_count(attention), indexer ? fmt::format(" + {} indexer", format_count(indexer)) : "",
      recurrent ? fmt::format(" + {} recurrent mixer", format_count(recurrent)) : "", format_count(mlp), model.layers.size(),
      embedding ? fmt::format(" + {} embedding / head", format_count(embedding)) : "", value_bytes, format_count(out.bytes));
  std::vector<std::string> notes;
  if (s.target_modules.empty()) {
    notes.push_back(s.unread_adapters ? fmt::format("target modules not given and {} adapter config(s) not read: every decoder linear module (q/k/v/o, "
                                                    "gate/up/down), the largest set adapters usually name", s.unread_adapters)
                                      : "target modules not given: every decoder linear module (q/k/v/o, gate/up/down), the largest set adapters usually name");
  } else if (s.all_modules) {
    std::string what = latent_layers ? "the latent projections, o_proj, gate_up_proj and down_proj" + std::string(indexer_layers ? " and the indexer's" : "")
                                     : "q/k/v/o and gate/up/down";
    if (in_proj_qkvz) what += ", the Gated DeltaNet's in_proj_qkvz and out_proj (Qwen3_5ForCausalLM.supported_lora_modules)";
    if (in_proj) what += ", the Mamba mixer's in_proj and out_proj, up_proj and fc1 / fc2_latent_proj (NemotronHForCausalLM.supported_lora_modules)";
    notes.push_back("target modules all: every module SGLang finds in the model (auto_detect_lora_target_modules), here " + what +
                    ", and embed_tokens and lm_head (lora_manager.py init_lora_shapes adds EMBEDDING_NAMES)");
  } else {
    notes.push_back(fmt::format("target modules {}{}", fmt::join(t, ", "),
                                s.targets_from_adapters ? " (the union of the --lora-paths adapters' target_modules, as SGLang infers them)" : ""));
  }
  if (s.rank_from_adapters) notes.push_back(fmt::format("rank {}: the largest r of the {} --lora-paths adapters (their adapter_config.json), as SGLang takes it without --max-lora-rank", rank, s.adapter_paths.size()));
  notes.push_back("buffers for all the model's layers on each rank (SGLang sizes them by num_hidden_layers, whatever --pp), at the model's dtype");
  if (recurrent_layers && (qkv || o))
    notes.push_back(fmt::format("the attention buffers on all {} layers, the {} recurrent ones included: SGLang sizes every target module for every "
                                "layer from the config (mem_pool.py init_buffers)", model.layers.size(), recurrent_layers));
  if (recurrent)
    notes.push_back(fmt::format("the recurrent mixers' {} on all {} layers, as {} sizes them", in_proj_qkvz ? (out_proj ? "in_proj_qkvz and out_proj" : "in_proj_qkvz")
                                                                                          : in_proj ? (out_proj ? "in_proj and out_proj" : "in_proj") : "out_proj",
                                model.layers.size(), shapes == LoraShapes::Qwen35 ? "Qwen3_5ForCausalLM.get_hidden_dim" : "NemotronHForCausalLM.get_hidden_dim"));
  if (nemotron_mlp && (gate_up || down || up_proj))
    notes.push_back(fmt::format("the MLP buffers on all {} layers by layer type (NemotronHForCausalLM.get_hidden_dim: a mamba layer's gate_up_proj at 2 x "
                                "d_inner, the others at intermediate_size)", model.layers.size()));
  if (mlp_left_out) notes.push_back(fmt::format("the MLP modules of {} layers not counted: Nemotron-H's non-gated experts are not modelled", mlp_left_out));
  if (latent_layers)
    notes.push_back(fmt::format("the latent (MLA) projections of {} layers counted as SGLang sizes them (fused_qkv_a_proj_with_mqa whole on every rank, "
                                "q_b_proj and kv_b_proj split by tp; lora/utils.py get_default_hidden_dim)", latent_layers));
  if (indexer_layers) notes.push_back(fmt::format("the DSA indexer's wq_b, wk and weights_proj of {} layers counted whole on every rank (REPLICATED_LINEAR_LORA_NAMES)", indexer_layers));
  if (no_qkv) notes.push_back(fmt::format("qkv_proj not counted on {} latent (MLA) layers: they have none (name q_a_proj, kv_a_proj_with_mqa, q_b_proj, kv_b_proj)", no_qkv));
  if (no_indexer) notes.push_back(fmt::format("indexer modules not counted on {} layers without a DSA indexer", no_indexer));
  if (left_out) notes.push_back(fmt::format("the attention modules of {} recurrent layers (KDA, or latent layers without q_lora_rank) not counted", left_out));
  // Names read from an adapter's file are counted, not repeated (the server passes no file content on).
  if (!s.unmodelled_modules.empty())
    notes.push_back(s.targets_from_adapters ? fmt::format("{} adapter target module(s) SGLang does not size not counted", s.unmodelled_modules.size())
                                            : fmt::format("modules not counted: {}", fmt::join(s.unmodelled_modules, ", ")));
  out.assumption = fmt::format("{}", fmt::join(notes, "; "));
  return out;
}

}  // namespace vc
