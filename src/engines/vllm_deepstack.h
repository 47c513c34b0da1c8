#pragma once
// Qwen3-VL's DeepStack input buffers, which "Model loading took" counts with the weights.
// Qwen3VLForConditionalGeneration.__init__ (vllm/model_executor/models/qwen3_vl.py; Qwen3-VL-MoE
// and the Qwen3-Omni thinker do the same) keeps, when the tower is built (an image or video limit
// above 0: with both at 0 there is no `visual` and no buffer) and the vision_config lists
// deepstack_visual_indexes,
//   deepstack_input_embeds = [torch.zeros(max_num_batched_tokens, text hidden_size)] x levels,
// levels = len(deepstack_visual_indexes): persistent buffers the DeepStack features of a step's
// tokens are copied into (_set_deepstack_input_embeds) so the language model's forward keeps one
// signature for torch.compile and CUDA graphs. torch.zeros without a dtype or device takes the
// defaults the loader sets around the model's construction
// (vllm/model_executor/model_loader/base_loader.py BaseModelLoader.load_model:
// set_default_torch_dtype(model_config.dtype), then `with target_device`), so they sit on the GPU
// in --dtype, whole on every TP rank, allocated with the weights before the profile run:
//   bytes = levels x max_num_batched_tokens x hidden_size x dtype bytes.
// (_set_deepstack_input_embeds reallocates them larger for a step of more tokens than
// max_num_batched_tokens, which the scheduler does not schedule.) Qwen3.5 lists no indexes: none.
#include <cstdint>
#include <string>

#include "engines/vllm_encoder.h"
#include "model/model.h"

namespace vc {

struct VllmDeepstack {
  uint64_t levels = 0;  // len(deepstack_visual_indexes); 0: no buffers
  uint64_t tokens = 0;  // max_num_batched_tokens
  uint64_t hidden = 0;  // the text model's hidden_size
  uint64_t value_bytes = 0;
  uint64_t bytes = 0;
  std::string formula() const;  // "3 levels x 8,192 tokens x 4,096 x 2 B = ..."; empty without buffers
};

// The buffers `m` allocates with its weights at `max_num_batched_tokens` and `value_bytes` a value
// (--dtype) under `limits` (none when image and video are both 0, or the tower has no DeepStack).
VllmDeepstack vllm_deepstack(const Model& m, uint64_t max_num_batched_tokens, uint64_t value_bytes, const VllmMmLimits& limits);

extern const char* const kVllmDeepstackSource;

}  // namespace vc
