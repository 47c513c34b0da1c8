// Gemma 3 (model_type gemma3 wrapping gemma3_text, or gemma3_text alone): local sliding-window
// layers (window sliding_window, 1024) and global layers. layer_types decides when present; else
// sliding_window_pattern (also _sliding_window_pattern, default 6): layer i is global iff
// (i + 1) % pattern == 0. Explicit head_dim (128 for 27B, not hidden/heads = 168). The published
// configs omit what Gemma3TextConfig defaults: vocab_size, tie_word_embeddings and
// max_position_embeddings (262,208; tied; 131,072) in all, and the 4B's also its heads (8 query,
// 4 KV, head_dim 256), so an absent key takes the transformers default. Four norms per layer, q/k norms.
// The SigLIP vision tower is not in the config's geometry (catalogue facts add it).
// Reference: architectures.md sections 2 and 10.
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_gemma3(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  m.hidden = cfg.u64("hidden_size", limits::kHidden);
  m.vocab = cfg.u64_or("vocab_size", 262208, limits::kVocab, "transformers Gemma3TextConfig default");
  m.tied_embeddings = cfg.flag("tie_word_embeddings", true);  // Gemma ties its output head
  tally.add(ParamClass::Embedding, checked_mul(m.vocab, m.hidden), 0);
  tally_output_head(tally, m);
  tally.add_always_active(ParamClass::Norms, m.hidden);
  m.max_context = cfg.u64_or("max_position_embeddings", 131072, uint64_t{1} << 34, "transformers Gemma3TextConfig default");

  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa_or(cfg, {8, 4, 256}, "transformers Gemma3TextConfig default");
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);
  const uint64_t window = cfg.u64_or("sliding_window", 4096, limits::kWindow, "transformers Gemma3TextConfig default");
  std::vector<bool> global(layers, false);
  if (cfg.has("layer_types")) {
    auto types = read_layer_types(cfg, layers, {"sliding_attention", "full_attention"});
    for (uint64_t i = 0; i < layers; ++i) global[i] = types[i] == "full_attention";
  } else {
    const uint64_t pattern = cfg.has("sliding_window_pattern")
                                 ? cfg.u64("sliding_window_pattern", limits::kLayers)
                                 : cfg.u64_or("_sliding_window_pattern", 6, limits::kLayers, "transformers Gemma3TextConfig default: every 6th layer global");
    if (pattern == 0) cfg.fail("sliding_window_pattern", "is 0; a positive number is expected");
    for (uint64_t i = 0; i < layers; ++i) global[i] = (i + 1) % pattern == 0;
  }

  const uint64_t attn = checked_add(gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, false), 2 * g.head_dim);
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
  tally.write_to(m.params, cfg.label() + " geometry (Gemma 3 mapper)");
}

}  // namespace vc::families
