#include "engines/llamacpp_fit.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/units.h"

namespace vc {

bool llamacpp_fit_holds(const EngineAnswer& a) {
  return std::all_of(a.devices.begin(), a.devices.end(), [](const DeviceAllocation& d) { return d.name == "host" || d.fits.value_or(true); });
}

LlamaCppFitContext llamacpp_fit_context(uint64_t trained, uint64_t seqs, bool fit_on, bool gpus, const std::function<bool(uint64_t)>& holds) {
  const std::string start = fmt::format("no -c: llama.cpp sizes the context the model was trained with, {} tokens{}", format_count(checked_mul(trained, seqs)),
                                        seqs > 1 ? fmt::format(" ({} a sequence over -np {})", format_count(trained), seqs) : "");
  if (!fit_on || !gpus) return {trained, start + (gpus ? " (-fit off: kept even where the GPUs cannot hold it)" : "")};
  if (holds(trained)) return {trained, start + "; --fit (on by default) leaves it: every GPU keeps 1 GiB free"};
  // The least context --fit sets, per sequence; then the most tokens that keep the margin (monotone).
  const uint64_t least = std::min(trained, std::max<uint64_t>(1, kLlamaCppFitMinContext / seqs));
  if (!holds(least)) {
    return {least, start + fmt::format("; --fit (on by default) lowers it to its floor, {} tokens (-fitc), which still leaves a GPU under 1 GiB "
                                       "free, so it then moves layers to the CPU",
                                       format_count(checked_mul(least, seqs)))};
  }
  uint64_t lo = least, hi = trained;  // holds(lo), not holds(hi)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (holds(mid) ? lo : hi) = mid;
  }
  return {lo, start + fmt::format("; --fit (on by default) lowers it to {} tokens, the most that leave every GPU 1 GiB free (-fitt); pass -c to "
                                  "choose it",
                                  format_count(checked_mul(lo, seqs)))};
}

std::string settle_llamacpp_context(const Model& model, Scenario& sc, const EngineRun* command, bool gpus, const std::function<bool(uint64_t)>& holds) {
  const bool from_model = sc.context_from_model;
  resolve_context_from_model(sc, model);
  sc.context_from_model = false;
  if (!from_model || !command || command->engine != EngineKind::LlamaCpp) return "";
  const LlamaCppFitContext f = llamacpp_fit_context(sc.context, sc.sequences, command->llamacpp_defaults.fit, gpus, holds);
  sc.context = f.context;
  return f.note;
}

std::string apply_llamacpp_fit_context(const Model& model, EngineRequest& r) {
  const EngineRun* command = r.command ? &*r.command : nullptr;
  return settle_llamacpp_context(model, r.scenario, command, r.box && !r.box->gpus.empty(), [&](uint64_t context) {
    EngineRequest probe = r;
    probe.scenario.context = context;
    return llamacpp_fit_holds(run_engine(probe));
  });
}

}  // namespace vc
