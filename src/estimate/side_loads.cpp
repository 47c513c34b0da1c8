#include "estimate/side_loads.h"

#include <fmt/format.h>

#include "core/checked.h"
#include "core/units.h"

namespace vc {
namespace {
constexpr const char* kSpeculativeSource = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md";
constexpr const char* kLoraSource = "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-adapter.cpp";
}  // namespace

Scenario draft_scenario(const Scenario& target, uint64_t draft_context, const std::string& cache_type) {
  Scenario s = target;
  s.quant = "";
  s.context = draft_context ? draft_context : target.context;
  s.sequences = 1;
  s.cache_dtype = cache_type;
  return s;
}

std::vector<Line> draft_lines(const Model& draft, const Scenario& s) {
  const Estimate e = estimate(draft, s);
  std::vector<Line> out;
  Line w;
  w.id = "draft.weights";
  w.label = "Draft model weights (" + draft.name + ")";
  w.bytes = e.weights.bytes;
  w.formula = e.lines.front().formula;
  w.assumption = "the draft is loaded whole beside the target (llama.cpp -md, -ngld; vLLM/SGLang speculative_config.model)";
  w.source = kSpeculativeSource;
  out.push_back(w);
  Line kv;
  kv.id = "draft.kv";
  kv.label = fmt::format("Draft model cache ({} tokens, one sequence, {})", format_count(s.context), s.cache_dtype);
  kv.bytes = e.context_bytes();
  std::string parts;
  for (const auto& l : e.lines) {
    if (l.id.rfind("cache.", 0) == 0 || l.id.rfind("state.", 0) == 0) parts += (parts.empty() ? "" : " + ") + l.formula;
  }
  kv.formula = parts.empty() ? "no cache lines" : parts;
  kv.assumption = "llama-server gives the draft one sequence of the target's context per sequence (-cd 0, the default) and an f16 cache (-ctkd/-ctvd default)";
  kv.source = kSpeculativeSource;
  out.push_back(kv);
  return out;
}

Line lora_line(const AdapterFile& a) {
  Line l;
  l.id = "lora.weights";
  l.label = "LoRA adapter (" + a.format + ", " + std::to_string(a.tensors) + " tensors)";
  l.bytes = a.bytes;
  l.formula = fmt::format("sum of the adapter's tensor bytes in {} = {} B", a.file, format_count(a.bytes));
  l.assumption = "llama.cpp places each adapter tensor in the buffer of the layer it modifies (--lora); merged adapters add nothing";
  l.source = kLoraSource;
  return l;
}

}  // namespace vc
