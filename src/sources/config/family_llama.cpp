// Llama and Mistral (model_type llama, mistral): a stack of identical layers, grouped-query
// attention and a gated MLP. head_dim defaults to hidden / heads (Llama 3.1 has no head_dim key).
// Granite 3.x (granite, GraniteForCausalLM: Llama's tensors; its embedding, residual, attention and
// logit multipliers weigh nothing) and Gemma 1 (gemma, GemmaForCausalLM: the same tensors, a GeGLU
// gate_proj / up_proj / down_proj, the head tied to the embedding by default: GemmaConfig
// tie_word_embeddings=True, which google/gemma-2b's config.json leaves out) read the same way.
// Mistral's sliding_window makes every layer a window layer (v0.1: 4096); null (v0.3) means full
// attention. Formulas: reference/architectures.md sections 1 and 2; transformers LlamaConfig.
#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/limits.h"

namespace vc::families {

namespace {

void map_llama_layout(ConfigView& cfg, bool tied_default, const char* mapper) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally, tied_default);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);
  const bool attention_bias = cfg.flag("attention_bias", false);
  const bool mlp_bias = cfg.flag("mlp_bias", false);
  const auto window = cfg.opt_u64("sliding_window", limits::kWindow);

  uint64_t attn = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, attention_bias);
  if (attention_bias) attn = checked_add(attn, hidden);  // o_proj bias
  uint64_t mlp = glu_params(hidden, width);
  if (mlp_bias) mlp = checked_add(mlp, checked_add(2 * width, hidden));
  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = window && *window > 0 ? window_attention(g, *window) : full_attention(g);
    layer.feed_forward = dense_spec(width);
    tally.add_always_active(ParamClass::Attention, attn);
    tally.add_always_active(ParamClass::DenseMlp, mlp);
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (" + mapper + " mapper)");
}

}  // namespace

void map_llama(ConfigView& cfg) { map_llama_layout(cfg, false, "Llama"); }
void map_gemma(ConfigView& cfg) { map_llama_layout(cfg, true, "Gemma"); }

}  // namespace vc::families
