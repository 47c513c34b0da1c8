#include "engines/vllm_qwen_vl_encoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "core/checked.h"
#include "core/units.h"
#include "estimate/qwen_image_tokens.h"

namespace vc {
namespace {

// qwen2_vl.py: _MAX_FRAMES_PER_VIDEO, the most frames of one dummy video.
constexpr uint64_t kMaxFramesPerVideo = 14;
// get_image_size_with_most_features asks smart_resize for a 9,999,999 px square.
constexpr uint64_t kHugeSide = 9999999;

// What differs between the towers in vLLM's profile, a row a kind (the processor's pixel bounds
// are estimate/qwen_image_tokens.h's qwen_image_processor).
struct TowerFacts {
  std::string_view kind;
  uint64_t mlp_tensors;  // ffn / tp wide tensors live at a block's MLP
  std::string_view source;
};
constexpr TowerFacts kTowers[] = {
    {"Qwen2-VL", 2,
     "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_vl.py (Qwen2VLProcessingInfo."
     "get_image_size_with_most_features, get_num_frames_with_most_features, Qwen2VisionMLP: fc1, QuickGELU, fc2)"},
    {"Qwen2.5-VL", 3,
     "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_vl.py (Qwen2VLProcessingInfo."
     "get_image_size_with_most_features, get_num_frames_with_most_features); "
     "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_5_vl.py (Qwen2_5_VisionMLP: gate_up, SiLU-and-mul, down)"},
    {"Qwen3-VL", 2,
     "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen3_vl.py (Qwen3VLProcessingInfo._get_vision_info, "
     "get_max_video_tokens; Qwen3VLDummyInputsBuilder.get_dummy_mm_data: the 2-frame dummy video; Qwen3_VisionMLP: linear_fc1, GELU, "
     "linear_fc2; Qwen3_VisionTransformer.forward: the DeepStack mergers' outputs concatenated to the merger's); "
     "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen3_5.py (Qwen3.5 builds Qwen3_VisionTransformer with "
     "Qwen3VLProcessingInfo)"},
};

const TowerFacts* tower_facts(const std::string& kind) {
  for (const TowerFacts& f : kTowers)
    if (f.kind == kind) return &f;
  return nullptr;
}

// Frame pairs (grid_t) of `frames` frames: padded to a multiple of temporal_patch_size as
// _get_vision_info does (frames + frames % T), at least one.
uint64_t grid_t(uint64_t frames, uint64_t temporal_patch) { return std::max<uint64_t>(1, (frames + frames % temporal_patch) / temporal_patch); }

// Qwen3VLDummyInputsBuilder.get_dummy_mm_data: "treat videos as special images", 2 frames.
constexpr uint64_t kQwen3DummyFrames = 2;
// get_image_size_with_most_features: the widest aspect ratio it accepts.
constexpr uint64_t kMaxAspect = 200;

// Qwen2VLProcessingInfo.get_image_size_with_most_features(max_pixels): max_seq_len = max_pixels /
// unit^2 merged tokens, split into the closest factor pair h <= w (closest_factor_pair: the largest
// divisor up to isqrt), one token fewer while w / h > 200. Returns {h, w} in merged tokens.
std::pair<uint64_t, uint64_t> closest_factor_grid(uint64_t max_seq_len) {
  for (uint64_t n = max_seq_len; n > 0; --n) {
    uint64_t d = static_cast<uint64_t>(std::sqrt(static_cast<double>(n)));
    while (d * d > n) --d;
    while ((d + 1) * (d + 1) <= n) ++d;
    while (d > 1 && n % d != 0) --d;
    if (n / d <= checked_mul(kMaxAspect, d)) return {d, n / d};
  }
  return {0, 0};
}

// The dummy video of Qwen3-VL's processor (vLLM main, qwen3_vl.py Qwen3VLDummyInputsBuilder
// .get_dummy_mm_data and Qwen3VLProcessingInfo.get_max_video_tokens): 2 frames, each the largest
// image within longest_edge / temporal_patch_size px ("video_max_pixels contains the temporal
// compression factor"), then video_smart_resize over the frames, which keeps them while
// round_up(2, T) x h x w fits longest_edge (0 tokens where it would shrink them: not modelled).
struct Qwen3DummyVideo {
  uint64_t grid_h = 0, grid_w = 0;  // merged tokens a side
  uint64_t tokens = 0;
};
Qwen3DummyVideo qwen3_dummy_video(const VisionEncoderSpec& t, const QwenImageProcessor& processor) {
  Qwen3DummyVideo v;
  const uint64_t unit = checked_mul(t.patch, t.spatial_merge);
  const auto [h, w] = closest_factor_grid(processor.video_max_pixels / t.temporal_patch / checked_mul(unit, unit));
  const uint64_t padded = checked_mul(grid_t(kQwen3DummyFrames, t.temporal_patch), t.temporal_patch);
  if (h == 0 || checked_product({padded, h, w, unit, unit}) > processor.video_max_pixels) return v;
  v.grid_h = h;
  v.grid_w = w;
  v.tokens = checked_product({grid_t(kQwen3DummyFrames, t.temporal_patch), h, w});
  return v;
}

// Frames of a Qwen2/2.5-VL video when `count` videos share max_model_len
// (get_num_frames_with_most_features): _get_max_video_frames counts frames up from 1 while the next
// one's tokens stay within max_model_len; a video gets max(1, min(that / count, 14)). Only up to
// 14 x count frames matter, so the count stops there.
uint64_t qwen2_video_frames(const VisionEncoderSpec& t, uint64_t image_tokens, uint64_t max_model_len, uint64_t count) {
  const uint64_t cap = checked_mul(kMaxFramesPerVideo, count);
  uint64_t total = 1;
  while (total < cap && checked_mul(grid_t(total + 1, t.temporal_patch), image_tokens) <= max_model_len) ++total;
  return std::max<uint64_t>(1, std::min(total / count, kMaxFramesPerVideo));
}

}  // namespace

bool vllm_qwen_vl_modelled(const VisionEncoderSpec& t) {
  return tower_facts(t.kind) && t.hidden && t.ffn && t.patch && t.channels && t.temporal_patch && t.spatial_merge && t.text_hidden;
}

VllmQwenVlDummy vllm_qwen_vl_dummy(const VisionEncoderSpec& t, uint64_t max_model_len, const VllmMmLimits& limits) {
  VllmQwenVlDummy d;
  const QwenImageProcessor processor = qwen_image_processor(t.kind, t.patch, t.spatial_merge);
  const QwenImageTokens largest = qwen_image_tokens(processor, {kHugeSide, kHugeSide});
  d.image_tokens = largest.tokens;
  d.image_formula = largest.formula;
  const uint64_t image_limit = limits.of("image"), video_limit = limits.of("video");
  if (processor.video_max_pixels > 0) {
    // Qwen3-VL: a 2-frame dummy video within the video processor's budget, whatever max_model_len
    // and the video limit (qwen3_dummy_video).
    if (video_limit > 0) {
      const Qwen3DummyVideo v = qwen3_dummy_video(t, processor);
      d.video_frames = kQwen3DummyFrames;
      d.video_tokens = v.tokens;
      d.video_grid_h = v.grid_h;
      d.video_grid_w = v.grid_w;
      d.video_modelled = v.tokens > 0;
      if (!d.video_modelled) {
        d.modality = "video";
        d.limit = video_limit;
        return d;
      }
    }
  } else if (video_limit > 0 && d.image_tokens > 0) {
    d.video_frames = qwen2_video_frames(t, d.image_tokens, max_model_len, 1);
    d.video_tokens = checked_mul(grid_t(d.video_frames, t.temporal_patch), d.image_tokens);
    d.budget_video_frames = qwen2_video_frames(t, d.image_tokens, max_model_len, video_limit);
    d.budget_video_tokens = checked_mul(grid_t(d.budget_video_frames, t.temporal_patch), d.image_tokens);
  }
  if (d.budget_video_frames == 0) {  // Qwen3-VL: one 2-frame video for both counts
    d.budget_video_frames = d.video_frames;
    d.budget_video_tokens = d.video_tokens;
  }
  // get_modality_with_max_tokens: max by (the budget's tokens, name); "video" > "image" breaks a tie.
  if (video_limit > 0 && (image_limit == 0 || d.budget_video_tokens >= d.image_tokens)) {
    d.modality = "video";
    d.tokens_per_item = d.budget_video_tokens;
    d.item_tokens = d.video_tokens;
    d.limit = video_limit;
  } else if (image_limit > 0) {
    d.modality = "image";
    d.tokens_per_item = d.image_tokens;
    d.item_tokens = d.image_tokens;
    d.limit = image_limit;
  }
  return d;
}

VllmEncoderProfile vllm_qwen_vl_encoder_profile(const VisionEncoderSpec& t, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len,
                                                uint64_t tp, uint64_t value_bytes, const VllmMmLimits& limits) {
  VllmEncoderProfile p;
  const TowerFacts* f = tower_facts(t.kind);
  if (!vllm_qwen_vl_modelled(t) || tp == 0) {
    p.note = fmt::format("vLLM also profiles the {} encoder on a dummy batch of its largest images; modelled for Qwen2-VL, Qwen2.5-VL and Qwen3-VL "
                         "(Qwen3.5), so that term is left out",
                         t.kind);
    return p;
  }
  const VllmQwenVlDummy d = vllm_qwen_vl_dummy(t, max_model_len, limits);
  if (d.modality.empty()) {
    p.note = "--limit-mm-per-prompt gives image and video 0: vLLM profiles no encoder batch (the model runs text-only, "
             "vllm/multimodal/registry.py supports_multimodal_inputs)";
    return p;
  }
  const QwenImageProcessor processor = qwen_image_processor(t.kind, t.patch, t.spatial_merge);
  const bool qwen3 = processor.video_max_pixels > 0;
  if (!d.video_modelled) {
    p.note = fmt::format("vLLM may profile the {} encoder on its 2-frame dummy video here, whose frames video_smart_resize would shrink "
                         "(temporal_patch_size {}): not modelled, so that term is left out ({})",
                         t.kind, t.temporal_patch, processor.video_source);
    return p;
  }
  // The budget's tokens an item set the batch's items; each item encoded is the dummy item.
  p.tokens_per_item = d.item_tokens;
  const VllmEncoderItems n = vllm_encoder_items(d.tokens_per_item, max_num_batched_tokens, max_num_seqs, max_model_len, d.limit);
  p.items = n.items;
  const uint64_t merge2 = checked_mul(t.spatial_merge, t.spatial_merge);
  const uint64_t patches_per_item = checked_mul(d.item_tokens, merge2);
  const uint64_t patch_values = checked_product({t.channels, t.temporal_patch, t.patch, t.patch});
  // pixel_values (or pixel_values_videos): one row of C x T x P^2 values a patch.
  p.pixel_bytes = checked_product({p.items, patches_per_item, patch_values, value_bytes});
  // The tower's output a token: the merger's text_hidden, and one more per DeepStack merger.
  const uint64_t tokens = checked_mul(p.items, d.item_tokens);
  p.output_bytes = checked_product({tokens, checked_add(1, t.deepstack), t.text_hidden, value_bytes});
  const uint64_t deepstack_bytes = checked_product({tokens, t.deepstack, t.text_hidden, value_bytes});
  const uint64_t patches = checked_mul(p.items, patches_per_item);
  p.encoder_peak = vllm_encoder_pass_peak(checked_add(p.pixel_bytes, deepstack_bytes), patches, t.hidden, t.ffn, tp, value_bytes, f->mlp_tensors);
  const std::string item = d.modality == "video" ? fmt::format("{}-frame videos", d.video_frames) : std::string("images");
  const std::string choice =
      qwen3 ? fmt::format("image {} tokens, the 2-frame dummy video {} tokens ({} x {} tokens a frame pair: the largest image within the video "
                          "processor's {} px / {}): the larger, video on a tie",
                          d.image_tokens, d.video_tokens, d.video_grid_h, d.video_grid_w, processor.video_max_pixels, t.temporal_patch)
            : fmt::format("the budget's items, from the limits: image {} tokens, video of {} frame(s) {} tokens: the larger, video on a tie", d.image_tokens,
                          d.budget_video_frames, d.budget_video_tokens);
  // A Qwen2/2.5-VL video encoded as one video asked for, beside the budget's per-item size.
  const std::string encoded =
      d.item_tokens != d.tokens_per_item
          ? fmt::format(", each the dummy item built for one video (_get_mm_dummy_batch: mm_counts={{video: 1}} at max_model_len {}): {} frames, {} tokens",
                        max_model_len, d.video_frames, d.item_tokens)
          : "";
  const std::string width = t.deepstack ? fmt::format("(1 + {} DeepStack) x {}", t.deepstack, t.text_hidden) : fmt::format("{}", t.text_hidden);
  const std::string deepstack_held =
      t.deepstack ? fmt::format(" + DeepStack outputs {} x {} x {} x {} B = {} B", tokens, t.deepstack, t.text_hidden, value_bytes, format_count(deepstack_bytes))
                  : "";
  p.formula = fmt::format(
      "the largest image: {}; vLLM profiles the {} ({}); "
      "{} dummy {} of {} tokens (min(max({}, {}) / {}, {} seqs x {} a prompt){}) held: pixels {} x {} patches x ({} x {} x {}^2) x {} B = {} B + "
      "encoder outputs {} x {} tokens x {} x {} B = {} B; encoding: {} patches x (2 x {} + {} x {}) x {} B + pixels{} = {} B",
      d.image_formula, d.modality, choice, p.items, item, d.item_tokens, max_num_batched_tokens, d.tokens_per_item, d.tokens_per_item, max_num_seqs,
      n.per_prompt, encoded, p.items, format_count(patches_per_item), t.channels, t.temporal_patch, t.patch, value_bytes, format_count(p.pixel_bytes),
      p.items, d.item_tokens, width, value_bytes, format_count(p.output_bytes), format_count(patches), t.hidden, f->mlp_tensors, t.ffn / tp, value_bytes,
      deepstack_held, format_count(p.encoder_peak));
  const std::string qwen3_image =
      qwen3 ? "; vLLM's qwen3_vl.py of late 2025 sized the image through _get_vision_info's default of 2 frames, i.e. the video "
              "processor (3,520^2 px, 12,100 tokens); its 2026 startup logs show the 4,096^2 image of 16,384 tokens "
              "(https://github.com/vllm-project/vllm/pull/53225), as modelled; the 2-frame dummy video is vLLM main's "
              "(Qwen3VLDummyInputsBuilder.get_dummy_mm_data), where releases of late 2025 gave the video "
              "max(2, get_num_frames_with_most_features) frames sharing the video processor's budget, which picks the same image "
              "with images on, max_model_len at least the image's tokens and a video limit at most max_model_len / 4"
            : "";
  p.note = fmt::format("the largest image is {}'s published max_pixels {} (preprocessor_config.json; a checkpoint's own processor config and "
                       "--mm-processor-kwargs are not read){}; the attention runs without a score matrix (flash attention), and at TP > 1 its "
                       "all-gathered qkv (3 x {} a patch) is not counted beside the MLP",
                       t.kind, processor.max_pixels, qwen3_image, t.hidden);
  p.source = std::string(kVllmEncoderBudgetSource) + "; " + std::string(f->source) + "; " + processor.source +
             (processor.video_source.empty() ? "" : "; " + processor.video_source);
  return p;
}

}  // namespace vc
