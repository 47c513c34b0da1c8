// The percentage rule as an engine: weights, cache and state, plus a share of them for everything
// else (15% by default, --overhead). Without devices it is the estimate itself on one unnamed
// device; on a box it is the planner's split (layers, TP, EP) with the rule on every device.
#include <fmt/format.h>

#include "core/units.h"
#include "engines/engine_impl.h"
#include "plan/footprint.h"

namespace vc::engines {
namespace {

constexpr const char* kSplitSource = "docs/plan.md; llama.cpp --split-mode/-ts, vLLM tensor/pipeline/expert parallel, SGLang --tp/--ep";

}  // namespace

EngineAnswer rule(const EngineRequest& r) {
  const Scenario& s = r.scenario;
  EngineAnswer a;
  a.engine = EngineKind::Rule;
  a.version_modelled = "the percentage rule (no engine's own accounting)";
  a.settings = {{"overhead_percent", static_cast<double>(s.overhead_bp) / 100.0}, {"overhead_fixed_bytes", s.overhead_fixed},
                {"cache_dtype", s.cache_dtype}, {"state_layout", std::string(to_string(s.state_layout))}};
  const Estimate e = estimate(*r.model, s);
  if (!r.box || r.box->gpus.empty()) {
    DeviceAllocation d;
    d.name = "all devices";
    for (const auto& l : e.lines) d.add(from_line(l));
    a.devices.push_back(std::move(d));
    finish(a);
    return a;
  }
  a.settings.push_back({"split", std::string(to_string(r.split))});
  a.settings.push_back({"per_device_fixed_bytes", r.per_device_fixed});
  const Footprint f = make_footprint(*r.model, e);
  std::string overhead_source;
  for (const auto& l : e.lines) if (l.id == "overhead") overhead_source = l.source;
  SplitInput in;
  in.footprint = &f;
  in.box = &*r.box;
  in.mode = r.split;
  in.context = s.context;
  in.sequences = s.sequences;
  in.per_device_fixed = r.per_device_fixed;
  const SplitResult sp = split(in);
  for (const auto& ds : sp.devices) {
    DeviceAllocation d;
    d.name = fmt::format("{} #{}", ds.device, ds.rank + 1);
    d.capacity = ds.capacity;
    const std::string where = fmt::format("split {}: {}", to_string(r.split), ds.holds);
    d.add({AllocKind::Weights, "Weights (" + ds.holds + ")", ds.weights, fmt::format("{} of the {} weights", format_bytes(ds.weights), format_bytes(e.weights.bytes)),
           where, kSplitSource});
    if (ds.cache) d.add({AllocKind::Kv, "KV cache", ds.cache, fmt::format("the cache of this device's layers at {} tokens x {} sequence(s)", s.context, s.sequences), where, kSplitSource});
    if (ds.state) d.add({AllocKind::State, "Recurrent state", ds.state, fmt::format("the state of this device's layers x {} sequence(s)", s.sequences), where, kSplitSource});
    d.add({AllocKind::RuntimeReserve, "Runtime overhead (" + format_percent_bp(s.overhead_bp) + ")", ds.overhead,
           fmt::format("{} x (weights + cache + state here) + {} per process", format_percent_bp(s.overhead_bp), format_bytes(r.per_device_fixed)),
           "activations, engine buffers, fragmentation and CUDA context as a share of resident memory (the percentage rule)",
           overhead_source});
    d.fits = ds.fits();
    a.devices.push_back(std::move(d));
  }
  finish(a);
  return a;
}

}  // namespace vc::engines
