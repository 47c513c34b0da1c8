#pragma once
// `--mmproj auto` for a catalogue model: the projector is the tower counted from the entry's
// config.json (vision_config; sources/config/config_tower.h), at the bytes llama.cpp's mmproj
// GGUF of it holds at F16 (2 B a parameter, an assumption the weights line states). Defined in
// vision_tower.cpp beside the mmproj reader, so the encoder's sizing stays one formula.
#include <string>
#include <vector>

#include "estimate/vision_tower.h"
#include "sources/config/config_tower.h"

namespace vc {

// InputError("--mmproj") for a tower whose image size is dynamic (Pixtral, Qwen-VL, MoonViT): the
// tokens an image adds depend on the image, so the projector GGUF must be named there.
VisionTower vision_tower_from_config(const TowerSpec& spec, const std::string& model_name);

// vision_tower_lines for such a tower: its weights line says where the bytes come from.
std::vector<Line> config_vision_tower_lines(const VisionTower& tower, const TowerSpec& spec, uint64_t images);

}  // namespace vc
