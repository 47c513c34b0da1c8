#pragma once
// The vision (or audio) tower a multimodal model loads beside its text weights, read from an
// mmproj GGUF header (llama.cpp's tools/mtmd): the tower's weights, the image tokens one image
// adds to the context (llama.cpp's clip_n_output_tokens, per projector type), and the encoder's
// activation peak for one image.
#include <cstdint>
#include <string>
#include <vector>

#include "estimate/estimate.h"
#include "sources/gguf/gguf_file.h"

namespace vc {

struct VisionTower {
  std::string file;          // the mmproj it was read from
  std::string projector;     // clip.projector_type ("gemma3", "qwen2.5vl", "mlp")
  uint64_t weight_bytes = 0; // every tensor in the file (encoder + projector)
  uint64_t image_size = 0, patch_size = 0, merge = 1;
  uint64_t hidden = 0, ffn = 0, layers = 0, heads = 0;
  uint64_t positions = 0;        // encoder positions per image: (image_size / patch_size)^2
  uint64_t image_tokens = 0;     // what one image adds to the text context
  std::string tokens_formula;
  std::string tokens_source;     // the code that counts them; empty: llama.cpp's clip.cpp
  uint64_t activation_bytes = 0; // encoder peak for one image
  std::string activation_formula;
};

// InputError(file) when the header is not an mmproj (no clip.* geometry).
VisionTower vision_tower_from_mmproj(const GgufFile& mmproj);

// The tower's lines: weights, encoder activations, and (when images > 0) the tokens they add.
std::vector<Line> vision_tower_lines(const VisionTower& tower, uint64_t images);

}  // namespace vc
