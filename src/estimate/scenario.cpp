#include "estimate/scenario.h"

#include <cctype>

#include "core/error.h"

namespace vc {

const char* to_string(StateLayout layout) {
  switch (layout) {
    case StateLayout::F32: return "f32";
    case StateLayout::Mixed: return "mixed";
    case StateLayout::F16: return "f16";
  }
  return "f32";
}

StateLayout parse_state_layout(const std::string& text, const std::string& subject) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "f32" || s == "float32" || s == "llamacpp") return StateLayout::F32;
  if (s == "mixed" || s == "vllm") return StateLayout::Mixed;
  if (s == "f16" || s == "bf16" || s == "bfloat16" || s == "float16") return StateLayout::F16;
  throw InputError(subject, "'" + text + "' is not a state layout; accepted: f32 (llama.cpp: matrix and conv in f32, the default), "
                            "mixed (vLLM: matrix f32, conv 16-bit), f16 (both 16-bit)");
}

}  // namespace vc
