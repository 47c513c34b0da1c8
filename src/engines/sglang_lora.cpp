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

std::string normalized_module(const std::string& name) {
  const std::string leaf = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
  if (leaf == "q_proj" || leaf == "k_proj" || leaf == "v_proj") return "qkv_proj";
  if (leaf == "gate_proj" || leaf == "up_proj") return "gate_up_proj";
  if (leaf == "vocab_emb" || leaf == "embeddings" || leaf == "word_embeddings") return "embed_tokens";
  if (leaf == "output" || leaf == "unembed_tokens") return "lm_head";
  if (leaf == "q_a_proj" || leaf == "kv_a_proj_with_mqa") return "fused_qkv_a_proj_with_mqa";
  if (leaf == "wq_b" || leaf == "wk" || leaf == "weights_proj") return "indexer." + leaf;
  return leaf;
}

// gate_up and down of a gated MLP of width w on a rank, each when targeted.
uint64_t gated_values(uint64_t hidden, uint64_t width, uint64_t tp, bool gate_up, bool down) {
  const MlpLoraValues v = gated_mlp_lora_values(hidden, width, tp);
  return (gate_up ? v.gate_up : 0) + (down ? v.down : 0);
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
    if (kDecoderLinear.count(m) || kLatent.count(m) || m == "embed_tokens" || m == "lm_head") s.target_modules.insert(m);
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
  // A MoE model (a FusedMoE in the model) gets the per-expert buffers on every layer, at the
  // experts' width, and the dense buffers only when it has shared experts.
  const FeedForwardSpec* moe = nullptr;
  bool shared_experts = false;
  for (const auto& l : model.layers) {
    if (l.feed_forward.kind == FeedForwardKind::MoE) {
      if (!moe) moe = &l.feed_forward;
      shared_experts = shared_experts || l.feed_forward.shared_width > 0;
    }
  }
  uint64_t attention = 0, indexer = 0, mlp = 0, left_out = 0, latent_layers = 0, indexer_layers = 0, no_qkv = 0, no_indexer = 0;
  for (const auto& l : model.layers) {  // num_hidden_layers on every rank, whatever --pp
    const AttentionSpec& a = l.attention;
    const LatentLoraValues lv = a.query_rank ? latent_attention_lora_values(h, a, tp) : LatentLoraValues{};
    if ((a.kind == AttentionKind::Full || a.kind == AttentionKind::SlidingWindow) && a.query_heads > 0) {
      const AttentionLoraValues av = attention_lora_values(h, a, tp);
      attention = checked_add(attention, (qkv ? av.qkv : 0) + (o ? av.o : 0));
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
    const FeedForwardSpec& f = l.feed_forward;
    if (moe) {
      mlp = checked_add(mlp, checked_mul(moe->experts, gated_values(h, moe->expert_width, tp, gate_up, down)));
      if (shared_experts) mlp = checked_add(mlp, gated_values(h, f.kind == FeedForwardKind::MoE ? f.shared_width : f.dense_width, tp, gate_up, down));
    } else if (f.kind == FeedForwardKind::Dense) {
      mlp = checked_add(mlp, gated_values(h, f.dense_width, tp, gate_up, down));
    }
  }
  // embed_tokens: A over the whole vocabulary on every rank, B over hidden; lm_head: B over the rank's vocabulary share.
  uint64_t embedding = 0;
  if (t.count("embed_tokens")) embedding = checked_add(embedding, model.vocab + h);
  if (t.count("lm_head")) embedding = checked_add(embedding, h + ceil_div(model.vocab, tp));
  const uint64_t rank = sglang_lora_rank(s);
  const uint64_t per_rank_unit = checked_add(checked_add(checked_add(attention, indexer), mlp), embedding);
  out.bytes = checked_product({s.max_loras_per_batch, rank, per_rank_unit, value_bytes});
  out.formula = fmt::format(
      "max_loras_per_batch {} x max_lora_rank {} x ({} attention{} + {} MLP values per unit of rank over {} layers{}) x {} B = {} B", s.max_loras_per_batch,
      rank, format_count(attention), indexer ? fmt::format(" + {} indexer", format_count(indexer)) : "", format_count(mlp), model.layers.size(),
      embedding ? fmt::format(" + {} embedding / head", format_count(embedding)) : "", value_bytes, format_count(out.bytes));
  std::vector<std::string> notes;
  if (s.target_modules.empty()) {
    notes.push_back(s.unread_adapters ? fmt::format("target modules not given and {} adapter config(s) not read: every decoder linear module (q/k/v/o, "
                                                    "gate/up/down), the largest set adapters usually name", s.unread_adapters)
                                      : "target modules not given: every decoder linear module (q/k/v/o, gate/up/down), the largest set adapters usually name");
  } else if (s.all_modules) {
    notes.push_back(latent_layers ? "target modules all: every module SGLang finds in the model (auto_detect_lora_target_modules), here the latent "
                                    "projections, o_proj, gate_up_proj and down_proj" + std::string(indexer_layers ? " and the indexer's" : "")
                                  : "target modules all: every decoder linear module (q/k/v/o, gate/up/down)");
  } else {
    notes.push_back(fmt::format("target modules {}{}", fmt::join(t, ", "),
                                s.targets_from_adapters ? " (the union of the --lora-paths adapters' target_modules, as SGLang infers them)" : ""));
  }
  if (s.rank_from_adapters) notes.push_back(fmt::format("rank {}: the largest r of the {} --lora-paths adapters (their adapter_config.json), as SGLang takes it without --max-lora-rank", rank, s.adapter_paths.size()));
  notes.push_back("buffers for all the model's layers on each rank (SGLang sizes them by num_hidden_layers, whatever --pp), at the model's dtype");
  if (latent_layers)
    notes.push_back(fmt::format("the latent (MLA) projections of {} layers counted as SGLang sizes them (fused_qkv_a_proj_with_mqa whole on every rank, "
                                "q_b_proj and kv_b_proj split by tp; lora/utils.py get_default_hidden_dim)", latent_layers));
  if (indexer_layers) notes.push_back(fmt::format("the DSA indexer's wq_b, wk and weights_proj of {} layers counted whole on every rank (REPLICATED_LINEAR_LORA_NAMES)", indexer_layers));
  if (no_qkv) notes.push_back(fmt::format("qkv_proj not counted on {} latent (MLA) layers: they have none (name q_a_proj, kv_a_proj_with_mqa, q_b_proj, kv_b_proj)", no_qkv));
  if (no_indexer) notes.push_back(fmt::format("indexer modules not counted on {} layers without a DSA indexer", no_indexer));
  if (left_out) notes.push_back(fmt::format("the attention modules of {} recurrent layers (or latent layers without q_lora_rank) not counted", left_out));
  // Names read from an adapter's file are counted, not repeated (the server passes no file content on).
  if (!s.unmodelled_modules.empty())
    notes.push_back(s.targets_from_adapters ? fmt::format("{} adapter target module(s) outside the decoder's q/k/v/o and gate/up/down not counted", s.unmodelled_modules.size())
                                            : fmt::format("modules not counted: {}", fmt::join(s.unmodelled_modules, ", ")));
  out.assumption = fmt::format("{}", fmt::join(notes, "; "));
  return out;
}

}  // namespace vc
