#include "estimate/vision_tower.h"

#include "estimate/config_vision_tower.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"

namespace vc {
namespace {

constexpr const char* kClipSource = "https://github.com/ggml-org/llama.cpp/blob/master/tools/mtmd/clip.cpp";

uint64_t key_u64(const GgufFile& f, std::initializer_list<const char*> keys, uint64_t fallback) {
  for (const char* k : keys) {
    if (const GgufValue* v = f.find(k)) {
      if (auto u = v->as_u64()) return *u;
    }
  }
  return fallback;
}

std::string key_str(const GgufFile& f, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (const GgufValue* v = f.find(k); v && v->type == GgufType::String) return v->s;
  }
  return "";
}

bool is_one_of(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names) if (s == n) return true;
  return false;
}

// llama.cpp's default merge factor where the file states none (clip.cpp load_hparams).
uint64_t default_merge(const std::string& projector) {
  if (projector == "gemma3") return 4;
  if (projector == "llama4") return 2;
  return 1;
}

// Tokens one image of image_size x image_size adds, as clip_n_output_tokens counts them.
void count_image_tokens(VisionTower& t) {
  const uint64_t side = t.image_size / t.patch_size;  // patches per side
  const std::string& p = t.projector;
  if (is_one_of(p, {"gemma3", "gemma4v", "idefics3", "internvl", "llama4", "nemotron_v2_vl"})) {
    const uint64_t per_side = side / t.merge;
    t.image_tokens = checked_mul(per_side, per_side);
    t.tokens_formula = fmt::format("({} px / {} px patch)^2 / merge {}^2 = {}^2 / {} = {} tokens", t.image_size, t.patch_size, t.merge, side,
                                   t.merge * t.merge, t.image_tokens);
  } else if (is_one_of(p, {"qwen2vl_merger", "qwen2.5vl_merger", "qwen3vl_merger", "glm4v", "qwen2vl", "qwen25vl", "qwen3vl", "youtuvl"})) {
    const uint64_t per_side = t.image_size / (t.patch_size * 2);
    t.image_tokens = checked_mul(per_side, per_side);
    t.tokens_formula = fmt::format("(H / ({} x 2)) x (W / ({} x 2)) = {} x {} = {} tokens at {} x {} px; dynamic: grows with the image", t.patch_size, t.patch_size,
                                   per_side, per_side, t.image_tokens, t.image_size, t.image_size);
  } else if (is_one_of(p, {"pixtral", "lightonocr"})) {
    const uint64_t per_side = side / t.merge;
    t.image_tokens = checked_add(checked_mul(per_side, per_side), per_side - 1);
    t.tokens_formula = fmt::format("rows x cols + (rows - 1) [IMG_BREAK] = {0} x {0} + {1} = {2} tokens at {3} x {3} px; dynamic", per_side, per_side - 1,
                                   t.image_tokens, t.image_size);
  } else {
    t.image_tokens = checked_mul(side, side);
    t.tokens_formula = fmt::format("({} px / {} px patch)^2 = {} tokens (one per patch)", t.image_size, t.patch_size, t.image_tokens);
  }
}

// The encoder's positions per image and its activation peak for one image: one encoder layer at a
// time is live: hidden states in and out, Q/K/V, the FFN intermediate (f32 activations), and
// without flash attention the heads x positions^2 score matrix.
void size_encoder(VisionTower& t) {
  const uint64_t side = t.image_size / t.patch_size;
  if (t.positions == 0) t.positions = checked_mul(side, side);  // a dynamic tower's are set from the image
  const uint64_t states = checked_mul(checked_mul(t.positions, checked_add(checked_mul(5, t.hidden), t.ffn)), 4);
  const uint64_t scores = checked_mul(checked_mul(checked_mul(t.heads, t.positions), t.positions), 4);
  t.activation_bytes = checked_add(states, scores);
  t.activation_formula = fmt::format("{} positions x (5 x {} hidden + {} ffn) x 4 B + {} heads x {}^2 scores x 4 B", t.positions, t.hidden, t.ffn, t.heads, t.positions);
}

}  // namespace

VisionTower vision_tower_from_mmproj(const GgufFile& f) {
  VisionTower t;
  t.file = f.label;
  t.projector = key_str(f, {"clip.vision.projector_type", "clip.projector_type"});
  t.image_size = key_u64(f, {"clip.vision.image_size"}, 0);
  t.patch_size = key_u64(f, {"clip.vision.patch_size"}, 0);
  t.hidden = key_u64(f, {"clip.vision.embedding_length"}, 0);
  t.ffn = key_u64(f, {"clip.vision.feed_forward_length"}, 0);
  t.layers = key_u64(f, {"clip.vision.block_count"}, 0);
  t.heads = key_u64(f, {"clip.vision.attention.head_count"}, 0);
  if (t.image_size == 0 || t.patch_size == 0 || t.hidden == 0 || t.heads == 0 || t.image_size < t.patch_size || t.image_size > 65536) {
    throw InputError(f.label, "is not a vision projector (mmproj) GGUF: it needs clip.vision.image_size, patch_size, embedding_length and attention.head_count");
  }
  t.merge = key_u64(f, {"clip.vision.projector.scale_factor", "clip.vision.spatial_merge_size"}, default_merge(t.projector));
  if (t.merge == 0 || t.merge > t.image_size / t.patch_size) throw InputError(f.label, fmt::format("has an unusable merge factor {}", t.merge));
  t.weight_bytes = f.tensor_bytes();
  count_image_tokens(t);
  size_encoder(t);
  return t;
}

