#include "plan/llamacpp_fit.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/units.h"

namespace vc {

bool llamacpp_fit_holds(const EngineAnswer& a) {
  return std::all_of(a.devices.begin(), a.devices.end(), [](const DeviceAllocation& d) {
    return d.name == "host" || d.fits.value_or(true);
  });
}

Scenario llamacpp_fit_context(const Model& model, Scenario scenario, const Box& box, const PlanOptions& options, std::vector<std::string>& notes) {
  const bool from_model = scenario.context_from_model;
  resolve_context_from_model(scenario, model);
  scenario.context_from_model = false;
  if (!from_model || !options.command || options.command->engine != EngineKind::LlamaCpp) return scenario;
  const uint64_t trained = scenario.context, seqs = scenario.sequences;
  const std::string start = fmt::format("no -c: llama.cpp sizes the context the model was trained with, {} tokens{}", format_count(checked_mul(trained, seqs)),
                                        seqs > 1 ? fmt::format(" ({} a sequence over -np {})", format_count(trained), seqs) : "");
  if (!options.command->llamacpp_defaults.fit || box.gpus.empty()) {
    notes.push_back(start + (box.gpus.empty() ? "" : " (-fit off: kept even where the GPUs cannot hold it)"));
    return scenario;
  }
  auto holds_at = [&](uint64_t context) {
    Scenario s = scenario;
    s.context = context;
    return llamacpp_fit_holds(run_engine(plan_engine_request(model, s, box, options)));
  };
  if (holds_at(trained)) {
    notes.push_back(start + "; --fit (on by default) leaves it: every GPU keeps 1 GiB free");
    return scenario;
  }
  // The least context --fit sets, per sequence; then the most tokens that keep the margin (monotone).
  const uint64_t least = std::min(trained, std::max<uint64_t>(1, kLlamaCppFitMinContext / seqs));
  uint64_t lo = least, hi = trained;  // holds_at(hi) fails
  if (!holds_at(lo)) {
    scenario.context = least;
    notes.push_back(start + fmt::format("; --fit (on by default) lowers it to its floor, {} tokens (-fitc), which still leaves a GPU under 1 GiB free, "
                                        "so it then moves layers to the CPU",
                                        format_count(checked_mul(least, seqs))));
    return scenario;
  }
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (holds_at(mid) ? lo : hi) = mid;
  }
  scenario.context = lo;
  notes.push_back(start + fmt::format("; --fit (on by default) lowers it to {} tokens, the most that leave every GPU 1 GiB free (-fitt); pass -c to "
                                      "choose it",
                                      format_count(checked_mul(lo, seqs))));
  return scenario;
}

}  // namespace vc
