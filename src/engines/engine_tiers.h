#pragma once
// Which weights tiers an engine loads. llama.cpp reads GGUF files: the native checkpoint converted,
// the published GGUF builds and the llama.cpp block formats (Q8_0 ... IQ1_S). vLLM and SGLang serve
// safetensors checkpoints: the native one and pre-quantized ones (BF16, FP8, AWQ/GPTQ 4-bit); a
// GGUF file is llama.cpp's (vLLM's GGUF loader is experimental, single-file, few architectures:
// https://docs.vllm.ai/en/latest/features/quantization/gguf.html). The rule loads anything.
#include <string>
#include <vector>

#include "engines/engine_kind.h"
#include "model/model.h"

namespace vc {

// The tier named by `quant` ("" native, a build, a format) exists only as a GGUF file: a GGUF build,
// or a llama.cpp block format or mix that the native checkpoint does not clamp it to.
bool gguf_only_tier(const Model& model, const std::string& quant);

// Can `engine` load the tier `quant` of `model`?
bool engine_loads_tier(EngineKind engine, const Model& model, const std::string& quant);

// The tiers `check` and `builds` try for `engine`, as --quant values ("" is native), before sizes
// are compared: rule and llama.cpp the native checkpoint, the builds and kLlamaCppTiers; vLLM and
// SGLang the native checkpoint, its non-GGUF builds and kServingTiers.
std::vector<std::string> engine_candidate_tiers(EngineKind engine, const Model& model);

// One sentence saying which tiers `engine` loads, for text and JSON beside the rows.
std::string engine_tiers_text(EngineKind engine);

inline constexpr const char* kLlamaCppTiers[] = {"Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M", "Q2_K", "IQ2_XXS", "IQ1_S"};
// Pre-quantized safetensors layouts vLLM and SGLang load: 16-bit, FP8 (E4M3, per-tensor or
// per-channel scale: compressed-tensors / ModelOpt), 4-bit AWQ/GPTQ with group 128.
inline constexpr const char* kServingTiers[] = {"BF16", "FP8_E4M3", "INT4_G128"};

}  // namespace vc
