#include "engines/serving_cpu_offload.h"

#include "engines/engine_impl.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"

namespace vc {

namespace {
constexpr double kMaxGib = 1'000'000;  // a million GiB per GPU: beyond any host
}

uint64_t cpu_offload_cap_bytes(const std::string& value, const std::string& flag, bool whole_only) {
  const std::string accepted = whole_only ? "accepted: a whole number of GiB per GPU, 0 (off) to 1,000,000 (SGLang reads it as an int)"
                                          : "accepted: a number of GiB per GPU, 0 (off) to 1,000,000, e.g. 4 or 2.5";
  const bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
  char* end = nullptr;
  const double gib = value.empty() ? -1 : std::strtod(value.c_str(), &end);
  const bool number = !value.empty() && end == value.c_str() + value.size() && std::isfinite(gib);
  if (!number || (whole_only && !digits) || gib < 0 || gib > kMaxGib) throw InputError(flag, "'" + value + "' is not accepted; " + accepted);
  // int(cpu_offload_gb * 1024**3): a double product, truncated.
  return static_cast<uint64_t>(std::floor(gib * 1073741824.0));
}

CpuOffload cpu_offload_walk(const std::vector<std::vector<uint64_t>>& layers, uint64_t cap) {
  CpuOffload o;
  o.cap = cap;
  o.stage_layers = layers.size();
  for (const auto& layer : layers) {
    if (o.bytes >= cap) break;  // the module check: nothing more moves
    uint64_t moved = 0;
    for (uint64_t b : layer) {
      if (o.bytes >= cap) break;  // the parameter check: the crossing one moved whole already
      o.bytes = checked_add(o.bytes, b);
      ++o.params;
      ++moved;
    }
    if (moved == layer.size()) ++o.layers_whole;
    else o.moved_in_last = moved, o.kept_in_last = layer.size() - moved;
  }
  return o;
}

std::string cpu_offload_formula(const CpuOffload& o) {
  const uint64_t partial = o.kept_in_last ? 1 : 0;
  return fmt::format("{} parameters of the {} decoder layers on this rank ({} whole{}), moved while under the cap int(cpu_offload_gb x 1024^3) = {} B: {} B",
                     o.params, o.stage_layers, o.layers_whole,
                     partial ? fmt::format(", then the first {} parameters of layer {}, the last crossing the cap moved whole; its other {} stay on the GPU",
                                           o.moved_in_last, o.layers_whole + 1, o.kept_in_last)
                             : "",
                     format_count(o.cap), format_count(o.bytes));
}

}  // namespace vc

namespace vc::engines {

void add_cpu_offload_host(EngineAnswer& a, const CpuOffload& o, uint64_t ranks, const EngineRequest& r, const std::string& source, const std::string& how_read) {
  if (!o.on()) return;
  a.settings.push_back({"cpu_offload_gb", static_cast<double>(o.cap) / 1073741824.0});
  a.notes.push_back(fmt::format("--cpu-offload-gb: {} B of each rank's decoder layers live in pinned host memory{}", format_count(o.bytes), how_read));
  DeviceAllocation d;
  d.name = "host";
  if (r.box && r.box->ram_bytes) d.capacity = r.box->ram_bytes;
  d.add({AllocKind::Weights, "Weights offloaded by --cpu-offload-gb (pinned host memory)", checked_mul(o.bytes, ranks),
         fmt::format("{} rank(s) x {} B ({})", ranks, format_count(o.bytes), cpu_offload_formula(o)),
         "each rank pins its own share (page-locked: the OS cannot page it out); every rank taken as moving what rank 0 moves", source});
  a.devices.push_back(std::move(d));
}

}  // namespace vc::engines
