#pragma once
// vLLM's profile run of the dynamic-resolution Qwen2-VL and Qwen2.5-VL vision towers. The dummy
// item is an image (or a video) of the largest size the image processor allows:
// Qwen2VLProcessingInfo.get_image_size_with_most_features runs smart_resize on a 9,999,999 px
// square, so the item is max_pixels' worth of patches (the published preprocessor_config.json:
// 12,845,056 px = 128 x 128 merged tokens of 28 x 28 px, estimate/qwen_image_tokens.h), and
//   tokens a frame pair = (h / patch) x (w / patch) / merge^2.
// Both modalities pass through the tower; vLLM profiles the one with the most tokens per item
// (MultiModalBudget.get_modality_with_max_tokens: max by (tokens, name), so video wins a tie).
// A dummy video has max(1, min(max_total_frames / video limit, 14)) frames, max_total_frames the
// most frames whose tokens fit max_model_len (Qwen2VLProcessingInfo.get_num_frames_with_most_features,
// _MAX_FRAMES_PER_VIDEO = 14); frames are padded to temporal_patch_size, so a video holds
// max(1, (frames + frames % T) / T) frame pairs of the image's tokens. With the default limits
// (999 each) that is one frame: 16,384 tokens, image and video alike, and the video is profiled.
// The batch's items follow vllm_encoder_items; each item's pixel values are its patches x
// (channels x temporal_patch_size x patch^2) values. The pass: the widest moment of one block over
// every patch (vllm_encoder_pass_peak): Qwen2.5-VL's gated MLP holds gate_up's output (2 x ffn / tp)
// and its SiLU-and-mul (ffn / tp), Qwen2-VL's fc1 output and its QuickGELU (2 x ffn / tp).
// Sources: https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_vl.py
// (Qwen2VLProcessingInfo, Qwen2VLDummyInputsBuilder, Qwen2VisionMLP),
// https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_5_vl.py
// (Qwen2_5_VisionMLP, Qwen2_5_VisionTransformer.forward).
#include <cstdint>
#include <string>

#include "engines/vllm_encoder.h"
#include "model/model.h"

namespace vc {

// Whether `tower` is one this profile models (Qwen2-VL, Qwen2.5-VL).
bool vllm_qwen_vl_modelled(const VisionEncoderSpec& tower);

// The dummy item vLLM profiles for `tower` at `max_model_len` under `limits`.
struct VllmQwenVlDummy {
  std::string modality;        // "video", "image", or "" when both limits are 0
  uint64_t image_tokens = 0;   // tokens of the largest image (one frame pair)
  uint64_t video_frames = 0;   // frames of the dummy video (0: video limit 0)
  uint64_t video_tokens = 0;   // its tokens
  uint64_t tokens_per_item = 0;
  uint64_t limit = 0;          // the profiled modality's --limit-mm-per-prompt
  std::string image_formula;   // the largest image, resized
};
VllmQwenVlDummy vllm_qwen_vl_dummy(const VisionEncoderSpec& tower, uint64_t max_model_len, const VllmMmLimits& limits);

VllmEncoderProfile vllm_qwen_vl_encoder_profile(const VisionEncoderSpec& tower, uint64_t max_num_batched_tokens, uint64_t max_num_seqs,
                                                uint64_t max_model_len, uint64_t tensor_parallel, uint64_t value_bytes, const VllmMmLimits& limits);

}  // namespace vc
