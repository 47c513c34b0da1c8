#include "estimate/estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "estimate/checkpoint_tower.h"
#include "estimate/scenario_inputs.h"
#include "estimate/verdict.h"
#include "model/quant.h"

namespace vc {
namespace {

std::string bytes_text(uint64_t b) { return format_count(b) + " B"; }

struct GroupKey {
  AttentionKind kind;
  uint64_t values;
  uint64_t window;
  StateFamily family;
  bool operator<(const GroupKey& o) const { return std::tie(kind, values, window, family) < std::tie(o.kind, o.values, o.window, o.family); }
};

struct Group {
  uint64_t layers = 0;
  AttentionSpec spec;
};

std::string seqs_text(uint64_t n) { return fmt::format("{} sequence{}", format_count(n), n == 1 ? "" : "s"); }

Line cache_line(const Group& g, const CacheLayout& layout, const Scenario& s) {
  const AttentionSpec& a = g.spec;
  Line line;
  const uint64_t per_token = token_cache_bytes(a, layout).total();
  const uint64_t tokens = cached_tokens(a, s.context);
  line.bytes = checked_product({g.layers, per_token, tokens, s.sequences});
  const std::string dtype = layout.k_type->name;
  switch (a.kind) {
    case AttentionKind::Full:
      line.id = "cache.full";
      line.label = fmt::format("KV cache, full attention ({} layers)", g.layers);
      line.formula = fmt::format("{} layers × {} kv heads × ({} K + {} V) values × {} per token ({}) × {} tokens × {} = {}",
                                 g.layers, a.kv_heads, a.head_dim_k, a.head_dim_v, bytes_text(per_token), dtype,
                                 format_count(tokens), seqs_text(s.sequences), bytes_text(line.bytes));
      line.assumption = "every token of context keeps its K and V in every full-attention layer";
      line.source = "config.json num_key_value_heads, head_dim; GQA: Ainslie et al. 2023, https://arxiv.org/abs/2305.13245";
      break;
    case AttentionKind::SlidingWindow:
      line.id = "cache.window";
      line.label = fmt::format("KV cache, sliding window of {} ({} layers)", format_count(a.window), g.layers);
      line.formula = fmt::format("{} layers × {} kv heads × ({} K + {} V) values × {} per token ({}) × min({} context, {} window) tokens × {} = {}",
                                 g.layers, a.kv_heads, a.head_dim_k, a.head_dim_v, bytes_text(per_token), dtype,
                                 format_count(s.context), format_count(a.window), seqs_text(s.sequences), bytes_text(line.bytes));
      line.assumption = "window layers keep only the last `window` tokens (engines add a batch of slack; see the engine profiles)";
      line.source = "config.json sliding_window and layer pattern; Mistral 7B, https://arxiv.org/abs/2310.06825";
      break;
    case AttentionKind::Latent: {
      line.id = "cache.latent";
      line.label = a.index_key_dim ? fmt::format("Latent attention cache with index keys ({} layers)", g.layers)
                                   : fmt::format("Latent attention cache ({} layers)", g.layers);
      const uint64_t implied = a.values_per_token();
      std::string values = s.latent_values
                               ? fmt::format("{} values (--latent-values; the config implies {})", format_count(*s.latent_values), implied)
                               : (a.index_key_dim ? fmt::format("({} latent + {} rope + {} index keys) values", a.latent_rank, a.rope_dim, a.index_key_dim)
                                                  : fmt::format("({} latent + {} rope) values", a.latent_rank, a.rope_dim));
      line.formula = fmt::format("{} layers × {} = {} per token ({}) × {} tokens × {} = {}", g.layers, values, bytes_text(per_token), dtype,
                                 format_count(tokens), seqs_text(s.sequences), bytes_text(line.bytes));
      line.assumption = s.latent_values
                            ? fmt::format("a budget of {} values per latent layer replaces what engines store ({} values)", *s.latent_values, implied)
                            : std::string("one shared latent vector per token and layer, no separate V (vLLM MLAAttentionSpec, llama.cpp K-only MLA cache)") +
                                  (a.index_key_dim ? fmt::format("; sparse attention keeps {}-wide index keys for every token: top-{} selection cuts compute, not storage",
                                                                 a.index_key_dim, a.index_topk)
                                                   : "");
      line.source = "config.json kv_lora_rank, qk_rope_head_dim" + std::string(a.index_key_dim ? ", index_head_dim" : "") +
                    "; DeepSeek-V2 (multi-head latent attention), https://arxiv.org/abs/2405.04434";
      break;
    }
    default: break;
  }
  return line;
}

Line state_line(const Group& g, const Scenario& s) {
  const AttentionSpec& a = g.spec;
  const uint64_t m_b = state_matrix_element_bytes(s.state_layout);
  const uint64_t conv_b = state_conv_element_bytes(s.state_layout);
  const uint64_t per_layer = state_bytes(a, s.state_layout).total();
  Line line;
  line.id = "state." + std::string(to_string(a.state_family));
  line.label = fmt::format("Recurrent state, {} ({} layers)", to_string(a.state_family), g.layers);
  line.bytes = checked_product({g.layers, per_layer, s.sequences});
  line.formula = fmt::format("{} layers × ({} state values × {} B + {} conv values × {} B) × {} = {}", g.layers, format_count(a.state_values), m_b,
                             format_count(a.conv_values), conv_b, seqs_text(s.sequences), bytes_text(line.bytes));
  line.assumption = fmt::format("a fixed state per sequence that does not grow with context; layout {} ({})", to_string(s.state_layout),
                                s.state_layout == StateLayout::F32     ? "llama.cpp: matrix and conv in f32"
                                : s.state_layout == StateLayout::Mixed ? "vLLM: matrix f32, conv in the 16-bit model dtype"
                                                                       : "both 16-bit");
  line.source = "config.json " + std::string(a.state_family == StateFamily::KDA ? "linear_attn_config.num_heads, head_dim, short_conv_kernel_size"
                                                                      : "state geometry") +
                "; Mamba-2, https://arxiv.org/abs/2405.21060; Kimi Linear (KDA), https://arxiv.org/abs/2510.26692";
  return line;
}

// Measured files over the vendor's rounded total, beside our exact figure: the reading a page
// quoting "1.561 TB at 4.46 bits" over "2.8T" used (docs/accuracy.md). Only for measured files:
// derived bytes over a stated total would mix two counts ("15.93 bits" for a BF16 checkpoint).
std::string vendor_bits_text(const Model& model, uint64_t bytes) {
  const auto& stated = model.params.stated_total;
  if (!stated || stated->value == 0 || !model.native.measured || stated->value == model.params.total()) return "";
  return fmt::format("; {:.2f} over the vendor's {}", static_cast<double>(bytes) * 8.0 / static_cast<double>(stated->value), format_params(stated->value));
}

}  // namespace

WeightsFigure resolve_weights(const Model& model, const std::string& quant) {
  WeightsFigure w;
  const uint64_t params = model.params.total();
  if (quant.empty() || quant == "native" || quant == "NATIVE") {
    w.kind = TierKind::Native;
    w.tier = "native " + model.native.format;
    w.bytes = w.unclamped = model.native.bytes;
  } else if (const Build* b = model.find_build(quant)) {
    w.tier = "build " + b->name;
    w.bytes = w.unclamped = b->bytes;
    w.kind = TierKind::Build;
  } else {
    const QuantFormat* f = QuantTable::builtin().find_tier(quant);
    if (!f) {
      std::string builds;
      for (const auto& bd : model.builds) builds += (builds.empty() ? "" : ", ") + bd.name;
      throw InputError("--quant", "'" + quant + "' is not a tier; accepted: native" + (builds.empty() ? "" : ", builds of " + model.name + " (" + builds + ")") +
                                      ", or a format: " + QuantTable::builtin().names(true));
    }
    if (f->name == model.native.format) {
      w.kind = TierKind::Native;
      w.tier = "native " + f->name;
      w.bytes = w.unclamped = model.native.bytes;
    } else {
      w.kind = TierKind::Format;
      w.tier = f->name;
      w.unclamped = f->bits.bytes_for(params);
      w.exceptions = quantize_exceptions(model, *f);
      if (w.exceptions.params() > 0) {  // tensors llama-quantize stores at other types
        const QuantTable& table = QuantTable::builtin();
        const QuantizeExceptions& q = w.exceptions;
        uint64_t bytes = f->bits.bytes_for(checked_sub(params, std::min(params, q.params())));
        if (q.row_fallback_params) bytes = checked_add(bytes, table.find_type(q.row_fallback_type)->bits.bytes_for(q.row_fallback_params));
        if (q.output_params) bytes = checked_add(bytes, table.find_type(q.output_type)->bits.bytes_for(q.output_params));
        w.unclamped = bytes;
      }
      w.clamped = w.unclamped > model.native.bytes;
      w.bytes = w.clamped ? model.native.bytes : w.unclamped;
    }
  }
  w.effective_bits = params ? static_cast<double>(w.bytes) * 8.0 / static_cast<double>(params) : 0;
  return w;
}

Estimate estimate(const Model& model, const Scenario& s) {
  if (s.context == 0 || s.context > kMaxContextTokens) throw InputError("--context", "must be from 1 to " + format_tokens(kMaxContextTokens) + " tokens");
  if (s.sequences == 0 || s.sequences > kMaxSequences) throw InputError("--seqs", fmt::format("must be from 1 to {}", kMaxSequences));
  if (s.latent_values && (*s.latent_values == 0 || *s.latent_values > kMaxLatentValues)) {
    throw InputError("--latent-values", "must be from 1 to " + format_count(kMaxLatentValues));
  }
  CacheLayout cache = uniform_cache(cache_type(s.cache_dtype, "--cache-dtype"));
  cache.latent_values = s.latent_values;

  Estimate e;
  e.model = &model;
  e.scenario = s;
  e.weights = resolve_weights(model, s.quant);

  {  // weights line
    Line w;
    w.id = "weights";
    w.label = "Weights, " + e.weights.tier;
    w.bytes = e.weights.bytes;
    const uint64_t params = model.params.total();
    if (e.weights.kind == TierKind::Build) {
      const Build* b = model.find_build(s.quant);
      w.formula = fmt::format("measured size of {} = {}", b->name, bytes_text(b->bytes));
      w.assumption = "a named build's measured bytes are used as they are";
      w.source = b->source;
    } else if (e.weights.kind == TierKind::Native) {
      w.formula = fmt::format("{} {} = {} ({:.2f} effective bits per parameter over {} params{})", model.native.measured ? "measured" : (model.native.source.rfind("assumed", 0) == 0 ? "assumed" : "derived"),
                              model.native.format, bytes_text(w.bytes), e.weights.effective_bits, format_params(params), vendor_bits_text(model, w.bytes));
      w.assumption = model.native.note.empty() ? "the native checkpoint is what the engine loads" : model.native.note;
      if (model.native.copy_bytes) {
        w.assumption += fmt::format("; the files also hold lm_head.weight, a {} copy of the tied embedding (download {}), which engines load once",
                                    bytes_text(model.native.copy_bytes), bytes_text(model.native.download_bytes()));
      }
      w.source = model.native.source;
    } else {
      const QuantFormat* f = QuantTable::builtin().find_tier(s.quant);
      const QuantizeExceptions& q = e.weights.exceptions;
      const QuantTable& table = QuantTable::builtin();
      std::string parts = fmt::format("{} params × {} bits / 8", format_params(params - std::min(params, q.params())), f->bits_text());
      if (q.row_fallback_params) {
        parts += fmt::format(" + {} params in rows that are not whole {}-value blocks × {} bits ({}) / 8", format_params(q.row_fallback_params), f->row_block,
                             table.find_type(q.row_fallback_type)->bits_text(), q.row_fallback_type);
      }
      if (q.output_params) {
        parts += fmt::format(" + {} output-layer params × {} bits ({}) / 8", format_params(q.output_params), table.find_type(q.output_type)->bits_text(), q.output_type);
      }
      w.formula = fmt::format("min(native {}, {} = {}) = {}", bytes_text(model.native.bytes), parts, bytes_text(e.weights.unclamped), bytes_text(w.bytes));
      w.assumption = e.weights.clamped
                         ? fmt::format("{} would make the weights larger than the native {} checkpoint, so the native size stands (clamp rule)", f->name, model.native.format)
                         : fmt::format("every {}parameter at {} bits ({})", q.params() ? "other " : "", f->bits_text(), f->is_mix ? "a measured llama.cpp mix" : "from the block layout");
      w.source = f->source + "; params: " + model.params.total_source() +
                 (model.params.stated_total ? fmt::format("; the vendor states {} ({})", format_params(model.params.stated_total->value), model.params.stated_total->source) : "");
      if (q.row_fallback_params) {
        w.assumption += fmt::format("; llama-quantize stores a matrix whose row width (the hidden size {}, or an intermediate width) is not a multiple of {} at {}",
                                    format_count(model.hidden), f->row_block, q.row_fallback_type);
      }
      if (q.output_params) {
        w.assumption += fmt::format("; it stores the output layer{} at {}", model.tied_embeddings ? " (here the tied embedding)" : "", q.output_type);
      }
      if (q.params()) {
        w.source += "; per-tensor types: llama.cpp src/llama-quant.cpp, llama_tensor_get_type_impl and tensor_type_fallback "
                    "(https://github.com/ggml-org/llama.cpp/blob/master/src/llama-quant.cpp)";
      }
    }
    e.lines.push_back(std::move(w));
  }
  if (auto tower = checkpoint_tower_line(model, e.weights)) {  // the checkpoint's tower on its own line
    Line& w = e.lines.back();
    w.bytes -= tower->bytes;
    w.label += " (language model)";
    w.formula += fmt::format("; less the vision tower's {} on the next line = {}", bytes_text(tower->bytes), bytes_text(w.bytes));
    e.lines.push_back(std::move(*tower));
  }

  // Group layers by what they keep, so each kind is one explained line.
  std::map<GroupKey, Group> cache_groups;
  std::map<GroupKey, Group> state_groups;
  for (const auto& layer : model.layers) {
    for (const AttentionSpec* a : mixers(layer)) {
      if (!a) continue;
      if (a->kind == AttentionKind::LinearState) {
        auto& g = state_groups[{a->kind, a->state_values * 1000003 + a->conv_values, 0, a->state_family}];
        g.layers++;
        g.spec = *a;
      } else if (a->kind != AttentionKind::None) {
        auto& g = cache_groups[{a->kind, a->values_per_token(), a->window, StateFamily::Unknown}];
        g.layers++;
        g.spec = *a;
        if (a->kind == AttentionKind::Latent) e.latent_values_implied = a->values_per_token();
      }
    }
  }
  for (const auto& [key, g] : cache_groups) {
    Line l = cache_line(g, cache, s);
    e.cache_bytes = checked_add(e.cache_bytes, l.bytes);
    e.lines.push_back(std::move(l));
  }
  for (const auto& [key, g] : state_groups) {
    Line l = state_line(g, s);
    e.state_bytes = checked_add(e.state_bytes, l.bytes);
    e.lines.push_back(std::move(l));
  }

  const uint64_t base = checked_add(e.weights.bytes, e.context_bytes());
  e.overhead_bytes = checked_add(mul_div_round(base, s.overhead_bp, 10000), s.overhead_fixed);
  {
    Line o;
    o.id = "overhead";
    o.label = "Runtime overhead (" + format_percent_bp(s.overhead_bp) + (s.overhead_fixed ? " + fixed" : "") + ")";
    o.bytes = e.overhead_bytes;
    o.formula = fmt::format("{} × ({} weights + {} cache and state){} = {}", format_percent_bp(s.overhead_bp), bytes_text(e.weights.bytes),
                            bytes_text(e.context_bytes()), s.overhead_fixed ? " + " + bytes_text(s.overhead_fixed) : "", bytes_text(o.bytes));
    o.assumption = "activations, engine buffers, fragmentation and CUDA context as a share of resident memory (the common percentage rule); "
                   "the engine profiles replace this with what each engine allocates";
    o.source = "vramcalculator.com: 'Runtime overhead (~15%)', https://vramcalculator.com/kimi-k3-vram-requirements/";
    e.lines.push_back(std::move(o));
  }
  e.total_bytes = checked_add(base, e.overhead_bytes);
  e.verdict = make_verdict(e);
  return e;
}

}  // namespace vc
