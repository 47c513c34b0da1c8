#include "plan/box_inputs.h"

#include "core/error.h"
#include "core/units.h"

namespace vc {

Box BoxInputs::to_box() const {
  Box b;
  b.gpus = parse_gpus(gpu, "--gpu");
  b.nodes = parse_count(nodes, "--nodes", 1, kMaxNodes);
  b.ram_bytes = ram == "0" ? 0 : parse_bytes(ram, "--ram");
  b.ram_bandwidth = ram_gbps == "0" ? 0 : parse_bytes(ram_gbps + "GB", "--ram-gbps");
  b.ssd_bandwidth = ssd_gbps == "0" ? 0 : parse_bytes(ssd_gbps + "GB", "--ssd-gbps");
  return b;
}

PlanOptions BoxInputs::to_options() const {
  PlanOptions o;
  o.split = parse_split(split, "--split");
  o.engine = parse_engine(engine, "--engine");
  // The rule's 15% covers the CUDA context; an engine counts its own runtime memory per device, so
  // --per-device adds to the rule only.
  o.per_device_fixed = per_device == "auto" ? 0 : parse_bytes(per_device, "--per-device");
  o.efficiency_bp = parse_percent_bp(efficiency, "--efficiency");
  o.compute_efficiency_bp = parse_percent_bp(compute_efficiency, "--compute-efficiency");
  const uint64_t skew_milli = expert_skew == "0" ? 0 : parse_fixed(expert_skew, "--expert-skew", 3, 4000, "a Zipf exponent from 0 to 4, such as 0.8");
  o.expert_skew = static_cast<double>(skew_milli) / 1000.0;
  if (hot_cache != "on" && hot_cache != "off") throw InputError("--hot-cache", "'" + hot_cache + "': accepted: on, off");
  o.hot_cache = hot_cache == "on";
  return o;
}

}  // namespace vc
