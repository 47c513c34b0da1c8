#include "engines/vllm_tower_skip.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "core/checked.h"
#include "core/units.h"
#include "engines/serving_dtype.h"
#include "estimate/checkpoint_tower.h"
#include "sources/config/config_tower.h"

namespace vc {

namespace {

// A model class that builds its tower inside _mark_tower_model, as read from its vLLM source.
struct TowerClass {
  const char* model_class;
  const char* part;     // what ParamClass::Vision holds for it, all of it inside the context
  const char* modules;  // the modules the class creates inside _mark_tower_model
  std::vector<std::string> modalities;
  const char* source;
  const char* since;  // the releases that skip it
};

constexpr const char* kSinceJanuary2026 = "vLLM since January 2026 (PR #32605), older releases load the tower at any limit";

// Gemma 3: SigLIP counted from vision_config for a gemma3 config (config_tower.cpp), no audio.
// Qwen2-Audio: the audio encoder alone (no vision_config, nothing stated as a tower).
// Mistral 3 (Mistral Small 3.1 and later, a mistral3 config): the Pixtral tower and the projector
// under "image"; Pixtral-12B's own class (pixtral.py) was not read.
// Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3.5: `visual` (the ViT with its merger, and Qwen3-VL's
// DeepStack mergers), built inside _mark_tower_model(vllm_config, {"image", "video"}); the Omni
// models, whose audio encoder shares the tower's parameter class, are left out.
const TowerClass* tower_class(const Model& m) {
  static const TowerClass gemma3{"Gemma3ForConditionalGeneration", "the SigLIP vision tower and its projector", "vision_tower, multi_modal_projector",
                                 {"image"}, "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/gemma3_mm.py", kSinceJanuary2026};
  static const TowerClass qwen2_audio{"Qwen2AudioForConditionalGeneration", "the Whisper-style audio encoder and its projector",
                                      "audio_tower, multi_modal_projector", {"audio"},
                                      "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_audio.py", kSinceJanuary2026};
  static const TowerClass mistral3{"Mistral3ForConditionalGeneration", "the Pixtral vision tower and its projector", "vision_tower, multi_modal_projector",
                                   {"image"}, "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/mistral3.py", kSinceJanuary2026};
  static const TowerClass qwen2_vl{"Qwen2VLForConditionalGeneration", "the Qwen2-VL vision tower and its merger", "visual", {"image", "video"},
                                   "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_vl.py", kSinceJanuary2026};
  static const TowerClass qwen25_vl{"Qwen2_5_VLForConditionalGeneration", "the Qwen2.5-VL vision tower and its merger", "visual", {"image", "video"},
                                    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_5_vl.py",
                                    "in vLLM since January 2026 through _mark_tower_model (PR #32605) and before it in the class itself "
                                    "(`visual` built only when the image or video limit is above 0, load_weights skipping `visual.`)"};
  static const TowerClass qwen3_vl{"Qwen3VLForConditionalGeneration (and Qwen3.5's class)", "the Qwen3-VL vision tower, its merger and DeepStack mergers",
                                   "visual", {"image", "video"},
                                   "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen3_vl.py; "
                                   "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen3_5.py",
                                   kSinceJanuary2026};
  if (m.architecture == "gemma3" && tower_from_config(m) && !m.audio_encoder) return &gemma3;
  if (m.audio_encoder && m.audio_encoder->kind == "Qwen2-Audio" && !tower_from_config(m) && !m.provenance.count("params.vision")) return &qwen2_audio;
  if (m.vision_encoder && !m.audio_encoder) {
    if (m.vision_encoder->kind == "Pixtral" && m.architecture == "mistral3") return &mistral3;
    if (m.vision_encoder->kind == "Qwen2-VL") return &qwen2_vl;
    if (m.vision_encoder->kind == "Qwen2.5-VL") return &qwen25_vl;
    if (m.vision_encoder->kind == "Qwen3-VL") return &qwen3_vl;
  }
  return nullptr;
}

}  // namespace

VllmTowerSkip vllm_tower_skip(const Model& m, const WeightsFigure& w, const std::string& dtype, const VllmMmLimits& limits) {
  VllmTowerSkip s;
  const TowerClass* c = tower_class(m);
  if (!c) return s;
  for (const auto& modality : c->modalities) {
    if (limits.of(modality) != 0) return s;
  }
  const std::optional<TowerShare> share = tower_share(m, w);
  if (!share) return s;
  s.params = share->params;
  s.tier_bytes = share->bytes;
  // As loaded: the native checkpoint at --dtype casts an unquantized class (loaded_weight_bytes);
  // a class table gives the tower's own dtype, a share by parameters follows the whole's cast.
  const uint64_t loaded = loaded_weight_bytes(m, w.bytes, dtype);
  s.bytes = loaded == w.bytes ? share->bytes
            : share->exact    ? loaded_class_bytes(share->params, share->bytes, serving_dtype_bytes(dtype))
                              : mul_div_round(loaded, share->params, m.params.total());
  s.part = c->part;
  s.formula = fmt::format("{} B of {} ({}{}) not built", format_count(s.bytes), c->part, share->formula,
                          s.bytes == share->bytes ? "" : fmt::format(", {} B at --dtype {}", format_count(s.bytes), dtype));
  s.assumption = fmt::format("--limit-mm-per-prompt gives {} 0: {} creates {} inside SupportsMultiModal._mark_tower_model, which builds them on the "
                             "meta device in place of real modules when every modality of the tower is at 0, so their weights never reach the GPU "
                             "and the KV cache gets those bytes; {}",
                             fmt::join(c->modalities, ", "), c->model_class, c->modules, c->since);
  s.source = std::string(kVllmTowerSkipSource) + "; " + c->source;
  return s;
}

}  // namespace vc
