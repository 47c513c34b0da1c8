// A pasted serving command's drafter in plan's answer, and its flags in the printed command.
#include "plan/serving_drafter.h"

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "core/text.h"

namespace vc {
namespace {

// The catalogue's model with this id or name, or whose card lives in this Hugging Face repository
// ("meta-llama/Llama-3.2-1B-Instruct", as a command names it).
const Model* catalogue_model_named(const std::string& name) {
  const Catalogue& c = Catalogue::builtin();
  if (const Model* m = c.find(name)) return m;
  const std::string repo = lower(name);
  for (const auto& m : c.models()) {
    for (const auto& src : m.sources) {
      const std::string s = lower(src);
      const std::string hf = "https://huggingface.co/" + repo;
      if (s == hf || s.rfind(hf + "/", 0) == 0) return &m;
    }
  }
  return nullptr;
}

}  // namespace

void attach_serving_drafter(EngineRequest& r) {
  if (!r.command) return;
  const ServingSpeculative& s = r.command->serving_speculative;
  if (!s.on()) return;
  if (s.needs_draft()) {
    const Model* draft = catalogue_model_named(s.draft);
    if (!draft) return;  // the engines note that the command's drafter is not counted
    r.companions.draft = std::make_shared<const Model>(*draft);
  }
  r.companions.speculative = s;
}

std::string serving_speculative_flags(const EngineRun& run) {
  const ServingSpeculative& s = run.serving_speculative;
  if (!s.on()) return "";
  if (run.engine == EngineKind::Vllm) {
    nlohmann::json j = {{"method", s.method}};
    if (!s.draft.empty()) j["model"] = s.draft;
    if (s.num_speculative_tokens) j["num_speculative_tokens"] = s.num_speculative_tokens;
    if (s.draft_tensor_parallel_size) j["draft_tensor_parallel_size"] = *s.draft_tensor_parallel_size;
    return " --speculative-config '" + j.dump() + "'";
  }
  std::string out = " --speculative-algorithm " + sglang_algorithm_name(s.method);
  if (!s.draft.empty()) out += " --speculative-draft-model-path " + s.draft;
  if (s.steps) out += fmt::format(" --speculative-num-steps {}", *s.steps);
  if (s.topk) out += fmt::format(" --speculative-eagle-topk {}", *s.topk);
  if (s.draft_tokens) out += fmt::format(" --speculative-num-draft-tokens {}", *s.draft_tokens);
  return out;
}

}  // namespace vc