namespace {

// What a tower read from config.json's vision_config holds whatever the image: its shape and its
// 16-bit weights.
VisionTower tower_of(const TowerSpec& spec, const std::string& model_name) {
  VisionTower t;
  t.file = model_name + "'s config.json (vision_config)";
  t.projector = spec.kind;
  t.patch_size = spec.patch;
  t.hidden = spec.hidden;
  t.ffn = spec.ffn;
  t.layers = spec.layers;
  t.heads = spec.heads;
  t.weight_bytes = checked_mul(spec.params(), 2);
  return t;
}

// A Qwen-VL tower at the image size given: its processor's tokens and positions.
VisionTower dynamic_qwen_tower(const TowerSpec& spec, const std::string& model_name, const std::optional<ImageSize>& image) {
  if (!image) {
    throw InputError("--image-size", fmt::format("{}'s {} tower reads images at any size: give the image size, e.g. --image-size 1280x720 "
                                                 "(width x height in pixels), to count the tokens an image adds",
                                                 model_name, spec.kind));
  }
  const QwenImageProcessor processor = qwen_image_processor(spec.kind, spec.patch, spec.spatial_merge);
  const QwenImageTokens tokens = qwen_image_tokens(processor, *image);
  VisionTower t = tower_of(spec, model_name);
  t.image_size = std::max(tokens.resized_width, tokens.resized_height);
  t.merge = spec.spatial_merge;
  t.positions = tokens.patches;
  t.image_tokens = tokens.tokens;
  t.tokens_formula = fmt::format("{}; min_pixels {} and max_pixels from {}", tokens.formula, processor.min_pixels, processor.source);
  t.tokens_source = kQwenProcessorSource;
  size_encoder(t);
  return t;
}

}  // namespace

VisionTower vision_tower_from_config(const TowerSpec& spec, const std::string& model_name, const std::optional<ImageSize>& image) {
  if (spec.spatial_merge && spec.image_size == 0) return dynamic_qwen_tower(spec, model_name, image);
  if (image && spec.image_size) {
    throw InputError("--image-size", fmt::format("{}'s {} tower reads every image at {} x {} px, so the size does not change its tokens; leave --image-size out",
                                                 model_name, spec.kind, spec.image_size, spec.image_size));
  }
  if (spec.image_size == 0 || spec.tokens_per_image == 0 || spec.patch == 0) {
    throw InputError("--mmproj", fmt::format("'auto' for {}: its {} tower reads images at any size, so the tokens an image adds depend on the image; "
                                             "name its projector GGUF with --mmproj FILE (hf:ORG/REPO/FILE or a URL)",
                                             model_name, spec.kind));
  }
  VisionTower t = tower_of(spec, model_name);
  t.image_size = spec.image_size;
  t.image_tokens = spec.tokens_per_image;
  t.tokens_formula = fmt::format("({} px / {} px patch)^2 = {} patches pooled to {} tokens (config.json mm_tokens_per_image)", spec.image_size, spec.patch,
                                 (spec.image_size / spec.patch) * (spec.image_size / spec.patch), spec.tokens_per_image);
  size_encoder(t);
  return t;
}

std::vector<Line> vision_tower_lines(const VisionTower& t, uint64_t images) {
  std::vector<Line> out;
  Line w;
  w.id = "vision.weights";
  w.label = fmt::format("Vision tower weights ({}, {} layers)", t.projector.empty() ? "mmproj" : t.projector, t.layers);
  w.bytes = t.weight_bytes;
  w.formula = fmt::format("sum of the {} tensors in {}", "mmproj", t.file);
  w.assumption = "llama.cpp loads the mmproj whole on the first GPU (--no-mmproj-offload keeps it on the CPU)";
  w.source = kClipSource;
  out.push_back(w);
  Line a;
  a.id = "vision.compute";
  a.label = "Vision encoder activations (one image)";
  a.bytes = t.activation_bytes;
  a.formula = t.activation_formula;
  a.assumption = "an estimate of the encoder's peak for one image at its native size, images encoded one at a time; flash attention removes the scores term";
  a.source = kClipSource;
  out.push_back(a);
  Line tok;
  tok.id = "vision.tokens";
  tok.label = fmt::format("Image tokens: {} per image x {} image{} (counted in the context)", t.image_tokens, images, images == 1 ? "" : "s");
  tok.bytes = 0;
  tok.formula = t.tokens_formula;
  tok.assumption = images == 0 ? "no --images given: add them to size the cache for images" : "the cache lines above include these tokens";
  tok.source = t.tokens_source.empty() ? kClipSource : t.tokens_source;
  out.push_back(tok);
  return out;
}

std::vector<Line> config_vision_tower_lines(const VisionTower& t, const TowerSpec& spec, uint64_t images) {
  std::vector<Line> out = vision_tower_lines(t, images);
  Line& w = out.front();
  w.formula = fmt::format("({} encoder + {} projector) parameters counted from {} x 2 B (F16) = {} B", format_count(spec.encoder_params),
                          format_count(spec.projector_params), t.file, format_count(t.weight_bytes));
  w.assumption = "the bytes llama.cpp's mmproj GGUF of this tower holds at F16 (convert_hf_to_gguf.py --mmproj, the usual published file), "
                 "2 B a parameter; llama.cpp loads it whole on the first GPU (--no-mmproj-offload keeps it on the CPU)";
  return out;
}

}  // namespace vc
