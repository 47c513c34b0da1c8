#pragma once
// vLLM skips building a multimodal tower whose modalities --limit-mm-per-prompt all sets to 0:
// SupportsMultiModal._mark_tower_model (vllm/model_executor/models/interfaces.py) builds the
// modules a model class creates inside it on the meta device and puts a StageMissingLayer in their
// place when get_limit_per_prompt is 0 for every modality the tower serves, so none of their
// weights reach the GPU and the KV cache gets those bytes. Applied to the classes whose use of it
// was read: Gemma 3 (gemma3_mm.py: vision_tower and multi_modal_projector, for "image") and
// Qwen2-Audio (qwen2_audio.py: audio_tower and multi_modal_projector, for "audio"), Mistral 3
// (mistral3.py: vision_tower and multi_modal_projector, for "image"), Qwen2-VL,
// Qwen2.5-VL, Qwen3-VL and Qwen3.5 (qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py, qwen3_5.py: `visual`,
// the ViT with its mergers, for "image" and "video"). In vLLM since January 2026 (PR #32605 added
// the context manager; issue #32631 tracked moving every model class onto it); older releases
// build the tower at any limit, except Qwen2.5-VL's class, which skipped `visual` itself.
#include <cstdint>
#include <string>

#include "engines/vllm_encoder.h"
#include "estimate/estimate.h"
#include "model/model.h"

namespace vc {

inline constexpr const char* kVllmTowerSkipSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/interfaces.py (SupportsMultiModal._mark_tower_model); "
    "https://github.com/vllm-project/vllm/pull/32605";

struct VllmTowerSkip {
  uint64_t params = 0;      // parameters vLLM does not build (0: the whole checkpoint loads)
  uint64_t tier_bytes = 0;  // their bytes in the weights figure (checkpoint_tower.h tower_share)
  uint64_t bytes = 0;       // their bytes as loaded at --dtype (serving_dtype.h loaded_class_bytes)
  std::string part;         // what is skipped, "the SigLIP vision tower and its projector"
  std::string formula;
  std::string assumption;
  std::string source;       // interfaces.py, the model class and the PR
  bool skipped() const { return params > 0; }
};

// What of `model`'s checkpoint (at `weights`, loaded at --dtype `dtype`) vLLM does not build under
// `limits`; nothing for a class not listed above, a limit above 0, or a named build (GGUF: the
// tower is not in it).
VllmTowerSkip vllm_tower_skip(const Model& model, const WeightsFigure& weights, const std::string& dtype, const VllmMmLimits& limits);

}  // namespace vc
