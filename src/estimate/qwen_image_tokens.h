#pragma once
// The tokens one image adds for the dynamic-resolution Qwen vision towers (Qwen2-VL, Qwen2.5-VL,
// Qwen3-VL / Qwen3.5), as their image processor counts them (transformers
// models/qwen2_vl/image_processing_qwen2_vl.py smart_resize, which Qwen3-VL's processor reuses):
//   factor = patch_size x merge_size
//   h, w   = round(H / factor) x factor, round(W / factor) x factor (at least factor; Python's
//            round, halves to even)
//   above max_pixels: beta = sqrt(H x W / max_pixels), h = floor(H / beta / factor) x factor (w alike)
//   below min_pixels: beta = sqrt(min_pixels / (H x W)), h = ceil(H x beta / factor) x factor (w alike)
//   tokens = (h / patch) x (w / patch) / merge^2 = (h / factor) x (w / factor)
// patch_size and merge_size come from config.json's vision_config; min_pixels and max_pixels are
// the published preprocessor_config.json values of the family.
#include <cstdint>
#include <string>

namespace vc {

struct ImageSize {
  uint64_t width = 0, height = 0;
};

// "1280x720" (width x height) or "1024" (a square); InputError(flag) otherwise, or for a side
// outside 1..65,536 px or an aspect ratio above 200 (the processor refuses those).
ImageSize parse_image_size(const std::string& text, const std::string& flag);

struct QwenImageProcessor {
  std::string family;  // "Qwen2.5-VL", "Qwen3-VL"
  uint64_t patch = 0, merge = 0;
  uint64_t min_pixels = 0, max_pixels = 0;
  std::string source;  // the preprocessor_config.json the pixel bounds come from
  // Qwen3-VL's video processor (video_preprocessor_config.json size.longest_edge): one budget of
  // pixels for a whole video, frames x h x w, so a video is at most
  // video_max_pixels / (temporal_patch x factor^2) tokens however many frames it has. 0: Qwen2-VL and
  // Qwen2.5-VL resize every frame within max_pixels alone.
  uint64_t video_max_pixels = 0;
  std::string video_source;
};

// The processor of a tower family ("Qwen2-VL", "Qwen2.5-VL", "Qwen3-VL") with the tower's patch and merge.
QwenImageProcessor qwen_image_processor(const std::string& family, uint64_t patch, uint64_t merge);

struct QwenImageTokens {
  uint64_t resized_width = 0, resized_height = 0;
  uint64_t patches = 0;  // encoder positions: (h / patch) x (w / patch)
  uint64_t tokens = 0;   // what the image adds to the text context
  std::string formula;
};

QwenImageTokens qwen_image_tokens(const QwenImageProcessor& processor, const ImageSize& image);

inline constexpr const char* kQwenProcessorSource =
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen2_vl/image_processing_qwen2_vl.py (smart_resize)";

}  // namespace vc
