#pragma once
// The vision tower a multimodal checkpoint ships, counted from config.json's vision_config: the
// encoder (patch embedding, positions, blocks, final norm) and the projector into the text model,
// term by term after each family's module layout. The count goes into Model::params as
// ParamClass::Vision (not active per decoded token), its formula into provenance "params.vision",
// and provenance "vision_config" says the tower was counted from the config (a catalogue entry may
// state a tower instead). A vision_config or audio_config of a layout not modelled here is left
// out with a warning that says so.
#include <cstdint>
#include <optional>
#include <string>

#include "sources/config/config_view.h"

namespace vc {

struct TowerSpec {
  std::string kind;               // "SigLIP", "Pixtral", "Qwen3-VL", "Qwen2.5-VL", "Qwen2-VL", "MoonViT", "MoonViT3d", "Llama 4", "Qwen3-Omni vision", "Qwen2-Audio", "Qwen2.5-Omni audio", "Qwen3-Omni audio"
  uint64_t encoder_params = 0;    // patch embedding, positions, blocks, final norm
  uint64_t projector_params = 0;  // what maps the encoder's output into the text model's hidden size
  uint64_t layers = 0, hidden = 0, ffn = 0, heads = 0, patch = 0, channels = 3;
  uint64_t image_size = 0;        // the fixed input side in pixels; 0 when the resolution is dynamic
  uint64_t tokens_per_image = 0;  // text-context tokens one image becomes at image_size; 0 when dynamic
  uint64_t spatial_merge = 0;     // Qwen-VL (dynamic resolution): patches per side merged into one token; 0 otherwise
  uint64_t temporal_patch = 0;    // Qwen-VL: frames one patch spans (temporal_patch_size); 0 otherwise
  uint64_t text_hidden = 0;       // the projector's output width
  uint64_t deepstack = 0;         // Qwen3-VL: DeepStack mergers (deepstack_visual_indexes), each a further text_hidden a token; 0 otherwise
  uint64_t positions = 0;         // audio (Qwen2-Audio): the encoder's positions per 30 s clip (max_source_positions); 0 otherwise
  std::string formula;            // the count, term by term
  std::string source;             // the module layout it follows
  uint64_t params() const { return encoder_params + projector_params; }
};

// Prefix of the warning for a tower left out; a catalogue entry that states the tower itself
// (facts.json extra_params "vision") clears it.
inline constexpr const char* kTowerNotCountedWarning = "vision tower not counted: ";

// The tower of the config's vision_config (nullopt: none, or a layout not modelled), its
// projector into `text_hidden`. Reads only; InputError for a bad value.
std::optional<TowerSpec> config_tower(ConfigView& cfg, uint64_t text_hidden);

// The audio encoder of the config's audio_config (nullopt: none, or a layout not modelled: only
// Qwen2-Audio's and Qwen2.5-Omni's Whisper-style encoders and Qwen3-Omni's AuT are), its projector
// into `text_hidden` (the Omni models: audio_config.output_dim). Counted with the vision tower's class (it loads beside
// the text weights, inactive per token).
std::optional<TowerSpec> config_audio_tower(ConfigView& cfg, uint64_t text_hidden);

// After the text mapper: counts config_tower and config_audio_tower into the model (params,
// provenance "params.vision", "params.audio"; the audio encoder's geometry in
// Model::audio_encoder, for the engines' profile runs), or warns.
void count_config_tower(ConfigView& cfg);

// Whether `model`'s tower was counted from its config (not stated by a catalogue entry).
bool tower_from_config(const Model& model);

}  // namespace vc
