#include "engines/engine_tiers.h"

#include <cctype>

#include "estimate/estimate.h"
#include "model/quant.h"

namespace vc {
namespace {

bool is_gguf_format(const std::string& format) {
  std::string f = format;
  for (char& c : f) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return f == "gguf";
}

}  // namespace

bool gguf_only_tier(const Model& model, const std::string& quant) {
  if (quant.empty() || quant == "native" || quant == "NATIVE") return false;
  if (const Build* b = model.find_build(quant)) return is_gguf_format(b->format);
  const WeightsFigure w = resolve_weights(model, quant);
  if (w.kind != TierKind::Format || w.clamped) return false;  // the native checkpoint after all
  const QuantFormat* f = QuantTable::builtin().find_tier(quant);
  return f && (f->kind == "ggml" || f->kind == "mix");
}

bool engine_loads_tier(EngineKind engine, const Model& model, const std::string& quant) {
  if (engine == EngineKind::Vllm || engine == EngineKind::Sglang) return !gguf_only_tier(model, quant);
  return true;
}

std::vector<std::string> engine_candidate_tiers(EngineKind engine, const Model& model) {
  std::vector<std::string> out = {""};
  const bool serving = engine == EngineKind::Vllm || engine == EngineKind::Sglang;
  for (const auto& b : model.builds) {
    if (engine_loads_tier(engine, model, b.name)) out.push_back(b.name);
  }
  if (serving) out.insert(out.end(), std::begin(kServingTiers), std::end(kServingTiers));
  else out.insert(out.end(), std::begin(kLlamaCppTiers), std::end(kLlamaCppTiers));
  return out;
}

std::string engine_tiers_text(EngineKind engine) {
  switch (engine) {
    case EngineKind::Vllm:
    case EngineKind::Sglang:
      return std::string(engine == EngineKind::Vllm ? "vLLM" : "SGLang") +
             " loads safetensors checkpoints: tiers tried are the native checkpoint, BF16, FP8 (E4M3) and 4-bit AWQ/GPTQ (INT4_G128); "
             "GGUF builds and llama.cpp formats (Q8_0 ... IQ1_S) are llama.cpp's and are not tried";
    case EngineKind::LlamaCpp:
      return "llama.cpp loads GGUF files: tiers tried are the native checkpoint (converted to GGUF), the published GGUF builds and the llama.cpp formats Q8_0 ... IQ1_S";
    case EngineKind::Rule: break;
  }
  return "tiers tried: the native checkpoint, the published builds and the llama.cpp formats Q8_0 ... IQ1_S";
}

}  // namespace vc
