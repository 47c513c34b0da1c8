#pragma once
// `--mmproj auto` for a catalogue model: the projector is the tower counted from the entry's
// config.json (vision_config; sources/config/config_tower.h), at the bytes llama.cpp's mmproj
// GGUF of it holds at F16 (2 B a parameter, an assumption the weights line states). Defined in
// vision_tower.cpp beside the mmproj reader, so the encoder's sizing stays one formula.
#include <optional>
#include <string>
#include <vector>

#include "estimate/qwen_image_tokens.h"
#include "estimate/vision_tower.h"
#include "sources/config/config_tower.h"

namespace vc {

// A Qwen-VL tower reads images at any size: `image` (--image-size) gives the size, and the tokens
// and encoder positions follow its processor (estimate/qwen_image_tokens.h); InputError
// ("--image-size") when it is missing. InputError("--mmproj") for the other dynamic towers
// (Pixtral, MoonViT), whose projector GGUF must be named.
VisionTower vision_tower_from_config(const TowerSpec& spec, const std::string& model_name, const std::optional<ImageSize>& image = std::nullopt);

// vision_tower_lines for such a tower: its weights line says where the bytes come from.
std::vector<Line> config_vision_tower_lines(const VisionTower& tower, const TowerSpec& spec, uint64_t images);

}  // namespace vc
