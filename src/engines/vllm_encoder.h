#pragma once
// vLLM's profile run of a multimodal model's encoder (vllm/v1/worker/gpu_model_runner.py
// profile_run): before the decoder's dummy pass it encodes a dummy batch of images of the largest
// size, and keeps that batch's pixel values and its encoder outputs (in the encoder cache) alive
// through the decoder pass and the dummy sampler. The batch holds
//   items = max(1, min(budget / tokens_per_item, max_num_seqs x max(1, min(999, max_model_len / tokens_per_item))))
// images, budget = max(max_num_batched_tokens, tokens_per_item): the encoder compute budget and
// encoder cache size both default to max_num_batched_tokens (vllm/multimodal/encoder_budget.py,
// vllm/v1/core/encoder_cache_manager.py compute_mm_encoder_budget; 999: the default
// --limit-mm-per-prompt). Modelled for towers of a fixed image size (Gemma 3's SigLIP) of catalogue
// entries (catalogue/catalogue_tower.h), and for the dynamic-resolution Qwen2-VL / Qwen2.5-VL /
// Qwen3-VL (and Qwen3.5) towers of any config (vllm_qwen_vl_encoder.h: the largest image from the
// published processor bounds; the other dynamic towers are not modelled). An audio-only model (Qwen2-Audio) is profiled on a batch of
// 30 s clips (vllm_audio_encoder.h). vLLM profiles one modality, the one with the most tokens per
// item (vllm/multimodal/encoder_budget.py get_modality_with_max_tokens): for the Omni models
// (vision and audio) that is the dynamic-resolution vision tower's image or video, so their audio
// encoder is not what the profile runs.
#include <cstdint>
#include <map>
#include <string>

#include "model/model.h"

namespace vc {

inline constexpr const char* kVllmEncoderBudgetSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/multimodal/encoder_budget.py (MultiModalBudget._get_max_items, get_modality_with_max_tokens)";

struct VllmEncoderProfile {
  uint64_t items = 0;            // dummy images (or audio clips) encoded at once (0: not modelled)
  uint64_t tokens_per_item = 0;  // text-context tokens one item becomes
  uint64_t pixel_bytes = 0;      // the batch's pixel values (audio: log-mel features), cast to --dtype by vLLM's processor call
  uint64_t output_bytes = 0;     // encoder outputs in the encoder cache: items x tokens x text hidden x dtype
  uint64_t encoder_peak = 0;     // while encoding: the inputs + one layer's live tensors over every patch (audio: position)
  std::string formula;
  std::string source;            // the vLLM code it follows (URLs)
  std::string note;              // why it is not modelled, where it is not; where it is, what the figure assumes beyond vLLM's code (or empty)
  uint64_t held() const { return pixel_bytes + output_bytes; }
  // The profile's torch peak around a decoder peak of `decoder_peak`: the larger of the encoder
  // pass and the held batch under the decoder's pass.
  uint64_t peak_with(uint64_t decoder_peak) const;
};

// --limit-mm-per-prompt: the most items of a modality one prompt may hold (vllm/config/multimodal.py
// limit_per_prompt, 999 for a modality not named). A profiled modality at 0 leaves it out of the
// encoder budget (MultiModalBudget: only modalities with a limit above 0 pass through the tower);
// every modality the model takes at 0 runs it text-only (vllm/multimodal/registry.py
// supports_multimodal_inputs): no encoder batch either way.
struct VllmMmLimits {
  std::map<std::string, uint64_t> per_prompt;  // modality -> limit, as given
  uint64_t of(const std::string& modality) const;
  std::string json() const;  // as a JSON object, for a command line: {"image":0}
};
inline constexpr uint64_t kVllmDefaultMmLimit = 999;

// Reads --limit-mm-per-prompt's value into `limits`: a JSON object ({"image": 0, "video": 2}, a
// modality's value a count or an object with "count", as vLLM accepts), or image=0,video=2; with
// `modality` set, the value of --limit-mm-per-prompt.MODALITY. InputError naming `flag` otherwise.
void read_vllm_mm_limits(VllmMmLimits& limits, const std::string& flag, const std::string& value, const std::string& modality = "");

// Items in the dummy batch for `tokens_per_item` (vllm/multimodal/encoder_budget.py _get_max_items):
// max(1, min(max(max_num_batched_tokens, tokens_per_item) / tokens_per_item,
//            max_num_seqs x max(1, min(limit, max_model_len / tokens_per_item)))), limit the
// modality's --limit-mm-per-prompt (999 by default).
struct VllmEncoderItems {
  uint64_t items = 0;
  uint64_t per_prompt = 0;  // max(1, min(limit, max_model_len / tokens_per_item))
};
VllmEncoderItems vllm_encoder_items(uint64_t tokens_per_item, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len,
                                    uint64_t limit_per_prompt = kVllmDefaultMmLimit);

// The encoder pass's peak (images or audio clips alike): the batch's inputs plus the widest moment of
// one encoder layer over every position of the batch (patches, or an audio encoder's positions):
// the residual stream, its normed copy and the MLP's intermediates, split over TP: two ffn-wide
// tensors for a two-matrix MLP (the up projection's output and its activation), three for a gated
// one (the merged gate_up output, twice ffn wide, and the activation-and-multiply's):
//   input_bytes + positions x (2 x hidden + mlp_tensors x ffn / tp) x value_bytes.
uint64_t vllm_encoder_pass_peak(uint64_t input_bytes, uint64_t positions, uint64_t hidden, uint64_t ffn, uint64_t tp, uint64_t value_bytes,
                                uint64_t mlp_tensors = 2);

VllmEncoderProfile vllm_encoder_profile(const Model& model, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len,
                                        uint64_t tensor_parallel, uint64_t value_bytes, const VllmMmLimits& limits = {});

}  // namespace vc
