#include "engines/vllm_deepstack.h"

#include <fmt/format.h>

#include "core/checked.h"
#include "core/units.h"

namespace vc {

const char* const kVllmDeepstackSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen3_vl.py (Qwen3VLForConditionalGeneration.__init__: "
    "deepstack_input_embeds; _set_deepstack_input_embeds); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen3_omni_moe_thinker.py (the thinker's deepstack_input_embeds); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/model_loader/base_loader.py (load_model: set_default_torch_dtype, "
    "target_device around initialize_model)";

std::string VllmDeepstack::formula() const {
  if (bytes == 0) return "";
  return fmt::format("{} DeepStack levels x {} tokens (max_num_batched_tokens) x {} (hidden_size) x {} B = {} B", levels, format_count(tokens), hidden,
                     value_bytes, format_count(bytes));
}

VllmDeepstack vllm_deepstack(const Model& m, uint64_t max_num_batched_tokens, uint64_t value_bytes, const VllmMmLimits& limits) {
  VllmDeepstack d;
  if (!m.vision_encoder || m.vision_encoder->deepstack == 0) return d;
  if (limits.of("image") == 0 && limits.of("video") == 0) return d;  // no `visual`, no buffers
  d.levels = m.vision_encoder->deepstack;
  d.tokens = max_num_batched_tokens;
  d.hidden = m.hidden;
  d.value_bytes = value_bytes;
  d.bytes = checked_product({d.levels, d.tokens, d.hidden, d.value_bytes});
  return d;
}

}  // namespace vc
