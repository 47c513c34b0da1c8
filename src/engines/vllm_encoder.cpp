#include "engines/vllm_encoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "catalogue/catalogue_tower.h"
#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/vllm_audio_encoder.h"
#include "engines/vllm_qwen_vl_encoder.h"

namespace vc {

namespace {

constexpr const char* kLimitAccepted = "accepted: a JSON object such as '{\"image\": 0, \"video\": 2}' (a modality's value a count or "
                                       "{\"count\": N, ...}), or image=0,video=2";
constexpr size_t kMaxModalities = 8;
constexpr uint64_t kMaxLimit = 1u << 20;

void set_limit(VllmMmLimits& limits, const std::string& flag, const std::string& modality, uint64_t n) {
  const bool name_ok = !modality.empty() && modality.size() <= 32 &&
                       std::all_of(modality.begin(), modality.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)) || c == '_'; });
  if (!name_ok) throw InputError(flag, "'" + modality.substr(0, 40) + "' is not a modality name (image, video, audio, ...); " + kLimitAccepted);
  if (n > kMaxLimit) throw InputError(flag, fmt::format("{} for {} is out of range; accepted: 0 to {}", n, modality, kMaxLimit));
  limits.per_prompt[modality] = n;
  if (limits.per_prompt.size() > kMaxModalities) throw InputError(flag, fmt::format("names more than {} modalities", kMaxModalities));
}

uint64_t whole_number(const std::string& flag, const std::string& modality, const std::string& text) {
  if (text.empty() || text.size() > 8 || !std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    throw InputError(flag, "'" + text.substr(0, 40) + "' for " + modality.substr(0, 40) + " is not a whole number; " + kLimitAccepted);
  return std::stoull(text);
}

}  // namespace

uint64_t VllmMmLimits::of(const std::string& modality) const {
  const auto it = per_prompt.find(modality);
  return it == per_prompt.end() ? kVllmDefaultMmLimit : it->second;
}

std::string VllmMmLimits::json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [modality, n] : per_prompt) j[modality] = n;
  return j.dump();
}

void read_vllm_mm_limits(VllmMmLimits& limits, const std::string& flag, const std::string& value, const std::string& modality) {
  if (value.size() > 1024) throw InputError(flag, "is longer than 1,024 characters");
  if (!modality.empty()) return set_limit(limits, flag, modality, whole_number(flag, modality, value));
  if (!value.empty() && value.front() == '{') {
    const nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError(flag, "is not a JSON object; " + std::string(kLimitAccepted));
    for (const auto& [name, v] : j.items()) {
      // vllm/config/multimodal.py: a count, or a dummy-item option object whose "count" is the limit.
      const nlohmann::json& n = v.is_object() && v.contains("count") ? v["count"] : v;
      if (!n.is_number_unsigned()) throw InputError(flag, "the value for '" + name.substr(0, 40) + "' is not a whole number; " + kLimitAccepted);
      set_limit(limits, flag, name, n.get<uint64_t>());
    }
    return;
  }
  size_t start = 0;
  while (start <= value.size()) {
    const size_t end = std::min(value.find(',', start), value.size());
    const std::string item = value.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw InputError(flag, "'" + item.substr(0, 40) + "' is not MODALITY=N; " + kLimitAccepted);
    set_limit(limits, flag, item.substr(0, eq), whole_number(flag, item.substr(0, eq), item.substr(eq + 1)));
    start = end + 1;
  }
}

uint64_t vllm_encoder_pass_peak(uint64_t input_bytes, uint64_t positions, uint64_t hidden, uint64_t ffn, uint64_t tp, uint64_t value_bytes,
                                uint64_t mlp_tensors) {
  return checked_add(input_bytes, checked_product({positions, checked_add(checked_mul(2, hidden), checked_mul(mlp_tensors, ffn / tp)), value_bytes}));
}

VllmEncoderItems vllm_encoder_items(uint64_t tokens_per_item, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len,
                                    uint64_t limit_per_prompt) {
  VllmEncoderItems r;
  if (tokens_per_item == 0) return r;
  const uint64_t budget = std::max(max_num_batched_tokens, tokens_per_item);
  r.per_prompt = std::max<uint64_t>(1, std::min<uint64_t>(limit_per_prompt, max_model_len / tokens_per_item));
  r.items = std::max<uint64_t>(1, std::min(budget / tokens_per_item, checked_mul(max_num_seqs, r.per_prompt)));
  return r;
}

VllmEncoderProfile vllm_encoder_profile(const Model& m, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len,
                                        uint64_t tp, uint64_t value_bytes, const VllmMmLimits& limits) {
  VllmEncoderProfile p;
  if (!m.params.by_class.count(ParamClass::Vision)) return p;
  const std::optional<AudioEncoderSpec>& audio = m.audio_encoder;
  // The modality profiled: audio for an audio encoder without a vision tower (Qwen2-Audio), else
  // the tower's images (the image-only towers modelled below; the others are not modelled).
  const bool audio_only = audio && !tower_from_config(m);
  // Qwen2-VL / Qwen2.5-VL / Qwen3-VL (not the Omni models, whose thinker profiles its own way): image or
  // video, whichever has more tokens an item, each with its own limit.
  if (!audio && m.vision_encoder && vllm_qwen_vl_modelled(*m.vision_encoder))
    return vllm_qwen_vl_encoder_profile(*m.vision_encoder, max_num_batched_tokens, max_num_seqs, max_model_len, tp, value_bytes, limits);
  const std::string modality = audio_only ? "audio" : "image";
  const uint64_t limit = limits.of(modality);
  if (limit == 0) {
    p.note = fmt::format("--limit-mm-per-prompt gives {} 0: vLLM profiles no encoder batch for it (only modalities with a limit above 0 pass through "
                         "the tower; with every modality at 0 the model runs text-only, vllm/multimodal/registry.py supports_multimodal_inputs)",
                         modality);
    return p;
  }
  if (audio_only) return vllm_audio_encoder_profile(*audio, max_num_batched_tokens, max_num_seqs, max_model_len, tp, value_bytes, limit);
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
  const VllmEncoderItems n = vllm_encoder_items(t.tokens_per_image, max_num_batched_tokens, max_num_seqs, max_model_len, limit);
  const uint64_t per_prompt = n.per_prompt;
  p.items = n.items;
  p.pixel_bytes = checked_product({p.items, t.channels, t.image_size, t.image_size, value_bytes});
  p.output_bytes = checked_product({p.items, t.tokens_per_image, t.text_hidden, value_bytes});
  const uint64_t side = t.image_size / t.patch;
  const uint64_t patches = checked_product({p.items, side, side});
  p.encoder_peak = vllm_encoder_pass_peak(p.pixel_bytes, patches, t.hidden, t.ffn, tp, value_bytes);
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
