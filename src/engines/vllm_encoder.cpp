#include "engines/vllm_encoder.h"

#include <fmt/format.h>

#include <algorithm>

#include "catalogue/catalogue_tower.h"
#include "core/checked.h"
#include "core/units.h"
#include "engines/vllm_audio_encoder.h"

namespace vc {

VllmEncoderItems vllm_encoder_items(uint64_t tokens_per_item, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len) {
  VllmEncoderItems r;
  if (tokens_per_item == 0) return r;
  const uint64_t budget = std::max(max_num_batched_tokens, tokens_per_item);
  r.per_prompt = std::max<uint64_t>(1, std::min<uint64_t>(999, max_model_len / tokens_per_item));
  r.items = std::max<uint64_t>(1, std::min(budget / tokens_per_item, checked_mul(max_num_seqs, r.per_prompt)));
  return r;
}

VllmEncoderProfile vllm_encoder_profile(const Model& m, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len,
                                        uint64_t tp, uint64_t value_bytes) {
  VllmEncoderProfile p;
  if (!m.params.by_class.count(ParamClass::Vision)) return p;
  const std::optional<AudioEncoderSpec>& audio = m.audio_encoder;
  // An audio encoder without a vision tower (Qwen2-Audio): audio is the one modality profiled.
  if (audio && !tower_from_config(m)) return vllm_audio_encoder_profile(*audio, max_num_batched_tokens, max_num_seqs, max_model_len, tp, value_bytes);
  // With both (the Omni models), vLLM profiles the modality with the most tokens per item: the
  // vision tower's largest image or video outnumbers a 30 s audio clip's tokens.
  const std::string audio_note = audio ? "; the audio encoder is not what vLLM profiles here: it profiles the modality with the most tokens per item "
                                         "(get_modality_with_max_tokens, https://github.com/vllm-project/vllm/blob/main/vllm/multimodal/encoder_budget.py), "
                                         "the vision tower's largest image or video"
                                       : "";
  const std::optional<TowerSpec> tower = catalogue_tower(m);
  if (!tower) {
    p.note = "vLLM also profiles the vision encoder on a dummy image batch; modelled for catalogue entries whose config counts the tower, so that term is left out" + audio_note;
    return p;
  }
  const TowerSpec& t = *tower;
  if (t.tokens_per_image == 0 || t.image_size == 0 || t.patch == 0) {
    p.note = fmt::format("vLLM also profiles the {} encoder on a dummy batch of its largest images; a dynamic-resolution tower's largest image comes from "
                         "its processor config, not modelled here",
                         t.kind) + audio_note;
    return p;
  }
  p.tokens_per_item = t.tokens_per_image;
  const VllmEncoderItems n = vllm_encoder_items(t.tokens_per_image, max_num_batched_tokens, max_num_seqs, max_model_len);
  const uint64_t per_prompt = n.per_prompt;
  p.items = n.items;
  p.pixel_bytes = checked_product({p.items, t.channels, t.image_size, t.image_size, value_bytes});
  p.output_bytes = checked_product({p.items, t.tokens_per_image, t.text_hidden, value_bytes});
  // The widest moment of one encoder layer: the residual stream, its normed copy and the MLP's
  // two intermediates (the up projection's output and its activation; the MLP is split over TP).
  const uint64_t side = t.image_size / t.patch;
  const uint64_t patches = checked_product({p.items, side, side});
  p.encoder_peak = checked_add(p.pixel_bytes, checked_product({patches, checked_add(2 * t.hidden, 2 * (t.ffn / tp)), value_bytes}));
  p.formula = fmt::format("{} dummy images (min(max({}, {}) / {} tokens, {} seqs x {} a prompt)) held: pixels {} x {} x {}^2 x {} B = {} B + encoder "
                          "outputs {} x {} tokens x {} x {} B = {} B; encoding: {} patches x (2 x {} + 2 x {}) x {} B + pixels = {} B",
                          p.items, max_num_batched_tokens, t.tokens_per_image, t.tokens_per_image, max_num_seqs, per_prompt, p.items, t.channels,
                          t.image_size, value_bytes, format_count(p.pixel_bytes), p.items, t.tokens_per_image, t.text_hidden, value_bytes,
                          format_count(p.output_bytes), format_count(patches), t.hidden, t.ffn / tp, value_bytes, format_count(p.encoder_peak));
  p.source = kVllmEncoderBudgetSource;
  return p;
}

uint64_t VllmEncoderProfile::peak_with(uint64_t decoder_peak) const { return std::max(encoder_peak, checked_add(held(), decoder_peak)); }

}  // namespace vc
