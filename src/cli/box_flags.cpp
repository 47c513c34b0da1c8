#include "cli/box_flags.h"

#include "core/error.h"
#include "core/units.h"

namespace vc::cli {

void BoxFlags::add_to(CLI::App& app, bool with_split) {
  app.add_option("--gpu,-g", gpu, "GPUs of one node: H200x8, '3090,3080Ti', 'RTX 4090', none (see `vramcalc devices`)")->capture_default_str();
  app.add_option("--nodes", nodes, "Nodes, each with the --gpu set")->capture_default_str();
  app.add_option("--ram", ram, "System RAM free for weights and cache per node, e.g. 512GB")->capture_default_str();
  app.add_option("--ram-gbps", ram_gbps, "System RAM read bandwidth in GB/s")->capture_default_str();
  app.add_option("--ssd-gbps", ssd_gbps, "SSD read bandwidth in GB/s (0: weights may not stream from disk)")->capture_default_str();
  if (with_split) app.add_option("--split", split, "layer, pp, tp, ep or tp+ep")->capture_default_str();
  app.add_option("--engine", engine, "generic, llamacpp, vllm or sglang: which command to print and the per-device default")->capture_default_str();
  app.add_option("--per-device", per_device, "Fixed runtime memory per device process (CUDA context, workspaces); auto: 0 generic, 1GB engines")->capture_default_str();
  app.add_option("--efficiency", efficiency, "Achieved share of peak memory bandwidth during decode")->capture_default_str();
  app.add_option("--compute-efficiency", compute_efficiency, "Achieved share of peak BF16 compute during prefill")->capture_default_str();
  app.add_option("--expert-skew", expert_skew, "Zipf exponent of expert popularity (0 = uniform)")->capture_default_str();
  app.add_option("--hot-cache", hot_cache, "on: keep the hottest experts in the fastest tier; off: experts land in no particular order")->capture_default_str();
}

Box BoxFlags::to_box() const {
  Box b;
  b.gpus = parse_gpus(gpu, "--gpu");
  b.nodes = parse_count(nodes, "--nodes", 1, kMaxNodes);
  b.ram_bytes = ram == "0" ? 0 : parse_bytes(ram, "--ram");
  b.ram_bandwidth = ram_gbps == "0" ? 0 : parse_bytes(ram_gbps + "GB", "--ram-gbps");
  b.ssd_bandwidth = ssd_gbps == "0" ? 0 : parse_bytes(ssd_gbps + "GB", "--ssd-gbps");
  return b;
}

PlanOptions BoxFlags::to_options() const {
  PlanOptions o;
  o.split = parse_split(split, "--split");
  if (engine != "generic" && engine != "llamacpp" && engine != "vllm" && engine != "sglang") {
    throw InputError("--engine", "'" + engine + "' is not an engine; accepted: generic, llamacpp, vllm, sglang");
  }
  o.engine = engine;
  // The seeds' 15% covers the CUDA context in the generic profile; an engine process adds its own.
  o.per_device_fixed = per_device == "auto" ? (engine == "generic" ? 0 : 1'000'000'000ull) : parse_bytes(per_device, "--per-device");
  o.efficiency_bp = parse_percent_bp(efficiency, "--efficiency");
  o.compute_efficiency_bp = parse_percent_bp(compute_efficiency, "--compute-efficiency");
  const uint64_t skew_milli = expert_skew == "0" ? 0 : parse_fixed(expert_skew, "--expert-skew", 3, 4000, "a Zipf exponent from 0 to 4, such as 0.8");
  o.expert_skew = static_cast<double>(skew_milli) / 1000.0;
  if (hot_cache != "on" && hot_cache != "off") throw InputError("--hot-cache", "'" + hot_cache + "': accepted: on, off");
  o.hot_cache = hot_cache == "on";
  return o;
}

}  // namespace vc::cli
