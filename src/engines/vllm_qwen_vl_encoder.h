#pragma once
// vLLM's profile run of the dynamic-resolution Qwen vision towers: Qwen2-VL, Qwen2.5-VL and
// Qwen3-VL (whose classes Qwen3.5 / Qwen3.6 build too: qwen3_5.py imports Qwen3_VisionTransformer and
// Qwen3VLProcessingInfo). The dummy item is an image (or a video) of the largest size the image
// processor allows: get_image_size_with_most_features runs smart_resize on a 9,999,999 px square
// (vLLM main: the closest factor pair of max_pixels / (patch x merge)^2 tokens, the same square here),
// so the item is max_pixels' worth of patches (the published preprocessor_config.json, from
// estimate/qwen_image_tokens.h: Qwen2/2.5-VL 12,845,056 px = 128 x 128 merged tokens of 28 x 28 px;
// Qwen3-VL longest_edge 16,777,216 px = 128 x 128 tokens of 32 x 32 px), and
//   tokens a frame pair = (h / patch) x (w / patch) / merge^2.
// Both modalities pass through the tower; vLLM profiles the one with the most tokens per item
// (MultiModalBudget.get_modality_with_max_tokens: max by (tokens, name), so video wins a tie).
// Qwen2/2.5-VL: a video has max(1, min(max_total_frames / count, 14)) frames, max_total_frames the
// most frames whose tokens fit max_model_len (Qwen2VLProcessingInfo.get_num_frames_with_most_features,
// _MAX_FRAMES_PER_VIDEO = 14); frames are padded to temporal_patch_size, so a video holds
// max(1, (frames + frames % T) / T) frame pairs of the image's tokens. vLLM asks for that with two
// counts. The budget (vllm/multimodal/encoder_budget.py MultiModalBudget: get_mm_max_tokens_per_item
// with mm_counts = the limits) sizes an item with count = the video limit: at the default 999 one
// frame, 16,384 tokens, an image's, so the video wins the tie and the batch holds
// encoder budget / 16,384 items. The item it then encodes comes from _get_mm_dummy_batch
// (vllm/v1/worker/gpu_model_runner.py: get_dummy_mm_inputs with mm_counts={modality: 1}, seq_len
// max_model_len), so count = 1: up to 14 frames (7 frame pairs, 114,688 tokens at 128K), repeated
// over the budget's items. Early V1 releases built that item at seq_len max_num_batched_tokens.
// Qwen3-VL (vLLM main: Qwen3VLDummyInputsBuilder.get_dummy_mm_data, "treat videos as special
// images", and Qwen3VLProcessingInfo.get_max_video_tokens): the dummy video has 2 frames whatever
// max_model_len and the video limit, each frame the largest image within the video processor's
// budget over the temporal patch (video_preprocessor_config.json longest_edge / temporal_patch_size,
// through get_image_size_with_most_features(max_pixels): max_pixels / (patch x merge)^2 merged
// tokens split into the closest factor pair h <= w, w / h <= 200), which video_smart_resize keeps
// (2 x h x w within longest_edge): Qwen3-VL 25,165,824 / 2 / 32^2 = 12,288 = 96 x 128 tokens a frame
// pair, one pair: 12,288 tokens, fewer than the largest image's 16,384, so the image is profiled
// whenever images are on, and the 2-frame video with images at 0. (Releases of late 2025 gave the
// dummy video max(2, get_num_frames_with_most_features) frames sharing that budget instead; not
// modelled, noted.)
// The batch's items follow vllm_encoder_items; each item's pixel values are its patches x
// (channels x temporal_patch_size x patch^2) values. The pass: the widest moment of one block over
// every patch (vllm_encoder_pass_peak), the MLP's tensors per kind (one table in the .cpp):
// Qwen2.5-VL's gated MLP holds gate_up's output (2 x ffn / tp) and its SiLU-and-mul (ffn / tp);
// Qwen2-VL's fc1 output and its QuickGELU, Qwen3-VL's linear_fc1 output and its GELU (2 x ffn / tp).
// Qwen3-VL's DeepStack mergers (one per deepstack_visual_indexes entry) each add text_hidden a token
// to the tower's output (Qwen3_VisionTransformer.forward concatenates them: (1 + deepstack) x
// text_hidden a token, what the encoder cache holds), and their outputs stay alive through the
// blocks after their layer, so they sit beside the block's peak.
// Sources: https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_vl.py
// (Qwen2VLProcessingInfo, Qwen2VLDummyInputsBuilder, Qwen2VisionMLP),
// https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_5_vl.py
// (Qwen2_5_VisionMLP, Qwen2_5_VisionTransformer.forward),
// https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen3_vl.py
// (Qwen3VLProcessingInfo, Qwen3_VisionMLP, Qwen3_VisionPatchMerger, Qwen3_VisionTransformer.forward).
#include <cstdint>
#include <string>

#include "engines/vllm_encoder.h"
#include "model/model.h"

namespace vc {

// Whether `tower` is one this profile models (Qwen2-VL, Qwen2.5-VL, Qwen3-VL).
bool vllm_qwen_vl_modelled(const VisionEncoderSpec& tower);

// The dummy item vLLM profiles for `tower` at `max_model_len` under `limits`.
struct VllmQwenVlDummy {
  std::string modality;          // "video", "image", or "" when both limits are 0
  uint64_t image_tokens = 0;     // tokens of the largest image (one frame pair)
  uint64_t video_frames = 0;     // frames of the dummy video encoded, one video asked for (0: video limit 0)
  uint64_t video_tokens = 0;     // its tokens (0: video limit 0, or not modelled)
  uint64_t budget_video_frames = 0;  // frames of a video as the budget sizes it, the video limit asked for
  uint64_t budget_video_tokens = 0;  // its tokens: what picks the modality and the batch's items
  uint64_t video_grid_h = 0, video_grid_w = 0;  // Qwen3-VL: the dummy video's frame pair in merged tokens a side; 0 otherwise
  bool video_modelled = true;    // false: a video may be profiled and its size is not modelled (Qwen3-VL at a temporal_patch_size above 2)
  uint64_t tokens_per_item = 0; // the budget's tokens an item of the profiled modality: sets the batch's items
  uint64_t item_tokens = 0;     // the tokens of the dummy item encoded (a Qwen2/2.5-VL video may hold more than the budget's)
  uint64_t limit = 0;            // the profiled modality's --limit-mm-per-prompt
  std::string image_formula;     // the largest image, resized
};
VllmQwenVlDummy vllm_qwen_vl_dummy(const VisionEncoderSpec& tower, uint64_t max_model_len, const VllmMmLimits& limits);

VllmEncoderProfile vllm_qwen_vl_encoder_profile(const VisionEncoderSpec& tower, uint64_t max_num_batched_tokens, uint64_t max_num_seqs,
                                                uint64_t max_model_len, uint64_t tensor_parallel, uint64_t value_bytes, const VllmMmLimits& limits);

}  // namespace vc
