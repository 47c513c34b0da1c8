// Gemma 2 and Gemma 3: local sliding-window layers and global layers, an explicit head_dim, four
// norms per layer, a tied head.
// Gemma 3 (model_type gemma3 wrapping gemma3_text, or gemma3_text alone): window sliding_window
// (1024); layer_types decides when present; else sliding_window_pattern (also
// _sliding_window_pattern, default 6): layer i is global iff (i + 1) % pattern == 0. Explicit
// head_dim (128 for 27B, not hidden/heads = 168). The published configs omit what
// Gemma3TextConfig defaults: vocab_size, tie_word_embeddings and max_position_embeddings (262,208;
// tied; 131,072) in all, and the 4B's also its heads (8 query, 4 KV, head_dim 256), so an absent key
// takes the transformers default. q/k norms (head_dim each). Its sliding layers rotate with
// rope_local_base_freq (default 10,000) and no scaling, its global ones with rope_theta (1,000,000)
// and rope_scaling: Model::rope.sliding_own_table when the two differ.
// Gemma 2 (model_type gemma2): window sliding_window (4096) on every other layer, the first local
// (transformers' Gemma2DecoderLayer: is_sliding = not bool(layer_idx % 2); layer_types in newer
// configs says the same), so layer i is global iff (i + 1) % 2 == 0; no q/k norms; Gemma2Config's
// defaults (vocab 256,000, tied, 8,192 positions, 8 / 4 heads of 256) for an absent key.
// The SigLIP vision tower is not in the config's geometry (config_tower.cpp counts it).
// Reference: architectures.md sections 2 and 10.
#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {
namespace {

struct GemmaVariant {
  const char* config_class;  // the transformers class whose defaults an absent key takes
  uint64_t vocab, max_positions, window, pattern;
  GqaGeometry heads;
  bool qk_norms;
  const char* mapper;
  double theta = 10000, local_base = 0;  // rope_theta and rope_local_base_freq defaults; local_base 0: one base for every layer
};

void map_gemma(ConfigView& cfg, const GemmaVariant& v) {
  Model& m = cfg.model();
  ParamTally tally;
  const std::string defaults = std::string("transformers ") + v.config_class + " default";
  m.hidden = cfg.u64("hidden_size", limits::kHidden);
  m.vocab = cfg.u64_or("vocab_size", v.vocab, limits::kVocab, defaults);
  m.tied_embeddings = cfg.flag("tie_word_embeddings", true);  // Gemma ties its output head
  tally.add(ParamClass::Embedding, checked_mul(m.vocab, m.hidden), 0);
  tally_output_head(tally, m);
  tally.add_always_active(ParamClass::Norms, m.hidden);
  m.max_context = cfg.u64_or("max_position_embeddings", v.max_positions, uint64_t{1} << 34, defaults);

  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa_or(cfg, v.heads, defaults);
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);
  const uint64_t window = cfg.u64_or("sliding_window", v.window, limits::kWindow, defaults);
  std::vector<bool> global(layers, false);
  if (cfg.has("layer_types")) {
    auto types = read_layer_types(cfg, layers, {"sliding_attention", "full_attention"});
    for (uint64_t i = 0; i < layers; ++i) global[i] = types[i] == "full_attention";
  } else {
    const uint64_t pattern = cfg.has("sliding_window_pattern")
                                 ? cfg.u64("sliding_window_pattern", limits::kLayers)
                                 : cfg.u64_or("_sliding_window_pattern", v.pattern, limits::kLayers,
                                              defaults + fmt::format(": every {} layer global", v.pattern == 2 ? std::string("other") : fmt::format("{}th", v.pattern)));
    if (pattern == 0) cfg.fail("sliding_window_pattern", "is 0; a positive number is expected");
    for (uint64_t i = 0; i < layers; ++i) global[i] = (i + 1) % pattern == 0;
  }

  const uint64_t attn = checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, false), v.qk_norms ? 2 * g.head_dim : 0);
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = global[il] ? full_attention(g) : window_attention(g, window);
    layer.feed_forward = dense_spec(width);
    tally.add_always_active(ParamClass::Attention, attn);
    tally.add_always_active(ParamClass::DenseMlp, glu_params(hidden, width));
    tally.add_always_active(ParamClass::Norms, 4 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (" + v.mapper + ")");
  // Gemma 3 rotates its sliding layers with rope_local_base_freq (Gemma3TextConfig default 10,000)
  // and no scaling, its global layers with rope_theta (1,000,000) and rope_scaling: two tables
  // wherever the two differ (Gemma 2 rotates every layer alike).
  if (v.local_base) {
    auto number = [&](const char* key, double fallback) {
      const nlohmann::json* x = cfg.raw(key);
      return x && x->is_number() ? x->get<double>() : fallback;
    };
    const bool any_sliding = std::find(global.begin(), global.end(), false) != global.end();
    m.rope.sliding_own_table = any_sliding && (number("rope_local_base_freq", v.local_base) != number("rope_theta", v.theta) || m.rope.type != "default" || m.rope.factor != 1.0);
  }
}

}  // namespace

void map_gemma3(ConfigView& cfg) {
  map_gemma(cfg, {"Gemma3TextConfig", 262208, 131072, 4096, 6, {8, 4, 256}, true, "Gemma 3 mapper", 1e6, 1e4});
}

void map_gemma2(ConfigView& cfg) {
  map_gemma(cfg, {"Gemma2Config", 256000, 8192, 4096, 2, {8, 4, 256}, false, "Gemma 2 mapper"});
}

}  // namespace vc::families
