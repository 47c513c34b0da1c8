#include "engines/vllm_qwen_vl_encoder.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/units.h"
#include "estimate/qwen_image_tokens.h"

namespace vc {
namespace {

// qwen2_vl.py: _MAX_FRAMES_PER_VIDEO, the most frames of one dummy video.
constexpr uint64_t kMaxFramesPerVideo = 14;
// get_image_size_with_most_features asks smart_resize for a 9,999,999 px square.
constexpr uint64_t kHugeSide = 9999999;

// Frame pairs (grid_t) of `frames` frames: padded to a multiple of temporal_patch_size as
// _get_vision_info does (frames + frames % T), at least one.
uint64_t grid_t(uint64_t frames, uint64_t temporal_patch) { return std::max<uint64_t>(1, (frames + frames % temporal_patch) / temporal_patch); }

}  // namespace

bool vllm_qwen_vl_modelled(const VisionEncoderSpec& t) {
  return (t.kind == "Qwen2-VL" || t.kind == "Qwen2.5-VL") && t.hidden && t.ffn && t.patch && t.channels && t.temporal_patch && t.spatial_merge &&
         t.text_hidden;
}

VllmQwenVlDummy vllm_qwen_vl_dummy(const VisionEncoderSpec& t, uint64_t max_model_len, const VllmMmLimits& limits) {
  VllmQwenVlDummy d;
  const QwenImageTokens largest = qwen_image_tokens(qwen_image_processor(t.kind, t.patch, t.spatial_merge), {kHugeSide, kHugeSide});
  d.image_tokens = largest.tokens;
  d.image_formula = largest.formula;
  const uint64_t image_limit = limits.of("image"), video_limit = limits.of("video");
  if (video_limit > 0 && d.image_tokens > 0) {
    // _get_max_video_frames: the most frames (from 1) whose tokens stay within max_model_len; only
    // up to 14 x the limit matters, as frames a video = min(total / limit, 14).
    const uint64_t cap = checked_mul(kMaxFramesPerVideo, video_limit);
    uint64_t total = 1;
    while (total < cap && checked_mul(grid_t(total + 1, t.temporal_patch), d.image_tokens) <= max_model_len) ++total;
    d.video_frames = std::max<uint64_t>(1, std::min(total / video_limit, kMaxFramesPerVideo));
    d.video_tokens = checked_mul(grid_t(d.video_frames, t.temporal_patch), d.image_tokens);
  }
  // get_modality_with_max_tokens: max by (tokens, name); "video" > "image" breaks a tie.
  if (video_limit > 0 && (image_limit == 0 || d.video_tokens >= d.image_tokens)) {
    d.modality = "video";
    d.tokens_per_item = d.video_tokens;
    d.limit = video_limit;
  } else if (image_limit > 0) {
    d.modality = "image";
    d.tokens_per_item = d.image_tokens;
    d.limit = image_limit;
  }
  return d;
}

VllmEncoderProfile vllm_qwen_vl_encoder_profile(const VisionEncoderSpec& t, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len,
                                                uint64_t tp, uint64_t value_bytes, const VllmMmLimits& limits) {
  VllmEncoderProfile p;
  if (!vllm_qwen_vl_modelled(t) || tp == 0) {
    p.note = fmt::format("vLLM also profiles the {} encoder on a dummy batch of its largest images; modelled for Qwen2-VL and Qwen2.5-VL, so that term "
                         "is left out",
                         t.kind);
    return p;
  }
  const VllmQwenVlDummy d = vllm_qwen_vl_dummy(t, max_model_len, limits);
  if (d.modality.empty()) {
    p.note = "--limit-mm-per-prompt gives image and video 0: vLLM profiles no encoder batch (the model runs text-only, "
             "vllm/multimodal/registry.py supports_multimodal_inputs)";
    return p;
  }
  p.tokens_per_item = d.tokens_per_item;
  const VllmEncoderItems n = vllm_encoder_items(d.tokens_per_item, max_num_batched_tokens, max_num_seqs, max_model_len, d.limit);
  p.items = n.items;
  const uint64_t merge2 = checked_mul(t.spatial_merge, t.spatial_merge);
  const uint64_t patches_per_item = checked_mul(d.tokens_per_item, merge2);
  const uint64_t patch_values = checked_product({t.channels, t.temporal_patch, t.patch, t.patch});
  // pixel_values (or pixel_values_videos): one row of C x T x P^2 values a patch.
  p.pixel_bytes = checked_product({p.items, patches_per_item, patch_values, value_bytes});
  p.output_bytes = checked_product({p.items, d.tokens_per_item, t.text_hidden, value_bytes});
  const uint64_t patches = checked_mul(p.items, patches_per_item);
  const uint64_t mlp_tensors = t.kind == "Qwen2.5-VL" ? 3 : 2;
  p.encoder_peak = vllm_encoder_pass_peak(p.pixel_bytes, patches, t.hidden, t.ffn, tp, value_bytes, mlp_tensors);
  const std::string item = d.modality == "video" ? fmt::format("{}-frame videos", d.video_frames) : std::string("images");
  p.formula = fmt::format(
      "the largest image: {}; vLLM profiles the {} (image {} tokens, video of {} frame(s) {} tokens: the larger, video on a tie); "
      "{} dummy {} of {} tokens (min(max({}, {}) / {}, {} seqs x {} a prompt)) held: pixels {} x {} patches x ({} x {} x {}^2) x {} B = {} B + "
      "encoder outputs {} x {} tokens x {} x {} B = {} B; encoding: {} patches x (2 x {} + {} x {}) x {} B + pixels = {} B",
      d.image_formula, d.modality, d.image_tokens, d.video_frames, d.video_tokens, p.items, item, d.tokens_per_item, max_num_batched_tokens,
      d.tokens_per_item, d.tokens_per_item, max_num_seqs, n.per_prompt, p.items, format_count(patches_per_item), t.channels, t.temporal_patch, t.patch,
      value_bytes, format_count(p.pixel_bytes), p.items, d.tokens_per_item, t.text_hidden, value_bytes, format_count(p.output_bytes), format_count(patches),
      t.hidden, mlp_tensors, t.ffn / tp, value_bytes, format_count(p.encoder_peak));
  p.note = fmt::format("the largest image is {}'s published max_pixels {} (preprocessor_config.json; a checkpoint's own processor config and "
                       "--mm-processor-kwargs are not read); the attention runs without a score matrix (flash attention), and at TP > 1 its "
                       "all-gathered qkv (3 x {} a patch) is not counted beside the MLP",
                       t.kind, qwen_image_processor(t.kind, t.patch, t.spatial_merge).max_pixels, t.hidden);
  p.source = std::string(kVllmEncoderBudgetSource) +
             "; https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_vl.py (Qwen2VLProcessingInfo."
             "get_image_size_with_most_features, get_num_frames_with_most_features, Qwen2VisionMLP); "
             "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_5_vl.py (Qwen2_5_VisionMLP); " +
             qwen_image_processor(t.kind, t.patch, t.spatial_merge).source;
  return p;
}

}  // namespace vc
